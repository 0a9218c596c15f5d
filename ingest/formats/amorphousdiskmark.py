"""AmorphousDiskMark (macOS) text results, 1.x-4.x ("Copy" / "Save as text": the same text).

Input (AmorphousDiskMark 4.0.1, the layout of its `scoreString`, hkatsura/AmorphousDiskMark `AppDelegate.m`)::

    ---------------------------------------------------------------------
    AmorphousDiskMark 4.0.1 (C) 2016-2023 Katsura Shareware
                        Katsura Shareware : https://katsurashareware.com/
    ---------------------------------------------------------------------
    * MB/s = 1,000,000 bytes/s [SATA/600 = 600,000,000 bytes/s]
    * KB = 1,000 bytes, KiB = 1,024 bytes
    * MB = 1,000,000 bytes, MiB = 1,048,576 bytes

      Sequential Read 1MiB (QD=   8) :   2853.09 MB/s [   2721.0 IOPS]
     Sequential Write 1MiB (QD=   8) :   2512.51 MB/s [   2396.1 IOPS]
          Random Read 4KiB (QD=  64) :    901.88 MB/s [ 220185.7 IOPS]
         Random Write 4KiB (QD=  64) :    380.27 MB/s [  92839.8 IOPS]

        Test : 1 GiB (x5) [Interval=5 sec]
      Volume : Macintosh HD: 45% used (210/465 GiB)
      Device : APPLE SSD AP0512Q
         CPU : Apple M1
        Date : 2021-03-04T10:11:12Z
          OS : macOS 11.2.2 20D80

Records (normalized; one per test line)::

    {"tool": "amorphousdiskmark", "tool_version": "4.0.1", "run_index": 0, "source_line": 9,
     "target": "Macintosh HD", "started_at": "2021-03-04T10:11:12+00:00", "pattern": "sequential",
     "operation": "read", "read_pct": 100.0, "direction": "read", "block_size_bytes": 1048576, "threads": 1,
     "queue_depth": 8, "duration_s": 5.0, "iops": 2721.0, "throughput_bytes_per_s": 2853090000.0,
     "latency_avg_ms": null, "inferred": ["duration_s", "threads"]}

Rules, close to CrystalDiskMark's 3.x-6.x layout (the direction is in the label; no sections):
- Each test line is one record (one run): pattern and operation from the label (`Sequential Read`, `Random Write`;
  4.0.1's own comment spells one `Sequantial`), block size from `1MiB` / `4KiB` (binary), queue depth from
  `(QD=  64)`. AmorphousDiskMark runs each test on one thread at that queue depth: threads = 1, listed in
  `inferred` (a `T=` in the label, where a version prints one, is read instead). MB/s is 10^6 bytes/s (its own
  units line); IOPS as printed; no latency is printed.
- `duration_s`: the measure limit, `[Limit=N sec]` where printed, else 5 s (the default the text leaves out,
  listed in `inferred`); `[No Limit]` leaves it unknown.
- Footer (`Test`, `Volume`, `Device`, `CPU`, `Date`, `OS`, right-aligned keys before ` : `) is the metadata of every
  record of its result; `target` is the volume name (`Macintosh HD` of `Volume : Macintosh HD: 45% used ...`),
  `started_at` the `Date` (UTC, `Z`).
- Several results per file (a new header, or a repeated test line, starts the next); lines of zeros (a test not
  run) are skipped; numbers with thousands separators read; a damaged or cut test line keeps what it shows whole
  and is reported as a warning (`line N: ...`), a wrapped one is joined. ParseError when no test line is read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats._common import how_damaged, reread_ungrouped
from kneepoint.ingest.records import IoRecord, ParsedRecords, add_line_warning
from kneepoint.ingest.textio import find_rare, lines_holding

NAME = "amorphousdiskmark"
TITLE = "AmorphousDiskMark"
TOOLS = ("amorphousdiskmark",)
HOST_KEYS: frozenset[str] = frozenset()  # it prints no host or user name
USER_KEYS: frozenset[str] = frozenset()
RESULT_KEY_PREFIXES: tuple[str, ...] = ()
RESULT_KEYS: tuple[str, ...] = ()

DEFAULT_MEASURE_S = 5.0  # the test limit AmorphousDiskMark leaves out of its text when it is the default
MAX_LINE = 2000
_HEAD = 65536  # detect() reads this much of a text

_HEADER = re.compile(r"^AmorphousDiskMark\s+(?P<version>\d{1,2}\.\d{1,3}(?:\.\d{1,4})?)")
_HEADER_LINE = re.compile(r"[ \t>/]*AmorphousDiskMark\s+\d")
_NUM = r"\d{1,12}+(?:\.\d{1,6}+)?+"
_ROW = re.compile(
    r"^(?P<kind>Sequential|Sequantial|Random)\s{1,8}(?P<op>Read|Write)\s{1,8}(?P<size>\d{1,6})\s{0,3}"
    r"(?P<unit>[KMG]iB)\s*\(\s*QD\s*=\s*(?P<qd>\d{1,5})\s*(?:,\s*T\s*=\s*(?P<t>\d{1,4})\s*)?\)\s*:"
    rf"\s*+(?P<mbps>{_NUM})\s*+MB/s\s*+(?:\[\s*+(?P<iops>{_NUM})\s*+IOPS\s*+\])?+"
)
_ROW_START = re.compile(r"^(?:Sequential|Sequantial|Random)\s{1,8}(?:Read|Write)\b")
# The rest of a test line wrapped onto the next line: its figures.
_CONTINUATION = re.compile(r"\s*+(?:\[\s*+\d|\d|MB/s|IOPS\s*+\]|\()")
_FOOTER = re.compile(r"^(?P<key>Test|Volume|Device|CPU|Date|OS)\s*:\s?(?P<value>.{0,500})$")
_LIMIT = re.compile(r"\[Limit=(?P<n>\d{1,6})\s*sec\]")
_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(Z|[+-]\d{2}:?\d{2})?")
_SIZE = {"K": 1024, "M": 1024**2, "G": 1024**3}


def detect(text: str) -> float:
    # Every file of unknown format passes through here, most of them short: a whole result holds the V of its
    # footer's `Volume :`, found by one memchr scan (CPython 3.11 finds a longer literal in a short text several
    # times slower), so test lines pasted without their footer are not detected (read them with --format). Then its
    # name in its header, or its test lines (`... 1MiB (QD=`, which no CrystalDiskMark version prints).
    if text.find("V", 0, _HEAD) < 0:
        return 0.0
    head = text[:_HEAD]
    if find_rare(head, "AmorphousDiskMark", 0) >= 0:
        for start in lines_holding(head, "AmorphousDiskMark"):
            if _HEADER_LINE.match(head, start):
                return 0.95
    if find_rare(head, "(QD=", 1) < 0:
        return 0.0
    rows = sum(1 for line in head.split("\n", 400)[:400] if _ROW.match(line.strip()))
    if rows and ("Volume :" in head or "Device :" in head):
        return 0.9
    return 0.5 if rows >= 2 else 0.0


def parse(text: str) -> list[IoRecord]:
    return _Reader().read(text)


@dataclass(slots=True)
class _Result:
    version: str | None = None
    footer: bool = False
    metadata: dict[str, str] = field(default_factory=dict)
    records: list[IoRecord] = field(default_factory=list)
    keys: set[tuple[str, str, int, int]] = field(default_factory=set)


class _Reader:
    """Line dispatcher: the result being read (from its header or first test line to its footer)."""

    def __init__(self) -> None:
        self.records: list[IoRecord] = []
        self.result: _Result | None = None
        self.warnings: list[str] = []
        self.header_line: int | None = None
        self.zero_lines = 0

    def read(self, text: str) -> list[IoRecord]:
        lines = text.split("\n")
        joined = 0
        for number, raw in enumerate(lines, 1):
            if number == joined or len(raw) > MAX_LINE:
                continue
            line = raw.strip().lstrip("/ ").strip()  # (a copy from a code comment keeps its `//`)
            if not line:
                continue
            if _ROW_START.match(line):
                if not line.endswith("]") and number < len(lines):
                    rest = lines[number].strip()
                    if rest and _CONTINUATION.match(rest):
                        line, joined = f"{line} {rest}", number + 1
                self.test_line(line, number)
            elif m := _HEADER.match(line):
                self.start().version = m["version"]
                self.header_line = self.header_line or number
            elif (m := _FOOTER.match(line)) and self.result is not None:
                self.result.metadata.setdefault(m["key"], m["value"].strip())
                self.result.footer = True
        self.close()
        if self.records:
            return ParsedRecords(self.records, self.warnings)
        if self.zero_lines:
            raise ParseError("every AmorphousDiskMark test line reads 0 MB/s: no test was run", self.header_line or 1)
        if self.header_line is not None:
            raise ParseError("AmorphousDiskMark header without any test result line", self.header_line)
        raise ParseError("no AmorphousDiskMark test result line found", 1)

    def start(self) -> _Result:
        self.close()
        self.result = _Result()
        return self.result

    def close(self) -> None:
        if self.result is not None and self.result.records:
            self.records += _finish(self.result, len(self.records))
        self.result = None

    def warn(self, number: int, what: str) -> None:
        add_line_warning(self.warnings, number, what)

    def test_line(self, line: str, number: int) -> None:
        m = _ROW.match(line)
        if m is None or m.end() != len(line):
            m, line = reread_ungrouped(_ROW.match, line, m)
            if m is None or m.end() != len(line):
                how = how_damaged(line)
                what = "no MB/s figure to read: skipped" if m is None else f"{line[m.end() :].strip()[:40]!r} not read"
                self.warn(number, f"{how} test line, {what}")
                if m is None:
                    return
        size = int(m["size"]) * _SIZE[m["unit"][0]]
        if not size:
            return
        pattern = "random" if m["kind"] == "Random" else "sequential"
        operation = m["op"].lower()
        qd = int(m["qd"])
        result = self.result
        key = (pattern, operation, size, qd)
        if result is None or result.footer or key in result.keys:  # a repeated test line: the next result
            result = self.start()
        result.keys.add(key)
        mbps = float(m["mbps"])
        iops = float(m["iops"]) if m["iops"] is not None else None
        if mbps == 0 and not iops:
            self.zero_lines += 1  # a test that was not run
            return
        inferred = [] if m["t"] is not None else ["threads"]
        if iops is None:
            iops = mbps * 1e6 / size
            inferred.append("iops")
        result.records.append(
            IoRecord(
                tool="amorphousdiskmark",
                run_index=0,  # numbered when the result is complete (_finish)
                source_line=number,
                pattern=pattern,  # type: ignore[arg-type]
                operation=operation,  # type: ignore[arg-type]
                read_pct=100.0 if operation == "read" else 0.0,
                direction=operation,  # type: ignore[arg-type]
                block_size_bytes=size,
                threads=int(m["t"]) if m["t"] is not None else 1,
                queue_depth=qd,
                iops=iops,
                throughput=mbps,
                throughput_unit="MB/s",
                inferred=inferred,
                metadata={"Label": " ".join(line.partition(":")[0].split())},
            )
        )


def _finish(result: _Result, first_run: int) -> list[IoRecord]:
    """A complete result: its footer is every record's metadata; version, target, date and duration from it."""
    meta = result.metadata
    target = meta.get("Volume", "").partition(":")[0].strip() or None
    test = meta.get("Test", "")
    if "[No Limit]" in test:
        duration, duration_inferred = None, False
    elif limit := _LIMIT.search(test):
        duration, duration_inferred = float(limit["n"]), False
    else:
        duration, duration_inferred = DEFAULT_MEASURE_S, bool(test)
    started_at = _started_at(meta.get("Date"))
    for run_index, record in enumerate(result.records, first_run):
        record.run_index = run_index
        record.tool_version = result.version
        record.target = target
        record.started_at = started_at
        if test:
            record.duration_s = duration
            if duration_inferred:
                record.inferred.append("duration_s")
        if result.version is None:
            record.inferred.append("tool_version")
        record.inferred.sort()
        record.metadata = dict(meta, Label=record.metadata["Label"])
    return result.records


def _started_at(value: str | None) -> str | None:
    m = _DATE.match(value or "")
    if m is None:
        return None
    y, mo, d, h, mi, s, zone = m.groups()
    try:
        stamp = datetime(int(y), int(mo), int(d), int(h), int(mi), int(s))
    except ValueError:
        return None
    if zone in (None, ""):
        return stamp.isoformat()
    offset = "+00:00" if zone == "Z" else f"{zone[:3]}:{zone[-2:]}"
    return stamp.isoformat() + offset
