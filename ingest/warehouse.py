"""The DuckDB warehouse: the raw layer that `ingest` writes and everything downstream is rebuilt from.

One file is one transaction; the same bytes are stored once (sha256); bulk rows go in through Arrow.
Only one process can write a DuckDB file: `connect` waits a bounded time for another writer and then
raises WarehouseBusy naming the process that holds it.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa

from ingest import __version__
from ingest.errors import WarehouseBusy
from ingest.records import IoRecord, ParsedFile, QueryIoRecord, QueryTimeRecord

DEFAULT_DB = "warehouse.duckdb"
LOCK_WAIT_S = float(os.environ.get("KNEEPOINT_LOCK_WAIT_S", "15"))

_LATENCY_COLS = ", ".join(f"latency_{k} DOUBLE" for k in ("avg", "min", "max", "p50", "p95", "p99", "p999"))
_QUERY_IO_INTS = [
    f.name
    for f in fields(QueryIoRecord)
    if f.name not in ("statement_index", "source_line", "table_name", "tool", "tool_version", "language", "record")
]

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS raw_files (
    file_id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    sha256 VARCHAR NOT NULL UNIQUE,
    size_bytes BIGINT NOT NULL,
    format VARCHAR NOT NULL,
    tool_version VARCHAR,
    encoding VARCHAR,
    ingested_at TIMESTAMPTZ NOT NULL,
    disk VARCHAR NOT NULL,
    host VARCHAR,
    tags VARCHAR[],
    notes VARCHAR,
    warnings VARCHAR[],
    kneepoint_version VARCHAR
);
CREATE TABLE IF NOT EXISTS raw_file_contents (
    file_id VARCHAR PRIMARY KEY,
    content BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS raw_io_records (
    file_id VARCHAR NOT NULL,
    record_index INTEGER NOT NULL,
    run_index INTEGER NOT NULL,
    source_line INTEGER,
    tool VARCHAR NOT NULL,
    tool_version VARCHAR,
    target VARCHAR,
    started_at VARCHAR,
    pattern VARCHAR,
    operation VARCHAR,
    read_pct DOUBLE,
    direction VARCHAR,
    block_size_bytes BIGINT,
    threads INTEGER,
    queue_depth INTEGER,
    duration_s DOUBLE,
    iops DOUBLE,
    throughput DOUBLE,
    throughput_unit VARCHAR,
    latency_unit VARCHAR,
    {_LATENCY_COLS},
    inferred VARCHAR[],
    PRIMARY KEY (file_id, record_index)
);
CREATE TABLE IF NOT EXISTS raw_query_io (
    file_id VARCHAR NOT NULL,
    record_index INTEGER NOT NULL,
    statement_index INTEGER NOT NULL,
    source_line INTEGER,
    table_name VARCHAR NOT NULL,
    {", ".join(f"{c} BIGINT" for c in _QUERY_IO_INTS)},
    tool_version VARCHAR,
    language VARCHAR,
    PRIMARY KEY (file_id, record_index)
);
CREATE TABLE IF NOT EXISTS raw_query_time (
    file_id VARCHAR NOT NULL,
    record_index INTEGER NOT NULL,
    statement_index INTEGER NOT NULL,
    source_line INTEGER,
    phase VARCHAR NOT NULL,
    cpu_ms DOUBLE,
    elapsed_ms DOUBLE,
    tool_version VARCHAR,
    language VARCHAR,
    PRIMARY KEY (file_id, record_index)
);
CREATE TABLE IF NOT EXISTS raw_run_metadata (
    file_id VARCHAR NOT NULL,
    run_index INTEGER NOT NULL,
    key VARCHAR NOT NULL,
    value VARCHAR,
    PRIMARY KEY (file_id, run_index, key)
);
CREATE TABLE IF NOT EXISTS raw_latency_histograms (
    file_id VARCHAR NOT NULL,
    record_index INTEGER NOT NULL,
    bound DOUBLE NOT NULL,
    bound_unit VARCHAR NOT NULL,
    value DOUBLE NOT NULL,
    kind VARCHAR NOT NULL
);
"""

RAW_TABLES = (
    "raw_latency_histograms",
    "raw_run_metadata",
    "raw_query_time",
    "raw_query_io",
    "raw_io_records",
    "raw_file_contents",
    "raw_files",
)

_LOCK_HOLDER = re.compile(r"Conflicting lock is held in (?P<exe>.*?) \(PID (?P<pid>\d+)\)")


def db_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """--db beats KNEEPOINT_DB beats ./warehouse.duckdb."""
    return Path(explicit or os.environ.get("KNEEPOINT_DB") or DEFAULT_DB).resolve()


def connect(path: str | os.PathLike[str], read_only: bool = False, wait_s: float | None = None):
    """Open the warehouse; wait up to `wait_s` for another process's write lock, then fail clearly."""
    path = Path(path)
    wait_s = LOCK_WAIT_S if wait_s is None else wait_s
    if read_only and not path.exists():
        raise FileNotFoundError(f"no warehouse at {path}: ingest a file first (kneepoint ingest FILE --disk LABEL)")
    deadline = time.monotonic() + wait_s
    delay = 0.05
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only)
            break
        except duckdb.IOException as exc:
            m = _LOCK_HOLDER.search(str(exc))
            if m is None:
                raise
            if time.monotonic() >= deadline:
                raise WarehouseBusy(
                    f"warehouse busy: {path} is held by process {m['pid']} ({m['exe']}); "
                    f"waited {wait_s:g} s. Try again when it has finished, or close that process."
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 1.0)
    if not read_only:
        con.execute(SCHEMA)
    return con


@contextmanager
def open_warehouse(path: str | os.PathLike[str], read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    con = connect(path, read_only=read_only)
    try:
        yield con
    finally:
        con.close()


@dataclass(slots=True)
class StoreResult:
    file_id: str
    name: str
    status: str  # "added" | "duplicate"
    format: str
    records: int
    runs: int
    existing_disk: str | None = None


def store_file(
    con: duckdb.DuckDBPyConnection,
    name: str,
    data: bytes,
    sha256: str,
    parsed: ParsedFile,
    disk: str,
    host: str | None = None,
    tags: Sequence[str] = (),
    notes: str | None = None,
) -> StoreResult:
    """Store one parsed file and all its rows in one transaction; the same bytes twice add nothing."""
    file_id = sha256[:16]
    existing = con.execute("SELECT file_id, disk FROM raw_files WHERE sha256 = ?", [sha256]).fetchone()
    if existing:
        return StoreResult(existing[0], name, "duplicate", parsed.format, 0, parsed.runs, existing_disk=existing[1])
    tables = _row_tables(file_id, parsed)
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(
            "INSERT INTO raw_files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                file_id,
                name,
                sha256,
                len(data),
                parsed.format,
                parsed.tool_version,
                parsed.encoding,
                datetime.now(UTC),
                disk,
                host,
                list(tags),
                notes,
                parsed.warnings,
                __version__,
            ],
        )
        con.execute("INSERT INTO raw_file_contents VALUES (?, ?)", [file_id, data])
        for table, arrow in tables.items():
            if arrow.num_rows:
                con.register("_kp_rows", arrow)
                try:
                    con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _kp_rows")
                finally:
                    con.unregister("_kp_rows")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return StoreResult(file_id, name, "added", parsed.format, len(parsed.records), parsed.runs)


def _row_tables(file_id: str, parsed: ParsedFile) -> dict[str, pa.Table]:
    io: dict[str, list] = {}
    qio: dict[str, list] = {}
    qtime: dict[str, list] = {}
    meta: dict[tuple[int, str], str] = {}
    hist: dict[str, list] = {"file_id": [], "record_index": [], "bound": [], "bound_unit": [], "value": [], "kind": []}

    def add(cols: dict[str, list], row: dict) -> None:
        for k, v in row.items():
            cols.setdefault(k, []).append(v)

    for i, rec in enumerate(parsed.records):
        if isinstance(rec, IoRecord):
            row = {
                f.name: getattr(rec, f.name)
                for f in fields(IoRecord)
                if f.name not in ("metadata", "histogram", "histogram_kind", "record")
            }
            add(io, {"file_id": file_id, "record_index": i, **row})
            for k, v in rec.metadata.items():
                meta.setdefault((rec.run_index, k), v)
            for bound, value in rec.histogram:
                hist["file_id"].append(file_id)
                hist["record_index"].append(i)
                hist["bound"].append(float(bound))
                hist["bound_unit"].append(rec.latency_unit)
                hist["value"].append(float(value))
                hist["kind"].append(rec.histogram_kind)
        elif isinstance(rec, QueryIoRecord):
            row = {f.name: getattr(rec, f.name) for f in fields(QueryIoRecord) if f.name not in ("tool", "record")}
            add(qio, {"file_id": file_id, "record_index": i, **row})
        elif isinstance(rec, QueryTimeRecord):
            row = {f.name: getattr(rec, f.name) for f in fields(QueryTimeRecord) if f.name not in ("tool", "record")}
            add(qtime, {"file_id": file_id, "record_index": i, **row})
    meta_cols = {
        "file_id": [file_id] * len(meta),
        "run_index": [k[0] for k in meta],
        "key": [k[1] for k in meta],
        "value": list(meta.values()),
    }
    return {
        "raw_io_records": _arrow(io, _IO_SCHEMA),
        "raw_query_io": _arrow(qio, _QUERY_IO_SCHEMA),
        "raw_query_time": _arrow(qtime, _QUERY_TIME_SCHEMA),
        "raw_run_metadata": _arrow(meta_cols, _META_SCHEMA),
        "raw_latency_histograms": _arrow(hist, _HIST_SCHEMA),
    }


def _arrow(cols: dict[str, list], schema: pa.Schema) -> pa.Table:
    if not cols or not next(iter(cols.values()), []):
        return schema.empty_table()
    return pa.table(
        {f.name: pa.array(cols.get(f.name, [None] * len(next(iter(cols.values())))), f.type) for f in schema}
    )


_S, _I, _F, _B = pa.string(), pa.int32(), pa.float64(), pa.int64()
_IO_SCHEMA = pa.schema(
    [
        ("file_id", _S),
        ("record_index", _I),
        ("run_index", _I),
        ("source_line", _I),
        ("tool", _S),
        ("tool_version", _S),
        ("target", _S),
        ("started_at", _S),
        ("pattern", _S),
        ("operation", _S),
        ("read_pct", _F),
        ("direction", _S),
        ("block_size_bytes", _B),
        ("threads", _I),
        ("queue_depth", _I),
        ("duration_s", _F),
        ("iops", _F),
        ("throughput", _F),
        ("throughput_unit", _S),
        ("latency_unit", _S),
    ]
    + [(f"latency_{k}", _F) for k in ("avg", "min", "max", "p50", "p95", "p99", "p999")]
    + [("inferred", pa.list_(_S))]
)
_QUERY_IO_SCHEMA = pa.schema(
    [("file_id", _S), ("record_index", _I), ("statement_index", _I), ("source_line", _I), ("table_name", _S)]
    + [(c, _B) for c in _QUERY_IO_INTS]
    + [("tool_version", _S), ("language", _S)]
)
_QUERY_TIME_SCHEMA = pa.schema(
    [
        ("file_id", _S),
        ("record_index", _I),
        ("statement_index", _I),
        ("source_line", _I),
        ("phase", _S),
        ("cpu_ms", _F),
        ("elapsed_ms", _F),
        ("tool_version", _S),
        ("language", _S),
    ]
)
_META_SCHEMA = pa.schema([("file_id", _S), ("run_index", _I), ("key", _S), ("value", _S)])
_HIST_SCHEMA = pa.schema(
    [("file_id", _S), ("record_index", _I), ("bound", _F), ("bound_unit", _S), ("value", _F), ("kind", _S)]
)


def resolve_file_id(con: duckdb.DuckDBPyConnection, file_id: str) -> str:
    """Accept a unique prefix of a file id, as git accepts short hashes."""
    rows = con.execute(
        "SELECT file_id FROM raw_files WHERE file_id LIKE ? || '%' ESCAPE '\\'",
        [file_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")],
    ).fetchall()
    if not rows:
        raise KeyError(f"no stored file with id {file_id!r} (see `kneepoint files`)")
    if len(rows) > 1:
        raise KeyError(f"file id {file_id!r} is ambiguous: {', '.join(r[0] for r in rows)}")
    return rows[0][0]


def delete_file(con: duckdb.DuckDBPyConnection, file_id: str) -> None:
    con.execute("BEGIN TRANSACTION")
    try:
        for table in RAW_TABLES:
            con.execute(f"DELETE FROM {table} WHERE file_id = ?", [file_id])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def relabel_file(
    con: duckdb.DuckDBPyConnection, file_id: str, disk: str | None = None, host: str | None = None
) -> None:
    if disk is not None:
        con.execute("UPDATE raw_files SET disk = ? WHERE file_id = ?", [disk, file_id])
    if host is not None:
        con.execute("UPDATE raw_files SET host = ? WHERE file_id = ?", [host or None, file_id])


def list_files(con: duckdb.DuckDBPyConnection) -> list[dict]:
    cur = con.execute(
        """
        SELECT f.file_id, f.name, f.sha256, f.format, f.disk, f.host,
               coalesce(io.n, 0) + coalesce(qi.n, 0) + coalesce(qt.n, 0) AS records,
               strftime(f.ingested_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ') AS ingested_at,
               f.tool_version, f.size_bytes, f.tags, f.notes
        FROM raw_files f
        LEFT JOIN (SELECT file_id, count(*) n FROM raw_io_records GROUP BY ALL) io USING (file_id)
        LEFT JOIN (SELECT file_id, count(*) n FROM raw_query_io GROUP BY ALL) qi USING (file_id)
        LEFT JOIN (SELECT file_id, count(*) n FROM raw_query_time GROUP BY ALL) qt USING (file_id)
        ORDER BY f.ingested_at, f.name
        """
    )
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]


def file_content(con: duckdb.DuckDBPyConnection, file_id: str) -> tuple[str, bytes]:
    row = con.execute(
        "SELECT f.name, c.content FROM raw_files f JOIN raw_file_contents c USING (file_id) WHERE file_id = ?",
        [file_id],
    ).fetchone()
    if row is None:
        raise KeyError(f"no stored file with id {file_id!r}")
    return row[0], bytes(row[1])
