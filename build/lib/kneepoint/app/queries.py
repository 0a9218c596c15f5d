"""Reads of the marts for the app and the report. SQL lives here, not in the pages; results are polars frames.

Every read filters in DuckDB (disks, series) so a page never pulls the whole fact table; the pages cache
results by `data_version()` (app/state.py). Connections are short-lived so a `kneepoint ingest` in a shell can
take the write lock between two reads.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import polars as pl

from kneepoint.ingest.warehouse import connect, db_path


class Series(NamedTuple):
    """One workload: what a curve holds for each disk."""

    pattern: str
    operation: str
    read_pct: float
    block_size_bytes: int
    direction: str


# The filter every series read shares; parameters in Series order.
_SERIES_WHERE = "pattern = ? AND operation = ? AND read_pct = ? AND block_size_bytes = ? AND direction = ?"
_DISKS_WHERE = "disk_key IN (SELECT unnest(?::VARCHAR[]))"


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


def tables(db: Path | None = None) -> frozenset[str]:
    """Tables and views in the warehouse: which marts a page can read (a model may not be built yet)."""
    db = db or current_db()
    if not db.exists():
        return frozenset()
    return frozenset(query("SELECT table_name FROM information_schema.tables", db=db)["table_name"].to_list())


def has_marts(db: Path | None = None) -> bool:
    return "fct_io_results" in tables(db)


def disks(db: Path | None = None) -> pl.DataFrame:
    """Disks with benchmark results, the ones curves can be drawn for."""
    return query(
        "SELECT * FROM dim_disks WHERE disk_key IN (SELECT DISTINCT disk_key FROM fct_io_results) ORDER BY disk, host",
        db=db,
    )


def disk_labels(db: Path | None = None) -> list[str]:
    """Disk labels already used (raw layer, so it works before the first model build)."""
    db = db or current_db()
    if "raw_files" not in tables(db):
        return []
    return query("SELECT DISTINCT disk FROM raw_files ORDER BY disk", db=db)["disk"].to_list()


def host_labels(db: Path | None = None) -> list[str]:
    db = db or current_db()
    if "raw_files" not in tables(db):
        return []
    return query("SELECT DISTINCT host FROM raw_files WHERE host IS NOT NULL ORDER BY host", db=db)["host"].to_list()


def disk_key(disk: str, host: str | None) -> str:
    """The name the marts give a disk (macro disk_key in macros/labels.sql): `disk`, or `disk @ host`."""
    disk, host = disk.strip(), (host or "").strip()
    return f"{disk} @ {host}" if host else disk


def series_options(disk_keys: Sequence[str], db: Path | None = None) -> pl.DataFrame:
    """Pattern / operation / read % / block size / direction combinations measured on the chosen disks,
    the series measured at the most loads first."""
    return query(
        f"""
        SELECT pattern, operation, read_pct, block_size_bytes, direction,
               count(DISTINCT outstanding_io) AS loads, count(DISTINCT disk_key) AS disks, count(*) AS runs
        FROM fct_io_results
        WHERE {_DISKS_WHERE}
        GROUP BY ALL
        ORDER BY disks DESC, loads DESC, pattern, operation, block_size_bytes, direction
        """,
        [list(disk_keys)],
        db=db,
    )


def curve_points(disk_keys: Sequence[str], series: Series, db: Path | None = None) -> pl.DataFrame:
    """Every run of one series on the chosen disks, ordered by load.

    `best_at_load` marks the run the curve goes through where several share one outstanding-I/O value
    (2 threads x QD 16 and 4 x 8, or a repeated sweep), `best_at_threads_qd` the one per thread count and
    queue depth; both with the tie-break of the saturation marts (macros/saturation.sql), so the curve and the
    marked saturation point are the same run."""
    order = "iops DESC, latency_avg_ms ASC NULLS LAST, file_id, record_index"
    return query(
        f"""
        SELECT disk_key, disk, host, tool, threads, queue_depth, outstanding_io,
               iops, throughput_bytes_per_s, throughput_mb_per_s, throughput_mib_per_s,
               latency_avg_ms, latency_p50_ms, latency_p95_ms, latency_p99_ms, latency_p999_ms,
               littles_law_ratio, file_name, file_id, record_index, run_index, source_line,
               row_number() OVER (PARTITION BY disk_key, outstanding_io ORDER BY {order}) = 1 AS best_at_load,
               row_number() OVER (PARTITION BY disk_key, threads, queue_depth ORDER BY {order}) = 1
                   AS best_at_threads_qd
        FROM fct_io_results
        WHERE {_DISKS_WHERE} AND {_SERIES_WHERE} AND iops IS NOT NULL
        ORDER BY disk_key, outstanding_io, threads
        """,
        [list(disk_keys), *series],
        db=db,
    )


def saturation(disk_keys: Sequence[str], series: Series, db: Path | None = None) -> pl.DataFrame:
    """mart_saturation_points (rule, USL fit, Kneedle) for one series on the chosen disks."""
    if "mart_saturation_points" not in tables(db):
        return pl.DataFrame()
    return query(
        f"SELECT * FROM mart_saturation_points WHERE {_DISKS_WHERE} AND {_SERIES_WHERE} ORDER BY disk_key",
        [list(disk_keys), *series],
        db=db,
    )


def saturation_by_threads(disk_keys: Sequence[str], series: Series, db: Path | None = None) -> pl.DataFrame:
    """mart_saturation_by_threads: the saturation per thread count, the load being the queue depth."""
    if "mart_saturation_by_threads" not in tables(db):
        return pl.DataFrame()
    return query(
        f"SELECT * FROM mart_saturation_by_threads WHERE {_DISKS_WHERE} AND {_SERIES_WHERE} ORDER BY disk_key, threads",
        [list(disk_keys), *series],
        db=db,
    )


def compare_saturation(disk_keys: Sequence[str], series: Series, baseline: str, db: Path | None = None) -> pl.DataFrame:
    """mart_saturation_points for one series on the chosen disks, with ratios to the baseline disk.

    `iops_ratio` compares IOPS at saturation, or the best measured where a disk did not saturate (its
    `saturated` says which); the latency and throughput ratios compare the saturation points themselves."""
    if "mart_saturation_points" not in tables(db):
        return pl.DataFrame()
    return query(
        f"""
        WITH s AS (
            SELECT *, CASE WHEN saturated THEN iops_at_saturation ELSE max_iops END AS iops_compared
            FROM mart_saturation_points
            WHERE {_DISKS_WHERE} AND {_SERIES_WHERE}
        ),
        b AS (SELECT * FROM s WHERE disk_key = ?)
        SELECT s.*,
               s.iops_compared / nullif(b.iops_compared, 0) AS iops_ratio,
               s.max_iops / nullif(b.max_iops, 0) AS max_iops_ratio,
               s.throughput_bytes_per_s_at_saturation / nullif(b.throughput_bytes_per_s_at_saturation, 0)
                   AS throughput_ratio,
               s.latency_avg_ms_at_saturation / nullif(b.latency_avg_ms_at_saturation, 0) AS latency_avg_ratio,
               s.latency_p99_ms_at_saturation / nullif(b.latency_p99_ms_at_saturation, 0) AS latency_p99_ratio,
               s.saturation_outstanding_io / nullif(b.saturation_outstanding_io, 0) AS outstanding_io_ratio
        FROM s LEFT JOIN b ON true
        ORDER BY list_position(?::VARCHAR[], s.disk_key)
        """,
        [list(disk_keys), *series, baseline, list(disk_keys)],
        db=db,
    )


def saturation_overview(disk_keys: Sequence[str], db: Path | None = None) -> pl.DataFrame:
    """Every series' saturation point on the chosen disks: the compare page's table of all workloads."""
    if "mart_saturation_points" not in tables(db):
        return pl.DataFrame()
    return query(
        f"""
        SELECT * FROM mart_saturation_points WHERE {_DISKS_WHERE}
        ORDER BY pattern, operation, read_pct DESC, block_size_bytes, direction, disk_key
        """,
        [list(disk_keys)],
        db=db,
    )


def stored_files(db: Path | None = None) -> pl.DataFrame:
    """Stored files from the raw layer (so the list works even when a model build failed)."""
    from kneepoint.ingest.warehouse import list_files

    db = db or current_db()
    if "raw_files" not in tables(db):
        return pl.DataFrame()
    con = connect(db)
    try:
        rows = list_files(con)
        runs = dict(
            con.execute(
                """
                SELECT file_id, count(*) FROM (
                    SELECT DISTINCT file_id, 'io' AS kind, run_index AS i FROM raw_io_records
                    UNION SELECT DISTINCT file_id, 'sql', statement_index FROM raw_query_io
                    UNION SELECT DISTINCT file_id, 'sql', statement_index FROM raw_query_time
                ) GROUP BY file_id
                """
            ).fetchall()
        )
    finally:
        con.close()
    if not rows:
        return pl.DataFrame()
    df = pl.DataFrame(rows, infer_schema_length=None)
    return df.with_columns(pl.col("file_id").replace_strict(runs, default=0, return_dtype=pl.Int64).alias("runs"))


_BEST_RUN = "iops DESC, latency_avg_ms ASC NULLS LAST, file_id, record_index"


def latency_percentiles(disk_keys: Sequence[str], series: Series, db: Path | None = None) -> pl.DataFrame:
    """fct_latency_distribution for the run each curve goes through at each load: the run the saturation marts
    keep per load (int_saturation_points)."""
    if "fct_latency_distribution" not in tables(db):
        return pl.DataFrame()
    return query(
        f"""
        WITH best AS (
            SELECT io_result_id, disk_key, file_name FROM int_saturation_points
            WHERE {_DISKS_WHERE} AND {_SERIES_WHERE}
        )
        SELECT best.disk_key, d.outstanding_io, d.threads, d.queue_depth, d.percentile, d.latency_ms, d.curve_source,
               d.latency_avg_ms, d.tool, best.file_name, d.run_index, d.io_result_id
        FROM fct_latency_distribution d JOIN best USING (io_result_id)
        ORDER BY best.disk_key, d.outstanding_io, d.point_index
        """,
        [list(disk_keys), *series],
        db=db,
    )


# -- SQL Server statistics --------------------------------------------------------------------------------------


def _statements_where(file_id: str | None) -> str:
    return f"{_DISKS_WHERE}" + (" AND file_id = ?" if file_id else "")


def sql_disks(db: Path | None = None) -> list[str]:
    """Disks with SET STATISTICS output stored."""
    if "fct_query_time" not in tables(db):
        return []
    return query("SELECT DISTINCT disk_key FROM fct_query_time ORDER BY disk_key", db=db)["disk_key"].to_list()


def sql_files(disk_keys: Sequence[str], db: Path | None = None) -> pl.DataFrame:
    return query(
        f"""
        SELECT file_id, any_value(file_name) AS file_name, any_value(disk_key) AS disk_key, count(*) AS statements
        FROM fct_query_time WHERE {_DISKS_WHERE} GROUP BY file_id ORDER BY file_name
        """,
        [list(disk_keys)],
        db=db,
    )


def statements(disk_keys: Sequence[str], file_id: str | None = None, db: Path | None = None) -> pl.DataFrame:
    """fct_query_time: one row per statement, in file order."""
    return query(
        f"SELECT * FROM fct_query_time WHERE {_statements_where(file_id)} ORDER BY disk_key, file_name, "
        "statement_index",
        [list(disk_keys)] + ([file_id] if file_id else []),
        db=db,
    )


def statement_tables(disk_keys: Sequence[str], file_id: str | None = None, db: Path | None = None) -> pl.DataFrame:
    """fct_query_io: one row per table line, with its statement's totals beside it."""
    return query(
        f"SELECT * FROM fct_query_io WHERE {_statements_where(file_id)} ORDER BY disk_key, file_name, "
        "statement_index, table_row",
        [list(disk_keys)] + ([file_id] if file_id else []),
        db=db,
    )


_IO_COUNTERS = (
    "scan_count",
    "logical_reads",
    "physical_reads",
    "page_server_reads",
    "read_ahead_reads",
    "page_server_read_ahead_reads",
    "lob_logical_reads",
    "lob_physical_reads",
    "lob_read_ahead_reads",
    "segment_reads",
    "segment_skipped",
    "pages_read",
    "read_bytes",
)


def table_totals(disk_keys: Sequence[str], file_id: str | None = None, db: Path | None = None) -> pl.DataFrame:
    """I/O per table summed over the statements, as StatisticsParser's closing 'Totals' grid, with a Total row."""
    sums = ", ".join(f"sum({c})::BIGINT AS {c}" for c in _IO_COUNTERS)
    return query(
        f"""
        WITH per_table AS (
            SELECT table_name, count(DISTINCT statement_id) AS statements, {sums}
            FROM fct_query_io WHERE {_statements_where(file_id)}
            GROUP BY table_name
        )
        SELECT * FROM (
            SELECT 0 AS total_row, *, round(100.0 * logical_reads / nullif(sum(logical_reads) OVER (), 0), 3)
                AS logical_reads_pct
            FROM per_table
            UNION ALL
            SELECT 1, 'Total', (SELECT count(DISTINCT statement_id) FROM fct_query_io
                                WHERE {_statements_where(file_id)}),
                   {", ".join(f"sum({c})::BIGINT" for c in _IO_COUNTERS)}, 100.0
            FROM per_table
        )
        ORDER BY total_row, logical_reads DESC NULLS LAST, table_name
        """,
        ([list(disk_keys)] + ([file_id] if file_id else [])) * 2,
        db=db,
    )


def time_totals(disk_keys: Sequence[str], file_id: str | None = None, db: Path | None = None) -> dict:
    """CPU and elapsed times summed over the statements (StatisticsParser's compile / execution totals)."""
    df = query(
        f"""
        SELECT count(*) AS statements,
               sum(compile_cpu_ms) AS compile_cpu_ms, sum(compile_elapsed_ms) AS compile_elapsed_ms,
               sum(execution_cpu_ms) AS execution_cpu_ms, sum(execution_elapsed_ms) AS execution_elapsed_ms,
               sum(total_cpu_ms) AS total_cpu_ms, sum(total_elapsed_ms) AS total_elapsed_ms,
               sum(logical_reads)::BIGINT AS logical_reads, sum(pages_read)::BIGINT AS pages_read,
               sum(read_bytes)::DOUBLE AS read_bytes,
               -- the workload's average: bytes read over the execution time of the statements that read
               sum(read_bytes::DOUBLE) FILTER (WHERE execution_elapsed_ms > 0 AND pages_read IS NOT NULL)
                   / nullif(sum(execution_elapsed_ms) FILTER (WHERE execution_elapsed_ms > 0
                                                             AND pages_read IS NOT NULL), 0) * 1000
                   AS effective_read_bytes_per_s
        FROM fct_query_time WHERE {_statements_where(file_id)}
        """,
        [list(disk_keys)] + ([file_id] if file_id else []),
        db=db,
    )
    return df.row(0, named=True)


def statements_on_curve(
    disk_keys: Sequence[str], series: Series, file_id: str | None = None, db: Path | None = None
) -> pl.DataFrame:
    """Each statement's effective read throughput placed on its disk's throughput curve for one series.

    `curve_outstanding_io` is the load at which the curve (best run per load) first reaches the statement's
    throughput, interpolated on the log2 load axis; below the curve's lowest load it scales down in proportion
    (throughput grows with load there); null when the statement read faster than the curve ever went."""
    return query(
        f"""
        WITH curve AS (
            SELECT disk_key, outstanding_io::DOUBLE AS x, throughput_bytes_per_s AS y
            FROM fct_io_results
            WHERE {_DISKS_WHERE} AND {_SERIES_WHERE} AND iops IS NOT NULL AND throughput_bytes_per_s > 0
            QUALIFY row_number() OVER (PARTITION BY disk_key, outstanding_io ORDER BY {_BEST_RUN}) = 1
        ),
        seg AS (
            SELECT disk_key, x AS x0, y AS y0, lead(x) OVER w AS x1, lead(y) OVER w AS y1
            FROM curve WINDOW w AS (PARTITION BY disk_key ORDER BY x)
        ),
        ends AS (
            SELECT disk_key, arg_min(x, x) AS x_min, arg_min(y, x) AS y_min, max(y) AS curve_best_bytes_per_s
            FROM curve GROUP BY disk_key
        ),
        st AS (
            SELECT * FROM fct_query_time
            WHERE {_statements_where(file_id)} AND effective_read_bytes_per_s > 0
        )
        SELECT st.statement_id, st.disk_key, st.file_name, st.statement_index, st.source_line,
               st.effective_read_bytes_per_s, st.cpu_to_elapsed, st.execution_cpu_ms, st.execution_elapsed_ms,
               st.pages_read, ends.curve_best_bytes_per_s,
               CASE
                   WHEN ends.x_min IS NULL THEN NULL
                   WHEN st.effective_read_bytes_per_s <= ends.y_min
                       THEN ends.x_min * st.effective_read_bytes_per_s / ends.y_min
                   ELSE (
                       SELECT pow(2, log2(x0) + (st.effective_read_bytes_per_s - y0) / (y1 - y0)
                                  * (log2(x1) - log2(x0)))
                       FROM seg
                       WHERE seg.disk_key = st.disk_key AND y1 IS NOT NULL AND y1 <> y0
                         AND st.effective_read_bytes_per_s BETWEEN least(y0, y1) AND greatest(y0, y1)
                       ORDER BY x0
                       LIMIT 1
                   )
               END AS curve_outstanding_io
        FROM st LEFT JOIN ends USING (disk_key)
        ORDER BY st.disk_key, st.file_name, st.statement_index
        """,
        [list(disk_keys), *series, list(disk_keys)] + ([file_id] if file_id else []),
        db=db,
    )


def stored_by_sha256(sha256s: Sequence[str], db: Path | None = None) -> dict[str, tuple[str, str]]:
    """Which of these byte strings are already stored: sha256 -> (file_id, disk). Not cached: it must be fresh."""
    db = db or current_db()
    if not sha256s or "raw_files" not in tables(db):
        return {}
    df = query(
        "SELECT sha256, file_id, disk FROM raw_files WHERE sha256 IN (SELECT unnest(?::VARCHAR[]))",
        [list(sha256s)],
        db=db,
    )
    return {s: (f, d) for s, f, d in df.rows()}


def file_content(file_id: str, db: Path | None = None) -> tuple[str, bytes]:
    """The original bytes of a stored file, with its stored name."""
    from kneepoint.ingest.warehouse import file_content as _file_content

    con = connect(db or current_db())
    try:
        return _file_content(con, file_id)
    finally:
        con.close()


def warehouse_label() -> str:
    return os.environ.get("KNEEPOINT_DB", str(current_db()))
