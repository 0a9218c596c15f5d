"""DiskSpd text output (`-Rtext`, the default), DiskSpd 2.0.x to 2.2.

Input (2.0.21a, trimmed)::

    Command Line: diskspd.exe -c1G -d120 -r -w50 -t8 -o8 -b4K -Sh -L testfile.dat

    Input parameters:

        timespan:   1
        -------------
        duration: 120s
        path: 'testfile.dat'
            performing mix test (read/write ratio: 50/50)
            block size: 4096
            using random I/O (alignment: 4096)
            number of outstanding I/O operations: 8
            threads per file: 8

    System information:

        computer name: e1e8c95b2207
        start time: 2019/07/25 21:46:27 UTC

    Results for timespan 1:
    *******************************************************************************

    actual test time:   120.00s
    thread count:       8

    Read IO
    thread |       bytes     |     I/Os     |    MiB/s   |  I/O per s |  AvgLat  | LatStdDev |  file
    -----------------------------------------------------------------------------------------------------
         0 |      1452736512 |       354672 |      11.55 |    2955.60 |    1.592 |     0.985 | testfile.dat (1024MiB)
    -----------------------------------------------------------------------------------------------------
    total:       11837591552 |      2890037 |      94.08 |   24083.62 |    1.563 |     1.026

    (Total IO and Write IO tables alike)

    total:
      %-ile |  Read (ms) | Write (ms) | Total (ms)
    ----------------------------------------------
        min |      0.190 |      0.100 |      0.100
       50th |      1.405 |      0.985 |      1.161
        max |    145.285 |    135.744 |    145.285

Records (normalized)::

    {"record": "io", "tool": "diskspd", "tool_version": null, "run_index": 0, "source_line": 1,
     "target": "testfile.dat", "started_at": "2019-07-25T21:46:27+00:00", "pattern": "random",
     "operation": "mixed", "read_pct": 50.0, "direction": "read", "block_size_bytes": 4096,
     "threads": 8, "queue_depth": 8, "duration_s": 120.0, "iops": 24083.62,
     "throughput_bytes_per_s": 98650030.08, "latency_avg_ms": 1.563, "latency_min_ms": 0.19,
     "latency_p50_ms": 1.405, "latency_max_ms": 145.285, ...}
    ... and the same for "direction": "write" from the Write IO table.

Record mapping:
- One run = one `Results for timespan N` block, i.e. one DiskSpd invocation (an XML profile with several
  timespans gives one run per timespan). A run yields one record per direction with I/O, taken from the
  `total:` rows of the `Read IO` / `Write IO` tables; a mixed run gives a read and a write record and the
  `Total IO` row the tool prints as a third, direction `total` (its latency from the %-ile table's Total
  column; the row is also kept in the run metadata as `total.*`).
  When only the `Total IO` table is there (a cut paste) and the run is read-only or write-only, that
  table stands for its one direction.
- operation: read / write / mixed from the write ratio (`performing read test`, `performing write test`,
  `performing mix test (read/write ratio: R/W)`); read_pct = 100 - write%.
- threads: `thread count:` of the results (DiskSpd prints -F threads, or -t threads per file x targets);
  without it the thread rows of the tables are counted (inferred).
- queue_depth: outstanding I/Os per thread: `number of outstanding I/O operations[ per thread]: N`. With a
  fixed thread pool (-F, no `threads per file` line) every thread keeps N in flight on every target, so
  N x targets; -O (`request count:`) is already per thread. Several targets with different -o under -t
  give the thread-weighted mean (inferred).
- block size from `block size:` (bytes, or `4KiB` since 2.1); pattern from `using random I/O`,
  `using sequential I/O`, `using interlocked sequential I/O` (sequential) or `using mixed
  random/sequential I/O` (random; the share is kept as `random_pct`); duration from `actual test time:`.
- Missing `Input parameters` (some outputs start at `Command Line:`, pasted fragments at `Total IO`): the
  command line's -b -o -O -t -F -w -r -s -d and its targets fill in what the results do not say, with DiskSpd's
  documented defaults (-b64K -o2 -t1 -w0, sequential) where a flag is absent; every field taken from the command
  line is listed in `inferred` (block_size_bytes, operation, read_pct, pattern, queue_depth, and threads,
  duration_s, target where the results print none of them). A flag left out yields to what the output shows:
  the thread rows counted, the read/write split measured. -S is kept as `command_line.caching`. With neither,
  block size = bytes / I/Os and the pattern is DiskSpd's default (sequential), both inferred; queue depth stays
  unknown.
- Throughput: the MiB/s column (older builds head it `MB/s`, also bytes / 2^20 / s), unit MiB/s. Below
  1 MiB/s its two decimals hide more than 0.5 %, so bytes / actual test time is used instead (inferred).
- Latency (ms): AvgLat of the `total:` row (printed with -L); min, 50th, 95th, 99th, 3-nines and max from
  the `%-ile` table (the one headed `total:` or, in 2.2, `Total latency distribution:` where targets
  have their own tables). The whole %-ile column is kept as a `share` histogram: the percent of I/Os
  between one row's latency and the next (equal latencies merged).
- Several targets: `target` lists the paths; the per-target rows are summed per path into the run
  metadata (`target.N.path`, `target.N.read.iops`, ...), and per-target %-ile tables as
  `target.N.read.latency_99th_ms`; the records use the totals.
- Metadata: `command_line`, `input.*` (Input parameters: `input.duration`, `input.target.1.block_size`,
  lines without a value in `input.flags` / `input.target.N.flags`), `system.*` (System information),
  `results.*`, `cpu.*` (the avg. row), `total.*` / `read.*` / `write.*` (the total rows as printed),
  `timespan` and `parameters_from` (input parameters, command line or none).
- Shell prompts, echoed commands, msinfo headers, notes and blank lines are skipped; a `Totals:` block
  (several timespans) is not a run; a thread row whose file cell a narrow console wrapped onto the next
  line is joined back; grouped numbers in cells (`1,026,872`) read. A damaged or cut table row is reported as
  a warning (`line N: ...`) and passed over; a run whose table lost its `total:` row (or whose total row is
  damaged) is skipped with a warning, or is the ParseError at that table when no run is left. DiskSpd's text
  output does not print its version: `tool_version` is null.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats._common import (
    LATENCY_FIELD_ROWS,
    PERCENTILE_LABELS,
    diskspd_start_time,
    first_content_line,
    how_damaged,
    read_number,
    share_histogram,
)
from kneepoint.ingest.records import IoRecord, ParsedRecords, add_line_warning, line_warning
from kneepoint.ingest.textio import find_rare, size_to_bytes

NAME = "diskspd"
TITLE = "DiskSpd text"
TOOLS = ("diskspd",)
HOST_KEYS: frozenset[str] = frozenset({"computer_name"})  # system.computer_name
USER_KEYS: frozenset[str] = frozenset()
RESULT_KEY_PREFIXES: tuple[str, ...] = ("read.", "write.", "total.", "cpu.", "results.")
RESULT_KEYS: tuple[str, ...] = ("timespan",)
TOOL = "diskspd"

MIB = 1024 * 1024

_NUMBER = re.compile(r"^-?[0-9]{1,20}(?:\.[0-9]{1,12})?$")
_TOKEN = re.compile(r'"[^"]*"|\S+')
_KEY_VALUE = re.compile(r"^([A-Za-z][A-Za-z0-9 _/.-]*?):\s*(.*)$")
_RESULTS = re.compile(r"^Results for timespan\s+([0-9]{1,9}):?\s*$")
_TIMESPAN = re.compile(r"^timespan:\s*([0-9]{1,9})\s*$")
_PATH = re.compile(r"^path:\s*(?:template target\s*)?'(.*)'\s*$")
_MIX = re.compile(r"performing mix test \(read/write ratio:\s*([0-9]{1,3})\s*/\s*([0-9]{1,3})\s*\)")
_BLOCK = re.compile(r"^block size:\s*(\S+)\s*$")
_OUTSTANDING = re.compile(r"^number of outstanding I/O operations(?: per thread)?:\s*([0-9]{1,9})\s*$")
_THREADS_PER_FILE = re.compile(r"^threads per file:\s*([0-9]{1,9})\s*$")
_THREAD_POOL = re.compile(r"^thread pool with\s+([0-9]{1,9})\s+threads")
_MIXED_RANDOM = re.compile(r"^using mixed random/sequential I/O \(([0-9]{1,3})% random\)")
_ACTUAL_TIME = re.compile(r"^actual test time:\s*([0-9]{1,12}(?:\.[0-9]{1,6})?)\s*s\s*$")
_COUNT_LINE = re.compile(r"^(thread count|proc count|request count):\s*([0-9]{1,9})\s*$")
_CPU_AVG = re.compile(r"avg\.\s*\|\s*([\d.]+)%\s*\|\s*([\d.]+)%\s*\|\s*([\d.]+)%\s*\|\s*([\d.]+)%")
_PCT_HEADER = re.compile(r"^%-ile\s*\|\s*Read \(ms\)\s*\|\s*Write \(ms\)\s*\|\s*Total \(ms\)\s*$")
_IO_HEADER = re.compile(r"thread\s*\|\s*bytes\s*\|\s*I/Os\s*\|")  # at a line start: _io_header_in
_DISKSPD_COMMAND = re.compile(r"^Command Line:.*diskspd", re.M | re.I)
_DETECT_CHARS = 200_000
_IO_PER_S = re.compile(re.escape("I/O per s"))
_PCT_ANYWHERE = re.compile(r"%-ile\s*\|\s*Read \(ms\)\s*\|\s*Write \(ms\)")
# A console wrap splits a row's file cell over a line or two of at most a console's width.
_MAX_WRAPS = 3
_MAX_WRAP_CHARS = 512
_TABLE_TITLES = {"Total IO": "total", "Read IO": "read", "Write IO": "write"}
# First characters of the lines `_scan` dispatches (Command Line, Input parameters, System information, Results,
# Totals, actual test time, thread/proc/request count, the table titles, %-ile); of the others only a CPU row counts.
_LEAD_CHARS = frozenset("CISRTatprW%")
_CPU_META_KEYS = ("cpu.usage_pct", "cpu.user_pct", "cpu.kernel_pct", "cpu.idle_pct")
_NON_SLUG = re.compile(r"[^a-z0-9]+")

_PERCENTILE_COLUMN = {"read": 0, "write": 1, "total": 2}  # of a %-ile table row: Read, Write, Total (ms)
_TOTAL_LATENCY_KEYS = {label: f"total.latency_{label}_ms" for label in PERCENTILE_LABELS}
_RESULTS_META_KEYS = {k: f"results.{k}" for k in ("thread_count", "proc_count", "request_count")}
_OPERATION_KEYS = frozenset({"operation", "read_pct"})
_PATTERN_KEYS = frozenset({"pattern"})
_BLOCK_KEYS = frozenset({"block_size_bytes"})
# -S<mode> (diskspd -?): which caches a run bypassed.
_CACHING = {
    "": "software caching disabled (-S)",
    "u": "software caching disabled (-Su)",
    "h": "software caching and hardware write caching disabled (-Sh)",
    "uw": "software caching and hardware write caching disabled (-Suw)",
    "wu": "software caching and hardware write caching disabled (-Swu)",
    "w": "write-through (-Sw)",
    "r": "remote caching disabled (-Sr)",
    "b": "cached I/O (-Sb)",
}
# What the records take from a run's parameters when they come from its echoed command line (no Input parameters):
# listed in `inferred` as read from the command line.
_FROM_COMMAND_LINE = ("block_size_bytes", "operation", "read_pct", "pattern", "queue_depth")
# DiskSpd's defaults (diskspd -?): -b64K -o2 -t1 -w0, sequential.
DEFAULT_BLOCK = 65536
DEFAULT_OUTSTANDING = 2


@dataclass(slots=True)
class _Target:
    path: str | None = None
    block_size: int | None = None
    write_ratio: float | None = None
    pattern: str | None = None
    random_pct: float | None = None
    outstanding: int | None = None
    threads_per_file: int | None = None
    inferred: set[str] = field(default_factory=set)


@dataclass(slots=True)
class _Profile:
    """One timespan's parameters, from Input parameters or from the command line."""

    source: str
    targets: list[_Target] = field(default_factory=list)
    thread_pool: int | None = None
    requests_per_thread: int | None = None
    meta: dict[str, str] = field(default_factory=dict)
    duration_s: float | None = None  # -d (the command line's)


class _Header:
    """A table's column header."""

    __slots__ = ("columns", "throughput_column")

    def __init__(self, line: str) -> None:
        self.columns = tuple(c.strip() for c in line.split("|"))
        self.throughput_column = next((c for c in self.columns if c in ("MiB/s", "MB/s")), None)

    def total_keys(self, kind: str, ncells: int) -> tuple[str, ...]:
        """The metadata keys of a `total:` row of `ncells` cells (its columns as total_raw has them)."""
        names = dict.fromkeys(self.columns[1 : 1 + ncells])
        return tuple(f"{kind}.{_COLUMN_KEYS.get(col) or _slug(col)}" for col in names)


@dataclass(slots=True)
class _Table:
    kind: str
    line: int
    header: _Header
    columns: tuple[str, ...]
    # Thread rows: (thread id as printed, the row, path, file size as printed); the row's number cells are
    # read when a run with several targets sums them (_per_target).
    rows: list[tuple[str, str, str, str]] = field(default_factory=list)
    total: dict[str, float | None] | None = None
    total_raw: dict[str, str] = field(default_factory=dict)
    total_cells: int = 0


@dataclass(slots=True)
class _Results:
    line: int
    timespan: int | None
    explicit: bool
    actual_time: float | None = None
    counts: dict[str, int] = field(default_factory=dict)
    cpu: tuple[str, ...] = ()  # usage, user, kernel, idle % of the avg. row
    tables: dict[str, _Table] = field(default_factory=dict)
    # (label line or None, first line, {row label: (read, write, total)})
    percentiles: list[tuple[str | None, int, dict[str, tuple[float | None, float | None, float | None]]]] = field(
        default_factory=list
    )


@dataclass(slots=True)
class _Invocation:
    line: int
    command_line: str | None = None
    cmd_profile: _Profile | None = None
    timespans: dict[int, _Profile] = field(default_factory=dict)
    input_flags: list[str] = field(default_factory=list)
    system: dict[str, str] = field(default_factory=dict)
    results: list[_Results] = field(default_factory=list)
    timespans_seen: set[int] = field(default_factory=set)


def detect(text: str) -> float:
    # Every file of unknown format passes through here: each test starts with a scan for a literal (sre and
    # find_rare look for a character of it rare in other tools' outputs).
    head = text[:_DETECT_CHARS]
    # A thread table's header and a %-ile table hold '|': a text without one (one memchr scan) has neither.
    tables = "|" in head
    if tables and _IO_PER_S.search(head) and _io_header_in(head):
        return 0.95
    if find_rare(head, "Results for timespan", 0) >= 0 and "actual test time:" in head:
        return 0.9
    if "Input parameters:" in head and _DISKSPD_COMMAND.search(head):
        return 0.85
    if tables and _PCT_ANYWHERE.search(head):
        return 0.6
    return 0.0


def _io_header_in(head: str) -> bool:
    """A line of `head` starts with a thread table's column header (found from str.find, not a `^` search)."""
    i = head.find("thread")
    while i >= 0:
        if (i == 0 or head[i - 1] == "\n") and _IO_HEADER.match(head, i):
            return True
        i = head.find("thread", i + 1)
    return False


def parse(text: str) -> list[IoRecord]:
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines:
        lines[0] = lines[0].lstrip("\ufeff")
    warnings: list[str] = []
    invocations = _scan(lines, warnings)
    records: list[IoRecord] = []
    first_error: ParseError | None = None
    skipped: list[ParseError] = []
    run_index = 0
    for inv in invocations:
        for k, res in enumerate(inv.results):
            try:
                run_records = _run_records(inv, res, k, run_index)
            except ParseError as exc:
                first_error = first_error or exc
                skipped.append(exc)
                continue
            if run_records:
                records.extend(run_records)
                run_index += 1
    if records:
        # A damaged run costs only itself: the others are kept and it is reported.
        warnings += [line_warning(exc.line, f"{exc.reason}: that run is skipped") for exc in skipped]
        return ParsedRecords(records, warnings)
    if first_error is not None:
        raise first_error
    # (the first line with content as the lines were read: CRs made line ends, a leading BOM dropped)
    raise ParseError(
        "no DiskSpd result found (no Total IO / Read IO / Write IO table)", first_content_line("\n".join(lines))
    )


# --------------------------------------------------------------------------------------------- scanning


def _scan(lines: list[str], warnings: list[str]) -> list[_Invocation]:
    invocations: list[_Invocation] = []
    readings: _Readings = {}
    inv: _Invocation | None = None
    res: _Results | None = None
    i = 0
    n = len(lines)
    prev_content: str | None = None  # the last non-blank line, for %-ile table labels
    while i < n:
        s = lines[i].strip()
        if not s:
            i += 1
            continue
        c = s[0]
        if c not in _LEAD_CHARS:
            # Most lines (CPU rows, separators, prompts, notes) start with no keyword: only a CPU `avg.` row,
            # which the search finds anywhere in the line, can matter.
            if res is not None and "avg." in s and (m := _CPU_AVG.search(s)):
                res.cpu = m.groups()
            prev_content = s
            i += 1
            continue
        lineno = i + 1
        if c == "C" and s.startswith("Command Line:"):
            inv = _Invocation(line=lineno, command_line=s[len("Command Line:") :].strip())
            inv.cmd_profile = _command_line_profile(inv.command_line)
            invocations.append(inv)
            res = None
        elif s == "Input parameters:":
            if inv is None or inv.timespans or inv.results or inv.input_flags:
                inv = _Invocation(line=lineno)
                invocations.append(inv)
            res = None
            i = _input_section(lines, i + 1, inv, readings)
            prev_content = s
            continue
        elif s == "System information:":
            if inv is None or inv.results or inv.system:
                inv = _Invocation(line=lineno)
                invocations.append(inv)
            res = None
            i = _system_section(lines, i + 1, inv, readings)
            prev_content = s
            continue
        elif c == "R" and (m := _RESULTS.match(s)):
            ts = int(m.group(1))
            if inv is None or ts in inv.timespans_seen or (inv.results and not inv.results[-1].explicit):
                inv = _Invocation(line=lineno)
                invocations.append(inv)
            res = _Results(line=lineno, timespan=ts, explicit=True)
            inv.results.append(res)
            inv.timespans_seen.add(ts)
        elif s == "Totals:":
            res = None  # the sum over several timespans is not a run
        elif c == "a" and (m := _ACTUAL_TIME.match(s)):
            if res is None or res.actual_time is not None or res.tables:
                inv, res = _implicit_results(invocations, inv, lineno)
            res.actual_time = float(m.group(1))
        elif res is not None and c in "tpr" and (m := _COUNT_LINE.match(s)):
            res.counts[m.group(1).replace(" ", "_")] = int(m.group(2))
        elif res is not None and "avg." in s and (m := _CPU_AVG.search(s)):
            res.cpu = m.groups()
        elif s in _TABLE_TITLES and i + 1 < n and (header := _io_header(lines[i + 1])) is not None:
            kind = _TABLE_TITLES[s]
            if res is None or kind in res.tables:
                inv, res = _implicit_results(invocations, inv, lineno)
            table, i = _io_table(lines, i + 1, kind, header, warnings)
            res.tables[kind] = table
            prev_content = None
            continue
        elif c == "%" and _PCT_HEADER.match(s):
            label = prev_content
            table_rows, i = _percentile_table(lines, i + 1)
            if res is not None:
                res.percentiles.append((label, lineno, table_rows))
            prev_content = None
            continue
        prev_content = s
        i += 1
    return invocations


def _implicit_results(
    invocations: list[_Invocation], inv: _Invocation | None, lineno: int
) -> tuple[_Invocation, _Results]:
    """Results pasted without their `Results for timespan` line; a second one is a new invocation."""
    if inv is None or inv.results:
        inv = _Invocation(line=lineno)
        invocations.append(inv)
    res = _Results(line=lineno, timespan=None, explicit=False)
    inv.results.append(res)
    return inv, res


def _io_header(line: str) -> _Header | None:
    """The column header of a thread table, or None for another line."""
    header = _Header(line)
    cells = header.columns
    return header if len(cells) >= 5 and cells[0] == "thread" and cells[1] == "bytes" and cells[2] == "I/Os" else None


def _io_table(lines: list[str], i: int, kind: str, header: _Header, warnings: list[str]) -> tuple[_Table, int]:
    """The table whose column header (`header`) is lines[i]. A damaged row (cut short, a cell lost) is reported
    and passed over: the rows after it and the `total:` row still belong to the table."""
    columns = header.columns
    table = _Table(kind, i + 1, header, columns)  # line: 1-based, of the column header
    rows = table.rows
    last = len(columns) - 1  # pipes before the file cell (which may hold more)
    file_cell: str | None = None  # the last thread row's file cell, while a console wrap may continue it
    wraps = 0
    i += 1
    n = len(lines)
    while i < n:
        s = lines[i].strip()
        if not s:
            break
        c = s[0]
        if c == "-" and s.count("-") == len(s):
            file_cell = None
            i += 1
            continue
        if c == "t" and s.startswith("total:"):
            _total_line(table, s)
            i += 1
            break
        pipes = s.count("|")
        if pipes >= last:
            thread = s[: s.find("|")].strip()
            if 0 < len(thread) <= 9 and thread.isascii() and thread.isdigit():
                file_cell = (s[s.rfind("|") + 1 :] if pipes == last else s.split("|", last)[-1]).strip()
                wraps = 0
                rows.append((thread, s, *_path_and_size(file_cell)))
                i += 1
                continue
        if file_cell is not None and pipes == 0 and wraps < _MAX_WRAPS and len(s) <= _MAX_WRAP_CHARS:
            # A console narrower than the row wrapped its file cell onto this line.
            file_cell += s
            wraps += 1
            rows[-1] = (rows[-1][0], rows[-1][1], *_path_and_size(file_cell))
        elif pipes >= 2:
            how = how_damaged(s)
            add_line_warning(warnings, i + 1, f"{how} row of the {kind} IO table: skipped")
            file_cell = None
        elif pipes < 2:
            break
        i += 1
    return table, i


def _total_line(table: _Table, s: str) -> None:
    """The `total:` row: its cells as printed and as numbers, under the column names."""
    table.total_cells = s.count("|") + 1
    names = table.columns[1 : 1 + table.total_cells]
    cells = [c.strip() for c in s[len("total:") :].split("|")]
    table.total_raw = dict(zip(names, cells, strict=False))
    table.total = {k: _num(v) for k, v in table.total_raw.items()}


def _path_and_size(cell: str) -> tuple[str, str]:
    """`C:\\testfile.dat (8192MB)` -> path and the size as printed."""
    cell = cell.strip()
    start = cell.rfind("(")
    if cell.endswith(")") and start >= 0 and ")" not in cell[start:-1]:
        return cell[:start].rstrip(), cell[start + 1 : -1]
    return cell, ""


def _percentile_table(
    lines: list[str], i: int
) -> tuple[dict[str, tuple[float | None, float | None, float | None]], int]:
    rows: dict[str, tuple[float | None, float | None, float | None]] = {}
    n = len(lines)
    while i < n:
        s = lines[i].strip()
        if s and s[0] == "-" and s.count("-") == len(s):
            i += 1
            continue
        cells = [c.strip() for c in s.split("|")]
        if len(cells) != 4 or cells[0] not in PERCENTILE_LABELS:
            break
        rows[cells[0]] = (_num(cells[1]), _num(cells[2]), _num(cells[3]))
        i += 1
    return rows, i


# A line of the parameter sections as read: the target properties it sets, and its (key slug, value) when it is a
# `key: value` line. Runs repeat the same lines: each is read once per parse.
_Readings = dict[str, tuple[tuple[tuple[str, object], ...], tuple[str, str] | None]]


def _reading(line: str, readings: _Readings) -> tuple[tuple[tuple[str, object], ...], tuple[str, str] | None]:
    if line not in readings:
        readings[line] = _target_props(line), _key_value(line)
    return readings[line]


def _input_section(lines: list[str], i: int, inv: _Invocation, readings: _Readings) -> int:
    profile: _Profile | None = None
    target: _Target | None = None
    meta: dict[str, str] = {}  # the profile's
    prefix = "input"  # of the meta keys: the profile's, then each target's
    flags: list[str] = []  # lines without a value, of the profile or the current target
    n = len(lines)
    while i < n:
        raw = lines[i]
        s = raw.strip()
        if not s:
            i += 1
            continue
        if not raw[0].isspace():
            break  # the section is indented; a line at column 0 ends it
        i += 1
        c = s[0]
        if c == "-" and s.count("-") == len(s):
            continue
        if c == "t" and s.startswith("timespan:") and (m := _TIMESPAN.match(s)):
            profile = _Profile(source="input parameters")
            inv.timespans[int(m.group(1))] = profile
            meta, prefix, flags = profile.meta, "input", []
            target = None
            continue
        if profile is None:
            inv.input_flags.append(s)  # e.g. `using verbose mode`, printed before the first timespan
            continue
        if c == "p" and s.startswith("path:") and (m := _PATH.match(s)):
            target = _Target(path=m.group(1))
            profile.targets.append(target)
            prefix, flags = f"input.target.{len(profile.targets)}", []
            meta[f"{prefix}.path"] = m.group(1)
            continue
        props, kv = _reading(s, readings)
        if target is not None:
            for name, value in props:
                setattr(target, name, value)
        elif s.startswith("thread pool with") and (m := _THREAD_POOL.match(s)):
            profile.thread_pool = int(m.group(1))
        elif s.startswith("number of outstanding") and (m := _OUTSTANDING.match(s)):
            profile.requests_per_thread = int(m.group(1))
        # `key: value` lines under their key; lines without a value gathered in `<prefix>.flags`.
        if kv is not None:
            meta[f"{prefix}.{kv[0]}"] = kv[1]
        else:
            flags.append(s)
            meta[f"{prefix}.flags"] = "; ".join(flags)
    return i


def _key_value(line: str) -> tuple[str, str] | None:
    """(slug of the key, value) of a `key: value` line."""
    kv = _KEY_VALUE.match(line)
    return (_slug(kv.group(1)), kv.group(2).strip()) if kv is not None else None


def _target_props(s: str) -> tuple[tuple[str, object], ...]:
    """The target properties a line of a target's parameters sets, as (attribute, value) pairs."""
    if s == "performing read test":
        return (("write_ratio", 0.0),)
    if s == "performing write test":
        return (("write_ratio", 100.0),)
    if (m := _MIX.search(s)) and int(m.group(2)) <= 100:
        return (("write_ratio", float(m.group(2))),)
    if m := _BLOCK.match(s):
        return (("block_size", _block_size(m.group(1))),)
    if s.startswith("using random I/O"):
        return (("pattern", "random"),)
    if m := _MIXED_RANDOM.match(s):
        return (("pattern", "random"), ("random_pct", min(100.0, float(m.group(1)))))
    if s.startswith(("using sequential I/O", "using interlocked sequential I/O")):
        return (("pattern", "sequential"),)
    if m := _OUTSTANDING.match(s):
        return (("outstanding", int(m.group(1))),)
    if m := _THREADS_PER_FILE.match(s):
        return (("threads_per_file", int(m.group(1))),)
    return ()


def _system_section(lines: list[str], i: int, inv: _Invocation, readings: _Readings) -> int:
    n = len(lines)
    while i < n:
        raw = lines[i]
        s = raw.strip()
        if s and not raw[:1].isspace():
            break
        i += 1
        if not s or "|" in s or (s[0] == "-" and s.count("-") == len(s)):
            continue
        _, kv = _reading(s, readings)
        if kv is not None and kv[1]:
            inv.system[f"system.{kv[0]}"] = kv[1]
    return i


def _command_line_profile(cmd: str) -> _Profile | None:
    """Parameters from `Command Line:`; flags DiskSpd would default are marked inferred."""
    # Without quotes the tokens are the whitespace-separated words (str.split and \S agree on what is blank).
    tokens = [t.strip('"') for t in _TOKEN.findall(cmd)] if '"' in cmd else cmd.split()
    if not tokens:
        return None
    flags: dict[str, str] = {}
    paths: list[str] = []
    for tok in tokens[1:]:
        if len(tok) >= 2 and tok[0] in "-/" and tok[1].isalpha():
            flags.setdefault(tok[1], tok[2:])
        elif tok:
            paths.append(tok)
    if not paths:
        return None
    block = _block_size(flags["b"]) if "b" in flags else None
    pattern, random_pct = "sequential", None
    if "r" in flags:
        pattern = "random"
        if flags["r"].startswith("s") and _is_small_int(flags["r"][1:]):
            random_pct = min(100.0, float(flags["r"][1:]))
    write_ratio = _int_flag(flags, "w")
    if write_ratio is not None and write_ratio > 100:
        write_ratio = None  # not a percentage: DiskSpd would have refused it
    outstanding, threads_per_file = _int_flag(flags, "o"), _int_flag(flags, "t")
    pool, requests = _int_flag(flags, "F"), _int_flag(flags, "O")
    inferred: set[str] = set()
    if block is None:
        inferred.add("block_size_bytes")
    if write_ratio is None:
        inferred |= _OPERATION_KEYS
    if "r" not in flags and "s" not in flags:
        inferred.add("pattern")
    if outstanding is None and requests is None:
        inferred.add("queue_depth")
    if threads_per_file is None and pool is None:
        inferred.add("threads")
    block_size = block if block is not None else DEFAULT_BLOCK
    ratio = float(write_ratio) if write_ratio is not None else 0.0
    # Every target of the command line has the same parameters (and shares the inferred set: it is only read).
    depth, per_file = outstanding or DEFAULT_OUTSTANDING, threads_per_file or 1
    targets = [_Target(path, block_size, ratio, pattern, random_pct, depth, per_file, inferred) for path in paths]
    meta = {}
    if "S" in flags:
        meta["command_line.caching"] = _CACHING.get(flags["S"], f"-S{flags['S']}")
    duration = _int_flag(flags, "d")
    return _Profile("command line", targets, pool, requests, meta, float(duration) if duration is not None else None)


def _int_flag(flags: dict[str, str], letter: str) -> int | None:
    v = flags.get(letter)
    return int(v) if v is not None and _is_small_int(v) else None


def _is_small_int(v: str) -> bool:
    """1 to 9 ASCII digits."""
    return 0 < len(v) <= 9 and v.isascii() and v.isdigit()


# --------------------------------------------------------------------------------------------- records


def _run_records(inv: _Invocation, res: _Results, position: int, run_index: int) -> list[IoRecord]:
    tables = res.tables
    if not tables:
        return []
    for kind, table in tables.items():
        if table.total is None:
            raise ParseError(f"DiskSpd {kind} IO table has no total: row (output cut short?)", table.line)

    profile = _profile_for(inv, res)
    inferred: set[str] = set()
    targets = profile.targets if profile else []

    directions = _direction_totals(tables, targets)
    if not directions:
        return []

    # Operation and read share: the write ratio the run was given, else what was measured.
    ratios = {t.write_ratio for t in targets}
    measured_mix = _ios(tables.get("read")) > 0 and _ios(tables.get("write")) > 0
    if measured_mix and targets and all("operation" in t.inferred for t in targets):
        ratios = {None}  # -w left out (DiskSpd's -w0) yet both directions did I/O: what was measured decides
    if len(ratios) == 1 and None not in ratios:
        write_ratio = ratios.pop()
        for t in targets:
            inferred |= t.inferred & _OPERATION_KEYS
    else:
        inferred |= _OPERATION_KEYS
        read_ios = _ios(tables.get("read")) if "read" in tables else None
        write_ios = _ios(tables.get("write")) if "write" in tables else None
        if read_ios is not None and write_ios is not None and read_ios + write_ios > 0:
            write_ratio = round(100.0 * write_ios / (read_ios + write_ios), 2)
        else:
            write_ratio = 0.0 if "read" in directions else 100.0
    operation = "read" if write_ratio == 0 else "write" if write_ratio == 100 else "mixed"
    read_pct = 100.0 - write_ratio
    total_table = tables.get("total")
    if operation == "mixed" and len(directions) == 2 and total_table is not None and total_table.total:
        directions["total"] = total_table.total  # a mixed run: its Total IO row too, as the tool prints it

    patterns = {t.pattern for t in targets}
    if patterns and all(patterns):
        pattern = "sequential" if patterns == {"sequential"} else "random"
        for t in targets:
            inferred |= t.inferred & _PATTERN_KEYS
    else:
        pattern = "sequential"  # DiskSpd's default access pattern
        inferred.add("pattern")

    threads = res.counts.get("thread_count")
    if threads is None:
        # (thread flags left out of a command line: the thread rows printed say more than DiskSpd's -t1 default)
        given = profile is not None and not all("threads" in t.inferred for t in profile.targets)
        threads = _threads_from_params(profile) if profile and given else None
        if threads is None:
            ids = {int(row[0]) for t in tables.values() for row in t.rows}
            threads = len(ids) or None
        inferred.add("threads")

    queue_depth, qd_inferred = _queue_depth(profile, res)
    if qd_inferred:
        inferred.add("queue_depth")
    duration_s = res.actual_time
    if duration_s is None and profile is not None and profile.duration_s is not None:
        duration_s = profile.duration_s  # -d: the test time asked for
        inferred.add("duration_s")
    if profile is not None and profile.source == "command line":
        # No Input parameters: what the records take from the command line is listed as read from it.
        inferred.update(key for key in _FROM_COMMAND_LINE if key != "queue_depth" or "request_count" not in res.counts)
        if not any(t.rows for t in tables.values()):
            inferred.add("target")  # the command line's paths: the tables name none

    paths = _paths(tables, targets)
    pct_total = _run_percentiles(res, paths)
    meta = _metadata(inv, res, profile, tables, paths, pct_total)
    started_at = diskspd_start_time(inv.system.get("system.start_time"))
    target = ", ".join(paths) if paths else None
    source_line = inv.line if position == 0 else res.line

    blocks = {t.block_size for t in targets}
    block_given = next(iter(blocks)) if len(blocks) == 1 and all(blocks) else None  # every target's, if one
    if block_given is not None:
        for t in targets:
            inferred |= t.inferred & _BLOCK_KEYS

    records: list[IoRecord] = []
    for direction, row in directions.items():
        rec_inferred = set(inferred)
        ios = row.get("I/Os") or 0.0
        nbytes = row.get("bytes") or 0.0
        if block_given is not None:
            block: int | None = block_given
        else:
            block = round(nbytes / ios) if ios else None
            rec_inferred.add("block_size_bytes")
        table = tables[direction if direction in tables else "total"]  # (a lone Total IO table: see _direction_totals)
        throughput, unit = _throughput(row, table.header, nbytes, res.actual_time)
        if throughput is None:
            raise ParseError("DiskSpd total: row has no MiB/s value", table.line)
        if unit == "B/s":
            unit = "MiB/s"
            throughput = throughput / MIB
            rec_inferred.add("throughput_bytes_per_s")
        column = _PERCENTILE_COLUMN[direction]
        # latency_min, _p50, ... from their %-ile rows
        latency = {
            field: None if (row_values := pct_total.get(label)) is None else row_values[column]
            for field, label in LATENCY_FIELD_ROWS.items()
        }
        points = [(PERCENTILE_LABELS[label], vals[column]) for label, vals in pct_total.items()]
        histogram = share_histogram(sorted((p, v) for p, v in points if v is not None))
        iops = row.get("I/O per s")
        if iops is None:
            raise ParseError("DiskSpd total: row has no I/O per s value", table.line)
        records.append(
            IoRecord(
                tool=TOOL,
                run_index=run_index,
                source_line=source_line,
                pattern=pattern,  # type: ignore[arg-type]
                operation=operation,  # type: ignore[arg-type]
                read_pct=read_pct,
                direction=direction,  # type: ignore[arg-type]
                block_size_bytes=block,
                threads=threads,
                queue_depth=queue_depth,
                iops=iops,
                throughput=throughput,
                throughput_unit=unit,
                latency_unit="ms",
                latency_avg=row.get("AvgLat"),
                duration_s=duration_s,
                target=target,
                started_at=started_at,
                inferred=sorted(rec_inferred),
                metadata=meta,
                histogram=histogram,
                histogram_kind="share",
                **latency,
            )
        )
    return records


def _profile_for(inv: _Invocation, res: _Results) -> _Profile | None:
    """The run's parameters: its timespan's Input parameters, else (timespan 1) the command line's."""
    ts = res.timespan or 1
    profile = inv.timespans.get(ts)
    cmd = inv.cmd_profile if ts == 1 else None
    if profile is None:
        return cmd
    # Input parameters are authoritative; the command line fills what they leave out.
    if cmd is not None and len(cmd.targets) == len(profile.targets):
        for t, c in zip(profile.targets, cmd.targets, strict=True):
            if t.outstanding is None and profile.requests_per_thread is None and "queue_depth" not in c.inferred:
                t.outstanding = c.outstanding
                t.inferred.add("queue_depth")  # from the command line
        if profile.thread_pool is None and cmd.thread_pool is not None:
            profile.thread_pool = cmd.thread_pool
        if profile.requests_per_thread is None and cmd.requests_per_thread is not None:
            profile.requests_per_thread = cmd.requests_per_thread
    return profile


def _direction_totals(tables: dict[str, _Table], targets: list[_Target]) -> dict[str, dict[str, float | None]]:
    """The `total:` row of each direction with I/O."""
    out: dict[str, dict[str, float | None]] = {}
    for direction in ("read", "write"):
        t = tables.get(direction)
        if t is not None and t.total is not None and (t.total.get("I/Os") or 0) > 0:
            out[direction] = t.total
    if out or "total" not in tables:
        return out
    # Only the Total IO table: it stands for the one direction a read-only or write-only run has.
    total = tables["total"]
    ratios = {t.write_ratio for t in targets}
    if total.total and (total.total.get("I/Os") or 0) > 0 and ratios in ({0.0}, {100.0}):
        out["read" if ratios == {0.0} else "write"] = total.total
    elif total.total and (total.total.get("I/Os") or 0) > 0:
        raise ParseError(
            "DiskSpd Total IO table without the Read IO / Write IO split and no write ratio to tell the direction",
            total.line,
        )
    return out


def _ios(table: _Table | None) -> float:
    if table is None or table.total is None:
        return 0.0
    return table.total.get("I/Os") or 0.0


def _threads_from_params(profile: _Profile) -> int | None:
    if profile.thread_pool:
        return profile.thread_pool
    if profile.targets and all(t.threads_per_file for t in profile.targets):
        return sum(t.threads_per_file or 0 for t in profile.targets)
    return None


def _queue_depth(profile: _Profile | None, res: _Results) -> tuple[int | None, bool]:
    """Outstanding I/Os per thread, and whether that was derived or defaulted."""
    if "request_count" in res.counts:
        return res.counts["request_count"], False
    if profile is None or not profile.targets:
        return None, False
    if profile.requests_per_thread:
        return profile.requests_per_thread, False
    depths = [t.outstanding for t in profile.targets]
    if None in depths:
        return None, False
    inferred = any("queue_depth" in t.inferred for t in profile.targets)
    pool = profile.thread_pool is not None or (
        profile.source == "input parameters" and not any(t.threads_per_file for t in profile.targets)
    )
    if pool:
        # Every thread of a -F pool keeps -o I/Os in flight on every target: derived once there are several.
        return sum(d or 0 for d in depths), inferred or len(depths) > 1
    if len(set(depths)) == 1:
        return depths[0], inferred
    weights = [t.threads_per_file or 1 for t in profile.targets]
    mean = sum((d or 0) * w for d, w in zip(depths, weights, strict=True)) / sum(weights)
    return round(mean), True


def _throughput(
    row: dict[str, float | None], header: _Header, nbytes: float, seconds: float | None
) -> tuple[float | None, str]:
    col = header.throughput_column
    value = row.get(col) if col else None
    if (value is None or value < 1.0) and nbytes > 0 and seconds:
        return nbytes / seconds, "B/s"  # two printed decimals hide too much below 1 MiB/s
    return value, "MiB/s"


def _paths(tables: dict[str, _Table], targets: list[_Target]) -> list[str]:
    seen: dict[str, None] = {}
    for kind in ("total", "read", "write"):
        if kind in tables:
            for _, _, path, _ in tables[kind].rows:
                seen.setdefault(path, None)
    if not seen:
        for t in targets:
            if t.path:
                seen.setdefault(t.path, None)
    return list(seen)


def _run_percentiles(res: _Results, paths: list[str]) -> dict[str, tuple[float | None, float | None, float | None]]:
    """The %-ile table of the whole run: the one headed `total:`, else an unlabelled one, else the only one."""
    labelled_total = [rows for label, _, rows in res.percentiles if label == "total:"]
    if labelled_total:
        return labelled_total[-1]
    targets = set(paths)
    unlabelled = [rows for label, _, rows in res.percentiles if label is None or label.rstrip(":") not in targets]
    if unlabelled:
        return unlabelled[-1]
    if len(res.percentiles) == 1 and len(paths) <= 1:
        return res.percentiles[0][2]
    return {}


def _metadata(
    inv: _Invocation,
    res: _Results,
    profile: _Profile | None,
    tables: dict[str, _Table],
    paths: list[str],
    pct_total: dict[str, tuple[float | None, float | None, float | None]],
) -> dict[str, str]:
    meta: dict[str, str] = {}
    if inv.command_line is not None:
        meta["command_line"] = inv.command_line
        if inv.cmd_profile is not None:
            meta.update(inv.cmd_profile.meta)
    if inv.input_flags:
        meta["input.profile_flags"] = "; ".join(inv.input_flags)
    if profile is not None and profile.source == "input parameters":
        meta.update(profile.meta)
    meta["parameters_from"] = profile.source if profile else "none"
    meta.update(inv.system)
    if res.timespan is not None:
        meta["timespan"] = str(res.timespan)
    if res.actual_time is not None:
        meta["results.actual_test_time_s"] = f"{res.actual_time:.2f}"
    for k, v in res.counts.items():
        meta[_RESULTS_META_KEYS[k]] = str(v)
    if res.cpu:
        meta.update(zip(_CPU_META_KEYS, res.cpu, strict=True))
    for kind, table in tables.items():
        if table.header.throughput_column:
            meta["throughput_column"] = table.header.throughput_column
        meta.update(zip(table.header.total_keys(kind, table.total_cells), table.total_raw.values(), strict=True))
    if profile is not None:
        for idx, t in enumerate(profile.targets, 1):
            if t.random_pct is not None:
                meta[f"target.{idx}.random_pct"] = f"{t.random_pct:g}"
    if len(paths) > 1:
        index = {path: idx for idx, path in enumerate(paths, 1)}
        meta.update(_per_target(tables, paths))
        for label, _, rows in res.percentiles:
            name = (label or "").rstrip(":")
            if name in index:
                idx = index[name]
                for row_label, vals in rows.items():
                    for d, v in zip(("read", "write", "total"), vals, strict=True):
                        if v is not None:
                            meta[f"target.{idx}.{d}.latency_{row_label}_ms"] = f"{v:.3f}"
    for row_label, vals in pct_total.items():
        if vals[2] is not None:
            meta[_TOTAL_LATENCY_KEYS[row_label]] = f"{vals[2]:.3f}"
    return meta


_COLUMN_KEYS = {
    "bytes": "bytes",
    "I/Os": "ios",
    "MiB/s": "mib_per_s",
    "MB/s": "mib_per_s",
    "I/O per s": "iops",
    "AvgLat": "avg_latency_ms",
    "LatStdDev": "latency_stddev_ms",
    "IopsStdDev": "iops_stddev",
}


def _per_target(tables: dict[str, _Table], paths: list[str]) -> dict[str, str]:
    """Per-target sums of the thread rows (I/O counts and bytes exact, IOPS summed, latency I/O-weighted)."""
    index = {path: idx for idx, path in enumerate(paths, 1)}
    meta: dict[str, str] = {f"target.{idx}.path": path for path, idx in index.items()}
    for kind, table in tables.items():
        names = table.columns[1:-1]
        last = len(table.columns) - 1
        groups: dict[str, list[tuple[dict[str, float | None], str]]] = {}
        for _, row, path, size in table.rows:
            cells = row.split("|", last)[1:-1]
            groups.setdefault(path, []).append(({name: _num(v) for name, v in zip(names, cells, strict=True)}, size))
        for path, rows in groups.items():
            key = f"target.{index[path]}"
            meta[f"{key}.file_size"] = rows[0][1]
            if kind == "total":
                meta[f"{key}.threads"] = str(len(rows))
            ios = sum(r[0].get("I/Os") or 0 for r in rows)
            meta[f"{key}.{kind}.bytes"] = str(int(sum(r[0].get("bytes") or 0 for r in rows)))
            meta[f"{key}.{kind}.ios"] = str(int(ios))
            meta[f"{key}.{kind}.iops"] = f"{sum(r[0].get('I/O per s') or 0 for r in rows):.2f}"
            lats = [(r[0].get("AvgLat"), r[0].get("I/Os") or 0) for r in rows]
            if ios and all(lat is not None for lat, _ in lats):
                weighted = sum((lat or 0) * n for lat, n in lats) / ios
                meta[f"{key}.{kind}.avg_latency_ms"] = f"{weighted:.3f}"
    return meta


# --------------------------------------------------------------------------------------------- helpers


def percentile_histogram(points: list[tuple[float, float | None]]) -> list[tuple[float, float]]:
    """(percentile, latency) points -> (latency upper bound, percent of I/Os since the previous point).

    Equal latencies are merged; shares that round to nothing are dropped.
    """
    return share_histogram(sorted((p, lat) for p, lat in points if lat is not None))


def _num(cell: str) -> float | None:
    cell = cell.strip().rstrip("%")
    if _NUMBER.match(cell):
        return float(cell)
    return read_number(cell) if cell and cell[0].isdigit() else None  # `1,026,872` as a paste may group it


def _block_size(value: str) -> int | None:
    """`4096`, `4K` or `4KiB` -> bytes; DiskSpd's block size is a 32-bit count, anything else is not one."""
    try:
        size = size_to_bytes(value)
    except (ValueError, OverflowError):
        return None
    return size if 0 < size < 2**32 else None


def _slug(key: str) -> str:
    return _NON_SLUG.sub("_", key.strip().lower()).strip("_")
