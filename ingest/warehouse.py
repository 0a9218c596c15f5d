"""The DuckDB warehouse: the raw layer that `ingest` writes and everything downstream is rebuilt from.

A file is stored whole or not at all (one transaction per file, or per batch of whole files for a large
ingest); the same bytes are stored once (sha256); bulk rows go in through Arrow.
Only one process can write a DuckDB file: `connect` waits a bounded time for another writer and then
raises WarehouseBusy naming the process that holds it.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from operator import attrgetter
from pathlib import Path

import duckdb
import pyarrow as pa

from ingest import __version__, units
from ingest.errors import WarehouseBusy
from ingest.records import LATENCY_KEYS, IoRecord, ParsedFile, QueryIoRecord, QueryTimeRecord

DEFAULT_DB = "warehouse.duckdb"
LOCK_WAIT_S = float(os.environ.get("KNEEPOINT_LOCK_WAIT_S", "15"))

_LATENCY_COLS = ", ".join(f"latency_{k} DOUBLE" for k in LATENCY_KEYS)
_QUERY_IO_INTS = [
    f.name
    for f in fields(QueryIoRecord)
    if f.name not in ("statement_index", "source_line", "table_name", "tool", "tool_version", "language", "record")
]

# Keys: raw_files.file_id and sha256 (the duplicate check). The row tables have none: their keys
# (file_id, record_index) are made by store_file in one transaction per file, and an index on them would be
# maintained on every insert and rewritten at every checkpoint, for nothing (dbt's unique tests check them).
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
    inferred VARCHAR[]
);
CREATE TABLE IF NOT EXISTS raw_query_io (
    file_id VARCHAR NOT NULL,
    record_index INTEGER NOT NULL,
    statement_index INTEGER NOT NULL,
    source_line INTEGER,
    table_name VARCHAR NOT NULL,
    {", ".join(f"{c} BIGINT" for c in _QUERY_IO_INTS)},
    tool_version VARCHAR,
    language VARCHAR
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
    language VARCHAR
);
CREATE TABLE IF NOT EXISTS raw_run_metadata (
    file_id VARCHAR NOT NULL,
    run_index INTEGER NOT NULL,
    key VARCHAR NOT NULL,
    value VARCHAR
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

# Children first: the order `delete_file` empties them in.
RAW_TABLES = (
    "raw_latency_histograms",
    "raw_run_metadata",
    "raw_query_time",
    "raw_query_io",
    "raw_io_records",
    "raw_file_contents",
    "raw_files",
)
# Tables holding a file's parsed rows: what "all of a file's rows" means.
ROW_TABLES = ("raw_io_records", "raw_query_io", "raw_query_time", "raw_run_metadata", "raw_latency_histograms")

HISTOGRAM_KINDS = ("count", "share")

_LOCK_HOLDER = re.compile(r"Conflicting lock is held in (?P<exe>.*?) \(PID (?P<pid>\d+)\)")
_LOCK_FAILED = "Could not set lock on file"
_HANDLE_CONFLICT = "Unique file handle conflict"
_SCHEMA_LOCK = threading.Lock()


class StoreError(RuntimeError):
    """A parsed file that could not be stored; nothing of it was written.

    `fatal` means the warehouse itself failed (disk full, database invalidated): storing more files is
    pointless until that is fixed."""

    def __init__(self, reason: str, fatal: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.fatal = fatal


def db_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """--db beats KNEEPOINT_DB beats ./warehouse.duckdb."""
    return Path(explicit or os.environ.get("KNEEPOINT_DB") or DEFAULT_DB).resolve()


def connect(
    path: str | os.PathLike[str], read_only: bool = False, wait_s: float | None = None
) -> duckdb.DuckDBPyConnection:
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
        except duckdb.ResourceInUseException as exc:
            # Another thread of this process closing the database's last connection while this one opens it:
            # a moment later the file is free again.
            if _HANDLE_CONFLICT not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.02)
        except duckdb.IOException as exc:
            if _LOCK_FAILED not in str(exc):
                raise
            if time.monotonic() >= deadline:
                m = _LOCK_HOLDER.search(str(exc))
                holder = f"process {m['pid']} ({m['exe']})" if m else "another process"
                raise WarehouseBusy(
                    f"warehouse busy: {path} is held by {holder}; waited {wait_s:g} s "
                    "(KNEEPOINT_LOCK_WAIT_S). Try again when it has finished, or close that process."
                ) from None
            time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(delay * 2, 1.0)
    if not read_only and not _has_schema(con):
        # Threads opening a new warehouse at once would all create the raw layer and conflict in DuckDB's catalog.
        with _SCHEMA_LOCK:
            if not _has_schema(con):
                con.execute(SCHEMA)
    return con


def _has_schema(con: duckdb.DuckDBPyConnection) -> bool:
    """One catalog read instead of seven CREATE ... IF NOT EXISTS on every connection."""
    n = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'main' AND list_contains(?, table_name)",
        [list(RAW_TABLES)],
    ).fetchall()[0][0]
    return n == len(RAW_TABLES)


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
    existing_host: str | None = None
    existing_name: str | None = None


@dataclass(slots=True)
class FileRows:
    """A parsed file's rows for the raw tables, still as Python values. `raw_tables` turns the rows of many files
    into Arrow at once: one `pa.array` per column and batch, where building each file's tables cost ~80 calls per
    file, seven times the parse of a fio JSON file."""

    file: tuple  # raw_files' row, in _FILES_SCHEMA's order
    content: bytes
    io: list[tuple[int, IoRecord]]  # (record_index, record)
    query_io: list[tuple[int, QueryIoRecord]]
    query_time: list[tuple[int, QueryTimeRecord]]
    metadata: dict[tuple[int, str], str | None]  # (run_index, key) -> value
    # raw_latency_histograms' columns but file_id: record_index, bound, bound_unit, value, kind.
    histograms: tuple[list[int], list[float], list[str], list[float], list[str]]

    def counts(self) -> dict[str, int]:
        return {
            "raw_latency_histograms": len(self.histograms[0]),
            "raw_run_metadata": len(self.metadata),
            "raw_query_time": len(self.query_time),
            "raw_query_io": len(self.query_io),
            "raw_io_records": len(self.io),
            "raw_file_contents": 1,
            "raw_files": 1,
        }


@dataclass(slots=True)
class PreparedFile:
    """A parsed file ready for the raw layer: what a worker process hands to the writer.

    Its rows are `rows` (Python values) until `attach_tables` gives it `arrow`: where they are in Arrow tables
    built for many files at once."""

    file_id: str
    name: str
    sha256: str
    size_bytes: int
    format: str
    records: int
    runs: int
    disk: str
    host: str | None
    row_counts: dict[str, int]
    rows: FileRows | None
    arrow: ArrowRows | None = None

    def table(self, name: str) -> pa.Table:
        """This file's rows of one raw table (a zero-copy slice)."""
        assert self.arrow is not None, "attach_tables first"
        return self.arrow.tables[name].slice(self.arrow.offsets[name], self.row_counts[name])


@dataclass(slots=True)
class ArrowRows:
    tables: dict[str, pa.Table]  # per raw table, the rows of the files built together
    offsets: dict[str, int]  # where this file's rows start in each


def prepare_file(
    name: str,
    data: bytes,
    sha256: str,
    parsed: ParsedFile,
    disk: str,
    host: str | None = None,
    tags: Sequence[str] = (),
    notes: str | None = None,
) -> PreparedFile:
    """The file's rows for every raw table; StoreError when they do not fit the raw layer (nothing written)."""
    file_id = sha256[:16]
    file_row = (
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
        list(parsed.warnings),
        __version__,
    )
    try:
        rows = FileRows(file_row, data, *_record_rows(parsed))
    except (TypeError, ValueError) as exc:
        raise StoreError(f"rows do not fit the raw layer: {exc}") from exc
    return PreparedFile(
        file_id,
        name,
        sha256,
        len(data),
        parsed.format,
        len(parsed.records),
        parsed.runs,
        disk,
        host,
        rows.counts(),
        rows,
    )


# What turning Python values into Arrow raises when a value does not fit its column (an int beyond INTEGER, ...).
_CONVERSION_ERRORS = (pa.ArrowException, TypeError, ValueError, OverflowError)


def raw_tables(files: Sequence[PreparedFile]) -> tuple[dict[str, pa.Table], list[StoreError | None]]:
    """The rows of many files as one Arrow table per raw table, file after file; and per file None, or the
    StoreError saying why its rows do not fit (that file's rows are left out of the tables)."""
    try:
        return _arrow_tables([f.rows for f in files]), [None] * len(files)
    except _CONVERSION_ERRORS:
        pass
    # Rare (a value out of its column's range): find the files at fault one by one, build the rest together.
    errors: list[StoreError | None] = []
    for f in files:
        try:
            _arrow_tables([f.rows])
            errors.append(None)
        except _CONVERSION_ERRORS as exc:
            errors.append(StoreError(f"rows do not fit the raw layer: {exc}"))
    fitting = [f.rows for f, e in zip(files, errors, strict=True) if e is None]
    return _arrow_tables(fitting), errors


def attach_tables(files: Sequence[PreparedFile], tables: dict[str, pa.Table]) -> None:
    """Point each file at its rows in `tables`, the raw_tables of exactly these files, in order."""
    offsets = dict.fromkeys(RAW_TABLES, 0)
    for f in files:
        f.arrow = ArrowRows(tables, offsets.copy())
        for table in RAW_TABLES:
            offsets[table] += f.row_counts[table]
        f.rows = None


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
    """Store one parsed file and all its rows in one transaction; the same bytes twice add nothing.

    Raises StoreError (and leaves nothing of the file behind) when the rows cannot be stored."""
    return store_prepared(con, prepare_file(name, data, sha256, parsed, disk, host, tags, notes))


def store_prepared(con: duckdb.DuckDBPyConnection, f: PreparedFile) -> StoreResult:
    """One prepared file in one transaction (StoreError: nothing of it written)."""
    if f.rows is not None:
        tables, (error,) = raw_tables([f])
        if error is not None:
            raise error
        attach_tables([f], tables)
    con.execute("BEGIN TRANSACTION")
    try:
        # The sha256 UNIQUE constraint is the duplicate check: no extra query per new file.
        for table in reversed(RAW_TABLES):  # parents first
            if f.row_counts[table]:
                _insert(con, table, f.table(table))
        con.execute("COMMIT")
    except duckdb.ConstraintException as exc:
        _rollback(con)
        existing = _stored_as(con, f.sha256)
        if existing is None:
            raise StoreError(f"could not be stored: {exc}") from exc
        return _duplicate(f, existing)
    except (duckdb.FatalException, duckdb.IOException) as exc:
        _rollback(con)
        raise StoreError(f"warehouse failure while storing: {exc}", fatal=True) from exc
    except duckdb.Error as exc:
        _rollback(con)
        raise StoreError(f"could not be stored: {exc}") from exc
    except BaseException:
        _rollback(con)
        raise
    return StoreResult(f.file_id, f.name, "added", f.format, f.records, f.runs)


def store_batch(con: duckdb.DuckDBPyConnection, batch: Sequence[PreparedFile]) -> list[StoreResult | StoreError]:
    """Store many files at once: one transaction and one bulk insert per raw table for the new ones.

    Every file is still whole or absent (the batch commits or not). Files already stored (or twice in the batch)
    come back as duplicates. If the batch fails, it is rolled back and stored file by file, so a file that cannot
    be stored is reported alone; a StoreError with `fatal` set means the files after it were not tried."""
    known = _stored_as_many(con, [f.sha256 for f in batch])
    results: list[StoreResult | StoreError | None] = [None] * len(batch)
    first_of: dict[str, PreparedFile] = {}
    new: list[int] = []
    for i, f in enumerate(batch):
        if f.sha256 in known:
            results[i] = _duplicate(f, known[f.sha256])
        elif f.sha256 in first_of:
            same = first_of[f.sha256]
            results[i] = _duplicate(f, (same.file_id, same.disk, same.host, same.name))
        else:
            first_of[f.sha256] = f
            new.append(i)
    # Files whose rows are not Arrow yet (not prepared by a worker) are turned into Arrow together.
    unbuilt = [i for i in new if batch[i].rows is not None]
    if unbuilt:
        tables, errors = raw_tables([batch[i] for i in unbuilt])
        for i, error in zip(unbuilt, errors, strict=True):
            results[i] = error
        attach_tables([batch[i] for i, e in zip(unbuilt, errors, strict=True) if e is None], tables)
        new = [i for i in new if results[i] is None]
    if new and not _insert_together(con, [batch[i] for i in new]):
        for i in new:
            try:
                results[i] = store_prepared(con, batch[i])
            except StoreError as exc:
                results[i] = exc
                if exc.fatal:
                    return [r for r in results[: i + 1] if r is not None]  # the rest was not tried
    for i in new:
        if results[i] is None:
            f = batch[i]
            results[i] = StoreResult(f.file_id, f.name, "added", f.format, f.records, f.runs)
    return [r for r in results if r is not None]


def _insert_together(con: duckdb.DuckDBPyConnection, files: list[PreparedFile]) -> bool:
    """Insert the files' rows in one transaction; False (rolled back) when anything refused them."""
    con.execute("BEGIN TRANSACTION")
    try:
        for table in reversed(RAW_TABLES):  # parents first
            parts = _contiguous(files, table)
            if parts:
                # One contiguous table: DuckDB's Arrow scan pays per chunk, and a batch of 256 one-row chunks
                # took it 10x longer than one chunk of 256 rows.
                _insert(con, table, pa.concat_tables(parts).combine_chunks() if len(parts) > 1 else parts[0])
        con.execute("COMMIT")
    except duckdb.Error:
        _rollback(con)
        return False
    except BaseException:
        _rollback(con)
        raise
    return True


def _contiguous(files: list[PreparedFile], table: str) -> list[pa.Table]:
    """The files' rows of `table`, one slice per run of files that follow each other in the same Arrow table
    (a batch is a few such runs: the chunks its files were prepared in)."""
    parts: list[pa.Table] = []
    source: pa.Table | None = None
    start = end = 0
    for f in files:
        n = f.row_counts[table]
        if not n:
            continue
        assert f.arrow is not None, "attach_tables first"
        rows, offset = f.arrow.tables[table], f.arrow.offsets[table]
        if rows is source and offset == end:
            end += n
            continue
        if source is not None:
            parts.append(source.slice(start, end - start))
        source, start, end = rows, offset, offset + n
    if source is not None:
        parts.append(source.slice(start, end - start))
    return parts


def _duplicate(f: PreparedFile, existing: tuple[str, str, str | None, str]) -> StoreResult:
    return StoreResult(
        existing[0],
        f.name,
        "duplicate",
        f.format,
        0,
        f.runs,
        existing_disk=existing[1],
        existing_host=existing[2],
        existing_name=existing[3],
    )


def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: pa.Table) -> None:
    """One bulk insert from an Arrow table (DuckDB reads the local `_kp_rows` by name, without a copy)."""
    _kp_rows = rows  # noqa: F841 - read by DuckDB's replacement scan
    con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _kp_rows")


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    """Roll back; a connection that is already gone has nothing to roll back, and the first error matters."""
    with suppress(duckdb.Error):
        con.execute("ROLLBACK")


def _stored_as(con: duckdb.DuckDBPyConnection, sha256: str) -> tuple[str, str, str | None, str] | None:
    rows = con.execute("SELECT file_id, disk, host, name FROM raw_files WHERE sha256 = ?", [sha256]).fetchall()
    return rows[0] if rows else None


def _stored_as_many(con: duckdb.DuckDBPyConnection, sha256s: list[str]) -> dict[str, tuple[str, str, str | None, str]]:
    rows = con.execute(
        "SELECT sha256, file_id, disk, host, name FROM raw_files WHERE list_contains(?, sha256)", [sha256s]
    ).fetchall()
    return {r[0]: r[1:] for r in rows}


_IO_FIELDS = tuple(
    f.name for f in fields(IoRecord) if f.name not in ("metadata", "histogram", "histogram_kind", "record")
)
_QUERY_IO_FIELDS = tuple(f.name for f in fields(QueryIoRecord) if f.name not in ("tool", "record"))
_QUERY_TIME_FIELDS = tuple(f.name for f in fields(QueryTimeRecord) if f.name not in ("tool", "record"))


def _record_rows(parsed: ParsedFile) -> tuple[list, list, list, dict, tuple]:
    """The file's records sorted by raw table, checked where a wrong value could still be blamed on the file."""
    io: list[tuple[int, IoRecord]] = []
    qio: list[tuple[int, QueryIoRecord]] = []
    qtime: list[tuple[int, QueryTimeRecord]] = []
    for i, rec in enumerate(parsed.records):
        if isinstance(rec, IoRecord):
            io.append((i, rec))
        elif isinstance(rec, QueryIoRecord):
            qio.append((i, rec))
        elif isinstance(rec, QueryTimeRecord):
            qtime.append((i, rec))
        else:
            raise TypeError(f"record {i} is a {type(rec).__name__}, not a kneepoint record")

    throughput_units, latency_units = units.throughput_units(), units.latency_units()
    meta: dict[tuple[int, str], str | None] = {}
    h_index: list[int] = []
    h_bound: list[float] = []
    h_unit: list[str] = []
    h_value: list[float] = []
    h_kind: list[str] = []
    for i, rec in io:
        # An unknown unit would become NULL in staging: refuse it here, where the file can be named.
        if rec.throughput is not None and rec.throughput_unit not in throughput_units:
            raise ValueError(f"record {i}: unknown throughput unit {rec.throughput_unit!r}")
        if rec.latency_unit not in latency_units:
            raise ValueError(f"record {i}: unknown latency unit {rec.latency_unit!r}")
        for k, v in rec.metadata.items():
            # Metadata is per run; the run's first record speaks for it.
            meta.setdefault((rec.run_index, k), None if v is None else str(v))
        if rec.histogram:
            if rec.histogram_kind not in HISTOGRAM_KINDS:
                raise ValueError(f"record {i}: histogram kind {rec.histogram_kind!r} is not one of {HISTOGRAM_KINDS}")
            n = len(rec.histogram)
            bounds, values = zip(*rec.histogram, strict=True)
            h_index += [i] * n
            h_bound += bounds
            h_value += values
            h_unit += [rec.latency_unit] * n
            h_kind += [rec.histogram_kind] * n
    return io, qio, qtime, meta, (h_index, h_bound, h_unit, h_value, h_kind)


def _arrow_tables(files: list[FileRows]) -> dict[str, pa.Table]:
    """Many files' rows as one Arrow table per raw table (raises what pa.array raises on a value that does not fit)."""
    ids = [f.file[0] for f in files]
    meta_ids: list[str] = []
    meta_runs: list[int] = []
    meta_keys: list[str] = []
    meta_values: list[str | None] = []
    hist_ids: list[str] = []
    hist: tuple[list, ...] = ([], [], [], [], [])
    for file_id, f in zip(ids, files, strict=True):
        meta_ids += [file_id] * len(f.metadata)
        meta_runs += [k[0] for k in f.metadata]
        meta_keys += [k[1] for k in f.metadata]
        meta_values += f.metadata.values()
        hist_ids += [file_id] * len(f.histograms[0])
        for column, values in zip(hist, f.histograms, strict=True):
            column += values
    return {
        "raw_files": _table(list(zip(*(f.file for f in files), strict=True)), _FILES_SCHEMA, len(files)),
        "raw_file_contents": _table([ids, [f.content for f in files]], _CONTENTS_SCHEMA, len(files)),
        "raw_io_records": _records(ids, [f.io for f in files], _IO_FIELDS, _IO_SCHEMA),
        "raw_query_io": _records(ids, [f.query_io for f in files], _QUERY_IO_FIELDS, _QUERY_IO_SCHEMA),
        "raw_query_time": _records(ids, [f.query_time for f in files], _QUERY_TIME_FIELDS, _QUERY_TIME_SCHEMA),
        "raw_run_metadata": _table([meta_ids, meta_runs, meta_keys, meta_values], _METADATA_SCHEMA, len(meta_ids)),
        "raw_latency_histograms": _table([hist_ids, *hist], _HISTOGRAMS_SCHEMA, len(hist_ids)),
    }


def _records(
    ids: list[str], per_file: list[list[tuple[int, object]]], names: tuple[str, ...], schema: pa.Schema
) -> pa.Table:
    file_ids: list[str] = []
    indexes: list[int] = []
    recs: list[object] = []
    for file_id, pairs in zip(ids, per_file, strict=True):
        file_ids += [file_id] * len(pairs)
        indexes += [i for i, _ in pairs]
        recs += [r for _, r in pairs]
    if not recs:
        return schema.empty_table()
    # One C-level pass reads every field of every record; zip(*) turns the rows into columns.
    values = dict(zip(names, zip(*map(attrgetter(*names), recs), strict=True), strict=True))
    if "inferred" in values:
        values["inferred"] = [list(v) for v in values["inferred"]]
    values["file_id"], values["record_index"] = file_ids, indexes
    return _table([values[name] for name in schema.names], schema, len(recs))


def _table(columns: list, schema: pa.Schema, n: int) -> pa.Table:
    if not n:
        return schema.empty_table()
    return pa.Table.from_arrays(
        [pa.array(values, type) for values, type in zip(columns, schema.types, strict=True)], schema=schema
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
    + [(f"latency_{k}", _F) for k in LATENCY_KEYS]
    + [("inferred", pa.list_(_S))]
)
_FILES_SCHEMA = pa.schema(
    [
        ("file_id", _S),
        ("name", _S),
        ("sha256", _S),
        ("size_bytes", _B),
        ("format", _S),
        ("tool_version", _S),
        ("encoding", _S),
        ("ingested_at", pa.timestamp("us", tz="UTC")),
        ("disk", _S),
        ("host", _S),
        ("tags", pa.list_(_S)),
        ("notes", _S),
        ("warnings", pa.list_(_S)),
        ("kneepoint_version", _S),
    ]
)
_CONTENTS_SCHEMA = pa.schema([("file_id", _S), ("content", pa.binary())])
_METADATA_SCHEMA = pa.schema([("file_id", _S), ("run_index", _I), ("key", _S), ("value", _S)])
_HISTOGRAMS_SCHEMA = pa.schema(
    [("file_id", _S), ("record_index", _I), ("bound", _F), ("bound_unit", _S), ("value", _F), ("kind", _S)]
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


def resolve_file_id(con: duckdb.DuckDBPyConnection, file_id: str) -> str:
    """Accept a unique prefix of a file id, as git accepts short hashes."""
    prefix = file_id.strip().lower()
    if not prefix:
        raise KeyError("give a file id (see `kneepoint files`)")
    rows = con.execute(
        "SELECT file_id FROM raw_files WHERE starts_with(file_id, ?) ORDER BY file_id", [prefix]
    ).fetchall()
    if not rows:
        raise KeyError(f"no stored file with id {file_id!r} (see `kneepoint files`)")
    if len(rows) > 1:
        raise KeyError(f"file id {file_id!r} is ambiguous: {', '.join(r[0] for r in rows)}")
    return rows[0][0]


def delete_file(con: duckdb.DuckDBPyConnection, file_id: str) -> None:
    """Remove a file and every row that came from it, all or nothing."""
    con.execute("BEGIN TRANSACTION")
    try:
        for table in RAW_TABLES:
            con.execute(f"DELETE FROM {table} WHERE file_id = ?", [file_id])
        con.execute("COMMIT")
    except BaseException:
        _rollback(con)
        raise


def relabel_file(
    con: duckdb.DuckDBPyConnection, file_id: str, disk: str | None = None, host: str | None = None
) -> None:
    """New labels for stored bytes. `host=''` removes the host label; None leaves a label as it is."""
    if disk is not None and not disk.strip():
        raise ValueError("the disk label cannot be empty")
    con.execute(
        "UPDATE raw_files SET disk = coalesce(?, disk), host = CASE WHEN ? THEN nullif(?, '') ELSE host END "
        "WHERE file_id = ?",
        [disk.strip() if disk is not None else None, host is not None, (host or "").strip(), file_id],
    )


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


def row_counts(con: duckdb.DuckDBPyConnection, file_id: str | None = None) -> dict[str, int]:
    """Rows per raw table, for one file or the whole warehouse."""
    where, params = ("WHERE file_id = ?", [file_id]) if file_id else ("", [])
    return {t: con.execute(f"SELECT count(*) FROM {t} {where}", params).fetchall()[0][0] for t in RAW_TABLES}


def file_content(con: duckdb.DuckDBPyConnection, file_id: str) -> tuple[str, bytes]:
    rows = con.execute(
        "SELECT f.name, c.content FROM raw_files f JOIN raw_file_contents c USING (file_id) WHERE file_id = ?",
        [file_id],
    ).fetchall()
    if not rows:
        raise KeyError(f"no stored file with id {file_id!r}")
    return rows[0][0], bytes(rows[0][1])
