"""Iometer results CSV (`results.csv`), Iometer 2006.07.27 and 1.1.0.

Input (Iometer 1.1.0, trimmed; the layout of `ManagerList::SaveResults`, iometer-org/iometer src/ManagerList.cpp)::

    'Test Type,Test Description
    0,nvme 4k random read
    'Version
    1.1.0
    'Time Stamp
    2024-02-07 10:15:02:390
    'Access specifications
    'Access specification name,default assignment
    4K; 100% Read; 100% random,NONE
    'size,% of size,% reads,% random,delay,burst,align,reply
    4096,100,100,100,0,1,0,0
    'End access specifications
    'Results
    'Target Type,Target Name,Access Specification Name,# Managers,# Workers,# Disks,IOps,Read IOps,Write IOps,
    MiBps (Binary),Read MiBps (Binary),Write MiBps (Binary),MBps (Decimal),...,Average Response Time,...,Queue Depth,...
    ALL,All,4K; 100% Read; 100% random,1,4,4,180412.7,180412.7,0.0,704.74,704.74,0.00,738.97,...,32,...
    'Manager ID,Manager Name
    1,BENCH01
    ...
    DISK,E:,...

Records (normalized; per result block: one per direction with I/O, and for a mixed access specification the total
the tool prints)::

    {"tool": "iometer", "tool_version": "1.1.0", "run_index": 0, "source_line": 16, "target": "E:",
     "started_at": "2024-02-07T10:15:02.390000", "pattern": "random", "operation": "read", "read_pct": 100.0,
     "direction": "read", "block_size_bytes": 4096, "threads": 4, "queue_depth": 32, "iops": 180412.7,
     "throughput_bytes_per_s": 738979000.0, "latency_avg_ms": 0.709, "latency_max_ms": 12.4, ...}

Record mapping:
- One run = one `'Results` block's ALL row (one access specification of one test; a test with several specs
  writes several blocks). Read and write records from the Read / Write columns where they did I/O; a mixed spec
  also gives the `total` record of the IOps / MiBps / Average Response Time columns.
- Access specification (by its name): `size` -> block size, `% reads` -> read_pct, `% random` -> pattern (0:
  sequential, else random; the share kept as `random_pct`). A spec of several lines (a mix of sizes) gives the
  average transfer (bytes / I/Os, inferred) and its lines in the metadata.
- threads = `# Workers` (each worker is a thread issuing I/O). Iometer's `# of Outstanding I/Os` (the `Queue
  Depth` column) is per target per worker: a worker with k targets keeps k x that many in flight, so queue_depth
  (per thread) = Queue Depth x (# Disks / # Workers), listed in `inferred` when k > 1 (an uneven split or an
  ambiguous queue depth leaves it unknown).
- Throughput: `MiBps (Binary)` (1.1.0) or `MBps` (2006, also 2^20 bytes) in MiB/s; the decimal figure is kept in
  the metadata. Response times are ms: average (read / write / all) and maximum.
- target = the DISK rows' names; `started_at` = the test's first `'Time Stamp`; `tool_version` = `'Version`;
  the manager's name (`manager_name`) and test description are metadata.
- A damaged or cut row is reported as a warning (`line N: ...`) and costs only itself. ParseError when no result
  row is read.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from datetime import datetime

from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats._common import how_damaged, read_number
from kneepoint.ingest.records import IoRecord, ParsedRecords, add_line_warning
from kneepoint.ingest.textio import find_rare

NAME = "iometer"
TITLE = "Iometer results CSV"
TOOLS = ("iometer",)
HOST_KEYS: frozenset[str] = frozenset({"manager_name"})  # the host a manager (Dynamo) ran on
USER_KEYS: frozenset[str] = frozenset()
RESULT_KEY_PREFIXES: tuple[str, ...] = ("result.",)
RESULT_KEYS: tuple[str, ...] = ()

MAX_LINE = 20000
_HEAD = 65536  # detect() reads this much of a text
_ROW_KINDS = frozenset(("ALL", "MANAGER", "WORKER", "DISK"))
_STAMP = re.compile(r"^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?::(\d{1,3}))?$")
# Metadata kept from a result row besides the figures the record takes.
_KEPT = ("MBps (Decimal)", "Read MBps (Decimal)", "Write MBps (Decimal)", "Errors", "% CPU Utilization",
         "Bytes Read", "Bytes Written", "Read I/Os", "Write I/Os", "Queue Depth")  # fmt: skip


def detect(text: str) -> float:
    # Every file of unknown format passes through here: Iometer's section lines start with an apostrophe, which one
    # memchr scan looks for first.
    if text.find("'", 0, _HEAD) < 0:
        return 0.0
    head = text[:_HEAD]
    if find_rare(head, "'Target Type,Target Name,Access Specification Name", 1) >= 0:
        return 0.95
    if find_rare(head, "'Access specifications", 1) >= 0 and "'Results" in head:
        return 0.8
    return 0.0


def parse(text: str) -> list[IoRecord]:
    return _Reader().read(text)


@dataclass(slots=True)
class _Spec:
    lines: list[tuple[float, float, float, float]] = field(default_factory=list)  # size, % of size, % reads, % random


@dataclass(slots=True)
class _Run:
    line: int
    row: dict[str, str]
    spec_name: str
    started_at: str | None
    version: str | None
    meta: dict[str, str]
    spec: _Spec | None = None
    disks: list[str] = field(default_factory=list)


class _Reader:
    """Line dispatcher: the block being read (a `'` line names what the next lines are), the column header in force."""

    def __init__(self) -> None:
        self.records: list[IoRecord] = []
        self.warnings: list[str] = []
        self.expect: str | None = None  # what the next data line is: "version", "stamp", "spec name", ...
        self.header: list[str] | None = None
        self.specs: dict[str, _Spec] = {}
        self.spec: _Spec | None = None
        self.version: str | None = None
        self.started_at: str | None = None
        self.meta: dict[str, str] = {}  # the test's: description, manager
        self.runs: list[_Run] = []

    def warn(self, number: int, what: str) -> None:
        add_line_warning(self.warnings, number, what)

    def read(self, text: str) -> list[IoRecord]:
        for number, raw in enumerate(text.split("\n"), 1):
            line = raw.strip().lstrip("\ufeff")
            if line and len(line) <= MAX_LINE:
                self.line(line, number)
        for run in self.runs:
            self.finish(run)
        if self.records:
            return ParsedRecords(self.records, self.warnings)
        raise ParseError("no Iometer result row (ALL) found", 1)

    def line(self, line: str, number: int) -> None:
        if line[0] == "'":
            self.marker(line[1:])
            return
        cells = _cells(line)
        expect = self.expect
        if expect == "spec line" and self.spec is not None:
            values = [read_number(c) for c in cells[:4]]
            if len(values) == 4 and None not in values:
                self.spec.lines.append(tuple(values))  # type: ignore[arg-type]
            return
        self.expect = None
        if expect == "version":
            self.version = line.strip()
        elif expect == "stamp":
            self.started_at = self.started_at or _stamp(line)
        elif expect == "test":
            if description := line.partition(",")[2].strip():  # (written as typed, commas and all)
                self.meta["test.description"] = description
        elif expect == "spec name":
            self.spec = self.specs[cells[0].strip()] = _Spec()  # (each test writes its specifications anew)
        elif expect == "manager" and len(cells) > 1:
            self.meta["manager_name"] = cells[1].strip()
        elif cells[0] in _ROW_KINDS and self.header is not None:
            self.result_row(cells, line, number)

    def marker(self, text: str) -> None:
        """A `'` line: a section's name or a column header."""
        key = text.strip()
        if key.startswith("Target Type,"):
            self.header = _cells(key)
            return
        self.expect = {
            "Version": "version",
            "Time Stamp": "stamp",
            "Test Type,Test Description": "test",
            "Access specification name,default assignment": "spec name",
            "Manager ID,Manager Name": "manager",
        }.get(key)
        if key.startswith("size,% of size"):
            self.expect = "spec line"
        elif key == "Test Type,Test Description":
            self.started_at = None  # a new test: its own time stamp
            self.meta = {}

    def result_row(self, cells: list[str], line: str, number: int) -> None:
        assert self.header is not None
        if len(cells) != len(self.header):
            how = how_damaged(line, len(cells) < len(self.header))
            self.warn(number, f"{how} {cells[0]} row ({len(cells)} of {len(self.header)} cells): skipped")
            return
        row = dict(zip(self.header, cells, strict=True))
        if cells[0] == "ALL":
            name = row.get("Access Specification Name", "").strip()
            run = _Run(number, row, name, self.started_at, self.version, dict(self.meta), self.specs.get(name))
            self.runs.append(run)
        elif cells[0] == "DISK" and self.runs and (disk := row.get("Target Name", "").strip()):
            if disk not in self.runs[-1].disks:
                self.runs[-1].disks.append(disk)
        elif cells[0] == "MANAGER" and self.runs and "manager_name" not in self.runs[-1].meta:
            self.runs[-1].meta["manager_name"] = row.get("Target Name", "").strip()

    # -- records

    def finish(self, run: _Run) -> None:
        row = run.row
        figures = {k: read_number(v) for k, v in row.items() if k not in ("Target Type", "Target Name")}
        unit_cols = ("MiBps (Binary)", "Read MiBps (Binary)", "Write MiBps (Binary)")
        if "MiBps (Binary)" not in row:
            unit_cols = ("MBps (Binary)", "Read MBps (Binary)", "Write MBps (Binary)")
            if "MBps (Binary)" not in row:
                unit_cols = ("MBps", "Read MBps", "Write MBps")  # 2006: MBps are 2^20 bytes
        inferred: list[str] = []
        spec = run.spec
        meta = dict(run.meta)
        meta["access_specification"] = run.spec_name
        meta.update({f"result.{_slug(k)}": row[k] for k in _KEPT if row.get(k)})
        block, read_pct, pattern, random_pct = None, None, None, None
        if spec is not None and len(spec.lines) == 1:
            size, _, reads, rand = spec.lines[0]
            block, read_pct = int(size) or None, min(100.0, max(0.0, reads))
            pattern, random_pct = ("sequential" if rand == 0 else "random"), rand
        elif spec is not None and spec.lines:
            meta["access_specification.lines"] = "; ".join(
                f"{int(s)} B {p:g}% of size {r:g}% reads {q:g}% random" for s, p, r, q in spec.lines
            )
            weight = sum(p for _, p, _, _ in spec.lines) or 1.0
            read_pct = round(sum(r * p for _, p, r, _ in spec.lines) / weight, 2)
            random_pct = round(sum(q * p for _, p, _, q in spec.lines) / weight, 2)
            pattern = "sequential" if random_pct == 0 else "random"
        if random_pct is not None and 0 < random_pct < 100:
            meta["random_pct"] = f"{random_pct:g}"
        read_ios, write_ios = figures.get("Read I/Os") or 0.0, figures.get("Write I/Os") or 0.0
        read_bytes, write_bytes = figures.get("Bytes Read") or 0.0, figures.get("Bytes Written") or 0.0
        if block is None and read_ios + write_ios > 0:
            block = round((read_bytes + write_bytes) / (read_ios + write_ios))
            inferred.append("block_size_bytes")
        if read_pct is None:
            read_iops, write_iops = figures.get("Read IOps") or 0.0, figures.get("Write IOps") or 0.0
            read_pct = round(100 * read_iops / (read_iops + write_iops), 2) if read_iops + write_iops else 100.0
            inferred.append("read_pct")
        if pattern is None:
            pattern = "random"
            inferred.append("pattern")
        workers = _int(figures.get("# Workers"))
        disks = _int(figures.get("# Disks"))
        depth = _int(figures.get("Queue Depth"))
        queue_depth = None
        if depth and workers and disks and disks % workers == 0:
            queue_depth = depth * (disks // workers)
            if disks // workers > 1:
                inferred.append("queue_depth")
        operation = "read" if read_pct >= 100 else "write" if read_pct <= 0 else "mixed"
        directions = [("read", "Read IOps", unit_cols[1], "Average Read Response Time", "Maximum Read Response Time"),
                      ("write", "Write IOps", unit_cols[2], "Average Write Response Time",
                       "Maximum Write Response Time")]  # fmt: skip
        if operation == "mixed":
            directions.append(("total", "IOps", unit_cols[0], "Average Response Time", "Maximum Response Time"))
        run_index = (self.records[-1].run_index + 1) if self.records else 0
        for direction, iops_col, mib_col, avg_col, max_col in directions:
            iops = figures.get(iops_col)
            if not iops or iops <= 0:
                continue
            self.records.append(
                IoRecord(
                    tool="iometer",
                    tool_version=run.version,
                    run_index=run_index,
                    source_line=run.line,
                    target=", ".join(d for d in run.disks if d) or None,
                    started_at=run.started_at,
                    pattern=pattern,  # type: ignore[arg-type]
                    operation=operation,  # type: ignore[arg-type]
                    read_pct=read_pct,
                    direction=direction,  # type: ignore[arg-type]
                    block_size_bytes=block,
                    threads=workers,
                    queue_depth=queue_depth,
                    iops=iops,
                    throughput=figures.get(mib_col),
                    throughput_unit="MiB/s",
                    latency_unit="ms",
                    latency_avg=figures.get(avg_col),
                    latency_max=figures.get(max_col),
                    inferred=sorted(inferred),
                    metadata=meta,
                )
            )


def _cells(line: str) -> list[str]:
    try:
        return next(csv.reader([line]))
    except (csv.Error, StopIteration):
        return [line]


def _int(value: float | None) -> int | None:
    if value is None or value <= 0 or value != int(value) or value >= 2**31:
        return None  # (Iometer prints -1 for an ambiguous value)
    return int(value)


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9%]+", "_", name.lower()).strip("_")


def _stamp(text: str) -> str | None:
    m = _STAMP.match(text.strip())
    if m is None:
        return None
    y, mo, d, h, mi, s, ms = m.groups()
    try:
        stamp = datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), int(ms or 0) * 1000)
    except ValueError:
        return None
    return stamp.isoformat()
