"""SQL Server's file and wait statistics pasted as text: `sys.dm_io_virtual_file_stats` (per database file: reads,
bytes, I/O stalls) and `sys.dm_os_wait_stats` (the I/O waits), as SSMS "Results to text", a grid copied with its
headers (tab-separated), sqlcmd output (fixed width, `-W`, `-s ","`) or CSV saved from the grid; SQL Server 2008+.

Input (SSMS "Results to text": two snapshots of one server around a `WAITFOR DELAY '00:01:00'`, trimmed)::

    database_name  file_id sample_ms   num_of_reads  num_of_bytes_read  io_stall_read_ms  num_of_writes ...
    -------------- ------- ----------- ------------- ------------------ ----------------- ------------- ...
    SalesDB        1       864012345   1200000       9830400000         6000000           300000        ...

    (1 row affected)

    database_name  file_id sample_ms   num_of_reads  num_of_bytes_read  io_stall_read_ms  num_of_writes ...
    -------------- ------- ----------- ------------- ------------------ ----------------- ------------- ...
    SalesDB        1       864072345   1260000       10321920000        6300000           306000        ...

Records (normalized; one per database file and interval)::

    {"record": "interval", "interval_index": 0, "source_line": 9, "device": "SalesDB file_id 1",
     "device_kind": "database_file", "interval_start": null, "interval_s": 60.0, "reads_per_s": 1000.0,
     "read_bytes_per_s": 8192000.0, "read_latency_ms": 5.0, "writes_per_s": 100.0, ..., "since_boot": false,
     "tool": "sqlserver", ...}

Rules:
- A result set is a header line whose columns (by name, any case, brackets and punctuation ignored) are those of
  `sys.dm_io_virtual_file_stats` (database_id or DB_NAME() as database_name, file_id, name / physical_name,
  sample_ms, num_of_reads, num_of_bytes_read, io_stall_read_ms, num_of_writes, num_of_bytes_written,
  io_stall_write_ms, ...), of the community queries that join sys.master_files and print averages (Paul Randal's
  `ReadLatency`, `WriteLatency`, `AvgBPerRead`, `Drive`, `DB`; Glenn Berry's `avg_read_latency_ms`,
  `[Database Name]`, `io_stall_read_ms`, `num_of_reads`), or of `sys.dm_os_wait_stats` (wait_type,
  waiting_tasks_count, wait_time_ms; Paul Randal's `WaitType`, `Wait_S` in seconds, `WaitCount`). Text mode: the
  header, a line of dashes giving the column widths, then fixed-width rows; a `(N rows affected)` line or a blank line
  ends the set. Grid copies: tab-separated; CSV: `,` or `;`.
- device = the database's name (else `database_id N`), the file's logical name and physical name where printed (else
  `file_id N`): `tempdb templog T:\\tempdb.ldf`; device_kind database_file. A row of a per-drive query (only `Drive`)
  is the volume: device `E:`, device_kind logical_disk.
- Snapshots of one server (the same host; result sets in text order): consecutive pairs give one IntervalRecord per
  database file present in both: the counters' deltas over (sample_ms2 − sample_ms1) / 1000 s (each row's own
  sample_ms; an int sample_ms of SQL Server 2008-2014 that wrapped past 2^31 is unwrapped). read_latency_ms =
  Δio_stall_read_ms / Δnum_of_reads (None where no reads), and the same for writes. Without sample_ms the interval
  and the rates are None, the latencies kept. A counter that went down (the service restarted between the snapshots)
  refuses that file's interval with a warning.
- A single snapshot: since_boot, rates over sample_ms (the machine's uptime: the counters start with the service,
  so where the service restarted without a reboot these rates are too low); without sample_ms (or with a wrapped,
  negative one) interval and rates are None. Rows with printed averages only (no counters) are read as they are,
  since_boot, each snapshot on its own.
- Waits: only the I/O waits (IO_WAITS, PAGEIOLATCH_*) become WaitRecords, deltas between consecutive snapshots or
  since_boot from a single one; the interval comes from the sample_ms of the file statistics of the same server
  nearest before (else after) each wait snapshot, else None (rates None; avg_wait_ms = wait_time_ms /
  waiting_tasks_count over the interval).
- host: a server column in the rows (`@@SERVERNAME AS ServerName`, `SERVERPROPERTY('MachineName')`), else the last
  one-value result of `SELECT @@SERVERNAME` before the set (else the first in the text), as printed (a named
  instance keeps its `\\INSTANCE`); else None. tool_version: the build of `@@VERSION` text (`Microsoft SQL Server
  2019 (RTM-CU22) (KB...) - 15.0.4322.2 (X64)` -> `15.0.4322.2`) or a ProductVersion column. interval_start: a
  capture-time column of the earlier snapshot, or a one-value `SELECT GETDATE()` result printed before it.
- A damaged or cut row costs only itself (`line N: ...`). ParseError when the text holds no such result set, or
  when its sets give no record (naming the line).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field

from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats._common import first_content_line, how_damaged, read_number, truncated
from kneepoint.ingest.records import IntervalRecord, ParsedRecords, WaitRecord, add_line_warning

NAME = "sqlserver_dmv"
TITLE = "SQL Server file and wait statistics (DMVs)"
TOOLS = ("sqlserver",)
HOST_KEYS: frozenset[str] = frozenset()  # (the host is the records' own field, not run metadata)
USER_KEYS: frozenset[str] = frozenset()
RESULT_KEY_PREFIXES: tuple[str, ...] = ()
RESULT_KEYS: tuple[str, ...] = ()
TOOL = "sqlserver"

MAX_LINE = 8000
_HEAD = 65536
INT32 = 1 << 32  # sample_ms was an int before SQL Server 2016: it wraps

# The I/O waits kept (besides every PAGEIOLATCH_*): waits for data, log, backup and bulk file I/O.
IO_WAITS = frozenset(
    {"WRITELOG", "IO_COMPLETION", "ASYNC_IO_COMPLETION", "BACKUPIO", "WRITE_COMPLETION", "IO_RETRY", "IO_QUEUE_LIMIT"}
)

# Column names, normalized (lower case, letters and digits only) -> the field they hold.
COLUMNS: dict[str, str] = {
    "databaseid": "database_id",
    "dbid": "database_id",
    "databasename": "database_name",
    "dbname": "database_name",
    "db": "database_name",
    "database": "database_name",
    "fileid": "file_id",
    "name": "logical_name",
    "logicalname": "logical_name",
    "logicalfilename": "logical_name",
    "filelogicalname": "logical_name",
    "filename": "logical_name",
    "physicalname": "physical_name",
    "physicalfilename": "physical_name",
    "filepath": "physical_name",
    "drive": "drive",
    "disklocation": "drive",
    "samplems": "sample_ms",
    "numofreads": "num_of_reads",
    "numberofreads": "num_of_reads",
    "numberreads": "num_of_reads",
    "reads": "num_of_reads",
    "numofbytesread": "num_of_bytes_read",
    "bytesread": "num_of_bytes_read",
    "iostallreadms": "io_stall_read_ms",
    "numofwrites": "num_of_writes",
    "numberofwrites": "num_of_writes",
    "numberwrites": "num_of_writes",
    "writes": "num_of_writes",
    "numofbyteswritten": "num_of_bytes_written",
    "byteswritten": "num_of_bytes_written",
    "iostallwritems": "io_stall_write_ms",
    "iostall": "io_stall",
    "sizeondiskbytes": "size_on_disk_bytes",
    "readlatency": "read_latency",
    "readlatencyms": "read_latency",
    "avgreadlatencyms": "read_latency",
    "avgreadstallms": "read_latency",
    "writelatency": "write_latency",
    "writelatencyms": "write_latency",
    "avgwritelatencyms": "write_latency",
    "avgwritestallms": "write_latency",
    "servername": "server",
    "server": "server",
    "machinename": "server",
    "instancename": "server",
    "productversion": "version",
    "capturetime": "time",
    "capturedate": "time",
    "sampletime": "time",
    "collectiontime": "time",
    "snapshottime": "time",
    "checkdate": "time",
    "timestamp": "time",
    "waittype": "wait_type",
    "waitingtaskscount": "waiting_tasks_count",
    "waitcount": "waiting_tasks_count",
    "waittimems": "wait_time_ms",
    "waits": "wait_s",
    "waitsec": "wait_s",
}
FILE_COUNTERS = (
    "num_of_reads",
    "num_of_bytes_read",
    "io_stall_read_ms",
    "num_of_writes",
    "num_of_bytes_written",
    "io_stall_write_ms",
)
_FILE_FIGURES = frozenset(FILE_COUNTERS) | {"read_latency", "write_latency"}
_FILE_IDENTITY = frozenset({"database_id", "database_name", "file_id", "logical_name", "physical_name", "drive"})
_NUMERIC = frozenset(FILE_COUNTERS) | {
    "sample_ms",
    "read_latency",
    "write_latency",
    "database_id",
    "file_id",
    "waiting_tasks_count",
    "wait_time_ms",
    "wait_s",
}
_ONE_VALUE = frozenset({"", "nocolumnname", "servername", "server", "machinename", "computername", "hostname"})

_DETECT = re.compile(
    r"num_of_reads|io_stall_read_ms|sample_ms|wait_type|waittype|readlatency|avgbperread|avg_read_latency_ms",
    re.IGNORECASE,
)
_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_DASHES = re.compile(r"-+")
_DASH_LINE = re.compile(r"^-+(?:[ ,;|\t]-+)*$")
_ROWS_AFFECTED = re.compile(r"^\(.{0,60}\d.{0,60}\)$")
_VERSION = re.compile(
    r"Microsoft SQL Server (?:\d{4}|vNext)\b[^\n]{0,200}? - (?P<build>\d{1,2}\.\d{1,2}\.\d{1,5}\.\d{1,5})"
)
_BUILD = re.compile(r"^\d{1,2}\.\d{1,2}\.\d{1,5}\.\d{1,5}$")
_DATETIME = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})[ T](?P<time>\d{2}:\d{2}(?::\d{2}(?:\.\d{1,7})?)?)(?:\s?(?P<tz>[+-]\d{2}:\d{2}|Z))?$"
)
_SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}(?:\\[A-Za-z0-9_$#-]{1,32})?(?:,\d{1,5})?$")


def detect(text: str) -> float:
    """A header of the DMVs' columns within the first 64 KiB; surer when a row that reads follows it."""
    head = text[:_HEAD]
    if _DETECT.search(head) is None:
        return 0.0
    lines = head.split("\n")
    best = 0.0
    for number, m in enumerate(_DETECT.finditer(head)):
        if number >= 20:
            break
        index = head.count("\n", 0, m.start())
        table = _header_at(lines, index)
        if table is None:
            continue
        best = max(best, 0.6)
        for later in lines[table.first_row : table.first_row + 3]:
            if later.strip() and table.cells(later.rstrip("\r")) is not None:
                return 0.9
    return best


def parse(text: str) -> list[IntervalRecord | WaitRecord]:
    return _Reader().read(text)


# ---------------------------------------------------------------------------------------------- result sets


def _normalize(name: str) -> str:
    return _NON_ALNUM.sub("", name.lower())


def _fields(names: list[str]) -> list[str | None]:
    """The field each column holds (None for a column kneepoint does not read); a field's first column wins."""
    out: list[str | None] = []
    seen: set[str] = set()
    for name in names:
        key = COLUMNS.get(_normalize(name))
        out.append(key if key is not None and key not in seen else None)
        if key is not None:
            seen.add(key)
    return out


def _kind(fields: list[str | None]) -> str | None:
    present = {f for f in fields if f}
    if "wait_type" in present and present & {"wait_time_ms", "wait_s"}:
        return "wait"
    named = present & (_FILE_FIGURES | _FILE_IDENTITY | {"sample_ms"})
    if present & _FILE_FIGURES and present & _FILE_IDENTITY and len(named) >= 3:
        return "file"
    return None


@dataclass(slots=True)
class _Table:
    """A result set's layout: its columns' fields and how a row splits into cells."""

    kind: str  # "file", "wait" or "one" (a one-column, one-value result: @@SERVERNAME, GETDATE())
    fields: list[str | None]
    header_line: int  # 0-based index of the header line
    first_row: int  # 0-based index of the first line after the header (and its dash line)
    spans: list[int] | None = None  # fixed width: the start of each column
    sep: str | None = None  # "\t", ",", ";": a separated layout

    def cells(self, line: str) -> list[str] | None:
        """The row's cells, one per column, else None (a line of another shape)."""
        n = len(self.fields)
        if self.sep is not None:
            if self.sep == "\t":
                cells = line.split("\t")
            else:
                try:
                    cells = next(csv.reader([line], delimiter=self.sep))
                except (csv.Error, StopIteration):
                    return None
            cells = [c.strip() for c in cells]
            if len(cells) == n + 1 and not cells[-1]:
                cells.pop()  # a trailing separator
            return cells if len(cells) == n else None
        assert self.spans is not None
        if n == 1:
            return [line.strip()]
        starts = self.spans
        if len(line) > starts[-1] and all(line[s - 1] == " " for s in starts[1:]):
            cells = [line[a:b].strip() for a, b in zip(starts, starts[1:] + [len(line)], strict=True)]
            if self._numbers_read(cells):
                return cells
        words = line.split()  # sqlcmd -W: one space between trimmed values
        if len(words) == n and self._numbers_read(words):
            return words
        return None

    def _numbers_read(self, cells: list[str]) -> bool:
        return all(
            f not in _NUMERIC or c.upper() == "NULL" or read_number(c) is not None
            for f, c in zip(self.fields, cells, strict=True)
        )


def _header_at(lines: list[str], index: int) -> _Table | None:
    """The result set whose header is line `index` (0-based) or the line before its dash line, else None."""
    line = lines[index].rstrip("\r")
    if len(line) > MAX_LINE:
        return None
    following = lines[index + 1].rstrip("\r") if index + 1 < len(lines) else ""
    if index and not lines[index - 1].strip() and re.fullmatch(r"-{1,400}", line.strip()) and following.strip():
        # A one-column result without a column name (`SELECT @@SERVERNAME`): a blank header, its dashes, the value.
        return _Table("one", [None], index - 1, index + 1, spans=[len(line) - len(line.lstrip())])
    if _DASH_LINE.match(following.strip()):
        return _text_header(line, following, index)
    if following.strip() and _normalize(line) in _ONE_VALUE - {""}:  # a grid's `(No column name)` / ServerName
        return _Table("one", [None], index, index + 1, sep="\t")
    for sep in ("\t", ",", ";"):
        if sep in line:
            names = line.split("\t") if sep == "\t" else _csv_cells(line, sep)
            fields = _fields(names)
            kind = _kind(fields)
            if kind is not None:
                return _Table(kind, fields, index, index + 1, sep=sep)
    return None


def _csv_cells(line: str, sep: str) -> list[str]:
    try:
        return next(csv.reader([line], delimiter=sep))
    except (csv.Error, StopIteration):
        return []


def _text_header(header: str, dashes: str, index: int) -> _Table | None:
    """Text mode: the dash line gives the columns (fixed width, or sqlcmd's `-s` separator)."""
    stripped = dashes.strip()
    sep = next((s for s in (",", ";", "|", "\t") if s in stripped), None)
    if sep is not None:
        fields = _fields(header.split(sep))
        kind = _kind(fields)
        if kind is None or sep == "|":  # (a Markdown table is no output of SQL Server's tools)
            return None
        return _Table(kind, fields, index, index + 2, sep=sep)
    offset = len(dashes) - len(dashes.lstrip())
    groups = [(m.start() + offset, m.end() + offset) for m in _DASHES.finditer(stripped)]
    names = [header[a:b] if i + 1 < len(groups) else header[a:] for i, (a, b) in enumerate(groups)]
    names = [n.strip() for n in names]
    if len(groups) == 1 and _normalize(names[0]) in _ONE_VALUE:
        return _Table("one", [None], index, index + 2, spans=[groups[0][0]])
    fields = _fields(names)
    kind = _kind(fields)
    if kind is None:
        if len(groups) == 1 and _normalize(names[0]) == "productversion":
            return _Table("one", ["version"], index, index + 2, spans=[groups[0][0]])
        return None
    return _Table(kind, fields, index, index + 2, spans=[a for a, _ in groups])


# ---------------------------------------------------------------------------------------------- snapshots


@dataclass(slots=True)
class _Row:
    line: int
    key: tuple[str, str]
    device: str
    device_kind: str
    values: dict[str, float]
    server: str | None = None
    time: str | None = None


@dataclass(slots=True)
class _Snapshot:
    kind: str  # "file" or "wait"
    line: int  # 1-based line of its header
    host: str | None
    time: str | None
    rows: dict[tuple[str, str], _Row] = field(default_factory=dict)

    @property
    def has_counters(self) -> bool:
        return any("num_of_reads" in r.values or "num_of_writes" in r.values for r in self.rows.values())

    @property
    def sample_ms(self) -> float | None:
        samples = [r.values["sample_ms"] for r in self.rows.values() if "sample_ms" in r.values]
        return max(samples) if samples else None


def _iso(value: str) -> str | None:
    m = _DATETIME.match(value.strip())
    if m is None:
        return None
    tz = m["tz"] or ""
    return f"{m['date']}T{m['time']}{'+00:00' if tz == 'Z' else tz}"


def _interval_ms(earlier: float | None, later: float | None) -> float | None:
    """sample_ms2 − sample_ms1, unwrapping an int sample_ms (before SQL Server 2016) that passed 2^31."""
    if earlier is None or later is None:
        return None
    delta = later - earlier
    if delta < 0 and -(1 << 31) <= earlier < (1 << 31) and -(1 << 31) <= later < (1 << 31):
        delta += INT32
    return delta


class _Reader:
    """Line dispatcher: the result set being read, the host, version and clock printed before it."""

    def __init__(self) -> None:
        self.warnings: list[str] = []
        self.snapshots: list[_Snapshot] = []
        self.hosts: list[tuple[int, str]] = []  # (line, @@SERVERNAME value)
        self.version: str | None = None
        self.table: _Table | None = None
        self.snapshot: _Snapshot | None = None
        self.pending_time: str | None = None
        self.first_set_line: int | None = None

    def warn(self, line: int, what: str) -> None:
        add_line_warning(self.warnings, line, what)

    def read(self, text: str) -> list[IntervalRecord | WaitRecord]:
        lines = text.split("\n")
        index = 0
        while index < len(lines):
            raw = lines[index].rstrip("\r")
            if len(raw) > MAX_LINE:
                self.close()
                index += 1
                continue
            if self.version is None and "Microsoft SQL Server" in raw and (m := _VERSION.search(raw)):
                self.version = m["build"]
            table = _header_at(lines, index) if raw.strip() else None
            if self.table is not None and table is None and self.row(raw, index + 1):
                index += 1
                continue
            if table is not None:
                self.open(table, index + 1)
                index = table.first_row
                continue
            index += 1
        self.close()
        records = self.records()
        if not records:
            if self.first_set_line is None:
                raise ParseError(
                    "no sys.dm_io_virtual_file_stats or sys.dm_os_wait_stats result set found (a header with their "
                    "column names: num_of_reads, io_stall_read_ms, sample_ms ... or wait_type, wait_time_ms)",
                    first_content_line(text),
                )
            why = self.warnings[0] if self.warnings else "no database file or I/O wait row could be read"
            raise ParseError(f"the result sets give no interval: {why}", self.first_set_line)
        return ParsedRecords(records, self.warnings)

    # -- result sets

    def open(self, table: _Table, header_line: int) -> None:
        self.close()
        self.table = table
        if table.kind == "one":
            return
        if self.first_set_line is None:
            self.first_set_line = header_line
        host = self.hosts[-1][1] if self.hosts else None
        self.snapshot = _Snapshot(table.kind, header_line, host, self.pending_time)
        self.pending_time = None

    def close(self) -> None:
        snap = self.snapshot
        if snap is not None and snap.rows:
            self.snapshots.append(snap)
        self.table = None
        self.snapshot = None

    def row(self, raw: str, number: int) -> bool:
        """Read a line of the open result set; False when the set has ended (the line is read anew)."""
        table = self.table
        assert table is not None
        line = raw.strip()
        if not line or _ROWS_AFFECTED.match(line):
            self.close()
            return True
        if table.kind == "one":
            self.one_value(table, line, number)
            self.close()
            return True
        if _DASH_LINE.match(line):
            self.close()
            return False
        cells = table.cells(raw) if not truncated(line) else None
        if cells is None:
            if "\t" not in raw and table.sep is None and len(line.split()) < 2:
                self.close()  # prose after the set
                return False
            self.warn(number, f"{how_damaged(line)} row of the result set at line {table.header_line + 1}: skipped")
            return True
        if table.kind == "file":
            self.file_row(table, cells, number)
        else:
            self.wait_row(table, cells, number)
        return True

    def one_value(self, table: _Table, value: str, number: int) -> None:
        if table.fields[0] == "version":
            if _BUILD.match(value) and self.version is None:
                self.version = value
            return
        if (time := _iso(value)) is not None:
            self.pending_time = time
        elif value.startswith("Microsoft SQL Server"):
            return  # @@VERSION: read by the version pattern
        elif _SERVER_NAME.match(value):
            self.hosts.append((number, value))

    @staticmethod
    def _values(table: _Table, cells: list[str]) -> dict[str, str]:
        return {name: cell for name, cell in zip(table.fields, cells, strict=True) if name is not None}

    def split(self, number: int) -> _Snapshot:
        """The same file or wait type again in one set: a second snapshot pasted under the first one's header."""
        snap = self.snapshot
        assert snap is not None
        self.snapshots.append(snap)
        self.snapshot = _Snapshot(snap.kind, number, snap.host, None)
        return self.snapshot

    def _figures(self, values: dict[str, str], number: int, line_kind: str) -> dict[str, float] | None:
        figures: dict[str, float] = {}
        for name, cell in values.items():
            if name not in _NUMERIC or not cell or cell.upper() == "NULL":
                continue
            value = read_number(cell)
            if value is None:
                self.warn(number, f"damaged {line_kind} row: {name} {cell[:40]!r} is no number: skipped")
                return None
            if name != "sample_ms" and value < 0:
                self.warn(number, f"damaged {line_kind} row: {name} {cell[:40]!r} is negative: skipped")
                return None
            figures[name] = value
        return figures

    def file_row(self, table: _Table, cells: list[str], number: int) -> None:
        values = self._values(table, cells)
        assert self.snapshot is not None
        figures = self._figures(values, number, "file statistics")
        if figures is None:
            return
        if not figures.keys() & _FILE_FIGURES:
            self.warn(number, "file statistics row without figures: skipped")
            return
        db = values.get("database_name") or ""
        db_id = figures.get("database_id")
        file_id = figures.get("file_id")
        logical = values.get("logical_name") or ""
        physical = values.get("physical_name") or ""
        drive = values.get("drive") or ""
        db_part = db if db and db.upper() != "NULL" else (f"database_id {int(db_id)}" if db_id is not None else "")
        file_part = " ".join(p for p in (logical, physical) if p and p.upper() != "NULL")
        if not file_part and file_id is not None:
            file_part = f"file_id {int(file_id)}"
        if db_part or file_part:
            device, kind = " ".join(p for p in (db_part, file_part) if p), "database_file"
        elif drive:
            device, kind = drive, "logical_disk"
        else:
            self.warn(number, "file statistics row naming no database, file or drive: skipped")
            return
        key = (
            str(int(db_id)) if db_id is not None else db_part.lower(),
            str(int(file_id)) if file_id is not None else (file_part or drive).lower(),
        )
        if key in self.snapshot.rows:
            self.split(number)
        server = values.get("server") or None
        time = _iso(values.get("time", ""))
        row = _Row(number, key, device, kind, figures, server, time)
        self.snapshot.rows[key] = row
        if server and self.snapshot.host is None:
            self.snapshot.host = server
        if time and self.snapshot.time is None:
            self.snapshot.time = time
        if self.version is None and _BUILD.match(values.get("version", "")):
            self.version = values["version"]

    def wait_row(self, table: _Table, cells: list[str], number: int) -> None:
        values = self._values(table, cells)
        assert self.snapshot is not None
        wait_type = values.get("wait_type", "").strip().upper()
        if not re.fullmatch(r"[A-Z][A-Z0-9_]{1,80}", wait_type):
            self.warn(number, "damaged wait statistics row: no wait type: skipped")
            return
        if not (wait_type.startswith("PAGEIOLATCH_") or wait_type in IO_WAITS):
            return  # not an I/O wait
        figures = self._figures(values, number, "wait statistics")
        if figures is None:
            return
        if "wait_time_ms" not in figures and "wait_s" in figures:
            figures["wait_time_ms"] = figures.pop("wait_s") * 1000
        if "wait_time_ms" not in figures:
            self.warn(number, f"wait statistics row {wait_type} without a wait time: skipped")
            return
        key = ("wait", wait_type)
        if key in self.snapshot.rows:
            self.split(number)
        server = values.get("server") or None
        self.snapshot.rows[key] = _Row(number, key, wait_type, "wait", figures, server, _iso(values.get("time", "")))
        if server and self.snapshot.host is None:
            self.snapshot.host = server

    # -- records

    def records(self) -> list[IntervalRecord | WaitRecord]:
        if self.hosts:
            first_host = self.hosts[0][1]
            for snap in self.snapshots:
                if snap.host is None:
                    snap.host = first_host
        series: dict[tuple[str, str | None], list[_Snapshot]] = {}
        for snap in self.snapshots:
            if snap.kind == "file" and not snap.has_counters:
                series.setdefault(("averages", snap.host), []).append(snap)
            else:
                series.setdefault((snap.kind, snap.host), []).append(snap)
        # (line of the interval's last snapshot, what identifies the interval, its records): the file and wait
        # statistics of one pair of snapshots share an interval (its sample_ms), numbered in text order at the end.
        intervals: list[tuple[int, tuple[object, ...], list[IntervalRecord | WaitRecord]]] = []
        for (kind, host), snaps in series.items():
            if kind == "averages" or (kind == "file" and len(snaps) == 1):
                intervals += [(s.line, (host, None, s.sample_ms), self.since_boot_files(s)) for s in snaps]
            elif len(snaps) == 1:
                snap = snaps[0]
                intervals.append(
                    (snap.line, (host, None, self.uptime_ms(snap, host)), self.since_boot_waits(snap, host))
                )
            else:
                for a, b in zip(snaps, snaps[1:], strict=False):
                    if kind == "file":
                        span = (host, a.sample_ms, b.sample_ms)
                        made = self.file_deltas(a, b)
                    else:
                        span = (host, self.uptime_ms(a, host), self.uptime_ms(b, host))
                        made = self.wait_deltas(a, b, host)
                    intervals.append((b.line, span if None not in span[1:] else (b.line,), made))
        out: list[IntervalRecord | WaitRecord] = []
        numbers: dict[tuple[object, ...], int] = {}
        for _, span, made in sorted(intervals, key=lambda x: x[0]):
            if span[-1] is None:
                span = (made[0].source_line,) if made else span
            for rec in made:
                rec.interval_index = numbers.setdefault(span, len(numbers))
                out.append(rec)
        return out

    def since_boot_files(self, snap: _Snapshot) -> list[IntervalRecord | WaitRecord]:
        out: list[IntervalRecord | WaitRecord] = []
        for row in snap.rows.values():
            v = row.values
            seconds = v["sample_ms"] / 1000 if v.get("sample_ms", 0) > 0 else None
            if v.get("sample_ms", 1) <= 0:
                self.warn(row.line, f"{row.device}: sample_ms {v['sample_ms']:.0f} is no uptime (an int that wrapped)")
            out.append(self.file_record(row, v, seconds, None, since_boot=True, host=snap.host))
        return out

    def file_deltas(self, a: _Snapshot, b: _Snapshot) -> list[IntervalRecord | WaitRecord]:
        out: list[IntervalRecord | WaitRecord] = []
        for key, later in b.rows.items():
            earlier = a.rows.get(key)
            if earlier is None:
                continue
            delta: dict[str, float] = {}
            went_down = None
            for name in FILE_COUNTERS:
                if name in later.values and name in earlier.values:
                    delta[name] = later.values[name] - earlier.values[name]
                    if delta[name] < 0 and went_down is None:
                        went_down = name
            if went_down is not None:
                self.warn(
                    later.line,
                    f"{later.device}: {went_down} went down from {earlier.values[went_down]:.0f} to "
                    f"{later.values[went_down]:.0f} since line {earlier.line} (the server restarted?): "
                    "interval refused",
                )
                continue
            ms = _interval_ms(earlier.values.get("sample_ms"), later.values.get("sample_ms"))
            if ms is not None and ms <= 0:
                self.warn(later.line, f"{later.device}: sample_ms did not advance since line {earlier.line}: skipped")
                continue
            seconds = ms / 1000 if ms is not None else None
            out.append(self.file_record(later, delta, seconds, earlier.time or a.time, since_boot=False, host=b.host))
        return out

    def file_record(
        self,
        row: _Row,
        v: dict[str, float],
        seconds: float | None,
        start: str | None,
        *,
        since_boot: bool,
        host: str | None,
    ) -> IntervalRecord:
        def rate(name: str) -> float | None:
            return v[name] / seconds if seconds and name in v else None

        def latency(stall: str, count: str, printed: str) -> float | None:
            if stall in v and count in v:
                return v[stall] / v[count] if v[count] > 0 else None
            return v.get(printed)

        return IntervalRecord(
            interval_index=0,
            source_line=row.line,
            device=row.device,
            device_kind=row.device_kind,  # type: ignore[arg-type]
            interval_start=start,
            interval_s=seconds,
            reads_per_s=rate("num_of_reads"),
            writes_per_s=rate("num_of_writes"),
            read_bytes_per_s=rate("num_of_bytes_read"),
            write_bytes_per_s=rate("num_of_bytes_written"),
            read_latency_ms=latency("io_stall_read_ms", "num_of_reads", "read_latency"),
            write_latency_ms=latency("io_stall_write_ms", "num_of_writes", "write_latency"),
            host=row.server or host,
            since_boot=since_boot,
            tool=TOOL,
            tool_version=self.version,
        )

    def uptime_ms(self, wait: _Snapshot, host: str | None) -> float | None:
        """The sample_ms of the same server's file statistics nearest before `wait` in the text, else after it."""
        files = [s for s in self.snapshots if s.kind == "file" and s.host == host and s.sample_ms is not None]
        before = [s for s in files if s.line < wait.line]
        chosen = before[-1] if before else (files[0] if files else None)
        return chosen.sample_ms if chosen is not None else None

    def since_boot_waits(self, snap: _Snapshot, host: str | None) -> list[IntervalRecord | WaitRecord]:
        ms = self.uptime_ms(snap, host)
        seconds = ms / 1000 if ms is not None and ms > 0 else None
        return [self.wait_record(row, row.values, seconds, None, True, host) for row in snap.rows.values()]

    def wait_deltas(self, a: _Snapshot, b: _Snapshot, host: str | None) -> list[IntervalRecord | WaitRecord]:
        ms = _interval_ms(self.uptime_ms(a, host), self.uptime_ms(b, host))
        seconds = ms / 1000 if ms is not None and ms > 0 else None
        out: list[IntervalRecord | WaitRecord] = []
        for key, later in b.rows.items():
            earlier = a.rows.get(key)
            if earlier is None:
                continue
            delta = {
                name: later.values[name] - earlier.values[name]
                for name in ("waiting_tasks_count", "wait_time_ms")
                if name in later.values and name in earlier.values
            }
            down = next((name for name, d in delta.items() if d < 0), None)
            if down is not None:
                self.warn(
                    later.line,
                    f"{later.device}: {down} went down since line {earlier.line} (the server restarted or the "
                    "statistics were cleared?): interval refused",
                )
                continue
            out.append(self.wait_record(later, delta, seconds, earlier.time or a.time, False, host))
        return out

    def wait_record(
        self,
        row: _Row,
        v: dict[str, float],
        seconds: float | None,
        start: str | None,
        since_boot: bool,
        host: str | None,
    ) -> WaitRecord:
        tasks = v.get("waiting_tasks_count")
        wait_ms = v.get("wait_time_ms")
        return WaitRecord(
            interval_index=0,
            source_line=row.line,
            wait_type=row.device,
            interval_start=start,
            interval_s=seconds,
            waiting_tasks_per_s=tasks / seconds if seconds and tasks is not None else None,
            wait_ms_per_s=wait_ms / seconds if seconds and wait_ms is not None else None,
            avg_wait_ms=wait_ms / tasks if tasks and wait_ms is not None else None,
            host=row.server or host,
            since_boot=since_boot,
            tool=TOOL,
            tool_version=self.version,
        )
