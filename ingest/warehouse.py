"""The warehouse: the raw layer that `ingest` writes and everything downstream is built from.

Two engines hold it: an embedded DuckDB file (the default: one person) or a PostgreSQL database (a team's shared
warehouse, `postgresql://...`: ingest/postgres.py). The statements here are written once where both engines speak
the SQL, and per engine where they do not (the raw layer's DDL types, locks, bulk inserts).

A file is stored whole or not at all (one transaction per file, or per batch of whole files for a large
ingest); the same bytes are stored once (sha256); bulk rows go in through Arrow. Every change (a file stored,
relabelled or deleted) appends to the change log `raw_file_changes` in the same transaction, numbered in commit
order: a model build covers the changes up to the number it read when it started (ingest/build.py).
Only one process can write a DuckDB file: `connect` waits a bounded time for another writer and then
raises WarehouseBusy naming the process that holds it. A PostgreSQL warehouse takes writers from many hosts at once:
a build's cut-off waits for the changes already numbered to commit (a table lock), and builds, relabels and
deletes exclude each other with advisory locks (`building`, `changing_files`).
"""

from __future__ import annotations

import ctypes
import importlib.abc
import json
import math
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from itertools import groupby
from operator import attrgetter
from pathlib import Path

import duckdb
import pyarrow as pa

from kneepoint.ingest import __version__, contents, postgres, schema, units
from kneepoint.ingest.errors import ConstraintViolation, DatabaseError, MissingTable, WarehouseBusy, WarehouseFailure
from kneepoint.ingest.labels import check_label
from kneepoint.ingest.records import (
    IntervalRecord,
    IoRecord,
    LoadRecord,
    ParsedFile,
    QueryIoRecord,
    QueryTimeRecord,
    Record,
    WaitRecord,
)
from kneepoint.ingest.schema import RAW_TABLES as _RAW_TABLE_DECLARATIONS
from kneepoint.ingest.schema import ROW_TABLES

DEFAULT_DB = "warehouse.duckdb"
# Where a warehouse is: a DuckDB file, or a PostgreSQL database by its URL.
Location = Path | postgres.Target
Connection = duckdb.DuckDBPyConnection | postgres.Connection
LOCK_WAIT_S = float(os.environ.get("KNEEPOINT_LOCK_WAIT_S", "15"))

# Children first: the order `delete_file` empties them in (inserts go parents first).
RAW_TABLES = tuple(_RAW_TABLE_DECLARATIONS)
HISTOGRAM_KINDS = ("count", "share")
__all__ = ["ROW_TABLES", "RAW_TABLES"]

_LOCK_HOLDER = re.compile(r"Conflicting lock is held in (?P<exe>.*?) \(PID (?P<pid>\d+)\)")
_LOCK_FAILED = "Could not set lock on file"
_HANDLE_CONFLICT = "Unique file handle conflict"
# What the engines raise when a constraint refuses a row, when the warehouse itself fails, for any statement.
_REFUSED = (duckdb.ConstraintException, ConstraintViolation)
_FAILED = (duckdb.FatalException, duckdb.IOException, WarehouseFailure)
_ANY_ERROR = (duckdb.Error, DatabaseError)
# PostgreSQL advisory lock keys (any bigint; these spell "kneepoint" roughly): the schema's creation, and builds
# (held exclusively from a build's start to its end; relabel and delete hold it shared, so they wait for a build).
_SCHEMA_LOCK_KEY = 0x6B6E_6565_0001
BUILD_LOCK_KEY = 0x6B6E_6565_0002
_SCHEMA_LOCK = threading.Lock()

# A change's number is taken and committed under this lock, and a build reads the newest number under it too:
# sessions of one process commit in parallel, and a build that read number 7 while number 6 was still
# uncommitted would never build 6. (One process writes a DuckDB file, so a process-wide lock is enough.)
_COMMIT_LOCK = threading.Lock()
# Held by a model build from start to end and by relabel and delete: a build reads each file's labels and rows
# as they were when it started. Files stored meanwhile wait for the next build (its cut-off), never this lock.
FILE_CHANGE_LOCK = threading.RLock()


class StoreError(RuntimeError):
    """A parsed file that could not be stored; nothing of it was written.

    `fatal` means the warehouse itself failed (disk full, database invalidated): storing more files is
    pointless until that is fixed."""

    def __init__(self, reason: str, fatal: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.fatal = fatal


def locate(explicit: str | os.PathLike[str] | postgres.Target | None = None) -> Location:
    """--db beats KNEEPOINT_DB beats ./warehouse.duckdb; a postgresql:// URL names a PostgreSQL warehouse."""
    where = explicit or os.environ.get("KNEEPOINT_DB") or DEFAULT_DB
    if isinstance(where, postgres.Target):
        return where
    if postgres.is_url(str(where)):
        return postgres.Target(str(where))
    return Path(where).resolve()


def is_postgres(where: Location | Connection | str | os.PathLike[str]) -> bool:
    return isinstance(where, postgres.Target | postgres.Connection) or postgres.is_url(where)


def _dialect(con: Connection) -> str:
    return "postgres" if isinstance(con, postgres.Connection) else "duckdb"


def exists(where: Location) -> bool:
    """Whether there is a warehouse to read: the DuckDB file, or a PostgreSQL database holding the raw layer."""
    if not is_postgres(where):
        return Path(where).exists()
    con = postgres.Connection(locate(where), read_only=True)
    try:
        return bool(con.execute("SELECT to_regclass('raw_files') IS NOT NULL").fetchone()[0])
    finally:
        con.close()


# Told once per connect that has to wait for another process's lock (the command line says so on stderr).
_on_wait: Callable[[Path, str], None] | None = None


def notify_waits(callback: Callable[[Path, str], None] | None) -> None:
    """`callback(warehouse, holder)` is called when a connect starts waiting for another process's write lock."""
    global _on_wait
    _on_wait = callback


def connect(
    where: Location | str | os.PathLike[str], read_only: bool = False, wait_s: float | None = None
) -> Connection:
    """Open the warehouse; wait up to `wait_s` for another process's write lock on a DuckDB file, then fail clearly.

    A read-write connection completes the schema of a new or older warehouse."""
    if is_postgres(where):
        con: Connection = postgres.Connection(locate(where), read_only=read_only)
    else:
        con = _connect_duckdb(Path(where), read_only, wait_s)
    if not read_only and not _schema_current(con):
        # Threads (or, on PostgreSQL, hosts) opening a new warehouse at once would all create the raw layer.
        with _SCHEMA_LOCK:
            try:
                _complete_schema(con)
            except BaseException:
                con.close()
                raise
    return con


def _connect_duckdb(path: Path, read_only: bool, wait_s: float | None) -> duckdb.DuckDBPyConnection:
    wait_s = LOCK_WAIT_S if wait_s is None else wait_s
    if read_only and not path.exists():
        raise FileNotFoundError(f"no warehouse at {path}: ingest a file first (kneepoint ingest FILE --disk LABEL)")
    deadline = time.monotonic() + wait_s
    delay = 0.05
    told = False
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
            m = _LOCK_HOLDER.search(str(exc))
            holder = f"process {m['pid']} ({m['exe']})" if m else "another process"
            if not told and _on_wait is not None and time.monotonic() < deadline:
                _on_wait(path, holder)
                told = True
            if time.monotonic() >= deadline:
                raise WarehouseBusy(
                    f"warehouse busy: {path} is held by {holder}; waited {wait_s:g} s "
                    "(KNEEPOINT_LOCK_WAIT_S). Try again when it has finished, or close that process."
                ) from None
            time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(delay * 2, 1.0)
    # DuckDB draws a progress bar on stdout for a statement past 2 s: into a command's output (--json too).
    con.execute("SET enable_progress_bar = false")
    return con


def _schema_current(con: Connection) -> bool:
    """Whether the warehouse holds this version's schema: one row read, where comparing the catalog with the
    declaration costs ~15 ms on every connect."""
    try:
        found = con.execute("SELECT schema_hash FROM kneepoint_schema").fetchall()
    except (duckdb.CatalogException, MissingTable):
        return False
    return found == [(schema.schema_hash(_dialect(con)),)]


_CATALOG = "table_schema = current_schema() AND table_catalog = current_database()"


def _missing_columns(con: Connection) -> dict[str, list[str]]:
    """Per declared table, the columns the warehouse lacks (all of them for a missing table): one catalog read."""
    have: dict[str, set[str]] = {}
    columns = con.execute(f"SELECT table_name, column_name FROM information_schema.columns WHERE {_CATALOG}")
    for table, column in columns.fetchall():
        have.setdefault(table, set()).add(column)
    missing = {}
    for name, table in schema.TABLES.items():
        lacking = [c for c in table.column_names if c not in have.get(name, set())]
        if lacking:
            missing[name] = lacking
    return missing


def _complete_schema(con: Connection) -> None:
    """Create what a new warehouse lacks; bring an older one's tables to the declared columns, its files into the
    change log (one `stored` change each, in the order they were ingested) and its models to a full rebuild."""
    dialect = _dialect(con)
    with transaction(con):
        if dialect == "postgres":
            con.execute("SELECT pg_advisory_xact_lock(?)", [_SCHEMA_LOCK_KEY])
        found = con.execute(f"SELECT table_name FROM information_schema.tables WHERE {_CATALOG}").fetchall()
        tables = {r[0] for r in found}
        if schema.SCHEMA_VERSION.name in tables and _schema_current(con):
            return  # completed by another connection meanwhile
        missing = _missing_columns(con)
        for name, lacking in missing.items():
            if name not in tables or (dialect == "duckdb" and name == contents.VIEW):
                continue  # created below; DuckDB's view over the parts of the bytes is contents.complete's
            table = schema.TABLES[name]
            columns = {c.name: c for c in table.columns}
            if all(not columns[c].not_null and c not in table.unique and c != table.primary_key for c in lacking):
                for c in lacking:
                    con.execute(f"ALTER TABLE {name} ADD COLUMN {c} {schema.sql_type(columns[c].type, dialect)}")
            else:
                # DuckDB adds no constraint to an existing table: make the declared one and copy the rows over.
                kept = ", ".join(c for c in table.column_names if c not in lacking)
                con.execute(f"ALTER TABLE {name} RENAME TO {name}__old")
                con.execute(table.ddl(dialect))
                con.execute(f"INSERT INTO {name} ({kept}) SELECT {kept} FROM {name}__old")
                con.execute(f"DROP TABLE {name}__old")
        con.execute(schema.ddl(dialect))
        if dialect == "duckdb":
            contents.complete(con)
        # The build state of kneepoint before the change log: its models are rebuilt from the log.
        con.execute("DROP TABLE IF EXISTS kneepoint_last_build")
        unnumbered = [
            r[0]
            for r in con.execute(
                "SELECT file_id FROM raw_files WHERE stored_seq IS NULL ORDER BY ingested_at, file_id"
            ).fetchall()
        ]
        if unnumbered:
            record_changes(con, unnumbered, "stored")
            con.execute(
                "UPDATE raw_files SET stored_seq = (SELECT max(c.change_seq) FROM raw_file_changes c "
                "WHERE c.file_id = raw_files.file_id AND c.change = 'stored') WHERE stored_seq IS NULL"
            )
        con.execute("DELETE FROM kneepoint_schema")
        con.execute("INSERT INTO kneepoint_schema VALUES (?)", [schema.schema_hash(dialect)])


@contextmanager
def open_warehouse(where: Location | str | os.PathLike[str], read_only: bool = False) -> Iterator[Connection]:
    con = connect(where, read_only=read_only)
    try:
        yield con
    finally:
        con.close()


@contextmanager
def transaction(con: Connection) -> Iterator[None]:
    """All or nothing: commit when the block ends, roll back when it raises."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
    except BaseException:
        _rollback(con)
        raise
    con.execute("COMMIT")


@contextmanager
def changing(con: Connection) -> Iterator[None]:
    """A transaction that changes the raw layer and logs it (`record_changes`): numbered and committed so that a
    build's cut-off never passes an uncommitted change (DuckDB: under the process's commit lock; PostgreSQL: the
    change log's table lock, taken by `record_changes`)."""
    if is_postgres(con):
        with transaction(con):
            yield
    else:
        with _COMMIT_LOCK, transaction(con):
            yield


@contextmanager
def changing_files(con: Connection) -> Iterator[None]:
    """A `changing` transaction for a relabel or delete: it waits for a running build, which reads every file's
    labels and rows as they were when it started (files stored meanwhile never wait: the build's cut-off)."""
    if is_postgres(con):
        with changing(con):
            con.execute("SELECT pg_advisory_xact_lock_shared(?)", [BUILD_LOCK_KEY])
            yield
    else:
        with FILE_CHANGE_LOCK, changing(con):
            yield


@contextmanager
def building(where: Location, wait: bool = True) -> Iterator[bool]:
    """Held by a model build from its start to its end: True when this caller holds it; False when another build
    runs and `wait` is False (that build's next round covers the caller's changes: ingest/build.py)."""
    if not is_postgres(where):
        held = FILE_CHANGE_LOCK.acquire(blocking=wait)
        try:
            yield held
        finally:
            if held:
                FILE_CHANGE_LOCK.release()
        return
    # A session of its own holds the lock; closing it lets go, also when this process is killed.
    con = postgres.Connection(locate(where))
    try:
        held = con.execute("SELECT pg_try_advisory_lock(?)", [BUILD_LOCK_KEY]).fetchone()[0]
        if not held and wait:
            if _on_wait is not None:
                _on_wait(where, "another build")
            con.execute("SELECT pg_advisory_lock(?)", [BUILD_LOCK_KEY])
            held = True
        yield held
    finally:
        con.close()


def record_changes(con: Connection, file_ids: Sequence[str], change: str) -> list[int]:
    """Append one change per file to the log, inside the caller's `changing` block; their numbers, in order."""
    assert change in schema.FILE_CHANGES, change
    if not file_ids:
        return []
    if is_postgres(con):
        # Held to the commit, from before the numbers are taken: a build's cut-off (latest_change) waits for it.
        con.execute("LOCK TABLE raw_file_changes IN ROW EXCLUSIVE MODE")
    seqs = sorted(
        r[0]
        for r in con.execute(
            f"SELECT nextval('{schema.CHANGE_SEQUENCE}') FROM generate_series(1, ?)", [len(file_ids)]
        ).fetchall()
    )
    now = datetime.now(UTC)
    _kp_changes = pa.table(
        {
            "change_seq": pa.array(seqs, pa.int64()),
            "file_id": pa.array(list(file_ids), pa.string()),
            "change": pa.array([change] * len(seqs), pa.string()),
            "changed_at": pa.array([now] * len(seqs), pa.timestamp("us", tz="UTC")),
        }
    )
    insert_rows(con, "raw_file_changes", _kp_changes)
    return seqs


def latest_change(con: Connection, cutoff: bool = False) -> int:
    """The number of the newest committed change (0: none). `cutoff`: for a build, which covers every change up to
    it, so every change numbered below it must have committed (or failed) first."""
    newest = "SELECT coalesce(max(change_seq), 0) FROM raw_file_changes"
    if not is_postgres(con):
        with _COMMIT_LOCK:
            return con.execute(newest).fetchall()[0][0]
    if not cutoff:
        return con.execute(newest).fetchall()[0][0]
    with transaction(con):
        # SHARE conflicts with the ROW EXCLUSIVE lock every changing transaction takes before numbering its changes.
        con.execute("LOCK TABLE raw_file_changes IN SHARE MODE")
        return con.execute(newest).fetchall()[0][0]


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
    into Arrow at once: one `pa.array` per column and batch of files, not one per file. A file of many records has
    its row tables in Arrow already (`tables`, made by prepare_file a slice at a time), and no Python rows."""

    file: dict[str, object]  # raw_files' row
    content: bytes | contents.Frame  # the file's bytes, or already compressed as they are stored
    io: list[tuple[int, IoRecord]]  # (record_index, record)
    query_io: list[tuple[int, QueryIoRecord]]
    query_time: list[tuple[int, QueryTimeRecord]]
    metadata: dict[tuple[int, str], str | None]  # (run_index, key) -> value
    # raw_latency_histograms' columns but file_id: record_index, bound, bound_unit, value, kind.
    histograms: tuple[list[int], list[float], list[str], list[float], list[str]]
    intervals: list[tuple[int, IntervalRecord]]
    waits: list[tuple[int, WaitRecord]]
    loads: list[tuple[int, LoadRecord]]
    tables: dict[str, pa.Table] | None = None  # every row table but raw_files and raw_file_contents

    def counts(self) -> dict[str, int]:
        if self.tables is not None:
            rows = {name: table.num_rows for name, table in self.tables.items()}
            return {**rows, "raw_file_contents": 1, "raw_files": 1}
        return {
            "raw_latency_histograms": len(self.histograms[0]),
            "raw_run_metadata": len(self.metadata),
            "raw_load_steps": len(self.loads),
            "raw_waits": len(self.waits),
            "raw_intervals": len(self.intervals),
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
    data: bytes | contents.Frame,
    sha256: str,
    parsed: ParsedFile,
    disk: str,
    host: str | None = None,
    tags: Sequence[str] = (),
    notes: str | None = None,
    parse_options: Mapping[str, str] | None = None,
    take_records: bool = False,
) -> PreparedFile:
    """The file's rows for every raw table; StoreError when they do not fit the raw layer (nothing written).
    `data`: the file's bytes, or their Frame (compressed before parsing, as the ingest does). `parse_options`: what
    the file was read with (load_table's column mapping), stored with it. `take_records`: a file of more than
    SLICE_RECORDS records becomes Arrow here, a slice at a time, each slice taken out of `parsed.records` (left
    empty) once converted, so that its records and their rows are never all held at once."""
    file_id = sha256[:16]
    record_count, runs = len(parsed.records), parsed.runs  # before take_records empties them
    file_row = {
        "file_id": file_id,
        "name": name,
        "sha256": sha256,
        "size_bytes": contents.size_of(data),
        "format": parsed.format,
        "tool_version": parsed.tool_version,
        "encoding": parsed.encoding,
        "ingested_at": datetime.now(UTC),
        "disk": disk,
        "host": host,
        "tags": list(tags),
        "notes": notes,
        "warnings": list(parsed.warnings),
        "kneepoint_version": __version__,
        "parse_options": json.dumps(dict(sorted(parse_options.items())), ensure_ascii=False) if parse_options else None,
    }
    try:
        if take_records and record_count > SLICE_RECORDS:
            rows = FileRows(file_row, data, *_record_rows([]), tables=_taken_tables(file_row, data, parsed.records))
        else:
            rows = FileRows(file_row, data, *_record_rows(parsed.records))
    except _CONVERSION_ERRORS as exc:
        raise StoreError(f"rows do not fit the raw layer: {exc}") from exc
    return PreparedFile(
        file_id,
        name,
        sha256,
        contents.size_of(data),
        parsed.format,
        record_count,
        runs,
        disk,
        host,
        rows.counts(),
        rows,
    )


# What turning Python values into Arrow raises when a value does not fit its column (an int beyond INTEGER, ...).
_CONVERSION_ERRORS = (pa.ArrowException, TypeError, ValueError, OverflowError)
# A file of more records than this is turned into Arrow by prepare_file (take_records), this many records at a time:
# a 100 MB SQLIO log of 137,000 runs held 1.6 GB as records and their rows in Python; a slice is a few MB.
SLICE_RECORDS = 4096


def _taken_tables(file_row: dict[str, object], data: bytes, records: list[Record]) -> dict[str, pa.Table]:
    """The row tables of a file's records, about SLICE_RECORDS records at a time, each slice removed from `records`
    once it is Arrow (raises what pa.array raises on a value that does not fit). A slice ends between two runs: a
    run's metadata has one row per key, its first record's (_record_rows), so the run is read in one slice. Records
    out of run order are one slice."""
    parts: list[dict[str, pa.Table]] = []
    in_order = _in_run_order(records)
    start = 0
    while records:
        end = min(SLICE_RECORDS, len(records)) if in_order else len(records)
        while end < len(records) and _run(records[end]) is not None and _run(records[end]) == _run(records[end - 1]):
            end += 1
        part = records[:end]
        del records[:end]
        parts.append(_row_tables([FileRows(file_row, data, *_record_rows(part, start))]))
        start += len(part)
    return {name: pa.concat_tables([p[name] for p in parts]) for name in parts[0]}


def _run(record: Record) -> int | None:
    return record.run_index if isinstance(record, IoRecord) else None


def _in_run_order(records: list[Record]) -> bool:
    """Whether each run's records are next to each other, and runs never come back (a file's runs in order)."""
    previous: int | None = None
    highest = -1
    for record in records:
        run = _run(record)
        if run is not None and run != previous:
            if run <= highest:
                return False
            highest = run
        previous = run
    return True


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
    con: Connection,
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


def store_prepared(con: Connection, f: PreparedFile) -> StoreResult:
    """One prepared file in one transaction (StoreError: nothing of it written)."""
    if f.rows is not None:
        tables, (error,) = raw_tables([f])
        if error is not None:
            raise error
        attach_tables([f], tables)
    try:
        # The sha256 UNIQUE constraint is the duplicate check: no extra query per new file.
        _insert_files(con, [f])
    except _REFUSED as exc:
        # Stored meanwhile by another uploader (or refused for another reason: then it is not found).
        existing = _stored_as(con, f.sha256)
        if existing is None:
            raise StoreError(f"could not be stored: {exc}") from exc
        return _duplicate(f, existing)
    except _FAILED as exc:
        raise StoreError(f"warehouse failure while storing: {exc}", fatal=True) from exc
    except _ANY_ERROR as exc:
        raise StoreError(f"could not be stored: {exc}") from exc
    return StoreResult(f.file_id, f.name, "added", f.format, f.records, f.runs)


def store_batch(con: Connection, batch: Sequence[PreparedFile]) -> list[StoreResult | StoreError]:
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
    try:
        if new:
            _insert_files(con, [batch[i] for i in new])
    except _ANY_ERROR:
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


def _insert_files(con: Connection, files: list[PreparedFile]) -> None:
    """Insert the files' rows and their `stored` changes in one transaction (rolled back when anything refuses)."""
    with changing(con):
        seqs = record_changes(con, [f.file_id for f in files], "stored")
        for table in reversed(RAW_TABLES):  # parents first
            parts = _contiguous(files, table)
            if not parts:
                continue
            # One contiguous table: DuckDB's Arrow scan pays per chunk (a batch of 256 one-row chunks took it 10x
            # longer than one chunk of 256 rows).
            rows = pa.concat_tables(parts).combine_chunks() if len(parts) > 1 else parts[0]
            if table == "raw_files":
                rows = rows.append_column("stored_seq", pa.array(seqs, pa.int64()))
            insert_rows(con, table, rows)


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


def insert_rows(con: Connection, table: str, rows: pa.Table) -> None:
    """One bulk insert from an Arrow table, its columns matched by name (DuckDB reads the local `_kp_rows` by
    name, without a copy; PostgreSQL takes it by COPY). Files' bytes are stored compressed, and on DuckDB go to a
    part (ingest/contents.py)."""
    if table == contents.VIEW:
        rows = contents.packed(rows)
    if isinstance(con, postgres.Connection):
        con.insert_arrow(table, rows)
        return
    if table == contents.VIEW:
        contents.insert(con, rows)
        return
    _kp_rows = rows  # noqa: F841 - read by DuckDB's replacement scan
    con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _kp_rows")


# Lowering DuckDB's memory limit to this evicts every block no query holds (they are on disk).
_CACHE_RELEASE_LIMIT = "16MB"


def release_cache(con: duckdb.DuckDBPyConnection) -> None:
    """Let DuckDB drop the blocks it keeps cached. It keeps them up to its memory limit (80% of the machine's
    memory by default); lowering the limit for a moment evicts them."""
    (limit,) = con.execute("SELECT current_setting('memory_limit')").fetchall()[0]
    try:
        con.execute(f"SET memory_limit = '{_CACHE_RELEASE_LIMIT}'")
    finally:
        con.execute(f"SET memory_limit = '{limit}'")


def checkpoint_within(con: duckdb.DuckDBPyConnection, headroom_mb: int) -> None:
    """Fold the write-ahead log into the file with DuckDB's memory limit lowered meanwhile to what DuckDB must hold
    (once it let go of what it caches) plus `headroom_mb`. A fold's working memory is DuckDB's buffer pool: bounded,
    DuckDB writes blocks out as it goes; unbounded (80% of the machine's memory), a fold after a few MB of small
    files took ~95 MB more for a moment. A fold that runs out of memory is fatal to DuckDB's database (every later
    statement fails until it is opened again), so the headroom must hold what the fold pins at once: a row group's
    column segments of the table it writes, and the largest value (a file's compressed bytes): callers give room
    for twice the largest file folded (load.FOLD_HEADROOM_MB)."""
    (limit,) = con.execute("SELECT current_setting('memory_limit')").fetchall()[0]
    try:
        with suppress(duckdb.OutOfMemoryException):  # it must hold more than that: measured next
            con.execute(f"SET memory_limit = '{_CACHE_RELEASE_LIMIT}'")  # lets go of what it caches
        (held,) = con.execute("SELECT sum(memory_usage_bytes) FROM duckdb_memory()").fetchall()[0]
        con.execute(f"SET memory_limit = '{math.ceil((held or 0) / 2**20) + headroom_mb}MB'")
        con.execute("CHECKPOINT")
    finally:
        con.execute(f"SET memory_limit = '{limit}'")


class _NoPandasHere(importlib.abc.MetaPathFinder):
    """Refuses pandas to one thread (another thread of the process importing it meanwhile gets it)."""

    def __init__(self) -> None:
        self.thread = threading.get_ident()

    def find_spec(self, name: str, path: object, target: object = None) -> None:
        if (name == "pandas" or name.startswith("pandas.")) and threading.get_ident() == self.thread:
            raise ModuleNotFoundError("not needed to store rows", name=name)


def arrow_without_pandas() -> None:
    """Spare this process pandas' import: ~30 MB of memory and ~0.14 s of CPU. pyarrow imports pandas on its first
    conversion of a Python list only to ask whether the list is a pandas object, and kneepoint never hands it one:
    so that first question finds no pandas, and pyarrow remembers. A pyarrow call that needs pandas (to_pandas)
    imports it itself later. Where pandas is imported already (the app's process: Streamlit's) this does nothing.
    Every ingest calls it, in its own process and in each parsing worker (a worker held ~28 MB more with pandas),
    and so does the command line before any command."""
    if "pandas" in sys.modules:
        return
    no_pandas = _NoPandasHere()
    sys.meta_path.insert(0, no_pandas)
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(no_pandas)


def release_freed_memory() -> None:
    """Give back to the system what the allocators keep of memory already freed. Arrow's pool (mimalloc) keeps freed
    pages for its next buffers: after a 100 MB SQLIO log's rows were stored it still held ~200 MB that nothing used,
    through the build that followed. The C library's heap keeps them too: the parsing pool's results are unpickled
    on a thread of their own, whose heap glibc shrinks only from its end, and once 200 files of Perfmon counters had
    come back from the workers, the ingesting process held 112 MB of its own where 39 MB were in use (a worker, 39
    where 20 were). `malloc_trim` returns every free page of every heap (glibc only; elsewhere Arrow's part only)."""
    pa.default_memory_pool().release_unused()
    if _malloc_trim is not None:
        _malloc_trim(0)


def _glibc_malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError, TypeError):  # not glibc (musl, macOS, Windows)
        return None


_malloc_trim = _glibc_malloc_trim()


def _rollback(con: Connection) -> None:
    """Roll back; a connection that is already gone has nothing to roll back, and the first error matters."""
    with suppress(*_ANY_ERROR):
        con.execute("ROLLBACK")


def _stored_as(con: Connection, sha256: str) -> tuple[str, str, str | None, str] | None:
    rows = con.execute("SELECT file_id, disk, host, name FROM raw_files WHERE sha256 = ?", [sha256]).fetchall()
    return rows[0] if rows else None


def _stored_as_many(con: Connection, sha256s: list[str]) -> dict[str, tuple[str, str, str | None, str]]:
    rows = con.execute(
        "SELECT sha256, file_id, disk, host, name FROM raw_files WHERE sha256 IN (SELECT unnest(?::VARCHAR[]))",
        [sha256s],
    ).fetchall()
    return {r[0]: r[1:] for r in rows}


_IO_FIELDS = tuple(c for c in schema.RAW_IO_RECORDS.column_names if c not in ("file_id", "record_index"))
_QUERY_IO_FIELDS = tuple(c for c in schema.RAW_QUERY_IO.column_names if c not in ("file_id", "record_index"))
_QUERY_TIME_FIELDS = tuple(c for c in schema.RAW_QUERY_TIME.column_names if c not in ("file_id", "record_index"))
_INTERVAL_FIELDS = tuple(c for c in schema.RAW_INTERVALS.column_names if c not in ("file_id", "record_index"))
_WAIT_FIELDS = tuple(c for c in schema.RAW_WAITS.column_names if c not in ("file_id", "record_index"))
_LOAD_FIELDS = tuple(c for c in schema.RAW_LOAD_STEPS.column_names if c not in ("file_id", "record_index"))


def _record_rows(records: Sequence[Record], start: int = 0) -> tuple[list, list, list, dict, tuple, list, list, list]:
    """Records sorted by raw table, checked where a wrong value could still be blamed on the file. `start`: the
    file's index of records[0]."""
    io: list[tuple[int, IoRecord]] = []
    qio: list[tuple[int, QueryIoRecord]] = []
    qtime: list[tuple[int, QueryTimeRecord]] = []
    intervals: list[tuple[int, IntervalRecord]] = []
    waits: list[tuple[int, WaitRecord]] = []
    loads: list[tuple[int, LoadRecord]] = []
    for i, rec in enumerate(records, start):
        if isinstance(rec, IoRecord):
            io.append((i, rec))
        elif isinstance(rec, QueryIoRecord):
            qio.append((i, rec))
        elif isinstance(rec, QueryTimeRecord):
            qtime.append((i, rec))
        elif isinstance(rec, IntervalRecord):
            intervals.append((i, rec))
        elif isinstance(rec, WaitRecord):
            waits.append((i, rec))
        elif isinstance(rec, LoadRecord):
            loads.append((i, rec))
        else:
            raise TypeError(f"record {i} is a {type(rec).__name__}, not a kneepoint record")

    throughput_units, latency_units = units.throughput_units(), units.latency_units()
    load_units = units.load_throughput_units()
    for i, rec in loads:
        if rec.throughput is not None and rec.throughput_unit not in load_units:
            raise ValueError(f"record {i}: unknown load throughput unit {rec.throughput_unit!r}")
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
    return io, qio, qtime, meta, (h_index, h_bound, h_unit, h_value, h_kind), intervals, waits, loads


def _arrow_tables(files: list[FileRows]) -> dict[str, pa.Table]:
    """Many files' rows as one Arrow table per raw table (raises what pa.array raises on a value that does not fit).
    Row tables already in Arrow (a file of many records) are joined in as they are, in the files' order."""
    parts: list[dict[str, pa.Table]] = []
    for built, group in groupby(files, key=lambda f: f.tables is not None):
        members = list(group)
        parts += [f.tables for f in members] if built else [_row_tables(members)]
    tables = _file_tables(files)
    for name, first in (parts[0] if parts else _row_tables([])).items():
        tables[name] = first if len(parts) <= 1 else pa.concat_tables([p[name] for p in parts])
    return tables


def _file_tables(files: list[FileRows]) -> dict[str, pa.Table]:
    """raw_files and raw_file_contents of many files."""
    ids = [f.file["file_id"] for f in files]
    file_columns = schema.arrow_schema("raw_files", prepared=True).names
    return {
        "raw_files": _table("raw_files", {c: [f.file[c] for f in files] for c in file_columns}, len(files)),
        "raw_file_contents": _table(
            "raw_file_contents",
            {
                "file_id": ids,
                # compressed here: in a worker process, where a pool parses, and before the writer holds them
                "content": contents.binary_column([contents.stored_frame(f.content) for f in files]),
                "compression": [contents.CODEC] * len(files),
            },
        ),
    }


def _row_tables(files: list[FileRows]) -> dict[str, pa.Table]:
    """Every raw table but raw_files and raw_file_contents, of many files' Python rows."""
    ids = [f.file["file_id"] for f in files]
    meta: dict[str, list] = {"file_id": [], "run_index": [], "key": [], "value": []}
    hist: dict[str, list] = {"file_id": [], "record_index": [], "bound": [], "bound_unit": [], "value": [], "kind": []}
    for file_id, f in zip(ids, files, strict=True):
        meta["file_id"] += [file_id] * len(f.metadata)
        meta["run_index"] += [k[0] for k in f.metadata]
        meta["key"] += [k[1] for k in f.metadata]
        meta["value"] += f.metadata.values()
        hist["file_id"] += [file_id] * len(f.histograms[0])
        for column, values in zip(list(hist)[1:], f.histograms, strict=True):
            hist[column] += values
    return {
        "raw_io_records": _records("raw_io_records", ids, [f.io for f in files], _IO_FIELDS),
        "raw_query_io": _records("raw_query_io", ids, [f.query_io for f in files], _QUERY_IO_FIELDS),
        "raw_query_time": _records("raw_query_time", ids, [f.query_time for f in files], _QUERY_TIME_FIELDS),
        "raw_intervals": _records("raw_intervals", ids, [f.intervals for f in files], _INTERVAL_FIELDS),
        "raw_waits": _records("raw_waits", ids, [f.waits for f in files], _WAIT_FIELDS),
        "raw_load_steps": _records("raw_load_steps", ids, [f.loads for f in files], _LOAD_FIELDS),
        "raw_run_metadata": _table("raw_run_metadata", meta),
        "raw_latency_histograms": _table("raw_latency_histograms", hist),
    }


def _records(table: str, ids: list[str], per_file: list[list[tuple[int, object]]], names: tuple[str, ...]) -> pa.Table:
    file_ids: list[str] = []
    indexes: list[int] = []
    recs: list[object] = []
    for file_id, pairs in zip(ids, per_file, strict=True):
        file_ids += [file_id] * len(pairs)
        indexes += [i for i, _ in pairs]
        recs += [r for _, r in pairs]
    if not recs:
        return _prepared_schema(table).empty_table()
    # One C-level pass reads every field of every record; zip(*) turns the rows into columns.
    values = dict(zip(names, zip(*map(attrgetter(*names), recs), strict=True), strict=True))
    if "inferred" in values:
        values["inferred"] = [list(v) for v in values["inferred"]]
    values["file_id"], values["record_index"] = file_ids, indexes
    return _table(table, values)


def _table(table: str, columns: dict[str, list | pa.ChunkedArray], n: int | None = None) -> pa.Table:
    arrow_schema = _prepared_schema(table)
    if not (n if n is not None else len(columns["file_id"])):
        return arrow_schema.empty_table()
    arrays = [c if isinstance(c := columns[f.name], pa.ChunkedArray) else _array(c, f.type) for f in arrow_schema]
    return pa.Table.from_arrays(arrays, schema=arrow_schema)


# Row-table columns that repeat a few values row after row (a file's id on each of its rows, a histogram's unit and
# kind, a run's metadata, its tool and units) are Arrow dictionaries, an index a row: a 100 MB SQLIO log's 3.4M
# histogram rows held 120 MB of repeated strings. DuckDB and PostgreSQL's COPY read them as the strings they stand for.
_REPEATED = {
    "raw_io_records": {
        "file_id", "tool", "pattern", "operation", "direction", "throughput_unit", "latency_unit", "tool_version",
        "target",
    },
    "raw_run_metadata": {"file_id", "key", "value"},
    "raw_latency_histograms": {"file_id", "bound_unit", "kind"},
}  # fmt: skip


@cache
def _prepared_schema(table: str) -> pa.Schema:
    """The Arrow schema of a table's prepared rows: schema.arrow_schema's, with the _REPEATED columns (of the other
    row tables: file_id) as dictionaries."""
    arrow_schema = schema.arrow_schema(table, prepared=True)
    repeated = _REPEATED.get(table, {"file_id"} if table in ROW_TABLES else set())
    return pa.schema(
        [f.with_type(pa.dictionary(pa.int32(), f.type)) if f.name in repeated else f for f in arrow_schema]
    )


def _array(values: list, arrow_type: pa.DataType) -> pa.Array:
    if pa.types.is_dictionary(arrow_type):
        return pa.array(values, arrow_type.value_type).dictionary_encode()
    return pa.array(values, arrow_type)


def resolve_file_id(con: Connection, file_id: str) -> str:
    """Accept a unique prefix of a file id, as git accepts short hashes."""
    prefix = file_id.strip().lower()
    if not prefix:
        raise KeyError("give a file id (see `kneepoint files`)")
    rows = con.execute(
        "SELECT file_id FROM raw_files WHERE left(file_id, ?) = ? ORDER BY file_id", [len(prefix), prefix]
    ).fetchall()
    if not rows:
        raise KeyError(f"no stored file with id {file_id!r} (see `kneepoint files`)")
    if len(rows) > 1:
        raise KeyError(f"file id {file_id!r} is ambiguous: {', '.join(r[0] for r in rows)}")
    return rows[0][0]


def delete_file(con: Connection, file_id: str) -> None:
    """Remove a file and every row that came from it, all or nothing (the models follow at the next build)."""
    with changing_files(con):
        record_changes(con, [file_id], "deleted")
        for table in RAW_TABLES:
            delete_rows(con, table, file_id)


def delete_rows(con: Connection, table: str, file_id: str) -> None:
    """Delete one file's rows of one raw table (in the caller's transaction)."""
    if table == contents.VIEW and not isinstance(con, postgres.Connection):
        contents.delete(con, file_id)
        return
    con.execute(f"DELETE FROM {table} WHERE file_id = ?", [file_id])


def relabel_file(con: Connection, file_id: str, disk: str | None = None, host: str | None = None) -> None:
    """New labels for stored bytes. `host=''` removes the host label; None leaves a label as it is."""
    if disk is not None:
        disk = check_label("disk label", disk)
        if not disk:
            raise ValueError("the disk label cannot be empty")
    if host is not None:
        host = check_label("host label", host)
    with changing_files(con):
        record_changes(con, [file_id], "relabelled")
        con.execute(
            "UPDATE raw_files SET disk = coalesce(?, disk), host = CASE WHEN ? THEN nullif(?, '') ELSE host END "
            "WHERE file_id = ?",
            [disk, host is not None, host or "", file_id],
        )


def list_files(con: Connection) -> list[dict]:
    cur = con.execute(
        """
        SELECT f.file_id, f.name, f.sha256, f.format, f.disk, f.host,
               coalesce(io.n, 0) + coalesce(qi.n, 0) + coalesce(qt.n, 0) + coalesce(iv.n, 0) + coalesce(w.n, 0)
                   + coalesce(ls.n, 0) AS records,
               f.ingested_at, f.tool_version, f.size_bytes, f.tags, f.notes
        FROM raw_files f
        LEFT JOIN (SELECT file_id, count(*) AS n FROM raw_io_records GROUP BY file_id) io USING (file_id)
        LEFT JOIN (SELECT file_id, count(*) AS n FROM raw_query_io GROUP BY file_id) qi USING (file_id)
        LEFT JOIN (SELECT file_id, count(*) AS n FROM raw_query_time GROUP BY file_id) qt USING (file_id)
        LEFT JOIN (SELECT file_id, count(*) AS n FROM raw_intervals GROUP BY file_id) iv USING (file_id)
        LEFT JOIN (SELECT file_id, count(*) AS n FROM raw_waits GROUP BY file_id) w USING (file_id)
        LEFT JOIN (SELECT file_id, count(*) AS n FROM raw_load_steps GROUP BY file_id) ls USING (file_id)
        ORDER BY f.ingested_at, f.name
        """
    )
    cols = [d[0] for d in cur.description]
    files = [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]
    for f in files:
        f["ingested_at"] = f["ingested_at"].astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        f["tags"] = list(f["tags"]) if f["tags"] is not None else None
    return files


def row_counts(con: Connection, file_id: str | None = None) -> dict[str, int]:
    """Rows per raw table, for one file or the whole warehouse."""
    where, params = ("WHERE file_id = ?", [file_id]) if file_id else ("", [])
    return {t: con.execute(f"SELECT count(*) FROM {t} {where}", params).fetchall()[0][0] for t in RAW_TABLES}


def file_parse_options(con: Connection, file_id: str) -> dict[str, str]:
    """The parse options a stored file was read with (load_table's column mapping); {} for none."""
    rows = con.execute("SELECT parse_options FROM raw_files WHERE file_id = ?", [file_id]).fetchall()
    if not rows:
        raise KeyError(f"no stored file with id {file_id!r}")
    return dict(json.loads(rows[0][0])) if rows[0][0] else {}


def file_content(con: Connection, file_id: str) -> tuple[str, bytes]:
    """A stored file's name and its bytes as the tool wrote them."""
    rows = con.execute(
        "SELECT f.name, c.content, c.compression, f.size_bytes FROM raw_files f JOIN raw_file_contents c "
        "USING (file_id) WHERE file_id = ?",
        [file_id],
    ).fetchall()
    if not rows:
        raise KeyError(f"no stored file with id {file_id!r}")
    name, content, compression, size_bytes = rows[0]
    return name, contents.original(content, compression, size_bytes)
