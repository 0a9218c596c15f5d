"""Windows Performance Monitor counter logs saved as CSV: `typeperf -f CSV`, `relog -f csv`, Perfmon's "Save Data
As" comma- or tab-separated, and its console output (`typeperf "\\PhysicalDisk(*)\\*"`).

Input (a typeperf log of one disk, trimmed to six of its counters)::

    "(PDH-CSV 4.0) (GMT Standard Time)(0)","\\\\SQL01\\PhysicalDisk(0 C:)\\Disk Reads/sec","\\\\SQL01\\Physical...
    "11/27/2026 14:03:00.118"," "," "," "," "," "
    "11/27/2026 14:03:15.123","412.000000","87.000000","3375104.000000","712704.000000","0.004100","0.001200"

Records (normalized; one per host, disk instance and sample row)::

    {"record": "interval", "interval_index": 0, "source_line": 3, "device": "PhysicalDisk(0 C:)",
     "device_kind": "physical_disk", "interval_start": "2026-11-27T14:03:00.118", "interval_s": 15.005,
     "reads_per_s": 412.0, "writes_per_s": 87.0, "read_bytes_per_s": 3375104.0, "write_bytes_per_s": 712704.0,
     "read_latency_ms": 4.1, "write_latency_ms": 1.2, "queue_length": null, "utilization_pct": null,
     "host": "SQL01", "since_boot": false, "tool": "perfmon", "tool_version": "PDH-CSV 4.0"}

Rules:
- The header row's first cell is `(PDH-CSV 4.0)`, with the time zone's name and bias when a log file was written
  (`(PDH-CSV 4.0) (GMT Standard Time)(0)`; typeperf's console output has none). The bias is the one in force when
  the log started and a log may cross a daylight-saving change, so no offset is added: `interval_start` is the
  timestamp as printed, in ISO 8601 without an offset. `tool_version` is `PDH-CSV 4.0`.
- Every other header cell is a counter path `\\\\HOST\\Object(instance)\\Counter`: column index -> (host, device,
  field) is mapped once from the header. Objects `PhysicalDisk` (device_kind physical_disk) and `LogicalDisk`
  (logical_disk) are read, and their German names `Physikalischer Datenträger` / `Logischer Datenträger`; the
  counters of every other object (Processor, Memory, Process...) and the disk counters that have no field (% Free
  Space, Split IO/Sec, Avg. Disk Bytes/Read...) are ignored. `device` is the object and instance as printed
  (`PhysicalDisk(0 C:)`, `LogicalDisk(C:)`, `PhysicalDisk(_Total)`). The `_Total` instance (the sum, or the mean
  for latencies, of every instance) is kept as a device of its own, named as printed: the models may leave it out.
- Fields: Disk Reads/sec, Disk Writes/sec, Disk Read Bytes/sec, Disk Write Bytes/sec as they are (Perfmon logs
  rates); Avg. Disk sec/Read and Avg. Disk sec/Write are seconds, stored in ms; queue_length = Avg. Disk Queue Length
  (the mean over the interval), or, where that is not logged, Current Disk Queue Length (the count at the sample's
  instant, the nearest figure); utilization_pct = 100 - % Idle Time, or, where idle time is not logged, % Disk Time
  capped at 100 (% Disk Time is the queue length x 100 and exceeds 100 on any disk with more than one I/O in flight).
- Timestamps: PDH writes `MM/DD/YYYY HH:MM:SS.mmm` whatever the locale. A log re-saved in another locale's order is
  read where the file says which it is: `DD.MM.YYYY` (dots: day first), `YYYY-MM-DD`, and `A/B/YYYY` read day
  first only when some row of the file has A > 12 and none has B > 12. When nothing in the file tells (every A and B
  up to 12), it is read month first, as PDH writes it.
- One sample row gives one record per device that has at least one value in it. The values of a row are rates over
  the time since the previous row: `interval_start` is the previous row's timestamp and `interval_s` the seconds
  between the two (None, both, for a row with no readable row before it). typeperf's first row is blank (`" "`,
  rates need two samples): blank cells are no value, a row of blanks gives no record but times the next one.
- Numbers: PDH writes no thousands separator, so a comma in a value is a decimal comma (`"0,004100"`), in a file
  separated by commas (values quoted) or by semicolons; the separator is the character after the header's first
  cell. A negative or non-finite value is no value.
- Damage: a row with the wrong number of cells (cut), an unreadable timestamp or value costs only itself (or that
  value) with a warning `line N: ...`; its timestamp, where it reads, still times the next row. A counter log with
  no disk counter in its header is refused with a ParseError naming the header's line; a text with no PDH-CSV
  header, or with disk counters but no value, with one naming its first line.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass
from datetime import datetime

from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats._common import first_content_line, read_number
from kneepoint.ingest.records import IntervalRecord, ParsedRecords, add_line_warning

NAME = "perfmon_csv"
TITLE = "Performance Monitor counter log (CSV)"
TOOLS = ("perfmon",)
HOST_KEYS: frozenset[str] = frozenset()  # the host is a record field, not run metadata
USER_KEYS: frozenset[str] = frozenset()
RESULT_KEY_PREFIXES: tuple[str, ...] = ()
RESULT_KEYS: tuple[str, ...] = ()

_HEAD = 65536
_MARK = "PDH-CSV"
# The header's first cell: `"(PDH-CSV 4.0) (GMT Standard Time)(0)"`, then the separator.
_HEADER = re.compile(r'[\ufeff \t]*"?\((?P<version>PDH-CSV [0-9]{1,3}\.[0-9]{1,3})\)[^",;\t\n]{0,200}"?(?P<sep>[,;\t])')
# `\\HOST\Object(instance)\Counter`; the instance may hold parentheses and backslashes (`(0 C:)`, `(HarddiskVolume1)`),
# the counter holds no backslash. A path without the host (`\PhysicalDisk(0 C:)\...`) is read too.
_PATH = re.compile(
    r"^(?:\\\\(?P<host>[^\\]{1,255}))?\\(?P<object>[^\\(]{1,100})(?:\((?P<instance>.{0,300})\))?\\(?P<counter>[^\\]{1,200})$"
)

_OBJECTS = {
    "physicaldisk": "physical_disk",
    "physikalischer datenträger": "physical_disk",
    "logicaldisk": "logical_disk",
    "logischer datenträger": "logical_disk",
}
# Counter (lower case) -> (field, factor). German names as German Windows shows them (sources in
# tests/fixtures/SOURCES.md); those not found in a public German log are left out.
_COUNTERS: dict[str, tuple[str, float]] = {
    "disk reads/sec": ("reads_per_s", 1.0),
    "disk writes/sec": ("writes_per_s", 1.0),
    "disk read bytes/sec": ("read_bytes_per_s", 1.0),
    "disk write bytes/sec": ("write_bytes_per_s", 1.0),
    "avg. disk sec/read": ("read_latency_ms", 1000.0),
    "avg. disk sec/write": ("write_latency_ms", 1000.0),
    "avg. disk queue length": ("queue_length", 1.0),
    "current disk queue length": ("current_queue_length", 1.0),
    "% idle time": ("idle_pct", 1.0),
    "% disk time": ("disk_time_pct", 1.0),
    "lesevorgänge/s": ("reads_per_s", 1.0),
    "schreibvorgänge/s": ("writes_per_s", 1.0),
    "bytes gelesen/s": ("read_bytes_per_s", 1.0),
    "bytes geschrieben/s": ("write_bytes_per_s", 1.0),
    "mittlere sek./lesevorgänge": ("read_latency_ms", 1000.0),
    "mittlere sek./schreibvorgänge": ("write_latency_ms", 1000.0),
    "durchschnittl. warteschlangenlänge des datenträgers": ("queue_length", 1.0),
    "aktuelle warteschlangenlänge": ("current_queue_length", 1.0),
    "zeit (%)": ("disk_time_pct", 1.0),
}
_STAMP = re.compile(
    r"^(?:(?P<a>[0-9]{1,2})(?P<sep>[/.-])(?P<b>[0-9]{1,2})(?P=sep)(?P<y>[0-9]{4})"
    r"|(?P<iy>[0-9]{4})[-/](?P<im>[0-9]{1,2})[-/](?P<id>[0-9]{1,2}))"
    r"[ T](?P<h>[0-9]{1,2}):(?P<mi>[0-9]{2}):(?P<s>[0-9]{2})(?:[.,](?P<frac>[0-9]{1,6}))?$"
)
_VERSION = re.compile(r"\((PDH-CSV [0-9]{1,3}\.[0-9]{1,3})\)")
# The first cell of a slash-dated row, for the look at the whole file that decides the day/month order.
_SLASH_DATE = re.compile(r'[\ufeff \t]*"?([0-9]{1,2})/([0-9]{1,2})/[0-9]{4}[ T]')
# typeperf's own lines after its samples (`typeperf ... -sc 10` in a console).
_TYPEPERF_TRAILER = ("Exiting", "The command completed successfully")  # (the first split at its comma)


def detect(text: str) -> float:
    # Every file of unknown format passes through here: one scan for the header's mark, then the header itself at
    # the start of its line.
    return 0.95 if _find_header(text) else 0.0


def parse(text: str) -> list[IntervalRecord]:
    return _Reader(text).read()


@dataclass(slots=True)
class _Device:
    host: str | None
    device: str
    kind: str
    columns: list[tuple[int, str, float]]  # (column index, field, factor)


class _Lines:
    """The lines of a text one by one, without copying the whole text, keeping those csv.reader took for its last
    row: a row cut inside a quoted cell would otherwise swallow the lines after it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.start = 0
        self.taken: list[str] = []

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        start = self.start
        if start < 0:
            raise StopIteration
        end = self.text.find("\n", start)
        line = self.text[start:end] if end >= 0 else self.text[start:]
        self.start = end + 1 if end >= 0 else -1
        self.taken.append(line)
        return line


class _Reader:
    """Row by row: a header row maps the columns to devices, each sample row then gives one record per device."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.records: list[IntervalRecord] = []
        self.warnings: list[str] = []
        self.devices: list[_Device] = []
        self.width = 0
        self.version: str | None = None
        self.header_line: int | None = None
        self.disk_header_seen = False
        self.previous: tuple[str, datetime] | None = None  # the last row's timestamp (ISO text, its value)
        self.day_first = _day_first(text)
        self.samples = 0

    def warn(self, line: int, what: str) -> None:
        add_line_warning(self.warnings, line, what)

    def read(self) -> list[IntervalRecord]:
        m = _find_header(self.text)
        if m is None:
            raise ParseError(
                "no Performance Monitor counter log: no (PDH-CSV 4.0) header row", first_content_line(self.text)
            )
        sep = m["sep"]
        lines = _Lines(self.text)
        reader = csv.reader(lines, delimiter=sep)
        while True:
            lines.taken.clear()
            try:
                cells: list[str] | None = next(reader)
            except StopIteration:
                break
            except csv.Error:
                cells = None
            if len(lines.taken) > 1:
                # A quote left open (a cut row) made one row of several lines: each line is read on its own.
                first = reader.line_num - len(lines.taken) + 1
                for number, line in enumerate(list(lines.taken), first):
                    self.line(line, number, sep)
            elif cells is None:
                self.warn(reader.line_num, "unreadable CSV row: skipped")
                self.previous = None
            elif cells:
                self.row(cells, reader.line_num)
        if not self.disk_header_seen:
            line = self.header_line or first_content_line(self.text)
            raise ParseError(
                "a counter log with no disk counters: no PhysicalDisk or LogicalDisk counter in its header row, "
                "nothing to place on a disk's curve",
                line,
            )
        if not self.records:
            raise ParseError("no sample of the disk counters holds a value (every sample blank)", self.header_line or 1)
        return ParsedRecords(self.records, self.warnings)

    def line(self, line: str, number: int, sep: str) -> None:
        try:
            cells = next(csv.reader([line], delimiter=sep), None)
        except csv.Error:
            self.warn(number, "unreadable CSV row: skipped")
            self.previous = None
            return
        if cells:
            self.row(cells, number)

    def row(self, cells: list[str], number: int) -> None:
        first = cells[0].lstrip("\ufeff \t")
        if first.startswith("(PDH-CSV"):
            self.header(cells, number)
            return
        if self.header_line is None:
            return  # what comes before the header: a prompt, a command line
        if first.startswith(_TYPEPERF_TRAILER):
            return
        stamp = self.timestamp(first)
        if len(cells) != self.width:
            how = "cut short" if len(cells) < self.width else "damaged"
            self.warn(number, f"{how} sample row ({len(cells)} of {self.width} cells): skipped")
            self.previous = stamp
            return
        if stamp is None:
            self.warn(number, f"sample row with an unreadable timestamp {first[:40]!r}: skipped")
            self.previous = None
            return
        previous, self.previous = self.previous, stamp
        if previous is not None:
            seconds = (stamp[1] - previous[1]).total_seconds()
            if seconds > 0:
                start: str | None = previous[0]
                interval_s: float | None = round(seconds, 6)
            else:
                self.warn(number, f"the clock went back or stood still ({previous[0]} to {stamp[0]}): interval unknown")
                start = interval_s = None
        else:
            start = interval_s = None
        index = self.samples
        kept = len(self.records)
        damaged: list[str] = []
        for device in self.devices:
            values: dict[str, float] = {}
            for column, field, factor in device.columns:
                cell = cells[column]
                try:
                    value = float(cell)
                except ValueError:
                    if not cell.strip():
                        continue
                    value = _number(cell)
                    if value is None:
                        damaged.append(cell)
                        continue
                if value >= 0 and value < math.inf:
                    # seconds x 1000 leaves binary noise (0.0041 x 1000 = 4.1000000000000005); PDH prints 6 decimals
                    values[field] = round(value * factor, 9) if factor != 1.0 else value
            if values:
                self.records.append(_record(device, values, index, number, start, interval_s, self.version))
        if damaged:
            shown = ", ".join(repr(c[:20]) for c in damaged[:3])
            self.warn(number, f"unreadable value{'s' if len(damaged) > 1 else ''} {shown}: left out")
        if len(self.records) > kept:
            self.samples += 1

    def header(self, cells: list[str], number: int) -> None:
        m = _VERSION.search(cells[0])
        self.version = m[1] if m else None
        self.header_line = number
        self.width = len(cells)
        self.previous = None
        by_device: dict[tuple[str | None, str], _Device] = {}
        for column, cell in enumerate(cells[1:], 1):
            p = _PATH.match(cell.strip())
            if p is None:
                continue
            kind = _OBJECTS.get(p["object"].strip().lower())
            if kind is None:
                continue
            self.disk_header_seen = True
            spec = _COUNTERS.get(p["counter"].strip().lower())
            if spec is None:
                continue
            host = p["host"]
            instance = p["instance"]
            device = p["object"].strip() + (f"({instance})" if instance is not None else "")
            key = (host, device)
            if key not in by_device:
                by_device[key] = _Device(host, device, kind, [])
            by_device[key].columns.append((column, spec[0], spec[1]))
        self.devices = list(by_device.values())

    def timestamp(self, cell: str) -> tuple[str, datetime] | None:
        m = _STAMP.match(cell.strip())
        if m is None:
            return None
        if m["y"]:
            a, b, year = int(m["a"]), int(m["b"]), int(m["y"])
            day_first = m["sep"] == "." or (m["sep"] == "/" and self.day_first)
            day, month = (a, b) if day_first else (b, a)
        else:
            year, month, day = int(m["iy"]), int(m["im"]), int(m["id"])
        frac = m["frac"] or ""
        try:
            value = datetime(year, month, day, int(m["h"]), int(m["mi"]), int(m["s"]), int(frac.ljust(6, "0") or 0))
        except ValueError:
            return None
        iso = f"{year:04d}-{month:02d}-{day:02d}T{value:%H:%M:%S}" + (f".{frac}" if frac else "")
        return iso, value


def _record(
    device: _Device,
    values: dict[str, float],
    index: int,
    line: int,
    start: str | None,
    interval_s: float | None,
    version: str | None,
) -> IntervalRecord:
    queue = values.get("queue_length", values.get("current_queue_length"))
    idle = values.get("idle_pct")
    if idle is not None:
        utilization: float | None = round(max(0.0, 100.0 - min(idle, 100.0)), 6)
    elif (busy := values.get("disk_time_pct")) is not None:
        utilization = min(busy, 100.0)
    else:
        utilization = None
    return IntervalRecord(
        interval_index=index,
        source_line=line,
        device=device.device,
        device_kind=device.kind,  # type: ignore[arg-type]
        interval_start=start,
        interval_s=interval_s,
        queue_length=queue,
        utilization_pct=utilization,
        host=device.host,
        tool="perfmon",
        tool_version=version,
        reads_per_s=values.get("reads_per_s"),
        writes_per_s=values.get("writes_per_s"),
        read_bytes_per_s=values.get("read_bytes_per_s"),
        write_bytes_per_s=values.get("write_bytes_per_s"),
        read_latency_ms=values.get("read_latency_ms"),
        write_latency_ms=values.get("write_latency_ms"),
    )


def _number(cell: str) -> float | None:
    """A value float() did not read: a decimal comma (`0,004100`; PDH writes no thousands separator, so a comma is
    never one), else a number as a user may have re-saved it (read_number)."""
    text = cell.strip()
    if text.count(",") == 1 and "." not in text:
        try:
            return float(text.replace(",", "."))
        except ValueError:
            return None
    return read_number(text)


def _find_header(text: str) -> re.Match[str] | None:
    """The first header row (`"(PDH-CSV 4.0)..."` at the start of a line) of the text's head."""
    i = text.find(_MARK, 0, _HEAD)
    while i >= 0:
        start = text.rfind("\n", 0, i) + 1
        if m := _HEADER.match(text, start):
            return m
        i = text.find(_MARK, i + 1, _HEAD)
    return None


def _day_first(text: str) -> bool:
    """Whether the file's `A/B/YYYY` dates are day first: some row has A > 12 and none has B > 12."""
    day_first = False
    start = 0
    while start >= 0:
        # Matched at each line's start (a MULTILINE `^` would try every character of a 40 MB log).
        if m := _SLASH_DATE.match(text, start):
            if int(m[2]) > 12:
                return False
            day_first = day_first or int(m[1]) > 12
        start = text.find("\n", start) + 1 or -1
    return day_first
