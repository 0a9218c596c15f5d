"""The records every parser yields, and their normalized form.

Parsers keep throughput and latency in the unit the tool printed (`throughput_unit`, `latency_unit`):
that is what the raw layer stores, and the dbt staging models convert with the unit macros. The
normalized form (`to_normalized`) is what `kneepoint parse` prints: every value in the unit its key
names, converted with the same factor table the macros use (`ingest.units`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from kneepoint.ingest import units

Pattern = Literal["sequential", "random"]
Operation = Literal["read", "write", "mixed"]
Direction = Literal["read", "write", "total"]

LATENCY_KEYS = ("avg", "min", "max", "p50", "p95", "p99", "p999")


@dataclass(slots=True)
class IoRecord:
    """One measured run of a disk benchmark, for one direction of I/O."""

    tool: str
    run_index: int
    source_line: int
    pattern: Pattern
    operation: Operation
    read_pct: float
    direction: Direction
    block_size_bytes: int | None
    threads: int | None
    queue_depth: int | None
    iops: float | None
    throughput: float | None
    throughput_unit: str = "B/s"
    latency_unit: str = "ms"
    latency_avg: float | None = None
    latency_min: float | None = None
    latency_max: float | None = None
    latency_p50: float | None = None
    latency_p95: float | None = None
    latency_p99: float | None = None
    latency_p999: float | None = None
    duration_s: float | None = None
    tool_version: str | None = None
    target: str | None = None
    started_at: str | None = None
    inferred: list[str] = field(default_factory=list)
    # Run metadata (tool's own test conditions, command line, job options): kept as key/value.
    metadata: dict[str, str] = field(default_factory=dict)
    # Latency histogram: (bucket upper bound in `latency_unit`, value); value is a count or a share.
    histogram: list[tuple[float, float]] = field(default_factory=list)
    histogram_kind: Literal["count", "share"] = "count"
    record: str = "io"

    def to_normalized(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "record": "io",
            "tool": self.tool,
            "tool_version": self.tool_version,
            "run_index": self.run_index,
            "source_line": self.source_line,
            "target": self.target,
            "started_at": self.started_at,
            "pattern": self.pattern,
            "operation": self.operation,
            "read_pct": self.read_pct,
            "direction": self.direction,
            "block_size_bytes": self.block_size_bytes,
            "threads": self.threads,
            "queue_depth": self.queue_depth,
            "duration_s": self.duration_s,
            "iops": self.iops,
            "throughput_bytes_per_s": units.to_bytes_per_s(self.throughput, self.throughput_unit),
        }
        for key in LATENCY_KEYS:
            out[f"latency_{key}_ms"] = units.to_ms(getattr(self, f"latency_{key}"), self.latency_unit)
        out["inferred"] = list(self.inferred)
        return out


@dataclass(slots=True)
class QueryIoRecord:
    """One table line of SQL Server's `SET STATISTICS IO` output."""

    statement_index: int
    source_line: int
    table_name: str
    scan_count: int | None = None
    logical_reads: int | None = None
    physical_reads: int | None = None
    page_server_reads: int | None = None
    read_ahead_reads: int | None = None
    page_server_read_ahead_reads: int | None = None
    lob_logical_reads: int | None = None
    lob_physical_reads: int | None = None
    lob_page_server_reads: int | None = None
    lob_read_ahead_reads: int | None = None
    lob_page_server_read_ahead_reads: int | None = None
    segment_reads: int | None = None
    segment_skipped: int | None = None
    tool: str = "sqlserver"
    tool_version: str | None = None
    language: str | None = None
    record: str = "query_io"

    def to_normalized(self) -> dict[str, Any]:
        out = {"record": self.record}
        out.update({k: getattr(self, k) for k in QUERY_IO_FIELDS})
        return out


@dataclass(slots=True)
class QueryTimeRecord:
    """One `SQL Server parse and compile time` or `SQL Server Execution Times` block.

    `error_number`: the statement failed with this SQL Server error (`Msg 207, Level 16, ...`), set on each of its
    blocks. A failed statement that printed no time block of its own gets one execution record without times."""

    statement_index: int
    source_line: int
    phase: Literal["compile", "execution"]
    cpu_ms: float | None
    elapsed_ms: float | None
    tool: str = "sqlserver"
    tool_version: str | None = None
    language: str | None = None
    error_number: int | None = None
    record: str = "query_time"

    def to_normalized(self) -> dict[str, Any]:
        out = {"record": self.record}
        out.update({k: getattr(self, k) for k in QUERY_TIME_FIELDS})
        return out


DeviceKind = Literal["physical_disk", "logical_disk", "block_device", "database_file"]


@dataclass(slots=True)
class IntervalRecord:
    """What one device did in production over one interval between two samples: a Perfmon counter log's sample, an
    `iostat -x` report's device line, the delta of SQL Server's `sys.dm_io_virtual_file_stats` between two snapshots.

    Every rate is per second over the interval, in the unit its name says. A tool's cumulative counters (SQL Server's
    num_of_reads, io_stall_read_ms) become rates in the parser (the delta between two samples over the seconds between
    them), so a rate and a counter are never mixed in one column. `since_boot`: the interval is everything since the
    device or server started (iostat's first report, a single DMV snapshot), an average over hours or days, not a
    sample of the load; the models leave such intervals out of the load percentiles. `queue_length`: the mean number
    of outstanding I/Os the tool logged (Avg. Disk Queue Length, aqu-sz), None where it logs none (the models use
    Little's law). `device`: the tool's name for it (`PhysicalDisk(0 C:)`, `sda`, `tempdb templog T:\\tempdb.ldf`);
    the disk label the user gives is the file's, as for a benchmark."""

    interval_index: int
    source_line: int
    device: str
    device_kind: DeviceKind
    interval_start: str | None  # ISO 8601 as the tool's clock printed it; an offset only where the tool gave one
    interval_s: float | None
    reads_per_s: float | None = None
    writes_per_s: float | None = None
    read_bytes_per_s: float | None = None
    write_bytes_per_s: float | None = None
    read_latency_ms: float | None = None
    write_latency_ms: float | None = None
    queue_length: float | None = None
    utilization_pct: float | None = None
    host: str | None = None
    since_boot: bool = False
    tool: str = "perfmon"
    tool_version: str | None = None
    record: str = "interval"

    def to_normalized(self) -> dict[str, Any]:
        out = {"record": self.record}
        out.update({k: getattr(self, k) for k in INTERVAL_FIELDS})
        return out


@dataclass(slots=True)
class WaitRecord:
    """SQL Server's waits of one type over one interval (`sys.dm_os_wait_stats`): the delta between two snapshots
    of one server, or, from a single snapshot, the totals since the server started over its uptime (`since_boot`).
    `waiting_tasks_per_s` and `wait_ms_per_s` are rates over `interval_s`; `avg_wait_ms` is wait time per waiting
    task over the interval (for PAGEIOLATCH_* about the mean read latency SQL Server saw)."""

    interval_index: int
    source_line: int
    wait_type: str
    interval_start: str | None
    interval_s: float | None
    waiting_tasks_per_s: float | None
    wait_ms_per_s: float | None
    avg_wait_ms: float | None
    host: str | None = None
    since_boot: bool = False
    tool: str = "sqlserver"
    tool_version: str | None = None
    record: str = "wait"

    def to_normalized(self) -> dict[str, Any]:
        out = {"record": self.record}
        out.update({k: getattr(self, k) for k in WAIT_FIELDS})
        return out


@dataclass(slots=True)
class LoadRecord:
    """One step of a load series: what an application did at one load (N sessions running the same SQL at once,
    a HammerDB virtual-user count, a number of databases on one server), the way a disk benchmark's run is one
    outstanding-I/O step of its curve. The models find where more load stops adding throughput, as for disks.

    `load` counts what `load_kind` names (`concurrent sessions`, `virtual users`, `databases`, `instances`, ...).
    `throughput` is in `throughput_unit` as the tool or table gave it, one of ingest.units' load-throughput units
    (`transactions/min`, `queries/s`, `new orders/min` for HammerDB's NOPM, `transactions/min` for its TPM, ...);
    staging converts it to per second with the unit macros. Response times are in ms (a table's `mm:ss.ss`,
    `h:mm:ss` or seconds are converted by the reader); `response_avg_ms` is the mean response time, or the mean of
    the per-session elapsed times where a table gives only those. `workload`: the series label (one series per
    workload and disk label); None: the file's one workload."""

    tool: str  # 'table' | 'hammerdb'
    step_index: int
    source_line: int
    load_kind: str
    load: float
    throughput: float | None
    throughput_unit: str | None
    response_avg_ms: float | None = None
    response_p50_ms: float | None = None
    response_p95_ms: float | None = None
    response_p99_ms: float | None = None
    duration_s: float | None = None
    errors: int | None = None
    workload: str | None = None
    tool_version: str | None = None
    record: str = "load"

    def to_normalized(self) -> dict[str, Any]:
        out = {"record": self.record}
        out.update({k: getattr(self, k) for k in LOAD_FIELDS})
        return out


QUERY_IO_FIELDS = tuple(f.name for f in fields(QueryIoRecord) if f.name != "record")
QUERY_TIME_FIELDS = tuple(f.name for f in fields(QueryTimeRecord) if f.name != "record")
INTERVAL_FIELDS = tuple(f.name for f in fields(IntervalRecord) if f.name != "record")
WAIT_FIELDS = tuple(f.name for f in fields(WaitRecord) if f.name != "record")
LOAD_FIELDS = tuple(f.name for f in fields(LoadRecord) if f.name != "record")

Record = IoRecord | QueryIoRecord | QueryTimeRecord | IntervalRecord | WaitRecord | LoadRecord


class ParsedRecords(list):  # type: ignore[type-arg]
    """What a parser's parse() may return instead of a plain list: its records, and warnings about the lines it could
    not read while it kept the rest of the file (each `line N: what was wrong`), which reach ParsedFile.warnings.
    Equal to the plain list of its records. The one type of records with warnings: every format returns this one."""

    def __init__(self, records: Iterable[Record] | None = None, warnings: Iterable[str] | None = None) -> None:
        super().__init__(records or ())
        self.warnings: list[str] = list(warnings or ())


# Warnings one parse keeps, at most: a file of damaged lines says so once per line up to this many, then once that
# more follow.
MAX_WARNINGS = 100
MORE_WARNINGS = "more damaged lines follow; only the first ones are listed"


def line_warning(line: int, what: str) -> str:
    """A warning about one line of the input, as ParsedFile.warnings holds them."""
    return f"line {line}: {what}"


def add_line_warning(warnings: list[str], line: int, what: str) -> None:
    """Append line_warning(line, what) to a parse's `warnings`, up to MAX_WARNINGS of them; past that, once, the
    note that more follow."""
    if len(warnings) < MAX_WARNINGS:
        warnings.append(line_warning(line, what))
    elif len(warnings) == MAX_WARNINGS:
        warnings.append(MORE_WARNINGS)


@dataclass(slots=True)
class ParsedFile:
    """What one parser made of one file."""

    format: str
    records: list[Record]
    encoding: str = "utf-8"
    warnings: list[str] = field(default_factory=list)

    @property
    def tool_version(self) -> str | None:
        versions = sorted({r.tool_version for r in self.records if r.tool_version})
        return ", ".join(versions) if versions else None

    @property
    def runs(self) -> int:
        """Benchmark runs, SQL statements, observed intervals (samples) and load steps in the file."""
        io_runs = {r.run_index for r in self.records if isinstance(r, IoRecord)}
        statements = {r.statement_index for r in self.records if isinstance(r, QueryIoRecord | QueryTimeRecord)}
        intervals = {r.interval_index for r in self.records if isinstance(r, IntervalRecord | WaitRecord)}
        steps = {(r.workload, r.step_index) for r in self.records if isinstance(r, LoadRecord)}
        return len(io_runs) + len(statements) + len(intervals) + len(steps)
