"""The warehouse's own tables, declared once: the raw layer that ingest writes, the change log that every change
appends to, and the build's state. The DDL and the Arrow schemas are derived from here, and the raw record tables'
columns from the record classes the parsers fill (ingest/records.py), so a new record field is one edit.

    raw_files, raw_file_contents                     one row per stored file: labels and lineage, the original bytes
                                                     compressed (on DuckDB a view over parts: ingest/contents.py)
    raw_io_records, raw_query_io, raw_query_time     the file's records, one row each (record_index)
    raw_intervals, raw_waits                         observed production load: per device / wait type and interval
    raw_load_steps                                   load series: an application's throughput and response per load
    raw_run_metadata, raw_latency_histograms         per run: the tool's conditions; per record: latency buckets
    raw_file_changes                                 every store, relabel and delete, numbered (change_seq)
    kneepoint_build_*                                what the models were last built from (ingest/build.py)
    kneepoint_schema                                 which declaration the warehouse was completed to
"""

from __future__ import annotations

import hashlib
import types
import typing
from dataclasses import dataclass, fields, replace
from functools import cache

import pyarrow as pa

from kneepoint.ingest.records import IntervalRecord, IoRecord, LoadRecord, QueryIoRecord, QueryTimeRecord, WaitRecord

# SQL type -> Arrow type. The names are DuckDB's; PostgreSQL's differ for two of them (sql_type).
ARROW_TYPES = {
    "VARCHAR": pa.string(),
    "INTEGER": pa.int32(),
    "BIGINT": pa.int64(),
    "DOUBLE": pa.float64(),
    "BOOLEAN": pa.bool_(),
    "TIMESTAMPTZ": pa.timestamp("us", tz="UTC"),
    "BLOB": pa.binary(),
    "VARCHAR[]": pa.list_(pa.string()),
}
_POSTGRES_TYPES = {"DOUBLE": "DOUBLE PRECISION", "BLOB": "BYTEA"}
DIALECTS = ("duckdb", "postgres")


def sql_type(declared: str, dialect: str = "duckdb") -> str:
    """A declared (DuckDB) type in the engine's words."""
    return _POSTGRES_TYPES.get(declared, declared) if dialect == "postgres" else declared


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: str
    not_null: bool = False
    # Filled by the warehouse as the file commits (its change number), never by a parser or a worker.
    at_commit: bool = False


@dataclass(frozen=True, slots=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    primary_key: str | None = None
    unique: tuple[str, ...] = ()

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def ddl(self, dialect: str = "duckdb") -> str:
        lines = [
            f"    {c.name} {sql_type(c.type, dialect)}"
            + (" PRIMARY KEY" if c.name == self.primary_key else "")
            + (" UNIQUE" if c.name in self.unique else "")
            + (" NOT NULL" if c.not_null and c.name != self.primary_key else "")
            for c in self.columns
        ]
        return f"CREATE TABLE IF NOT EXISTS {self.name} (\n" + ",\n".join(lines) + "\n);"

    def arrow_schema(self, prepared: bool = False) -> pa.Schema:
        """The table's Arrow schema; `prepared`: without the columns filled at commit (what a worker builds)."""
        return pa.schema([(c.name, ARROW_TYPES[c.type]) for c in self.columns if not (prepared and c.at_commit)])


def _record_columns(record: type, skip: tuple[str, ...], bigint: tuple[str, ...] = ()) -> tuple[Column, ...]:
    """A record class's fields as columns: a field that may be None is nullable; whole numbers are INTEGER unless
    named in `bigint` (block sizes and page counts pass 2^31)."""
    hints = typing.get_type_hints(record)
    out = []
    for f in fields(record):
        if f.name in skip:
            continue
        hint = hints[f.name]
        args = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
        nullable = type(None) in args
        (base,) = [a for a in args if a is not type(None)]
        out.append(Column(f.name, _sql_type(f.name, base, bigint), not_null=not nullable))
    return tuple(out)


def _sql_type(name: str, hint: object, bigint: tuple[str, ...]) -> str:
    if typing.get_origin(hint) is typing.Literal or hint is str:
        return "VARCHAR"
    if hint is int:
        return "BIGINT" if name in bigint else "INTEGER"
    if hint is float:
        return "DOUBLE"
    if hint is bool:
        return "BOOLEAN"
    if typing.get_origin(hint) is list and typing.get_args(hint) == (str,):
        return "VARCHAR[]"
    raise TypeError(f"record field {name}: no column type for {hint!r}")


FILE_ID = Column("file_id", "VARCHAR", not_null=True)
RECORD_INDEX = Column("record_index", "INTEGER", not_null=True)

# Fields that are not columns of their record's table: the record kind, the tool of the SQL Server records (always
# 'sqlserver'), and what goes to raw_run_metadata / raw_latency_histograms. The observed records keep their tool
# (perfmon, iostat, sqlserver).
IO_RECORD_SKIP = ("metadata", "histogram", "histogram_kind", "record")
QUERY_RECORD_SKIP = ("tool", "record")
OBSERVED_RECORD_SKIP = ("record",)

RAW_FILES = Table(
    "raw_files",
    (
        FILE_ID,
        Column("name", "VARCHAR", not_null=True),
        Column("sha256", "VARCHAR", not_null=True),
        Column("size_bytes", "BIGINT", not_null=True),
        Column("format", "VARCHAR", not_null=True),
        Column("tool_version", "VARCHAR"),
        Column("encoding", "VARCHAR"),
        Column("ingested_at", "TIMESTAMPTZ", not_null=True),
        Column("disk", "VARCHAR", not_null=True),
        Column("host", "VARCHAR"),
        Column("tags", "VARCHAR[]"),
        Column("notes", "VARCHAR"),
        Column("warnings", "VARCHAR[]"),
        Column("kneepoint_version", "VARCHAR"),
        # The parse options the file was read with (load_table's column mapping), as a JSON object; NULL: none. Kept
        # so that reading the stored bytes again gives the same records.
        Column("parse_options", "VARCHAR"),
        # The change that stored the file (raw_file_changes): a build covers the files stored up to its cut-off.
        Column("stored_seq", "BIGINT", at_commit=True),
    ),
    primary_key="file_id",
    unique=("sha256",),
)
RAW_FILE_CONTENTS = Table(
    "raw_file_contents",
    (
        FILE_ID,
        Column("content", "BLOB", not_null=True),
        # How `content` holds the file's bytes: 'zstd' (a zstd frame of raw_files.size_bytes bytes), or NULL (the
        # bytes as they are: files stored before kneepoint compressed them). ingest/contents.py reads both.
        Column("compression", "VARCHAR"),
    ),
    primary_key="file_id",
)
# On DuckDB the bytes are kept in parts of about this size, raw_file_contents being a view over them: DuckDB
# rewrites a table's row group at the checkpoint after any append to it (ingest/contents.py).
CONTENT_PART_BYTES = 64 * 1024 * 1024
CONTENT_PARTS = Table(
    "kneepoint_content_parts",
    (Column("part", "INTEGER", not_null=True), Column("bytes_appended", "BIGINT", not_null=True)),
    primary_key="part",
)


def content_part(part: int) -> Table:
    """The DuckDB table of one part of the stored bytes."""
    return replace(RAW_FILE_CONTENTS, name=f"raw_file_contents_part_{part:05d}")


RAW_IO_RECORDS = Table(
    "raw_io_records",
    (FILE_ID, RECORD_INDEX, *_record_columns(IoRecord, IO_RECORD_SKIP, bigint=("block_size_bytes",))),
)
RAW_QUERY_IO = Table(
    "raw_query_io",
    (
        FILE_ID,
        RECORD_INDEX,
        *_record_columns(
            QueryIoRecord,
            QUERY_RECORD_SKIP,
            # every counter: a page count of a large scan passes 2^31
            bigint=tuple(f.name for f in fields(QueryIoRecord) if f.name not in ("statement_index", "source_line")),
        ),
    ),
)
RAW_QUERY_TIME = Table("raw_query_time", (FILE_ID, RECORD_INDEX, *_record_columns(QueryTimeRecord, QUERY_RECORD_SKIP)))
RAW_INTERVALS = Table("raw_intervals", (FILE_ID, RECORD_INDEX, *_record_columns(IntervalRecord, OBSERVED_RECORD_SKIP)))
RAW_WAITS = Table("raw_waits", (FILE_ID, RECORD_INDEX, *_record_columns(WaitRecord, OBSERVED_RECORD_SKIP)))
RAW_LOAD_STEPS = Table("raw_load_steps", (FILE_ID, RECORD_INDEX, *_record_columns(LoadRecord, OBSERVED_RECORD_SKIP)))
RAW_RUN_METADATA = Table(
    "raw_run_metadata",
    (
        FILE_ID,
        Column("run_index", "INTEGER", not_null=True),
        Column("key", "VARCHAR", not_null=True),
        Column("value", "VARCHAR"),
    ),
)
RAW_LATENCY_HISTOGRAMS = Table(
    "raw_latency_histograms",
    (
        FILE_ID,
        RECORD_INDEX,
        Column("bound", "DOUBLE", not_null=True),
        Column("bound_unit", "VARCHAR", not_null=True),
        Column("value", "DOUBLE", not_null=True),
        Column("kind", "VARCHAR", not_null=True),
    ),
)

# The raw layer: a file's data, children first (the order a file's rows are deleted in; inserts go in reverse).
# The row tables have no key: store_file makes (file_id, record_index) in one transaction per file, and an index
# would be maintained on every insert for nothing (dbt's tests check the keys).
RAW_TABLES: dict[str, Table] = {
    t.name: t
    for t in (
        RAW_LATENCY_HISTOGRAMS,
        RAW_RUN_METADATA,
        RAW_LOAD_STEPS,
        RAW_WAITS,
        RAW_INTERVALS,
        RAW_QUERY_TIME,
        RAW_QUERY_IO,
        RAW_IO_RECORDS,
        RAW_FILE_CONTENTS,
        RAW_FILES,
    )
}
# The tables holding a file's parsed rows: what "all of a file's rows" means.
ROW_TABLES = (
    "raw_io_records",
    "raw_query_io",
    "raw_query_time",
    "raw_intervals",
    "raw_waits",
    "raw_load_steps",
    "raw_run_metadata",
    "raw_latency_histograms",
)

# Every change to the raw layer, numbered in commit order: what a build has yet to process is the changes past the
# last one it built (kneepoint_build_state.built_seq). The log stays local: bundles carry files, not history.
CHANGE_SEQUENCE = "raw_change_seq"
FILE_CHANGES = ("stored", "relabelled", "deleted")
RAW_FILE_CHANGES = Table(
    "raw_file_changes",
    (
        Column("change_seq", "BIGINT", not_null=True),
        FILE_ID,
        Column("change", "VARCHAR", not_null=True),
        Column("changed_at", "TIMESTAMPTZ", not_null=True),
    ),
    primary_key="change_seq",
)

# The build's state, written by ingest/build.py only: the last change the models were built up to and from which
# project definition; the window the running build covers (the dbt models read it); the series whose points the
# running build changed (the facts' hooks add them, the saturation marts recompute them).
BUILD_STATE = Table(
    "kneepoint_build_state",
    (
        Column("built_seq", "BIGINT", not_null=True),
        Column("project_hash", "VARCHAR", not_null=True),
        Column("finished_at", "TIMESTAMPTZ", not_null=True),
    ),
)
BUILD_WINDOW = Table(
    "kneepoint_build_window",
    (
        Column("from_seq", "BIGINT", not_null=True),
        Column("to_seq", "BIGINT", not_null=True),
        # 'all': the tests read every row; 'changed': the rows of the files and series this build changed
        Column("test_scope", "VARCHAR", not_null=True),
    ),
)
CHANGED_SERIES = Table("kneepoint_changed_series", (Column("series_id", "VARCHAR", not_null=True),))
# The disks (disk_key) whose observed intervals or benchmark series this build changed (the facts' hooks add them):
# the production-vs-baseline marts recompute every row of those disks.
CHANGED_DISKS = Table("kneepoint_changed_disks", (Column("disk_key", "VARCHAR", not_null=True),))
# The benchmark tools the format modules read (ingest/formats, each module's TOOLS): the dbt tests accept those.
KNOWN_TOOLS = Table("kneepoint_known_tools", (Column("tool", "VARCHAR", not_null=True),))
# The USL and Kneedle fits of the series (ingest/build.py computes them with ingest/analytics.py between the dbt
# models that make the points and those that read them; mart_usl_fits presents them).
USL_FITS = Table(
    "kneepoint_usl_fits",
    (
        Column("series_id", "VARCHAR", not_null=True),
        Column("disk_key", "VARCHAR", not_null=True),
        Column("pattern", "VARCHAR"),
        Column("operation", "VARCHAR"),
        Column("read_pct", "DOUBLE"),
        Column("block_size_bytes", "BIGINT"),
        Column("direction", "VARCHAR"),
        Column("points", "BIGINT", not_null=True),
        Column("usl_fitted", "BOOLEAN", not_null=True),
        Column("usl_lambda_iops", "DOUBLE"),
        Column("usl_sigma", "DOUBLE"),
        Column("usl_kappa", "DOUBLE"),
        Column("usl_peak_outstanding_io", "DOUBLE"),
        Column("usl_peak_iops", "DOUBLE"),
        Column("usl_r_squared", "DOUBLE"),
        Column("usl_note", "VARCHAR"),
        Column("kneedle_outstanding_io", "DOUBLE"),
    ),
    primary_key="series_id",
)
# The USL fits of the load series (ingest/load_fits.py, run beside the disks' fits; mart_load_usl_fits presents them):
# N = the load (sessions, virtual users, databases), X = throughput per second.
LOAD_USL_FITS = Table(
    "kneepoint_load_usl_fits",
    (
        Column("series_id", "VARCHAR", not_null=True),
        Column("disk_key", "VARCHAR", not_null=True),
        Column("points", "BIGINT", not_null=True),
        Column("usl_fitted", "BOOLEAN", not_null=True),
        Column("usl_lambda_per_s", "DOUBLE"),
        Column("usl_sigma", "DOUBLE"),
        Column("usl_kappa", "DOUBLE"),
        Column("usl_peak_load", "DOUBLE"),
        Column("usl_peak_throughput_per_s", "DOUBLE"),
        Column("usl_r_squared", "DOUBLE"),
        Column("usl_note", "VARCHAR"),
    ),
    primary_key="series_id",
)
# Which declaration the warehouse was completed to (schema_hash): a connect checks one row, not the catalog.
SCHEMA_VERSION = Table("kneepoint_schema", (Column("schema_hash", "VARCHAR", not_null=True),))

TABLES: dict[str, Table] = {
    **RAW_TABLES,
    RAW_FILE_CHANGES.name: RAW_FILE_CHANGES,
    BUILD_STATE.name: BUILD_STATE,
    BUILD_WINDOW.name: BUILD_WINDOW,
    CHANGED_SERIES.name: CHANGED_SERIES,
    CHANGED_DISKS.name: CHANGED_DISKS,
    KNOWN_TOOLS.name: KNOWN_TOOLS,
    USL_FITS.name: USL_FITS,
    LOAD_USL_FITS.name: LOAD_USL_FITS,
    SCHEMA_VERSION.name: SCHEMA_VERSION,
}


@cache
def ddl(dialect: str = "duckdb") -> str:
    """Every table and the change sequence, created where missing. PostgreSQL also gets an index on the file id of
    each raw table that has no key on it: a delete, a relabel's build and the staging models find a file's rows by
    it, where DuckDB's zone maps serve without one."""
    assert dialect in DIALECTS, dialect
    statements = [f"CREATE SEQUENCE IF NOT EXISTS {CHANGE_SEQUENCE} START 1;"]
    if dialect == "duckdb":
        # raw_file_contents is a view over parts there, made by ingest/contents.py
        statements += [t.ddl(dialect) for t in TABLES.values() if t is not RAW_FILE_CONTENTS]
        statements.append(CONTENT_PARTS.ddl(dialect))
    else:
        statements += [t.ddl(dialect) for t in TABLES.values()]
    if dialect == "postgres":
        statements += [
            f"CREATE INDEX IF NOT EXISTS {t.name}_file_id ON {t.name} (file_id);"
            for t in (*RAW_TABLES.values(), RAW_FILE_CHANGES)
            if t.primary_key != "file_id"
        ]
    return "\n".join(statements)


@cache
def schema_hash(dialect: str = "duckdb") -> str:
    return hashlib.sha256(ddl(dialect).encode()).hexdigest()[:16]


def arrow_schema(table: str, prepared: bool = False) -> pa.Schema:
    return TABLES[table].arrow_schema(prepared)
