"""Reads of the marts for the app and the report. SQL lives here, not in the pages; results are polars frames.

Connections are short-lived so a `kneepoint ingest` in a shell can take the write lock between two reads.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from ingest.warehouse import connect, db_path


def current_db() -> Path:
    return db_path()


def data_version(db: Path | None = None) -> tuple[float, float]:
    """Changes whenever the warehouse file (or its WAL) changes: the cache key for every read."""
    db = db or current_db()
    wal = Path(str(db) + ".wal")
    return (db.stat().st_mtime if db.exists() else 0.0, wal.stat().st_mtime if wal.exists() else 0.0)


def query(sql: str, params: Sequence | None = None, db: Path | None = None) -> pl.DataFrame:
    con = connect(db or current_db())
    try:
        return pl.from_arrow(con.sql(sql, params=list(params or [])).to_arrow_table())
    finally:
        con.close()


def has_marts(db: Path | None = None) -> bool:
    db = db or current_db()
    if not db.exists():
        return False
    df = query("SELECT count(*) AS n FROM information_schema.tables WHERE table_name = 'fct_io_results'", db=db)
    return df["n"][0] > 0


def disks(db: Path | None = None) -> pl.DataFrame:
    return query("SELECT * FROM dim_disks ORDER BY disk, host", db=db)


def disk_labels(db: Path | None = None) -> list[str]:
    if not has_marts(db):
        return []
    return query("SELECT DISTINCT disk FROM dim_files ORDER BY disk", db=db)["disk"].to_list()


def series_options(disk_keys: Sequence[str], db: Path | None = None) -> pl.DataFrame:
    """Pattern / operation / read % / block size / direction combinations measured on the chosen disks."""
    return query(
        """
        SELECT pattern, operation, read_pct, block_size_bytes, direction, count(*) AS points
        FROM fct_io_results
        WHERE disk_key IN (SELECT unnest(?::VARCHAR[]))
        GROUP BY ALL
        ORDER BY points DESC, pattern, operation, block_size_bytes, direction
        """,
        [list(disk_keys)],
        db=db,
    )


def curve_points(
    disk_keys: Sequence[str],
    pattern: str,
    operation: str,
    read_pct: float,
    block_size_bytes: int,
    direction: str,
    db: Path | None = None,
) -> pl.DataFrame:
    """Every measured point of the chosen series on the chosen disks, ordered by load."""
    return query(
        """
        SELECT disk_key, disk, host, tool, threads, queue_depth, outstanding_io,
               iops, throughput_bytes_per_s, throughput_mb_per_s, throughput_mib_per_s,
               latency_avg_ms, latency_p50_ms, latency_p95_ms, latency_p99_ms, latency_p999_ms,
               littles_law_ratio, file_name, file_id, run_index, source_line
        FROM fct_io_results
        WHERE disk_key IN (SELECT unnest(?::VARCHAR[]))
          AND pattern = ? AND operation = ? AND read_pct = ? AND block_size_bytes = ? AND direction = ?
        ORDER BY disk_key, outstanding_io, threads
        """,
        [list(disk_keys), pattern, operation, read_pct, block_size_bytes, direction],
        db=db,
    )


def warehouse_label() -> str:
    return os.environ.get("KNEEPOINT_DB", str(current_db()))
