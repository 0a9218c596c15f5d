"""Linux `iostat -x` (sysstat 9 to 12): the extended device report as text (any of its column layouts) and as JSON
(`iostat -o JSON`, sysstat 11+).

Input (sysstat 12.5, `iostat -xt 5 2`; the avg-cpu blocks are left out here)::

    Linux 5.15.0-91-generic (db01) 	11/27/2026 	_x86_64_	(8 CPU)

    11/27/2026 02:15:01 PM
    Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s ... w_await ... aqu-sz  %util
    nvme0n1         21.50    898.90     2.32   9.74    0.18    41.75  272.10   2499.10 ...    1.69 ...   0.47   0.97

    11/27/2026 02:15:06 PM
    Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s ... w_await ... aqu-sz  %util
    nvme0n1        812.40  52105.60     0.00   0.00    0.31    64.14  140.20   4486.40 ...    2.05 ...   0.54  38.20

Records (normalized; one per device line of each report)::

    {"record": "interval", "interval_index": 0, "source_line": 5, "device": "nvme0n1", "device_kind": "block_device",
     "interval_start": null, "interval_s": null, "reads_per_s": 21.5, "writes_per_s": 272.1,
     "read_bytes_per_s": 920473.6, "write_bytes_per_s": 2559078.4, "read_latency_ms": 0.18, "write_latency_ms": 1.69,
     "queue_length": 0.47, "utilization_pct": 0.97, "host": "db01", "since_boot": true, "tool": "iostat", ...}
    {"record": "interval", "interval_index": 1, "source_line": 9, "device": "nvme0n1",
     "interval_start": "2026-11-27T14:15:01", "interval_s": 5.0, "reads_per_s": 812.4, ..., "since_boot": false, ...}

Record mapping:
- One record per device line of each report; a report is a `Device` header and the lines under it (with `-t` the
  timestamp line before it). Columns are found by their header names, never by position, so every layout reads:
  sysstat 9-10 `Device: rrqm/s wrqm/s r/s w/s rkB/s wkB/s avgrq-sz avgqu-sz await [r_await w_await] svctm %util`,
  11.x `Device r/s w/s rkB/s wkB/s rrqm/s wrqm/s %rrqm %wrqm r_await w_await aqu-sz rareq-sz wareq-sz svctm %util`,
  12.x `Device r/s rkB/s rrqm/s %rrqm r_await rareq-sz w/s ... aqu-sz %util` (with the d/s and f/s columns or
  without), `--pretty` / `-h` (the device name last), and sysstat 9-10's `-h` (the name alone on its line, its
  figures on the next). The `avg-cpu` blocks are skipped.
- reads_per_s / writes_per_s = `r/s` / `w/s` (requests completed, after merges). Bytes: `rkB/s` / `wkB/s` x 1024,
  `rMB/s` / `wMB/s` (`-m`) x 1048576, `rsec/s` / `wsec/s` (POSIXLY_CORRECT) x 512. The man page says "kilobytes"
  and "1K blocks"; iostat computes them as 512-byte sectors / 2 (and MB as sectors / 2048), so kB is 1024 bytes.
  `--human` figures carry their own unit (`898.8k`, `1.2M`: powers of 1024), which supersedes the header's.
- read_latency_ms / write_latency_ms = `r_await` / `w_await` (ms, queueing included). Layouts with only `await`
  (sysstat before 9.1.3): `await` is the mean over reads and writes together, taken for each direction that did
  I/O in the interval; a mixed interval gets the same figure for both. A direction without I/O (r/s or w/s 0) has
  no latency (None, not iostat's 0.00).
- queue_length = `aqu-sz` / `avgqu-sz`; utilization_pct = `%util`. Merges, request sizes, svctm, discards and
  flushes (d/s, f/s) are not kept.
- host and the header date from `Linux 5.15.0-91-generic (db01) <TAB>11/27/2026 <TAB>_x86_64_<TAB>(8 CPU)`;
  tool_version from `sysstat version 12.5.2` (`iostat -V` pasted before the output), None otherwise.
- since_boot: the first report of each run of iostat (a run starts at a `Linux ...` header, at a pasted `iostat`
  command line, at a JSON document, or at the start of a fragment pasted without either) is the average since boot,
  unless the command line pasted before it has `-y`.
- Times (`-t`): the timestamp line before a report (`11/27/2026 02:15:01 PM`, C locale `11/27/26 14:15:01`,
  `27.11.2026 14:15:01`, `2026年11月27日 14時15分01秒`, or ISO `2026-11-27T14:15:01+0100` with S_TIME_FORMAT=ISO) is
  when iostat took the sample that ends that report's interval. So a report's interval_start is the previous
  report's timestamp and interval_s the seconds between the two; the first report of a `-y` run starts
  interval_s before its timestamp (interval_s from the command line, else from the next report). Numeric dates read
  month first (as iostat's C and en_US locales print them) unless a first field above 12 in the text says day
  first. Without `-t` interval_start is None and interval_s the command line's interval (`iostat -x 5` pasted
  before the output), else None. A since-boot report has neither (its start is the boot, which iostat does not
  print).
- JSON (`{"sysstat": {"hosts": [{"nodename": ..., "statistics": [{"timestamp": ..., "disk": [{"disk_device": ...,
  "r/s": ...}]}]}]}}`): the same fields by the same names (`util` for `%util`); several documents in one text (one
  per run, with text between them) read each as a run.
- Numbers with a decimal comma (locales that print one), colour escapes (S_COLORS=always) and mail quote marks
  (`> `) read. A device line with a figure count other than its header's, or a figure that is not a number, is
  skipped with a warning (`line N: ...`); it costs only itself. ParseError when no device line is read: the line of
  the header without readable lines under it, or of a report without `-x` (no read and write counts).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats._common import first_content_line, how_damaged
from kneepoint.ingest.records import IntervalRecord, ParsedRecords, add_line_warning
from kneepoint.ingest.textio import find_rare

NAME = "iostat"
TITLE = "iostat -x (sysstat)"
TOOLS = ("iostat",)
HOST_KEYS: frozenset[str] = frozenset()  # (the host is IntervalRecord.host, no metadata key)
USER_KEYS: frozenset[str] = frozenset()
RESULT_KEY_PREFIXES: tuple[str, ...] = ()
RESULT_KEYS: tuple[str, ...] = ()

MAX_LINE = 4000
_HEAD = 65536  # detect() reads this much of a text

# Byte columns: header name -> (direction, bytes per unit of the column).
_BYTE_COLUMNS = {
    "rkB/s": ("read", 1024.0),
    "wkB/s": ("write", 1024.0),
    "rMB/s": ("read", 1048576.0),
    "wMB/s": ("write", 1048576.0),
    "rsec/s": ("read", 512.0),
    "wsec/s": ("write", 512.0),
}
# `--human` units: powers of 1024 from bytes.
_HUMAN_UNITS = {"B": 1.0, "k": 1024.0, "K": 1024.0, "M": 1024.0**2, "G": 1024.0**3, "T": 1024.0**4, "P": 1024.0**5}
_QUEUE_COLUMNS = ("aqu-sz", "avgqu-sz")
_UTIL_COLUMNS = ("%util", "util")
_DEVICE_WORDS = ("Device:", "Device", "disk_device")

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_QUOTE_MARKS = re.compile(r"^(?:>\s*)+")
_FIGURE = re.compile(r"(?P<num>[0-9]{1,20}(?:[.,][0-9]{1,12})?)(?P<unit>[BkKMGTP]?)%?")
_HEADER = re.compile(
    r"^Linux\s+(?P<release>\S+)\s+\((?P<host>[^()\s]{1,255})\)\s+(?P<date>[^\t_]*?)\s*(?:\t|_[A-Za-z0-9_]+_|$)"
)
_VERSION = re.compile(r"\bsysstat version (?P<version>[0-9]{1,3}(?:\.[0-9]{1,4}){1,3})")
# A pasted iostat command line: `$ iostat -xt 5 3`, `# iostat -x -d 2`, `LC_ALL=C iostat -x 1 | tee out`.
_COMMAND = re.compile(r"(?:^|[\s$#%>])iostat(?P<args>(?:[ \t]+[^\s|;&<>]+){1,30})[ \t]*(?:$|[|;&<>])")
_JSON_START = re.compile(r'\{\s*"sysstat"\s*:')
_LEADING_SPACE = re.compile(r"\s*")

# -t timestamps, each a whole line.
_TIME = r"(?P<H>[0-9]{1,2}):(?P<M>[0-9]{2}):(?P<S>[0-9]{2})(?:\s*(?P<ampm>[AaPp]\.?[Mm]\.?))?"
_STAMPS = (
    re.compile(r"(?P<iso>[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2})(?P<tz>Z|[+-][0-9]{2}:?[0-9]{2})?"),
    re.compile(r"(?P<a>[0-9]{1,2})/(?P<b>[0-9]{1,2})/(?P<y>[0-9]{4}|[0-9]{2})\s+" + _TIME),
    re.compile(r"(?P<d>[0-9]{1,2})\.(?P<m>[0-9]{1,2})\.(?P<y>[0-9]{4}|[0-9]{2})\.?\s+" + _TIME),
    re.compile(r"(?P<y>[0-9]{4})[./-](?P<m>[0-9]{1,2})[./-](?P<d>[0-9]{1,2})\.?\s+" + _TIME),
    re.compile(
        r"(?P<y>[0-9]{4})\s*[年년]\s*(?P<m>[0-9]{1,2})\s*[月월]\s*(?P<d>[0-9]{1,2})\s*[日일]\s+"
        r"(?:(?P<cjk_ampm>午前|午後|上午|下午|오전|오후)\s*)?"
        r"(?P<H>[0-9]{1,2})\s*[:時时시]\s*(?P<M>[0-9]{2})\s*[:分분]\s*(?P<S>[0-9]{2})\s*[秒초]?"
    ),
)
_SLASH_DATE = re.compile(r"(?<![0-9/])([0-9]{1,2})/([0-9]{1,2})/(?:[0-9]{4}|[0-9]{2})(?![0-9/])")


def detect(text: str) -> float:
    # Every file of unknown format passes through here: each iostat output holds `r/s` (extended text, JSON) or
    # `kB_read/s` / `tps` (the report without -x), found by a scan for their slash first.
    if text.find("/s", 0, _HEAD) < 0:
        return 0.0
    head = text[:_HEAD]
    if find_rare(head, '"disk_device"', 1) >= 0 and '"sysstat"' in head:
        return 0.95
    for line in _header_candidates(head):
        words = line.split()
        if "r/s" in words and "w/s" in words and any(w in words for w in ("%util", "await", "r_await", "aqu-sz")):
            return 0.95 if "Linux" in head else 0.9
        if "tps" in words and ("kB_read/s" in words or "Blk_read/s" in words or "MB_read/s" in words):
            return 0.5  # iostat without -x: read, to say why it gives nothing
    return 0.0


def _header_candidates(head: str) -> list[str]:
    """The lines of `head` that hold a `Device` header word, cleaned as the reader cleans lines."""
    out = []
    start = head.find("Device")
    while start >= 0 and len(out) < 50:
        line_start = head.rfind("\n", 0, start) + 1
        line_end = head.find("\n", start)
        line_end = len(head) if line_end < 0 else line_end
        out.append(_clean(head[line_start:line_end]))
        start = head.find("Device", line_end)
    return out


def parse(text: str) -> list[IntervalRecord]:
    return _Reader(text).read()


def parse_document(text: str) -> list[IntervalRecord] | None:
    """parse(text) when the text is one iostat JSON document and nothing else, else None (the registry's parse
    then says why)."""
    # Looked at in place: text.strip() copies a text (another tool's log of 100 MB) that begins with a blank line.
    start = _LEADING_SPACE.match(text).end()  # type: ignore[union-attr]
    if (
        not text.startswith("{", start)
        or '"disk_device"' not in text[start : start + _HEAD]
        or not _JSON_START.match(text, start)
    ):
        return None
    stripped = text.strip()
    try:
        _, end = json.JSONDecoder().raw_decode(stripped)
    except (ValueError, RecursionError):
        return None
    if end != len(stripped):
        return None
    try:
        records = parse(text)
    except ParseError:
        return None
    return records or None


def _clean(raw: str) -> str:
    """A line without colour escapes, mail quote marks and the spaces around it."""
    line = raw.strip()
    if "\x1b" in line:
        line = _ANSI.sub("", line).strip()
    if line.startswith(">"):
        line = _QUOTE_MARKS.sub("", line)
    return line


@dataclass(slots=True)
class _Stamp:
    at: datetime
    text: str  # ISO 8601 as printed (an offset only where printed)


@dataclass(slots=True)
class _Layout:
    """A `Device` header: its column names and where the device name stands."""

    columns: list[str]
    device_at: int
    line: int


class _Reader:
    """Line dispatcher: the run (host, command line, reports so far), the layout in force, the timestamps."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.records: list[IntervalRecord] = []
        self.warnings: list[str] = []
        self.version: str | None = None
        self.host: str | None = None
        self.skip_first = False  # `-y` on the command line
        self.command_interval: float | None = None
        self.run_reports = 0  # reports read in the current run
        self.run = 0
        self.reports = 0  # reports read in the text: interval_index
        self.previous: _Stamp | None = None  # the current run's last report timestamp
        self.pending: _Stamp | None = None  # a timestamp line waiting for its report
        self.layout: _Layout | None = None
        self.report_started = False  # the current layout's report has been counted
        self.pending_name: tuple[str, int] | None = None  # sysstat 9-10 `-h`: a name alone on its line
        self.plain_header: int | None = None  # line of a report without -x
        self.extended_header: int | None = None
        self.report: dict[str, Any] = {}
        self.day_first = any(int(a) > 12 and int(b) <= 12 for a, b in _SLASH_DATE.findall(text))
        self.run_of_report: list[int] = []
        self.report_stamps: list[_Stamp | None] = []
        self.line_offsets: list[int] | None = None  # where each line starts, once a JSON document is met

    def warn(self, number: int, what: str) -> None:
        add_line_warning(self.warnings, number, what)

    def read(self) -> list[IntervalRecord]:
        lines = self.text.split("\n")
        number = 0
        while number < len(lines):
            raw = lines[number]
            number += 1
            if len(raw) > MAX_LINE:
                if raw.lstrip().startswith("{") and _JSON_START.search(raw):
                    number = self.json_at(lines, number)
                continue
            line = _clean(raw)
            if not line:
                self.end_block()
                continue
            if line[0] == "{" and (line == "{" or _JSON_START.match(line)):
                number = self.json_at(lines, number)
                continue
            self.line(line, number)
        self.fill_first_intervals()
        if self.records:
            return ParsedRecords(self.records, self.warnings)
        if self.extended_header is not None:
            raise ParseError("no readable device line under the iostat -x header", self.extended_header)
        if self.plain_header is not None:
            raise ParseError(
                "iostat report without -x (tps, kB_read/s): it has no read and write request counts; "
                "run `iostat -x` for the extended report",
                self.plain_header,
            )
        raise ParseError(
            "no iostat -x device report found (a `Device ... r/s w/s ... %util` header and device lines)",
            first_content_line(self.text),
        )

    # -- text

    def line(self, line: str, number: int) -> None:
        words = line.split()
        if words[0] in _DEVICE_WORDS or words[-1] in _DEVICE_WORDS:
            self.header(words, number)
            return
        if self.layout is not None and self.device_line(line, words, number):
            return
        if line.startswith("Linux") and (m := _HEADER.match(line)):
            self.new_run()
            self.host = m["host"]
            return
        if line.startswith("avg-cpu"):
            self.end_block()
            return
        if "sysstat version" in line and (m := _VERSION.search(line)):
            self.version = m["version"]
            return
        if "iostat" in line and (m := _COMMAND.search(line)):
            self.command(m["args"].split())
            return
        if line[0].isdigit() and (stamp := self.stamp(line)) is not None:
            self.pending = stamp

    def end_block(self) -> None:
        self.layout = None
        self.pending_name = None

    def header(self, words: list[str], number: int) -> None:
        self.pending_name = None
        names = [w.rstrip(":") if w in _DEVICE_WORDS else w for w in words]
        device_at = 0 if words[0] in _DEVICE_WORDS else len(words) - 1
        if "r/s" in names and "w/s" in names:
            self.layout = _Layout(names, device_at, number)
            self.report_started = False
            if self.extended_header is None:
                self.extended_header = number
        else:
            self.layout = None
            if "tps" in names and self.plain_header is None:
                self.plain_header = number

    def device_line(self, line: str, words: list[str], number: int) -> bool:
        """Read `words` as a device line of the layout in force; False when the line is no device line at all
        (prose, a prompt, CPU figures), which ends the block."""
        layout = self.layout
        assert layout is not None
        width = len(layout.columns)
        if self.pending_name is not None and len(words) == width - 1 and _figure(words[0]) is not None:
            name, _ = self.pending_name
            self.pending_name = None
            words = [*words[: layout.device_at], name, *words[layout.device_at :]]
        elif len(words) == 1 and _figure(words[0]) is None and width > 1:
            self.pending_name = (words[0], number)  # sysstat 9-10 `-h`: the figures follow on the next line
            return True
        if len(words) != width:
            numeric = sum(1 for w in words if _figure(w) is not None)
            if numeric >= 2 and numeric >= len(words) - 1 and _figure(words[layout.device_at % len(words)]) is None:
                self.warn(
                    number,
                    f"{how_damaged(line)} device line ({len(words) - 1} figures, the header has {width - 1}): skipped",
                )
                return True
            if (line.endswith(("\u2026", "..")) and numeric >= 1) or (numeric >= 2 and len(words) > width):
                self.warn(number, f"{how_damaged(line)} device line: skipped")
                return True
            self.end_block()
            return False
        device = words[layout.device_at]
        if _figure(device) is not None:
            self.end_block()  # CPU figures under a device block whose blank line was lost
            return False
        values: dict[str, tuple[float, str]] = {}
        for name, word in zip(layout.columns, words, strict=True):
            if name == layout.columns[layout.device_at]:
                continue
            figure = _figure(word)
            if figure is None:
                self.warn(number, f"{how_damaged(line)} device line: {name} {word!r} is not a number: skipped")
                return True
            values[name] = figure
        self.add(device, values, number)
        return True

    def stamp(self, line: str) -> _Stamp | None:
        for pattern in _STAMPS:
            m = pattern.fullmatch(line)
            if m is not None:
                return _read_stamp(m, self.day_first)
        return None

    def command(self, args: list[str]) -> None:
        """A pasted `iostat` command line: its `-y` and interval, for the run it starts."""
        skip, interval = False, None
        if not any(a.startswith("-") or a.isdigit() for a in args):
            return  # `iostat` in prose
        for arg in args:
            if arg.startswith("-") and not arg.startswith("--") and arg[1:].isalpha() and "y" in arg[1:]:
                skip = True
            elif arg.isdigit() and interval is None:
                interval = float(arg) if 0 < int(arg) < 10**7 else None
        self.skip_first, self.command_interval = skip, interval
        self.new_run()

    def new_run(self) -> None:
        self.run += 1
        self.run_reports = 0
        self.previous = None
        self.pending = None
        self.end_block()

    # -- records

    def start_report(self, stamp: _Stamp | None) -> None:
        """Count a new report of the current run: its interval, start and since-boot mark."""
        since_boot = self.run_reports == 0 and not self.skip_first
        self.run_reports += 1
        interval_s: float | None = None
        start: str | None = None
        if not since_boot:
            if stamp is not None and self.previous is not None:
                seconds = _seconds_between(self.previous, stamp)
                if seconds is not None and 0 < seconds < 10**7:
                    interval_s, start = seconds, self.previous.text
            elif self.command_interval is not None:
                interval_s = self.command_interval
                if stamp is not None:
                    start = _shifted(stamp, -interval_s)
        self.report = {
            "interval_index": self.reports,
            "interval_start": start,
            "interval_s": interval_s,
            "since_boot": since_boot,
            "host": self.host,
        }
        self.reports += 1
        self.run_of_report.append(self.run)
        self.report_stamps.append(stamp)
        if stamp is not None:
            self.previous = stamp

    def add(self, device: str, values: dict[str, tuple[float, str]], number: int) -> None:
        if self.layout is not None and not self.report_started:
            self.start_report(self.pending)
            self.pending = None
            self.report_started = True
        record = _record(device, values, number, self.report, self.version)
        if record is not None:
            self.records.append(record)
        else:
            self.warn(number, "device line without r/s or w/s figures: skipped")

    def fill_first_intervals(self) -> None:
        """A `-y` run's first report without a command-line interval: the interval of the run's next report (iostat
        reports at a fixed interval), starting that long before its timestamp."""
        by_index: dict[int, list[IntervalRecord]] = {}
        for rec in self.records:
            by_index.setdefault(rec.interval_index, []).append(rec)
        for index, recs in by_index.items():
            first = recs[0]
            if first.since_boot or first.interval_s is not None or index + 1 >= self.reports:
                continue
            if self.run_of_report[index + 1] != self.run_of_report[index]:
                continue
            following = by_index.get(index + 1)
            stamp = self.report_stamps[index]
            if not following or following[0].interval_s is None or stamp is None:
                continue
            seconds = following[0].interval_s
            for rec in recs:
                rec.interval_s = seconds
                rec.interval_start = _shifted(stamp, -seconds)

    # -- JSON

    def json_at(self, lines: list[str], number: int) -> int:
        """Read the JSON document starting on line `number`; the number of the last line it takes."""
        if self.line_offsets is None:
            self.line_offsets = [0]
            for line in lines:
                self.line_offsets.append(self.line_offsets[-1] + len(line) + 1)
        offset = self.line_offsets[number - 1]
        text = self.text
        start = text.find("{", offset)
        if not _JSON_START.match(text, start):
            return number  # another JSON document: none of iostat's
        try:
            doc, end = json.JSONDecoder().raw_decode(text, start)
        except (ValueError, RecursionError):
            self.warn(number, "iostat JSON document cut short or malformed: skipped")
            return number
        last = number + text.count("\n", start, end)
        if not isinstance(doc, dict) or not isinstance(doc.get("sysstat"), dict):
            return last
        positions = _device_lines(text, start, end, number)
        hosts = doc["sysstat"].get("hosts")
        for host in hosts if isinstance(hosts, list) else []:
            if isinstance(host, dict):
                self.json_host(host, positions, number)
        return last

    def json_host(self, host: dict[str, Any], positions: list[int], number: int) -> None:
        self.new_run()
        name = host.get("nodename")
        self.host = name if isinstance(name, str) and name else self.host
        statistics = host.get("statistics")
        for entry in statistics if isinstance(statistics, list) else []:
            if not isinstance(entry, dict) or not isinstance(entry.get("disk"), list):
                continue
            stamp_text = entry.get("timestamp")
            stamp = self.stamp(stamp_text.strip()) if isinstance(stamp_text, str) and stamp_text.strip() else None
            started = False
            for disk in entry["disk"]:
                line = positions.pop(0) if positions else number
                if not isinstance(disk, dict):
                    continue
                device = disk.get("disk_device")
                values = {k: (float(v), "") for k, v in disk.items() if _json_number(v)}
                if not isinstance(device, str) or not device:
                    self.warn(line, "JSON disk entry without a disk_device: skipped")
                    continue
                if not started:
                    self.start_report(stamp)
                    started = True
                record = _record(device, values, line, self.report, self.version)
                if record is None:
                    self.warn(line, "JSON disk entry without r/s or w/s: skipped")
                else:
                    self.records.append(record)


def _json_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 1e18


def _device_lines(text: str, start: int, end: int, number: int) -> list[int]:
    """The line of each `"disk_device"` key in text[start:end], in order (the document starts on line `number`)."""
    out = []
    line = number
    at = start
    while True:
        found = text.find('"disk_device"', at, end)
        if found < 0:
            return out
        line += text.count("\n", at, found)
        out.append(line)
        at = found + 1


def _figure(word: str) -> tuple[float, str] | None:
    """A figure as iostat prints it: `12.50`, `12,50` (a locale's decimal comma), `898.8k` (`--human`: the unit),
    `38.2%` (`--human` percentages): (value, unit letter or "")."""
    m = _FIGURE.fullmatch(word)
    if m is None:
        return None
    return float(m["num"].replace(",", ".")), m["unit"]


def _record(
    device: str, values: dict[str, tuple[float, str]], number: int, report: dict[str, Any], version: str | None
) -> IntervalRecord | None:
    reads = _plain(values.get("r/s"))
    writes = _plain(values.get("w/s"))
    if reads is None and writes is None:
        return None
    byte_rates: dict[str, float | None] = {"read": None, "write": None}
    for name, (direction, factor) in _BYTE_COLUMNS.items():
        if name in values:
            value, unit = values[name]
            byte_rates[direction] = value * (_HUMAN_UNITS[unit] if unit else factor)
    latency = {"read": _plain(values.get("r_await")), "write": _plain(values.get("w_await"))}
    both = _plain(values.get("await"))
    for direction, count in (("read", reads), ("write", writes)):
        if latency[direction] is None and "r_await" not in values and "w_await" not in values:
            latency[direction] = both  # sysstat before 9.1.3: one await for reads and writes together
        if not count:
            latency[direction] = None  # no I/O in that direction: iostat's 0.00 is no latency
    queue = next((_plain(values.get(k)) for k in _QUEUE_COLUMNS if k in values), None)
    util = next((_plain(values.get(k)) for k in _UTIL_COLUMNS if k in values), None)
    return IntervalRecord(
        interval_index=report["interval_index"],
        source_line=number,
        device=device,
        device_kind="block_device",
        interval_start=report["interval_start"],
        interval_s=report["interval_s"],
        reads_per_s=reads,
        writes_per_s=writes,
        read_bytes_per_s=byte_rates["read"],
        write_bytes_per_s=byte_rates["write"],
        read_latency_ms=latency["read"],
        write_latency_ms=latency["write"],
        queue_length=queue,
        utilization_pct=util,
        host=report["host"],
        since_boot=report["since_boot"],
        tool="iostat",
        tool_version=version,
    )


def _plain(figure: tuple[float, str] | None) -> float | None:
    """A figure that carries no size unit (a rate, a time, a percentage); None for one that does."""
    if figure is None or figure[1]:
        return None
    return figure[0]


def _read_stamp(m: re.Match[str], day_first: bool) -> _Stamp | None:
    groups = m.groupdict()
    if groups.get("iso"):
        iso = groups["iso"].replace(" ", "T")
        tz = groups.get("tz")
        try:
            at = datetime.fromisoformat(iso + (_colon_offset(tz) if tz else ""))
        except ValueError:
            return None
        return _Stamp(at, at.isoformat())
    if groups.get("a"):
        a, b = int(groups["a"]), int(groups["b"])
        month, day = (b, a) if day_first else (a, b)
    else:
        month, day = int(groups["m"]), int(groups["d"])
    year = int(groups["y"])
    if year < 100:
        year += 1900 if year >= 69 else 2000  # strftime's %y
    hour = int(groups["H"])
    marker = (groups.get("ampm") or "").lower().replace(".", "") or groups.get("cjk_ampm") or ""
    if marker:
        if not 1 <= hour <= 12:
            return None
        afternoon = marker in ("pm", "午後", "下午", "오후")
        hour = hour % 12 + (12 if afternoon else 0)
    try:
        at = datetime(year, month, day, hour, int(groups["M"]), int(groups["S"]))
    except ValueError:
        return None
    return _Stamp(at, at.isoformat())


def _colon_offset(tz: str) -> str:
    if tz == "Z":
        return "+00:00"
    return tz if ":" in tz else f"{tz[:3]}:{tz[3:]}"


def _shifted(stamp: _Stamp, seconds: float) -> str | None:
    try:
        return (stamp.at + timedelta(seconds=seconds)).isoformat()
    except OverflowError:  # a damaged date at the edge of the calendar
        return None


def _seconds_between(earlier: _Stamp, later: _Stamp) -> float | None:
    """Seconds from one timestamp to the next; None where one has an offset and the other none (a damaged line)."""
    if (earlier.at.tzinfo is None) != (later.at.tzinfo is None):
        return None
    return (later.at - earlier.at).total_seconds()
