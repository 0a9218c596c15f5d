"""CrystalDiskMark 3.x-9.x and KDiskMark 1.x-3.x text results ("Save Text" / "Copy" output).

Input (CrystalDiskMark 8.0.4, saved as text, trimmed)::

    ------------------------------------------------------------------------------
    CrystalDiskMark 8.0.4 x64 (C) 2007-2021 hiyohiyo
                                      Crystal Dew World: https://crystalmark.info/
    ------------------------------------------------------------------------------
    * MB/s = 1,000,000 bytes/s [SATA/600 = 600,000,000 bytes/s]
    * KB = 1000 bytes, KiB = 1024 bytes

    [Read]
      SEQ    1MiB (Q=  8, T= 1):  7427.749 MB/s [   7083.7 IOPS] <   987.81 us>
      RND    4KiB (Q= 32, T=16):  4094.649 MB/s [ 999670.2 IOPS] <   494.56 us>

    [Mix] Read 70%/Write 30%
      RND    4KiB (Q= 32, T=16):   571.979 MB/s [ 139643.3 IOPS] <  3640.51 us>

    Profile: Default
       Test: 1 GiB (x5) [C: 4% (79/1862GiB)]
       Mode: [Admin]
       Time: Measure 5 sec / Interval 5 sec
       Date: 2024/01/06 5:41:48
         OS: Windows 11  [10.0 Build 22631] (x64)

Records (normalized; one per test line)::

    {"tool": "crystaldiskmark", "tool_version": "8.0.4 x64", "run_index": 0, "source_line": 9,
     "target": "C:", "started_at": "2024-01-06T05:41:48", "pattern": "sequential", "operation": "read",
     "read_pct": 100.0, "direction": "read", "block_size_bytes": 1048576, "threads": 1, "queue_depth": 8,
     "duration_s": 5.0, "iops": 7083.7, "throughput_bytes_per_s": 7427749000.0, "latency_avg_ms": 0.98781,
     "inferred": []}
    ... RND 4KiB Q32 T16 read ...
    {"run_index": 2, "pattern": "random", "operation": "mixed", "read_pct": 70.0, "direction": "total",
     "block_size_bytes": 4096, "threads": 16, "queue_depth": 32, "iops": 139643.3, ...}

Layouts, each test line one record:
- 7.x-9.x and KDiskMark: `[Read]` / `[Write]` / `[Mix] Read 70%/Write 30%` sections; the label names pattern, block
  size, queue depth and threads (`SEQ 1MiB (Q= 8, T= 1)`, `Sequential 1MiB (...)`, KDiskMark `Sequential 1 MiB`);
  MB/s, IOPS and mean latency `<... us>` (which may fill its field: `<742522.53 us>`). A `[Mix]` line is one
  combined figure: operation "mixed", direction "total", read_pct from the section title.
- 3.x-6.x: no sections, the direction is in the label (`Sequential Read (Q= 32,T= 1) :`, `Random Write 4KB (QD=32)
  :`). What the label leaves out is the version's documented default, listed in `inferred` (see `_old_layout`).
  No latency; IOPS only on random lines, else derived from MB/s and the block size (listed in `inferred`).
- Block sizes are binary (CDM 3's "4KB" is 4096 bytes: 25.206 MB/s / 6153.8 IOPS = 4096). MB is 10^6 bytes.
- KDiskMark prints fio's `bw` (KiB/s) divided by 1000 as "MB/s" (src/benchmark.cpp: `bw / 1000.0; // to mb`),
  so 542.516 "MB/s" is 542,516 KiB/s (= 529.8 IOPS x 1 MiB). It is stored as KiB/s, the printed text is kept in
  the metadata. A result whose MB/s and IOPS agree with decimal MB (a future fixed version) stays MB/s.
  KDiskMark's [Mix] figure is 0.7 x read + 0.3 x write (a weighted mean, not a sum); noted in the metadata.
- Lines whose figures are all zero are tests that were not run (CDM prints every slot) and are skipped.
- Footer lines (Profile, Test, Mode, Time, Date, OS, Comment) are the run metadata of every line of their result;
  `duration_s` is the measure time where printed (`Time: Measure 5 sec`, KDiskMark `[Measure: 5 sec / ...]`);
  `started_at` is the Date line (local time of saving, no zone); `target` the drive letter in the Test line.
- Several results per file (a new header, a new `[Read]` after a footer, or a repeated test line starts the next
  one); results pasted without their header (the version is then guessed from the line shapes, e.g. "3.x",
  and listed in `inferred`); Markdown `>` quoting and indentation; blocks of look-alike tools
  (AmorphousDiskMark, tdeDiskMark, fio scripts) are skipped.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field, fields
from datetime import datetime
from functools import lru_cache

from ingest.errors import ParseError
from ingest.records import IoRecord
from ingest.textio import lines_holding

NAME = "crystaldiskmark"

KIB = 1024
MIB = 1024 * 1024
# KDiskMark's "MB" is 1000 KiB: printed MB/s x 1000 = KiB/s.
KDISKMARK_MB_IN_KIB = 1000.0
DEFAULT_MIX_READ_PCT = 70.0  # CDM 8 and KDiskMark default mix ratio (R70%/W30%)

_QUOTE = re.compile(r"^(?:>[ \t]?)+")
_CDM_HEADER = re.compile(r"^CrystalDiskMark\s+(?P<version>\d{1,2}\.\d[^\n]{0,60}?)\s*(?:\(C\)[^\n]*)?$")
_KDM_HEADER = re.compile(r"^KDiskMark\s*\((?P<version>[^)\s]{1,40})\)")
_FIO_LINE = re.compile(r"^Flexible I/O Tester\s*\((?P<fio>[^)]{1,40})\)")
# Look-alike tools whose text mimics CrystalDiskMark's but whose figures mean other things.
_FOREIGN_HEADER = re.compile(r"^(?:(?!CrystalDiskMark|KDiskMark)[A-Za-z]{1,20}DiskMark\b|Flexible I/O Tester\s+-)")
_UNITS_LINE = re.compile(r"^\*\s*MB/s\s*=\s*1,000,000\s*bytes?/s")
_SECTION = re.compile(r"^\[(?P<section>Read|Write|Mix)\](?P<rest>.{0,80})$")
_MIX_RATIO = re.compile(r"Read\s*(?P<read>\d{1,3})\s*%")
_FOOTER = re.compile(r"^(?P<key>Profile|Test Size|Test|Mode|Time|Date|OS|Comment)\s*:(?P<value>.{0,500})$")
# Possessive quantifiers (`*+`, `?+`): giving back a space, a digit or an optional part could never make the rest
# match (what follows each is a literal, a unit or nothing), so they only spare re the backtracking bookkeeping.
_NUM = r"\d{1,12}+(?:\.\d{1,6}+)?+"
_FIGURES = (
    rf"\s*+:\s*+(?P<value>{_NUM})\s*+(?P<unit>[KMG]B/s)"
    rf"\s*+(?:\[\s*+(?P<iops>{_NUM})\s*+IOPS\s*+\])?+"
    rf"\s*+(?:<\s*+(?P<latency>{_NUM})\s*+(?P<latency_unit>us|µs|μs|ms)\s*+>)?+"
)
# 7.x-9.x and KDiskMark: `SEQ    1MiB (Q=  8, T= 1):`, `Sequential 1MiB (...)`, `Random   4 KiB (...)`.
# The label holds no colon, so a test line is its text before the first colon matching _LABEL_NEW in full and the
# figures from that colon on: the few distinct labels are parsed once (_new_label's cache), the figures every line.
_LABEL_NEW = re.compile(
    r"(?P<kind>SEQ|RND|Sequential|Random)(?P<sep>\s{1,8})(?P<size>\d{1,6})(?P<gap>\s{0,3})(?P<size_unit>[KMG]i?B)"
    r"\s*\(\s*Q\s*=\s*(?P<q>\d{1,4})\s*,\s*T\s*=\s*(?P<t>\d{1,4})\s*\)\s*"
)
_FIGURES_AT = re.compile(_FIGURES)
# 3.x-6.x: `Sequential Read (Q= 32,T= 1) :`, `Random Write 4KB (QD=32) :`, `Random Read 512KB :`.
_ROW_OLD = re.compile(
    r"^(?P<kind>Sequential|Random)\s{1,8}(?P<op>Read|Write)"
    r"(?:\s{1,8}(?P<size>\d{1,6})\s{0,3}(?P<size_unit>[KMG]i?B))?"
    r"\s*(?:\((?P<params>[^)]{0,40})\))?" + _FIGURES
)
_PARAM_Q = re.compile(r"Q(?:D)?\s*=\s*(\d{1,4})")
_PARAM_T = re.compile(r"T\s*=\s*(\d{1,4})")
_DRIVE = re.compile(r"\[(?P<drive>[A-Z]):")
_MEASURE = re.compile(r"Measure:?\s*(?P<n>\d{1,5})\s*(?P<unit>sec|min|s)\b")
_DATE = re.compile(
    r"^(?P<y>\d{4})[/-](?P<mo>\d{1,2})[/-](?P<d>\d{1,2})(?:\s+(?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2}))?)?"
)
_UNIT = {"KB/s": "kB/s", "MB/s": "MB/s", "GB/s": "GB/s"}
_SIZE_FACTOR = {"K": KIB, "M": MIB, "G": 1024 * MIB}
_SECTION_READ_PCT = {"read": 100.0, "write": 0.0}
_FOOTER_FIRST = frozenset("PTMDOC")  # first letters of the _FOOTER keys

# IoRecord's leading fields in declaration order. Records are built positionally: 27 keyword arguments cost three
# times as much. Checked here so that a change in ingest/records.py fails at import, not in silence.
_IO_FIELDS = (
    "tool", "run_index", "source_line", "pattern", "operation", "read_pct", "direction", "block_size_bytes",
    "threads", "queue_depth", "iops", "throughput", "throughput_unit", "latency_unit", "latency_avg", "latency_min",
    "latency_max", "latency_p50", "latency_p95", "latency_p99", "latency_p999", "duration_s", "tool_version",
    "target", "started_at", "inferred", "metadata",
)  # fmt: skip
if tuple(f.name for f in fields(IoRecord))[: len(_IO_FIELDS)] != _IO_FIELDS:
    raise ImportError("ingest.records.IoRecord's fields changed: update crystaldiskmark._IO_FIELDS and _records()")

# Detection matches these at the start of the lines that hold their literal (textio.lines_holding).
_DETECT_HEADER = re.compile(r"[ \t>]*(?:CrystalDiskMark\s+\d|KDiskMark\s*\(\d)")
_DETECT_FOREIGN = re.compile(r"[ \t>]*(?:AmorphousDiskMark|tdeDiskMark|Flexible I/O Tester\s+-)")
_DETECT_ROW = re.compile(r"[ \t>]*(?:SEQ|RND|Sequential|Random)\b[^\n]{0,60}:\s*\d{1,12}(?:\.\d{1,6})?\s*MB/s")
_DETECT_UNITS = re.compile(r"[ \t>]*\*\s*MB/s\s*=\s*1,000,000\s*bytes?/s")


def _found(pattern: re.Pattern[str], text: str, literal: str, end: int | None = None, enough: int = 1) -> int:
    """How many lines of text[:end] holding `literal` start with `pattern` (counting stops at `enough`)."""
    n = 0
    for start in lines_holding(text, literal, end):
        if pattern.match(text, start):
            n += 1
            if n >= enough:
                break
    return n


def detect(text: str) -> float:
    head = text[:131072]
    header = _found(_DETECT_HEADER, head, "DiskMark") > 0
    if not header and (_found(_DETECT_FOREIGN, head, "DiskMark") or _found(_DETECT_FOREIGN, head, "Flexible I/O")):
        return 0.1
    rows = _found(_DETECT_ROW, head, "MB/s", 65536, enough=2)
    units = _found(_DETECT_UNITS, head, "MB/s") > 0
    if header and (rows or units):
        return 0.95
    if header:
        return 0.6
    if rows >= 2:
        return 0.85 if units else 0.8
    if rows == 1:
        return 0.5
    return 0.35 if units else 0.0


# A test line's figures as printed, made into an IoRecord once its result is complete (header to footer). A plain
# tuple (a NamedTuple costs five times as much to make); the fields the whole-result votes read come first.
_Row = tuple[
    str,  # shape: the layout family of the line (for results without header)
    float,  # value: the throughput figure
    str,  # unit of value
    float | None,  # iops
    int,  # block_size_bytes
    int,  # line
    str,  # label
    str,  # pattern
    str,  # operation
    float,  # read_pct
    int,  # queue_depth
    int,  # threads
    float | None,  # latency
    str,  # latency_unit
    list[str],  # inferred
]


@dataclass(slots=True)
class _Result:
    line: int
    tool: str | None = None
    version: str | None = None
    foreign: bool = False
    metadata: dict[str, str] = field(default_factory=dict)
    rows: list[_Row] = field(default_factory=list)
    keys: set[tuple[str, str, int, int, int]] = field(default_factory=set)
    section: str | None = None  # "read" | "write" | "mixed"
    mix_read_pct: float | None = None
    footer: bool = False


class _Parser:
    def __init__(self) -> None:
        self.records: list[IoRecord] = []
        self.current: _Result | None = None
        self.header_line: int | None = None
        self.orphan_line: int | None = None  # a 7.x+ test line with no section: direction unknown
        self.zero_rows = 0

    def run(self, text: str) -> list[IoRecord]:
        read_line = self.line
        for number, raw in enumerate(text.split("\n"), 1):
            if len(raw) > 2000:
                continue
            line = raw.strip()
            if line and line[0] == ">":  # Markdown quoting
                line = _QUOTE.sub("", line).strip()
            if line:
                read_line(line, number)
        self.finish()
        if not self.records:
            raise self.nothing_found()
        return self.records

    def nothing_found(self) -> ParseError:
        if self.orphan_line is not None:
            return ParseError(
                "test result line outside a [Read]/[Write]/[Mix] section: its direction is unknown", self.orphan_line
            )
        if self.zero_rows:
            return ParseError("every test line reads 0 MB/s: no test was run", self.header_line or 1)
        if self.header_line is not None:
            return ParseError("CrystalDiskMark/KDiskMark header without any test result line", self.header_line)
        return ParseError("no CrystalDiskMark or KDiskMark test result line found", 1)

    def start(self, number: int, **kwargs: object) -> _Result:
        self.finish()
        self.current = _Result(line=number, **kwargs)  # type: ignore[arg-type]
        return self.current

    def finish(self) -> None:
        if self.current is not None and not self.current.foreign and self.current.rows:
            self.records.extend(_records(self.current, len(self.records)))
        self.current = None

    def line(self, line: str, number: int) -> None:
        # Each pattern below can only match lines starting with its own letters: the first character picks the one
        # or two patterns worth trying (in the order that decides between them), instead of trying all of them.
        first = line[0]
        if first == "C" and (m := _CDM_HEADER.match(line)):
            self.start(number, tool="crystaldiskmark", version=m["version"].strip())
            self.header_line = self.header_line or number
            return
        if first == "K" and (m := _KDM_HEADER.match(line)):
            self.start(number, tool="kdiskmark", version=m["version"])
            self.header_line = self.header_line or number
            return
        if first == "F" and (m := _FIO_LINE.match(line)):
            if self.current is not None:
                self.current.metadata["fio"] = m["fio"].strip()
            return
        if ("DiskMark" in line or first == "F") and _FOREIGN_HEADER.match(line):
            self.start(number, foreign=True)
            return
        cur = self.current
        if cur is not None and cur.foreign:
            return
        if first == "S" or first == "R":
            self.test_line(line, number)
        elif first == "[":
            if m := _SECTION.match(line):
                self.section(m, number)
        elif first == "*":
            if _UNITS_LINE.match(line):
                cur = cur if cur is not None and not cur.rows and not cur.footer else self.start(number)
                cur.metadata["Units"] = line.lstrip("* ").strip()
        elif first in _FOOTER_FIRST and cur is not None and (m := _FOOTER.match(line)):
            key, value = m.groups()
            cur.metadata.setdefault("Test" if key == "Test Size" else key, value.strip())
            cur.footer = True

    def section(self, m: re.Match[str], number: int) -> None:
        cur = self.current
        name = m["section"]
        if cur is None or cur.footer or (name == "Read" and cur.rows):
            cur = self.start(number)
        if name == "Mix":
            cur.section = "mixed"
            ratio = _MIX_RATIO.search(m["rest"])
            cur.mix_read_pct = min(100.0, float(ratio["read"])) if ratio else None
        else:
            cur.section = name.lower()

    def take(self, key: tuple[str, str, int, int, int], number: int) -> _Result:
        """The result a test line belongs to: a repeated line or one after the footer starts the next."""
        cur = self.current
        if cur is None or cur.footer or key in cur.keys:
            section, mix = (cur.section, cur.mix_read_pct) if cur is not None and not cur.footer else (None, None)
            cur = self.start(number)
            cur.section, cur.mix_read_pct = section, mix
        cur.keys.add(key)
        return cur

    def test_line(self, line: str, number: int) -> None:
        """A line starting with S or R outside a look-alike tool's block: a test line of any layout, or junk."""
        colon = line.find(":")  # every test line has one before its figures
        if colon < 0:
            return
        label = _new_label(line[:colon])
        if label is None:
            if m := _ROW_OLD.match(line):  # no 7.x+ label can be a 3.x-6.x one
                self.old_row(m, number)
            return
        figures = _FIGURES_AT.match(line, colon)
        if figures is None:
            return
        pattern, size, q, t, shape, label_text = label
        if not size:
            return
        cur = self.current
        section = cur.section if cur is not None and not cur.footer else None
        if section is None:
            self.orphan_line = self.orphan_line or number
            return
        cur = self.take((section, pattern, size, q, t), number)
        inferred: list[str] = []
        read_pct = _SECTION_READ_PCT.get(section)
        if read_pct is None:
            read_pct = cur.mix_read_pct
            if read_pct is None:
                read_pct = DEFAULT_MIX_READ_PCT
                inferred.append("read_pct")
        self.add_row(cur, figures.groups(), number, label_text, shape, pattern, section, read_pct, size, q, t, inferred)

    def old_row(self, m: re.Match[str], number: int) -> None:
        pattern = "sequential" if m["kind"] == "Sequential" else "random"
        operation = m["op"].lower()
        layout = _old_layout(pattern, m["size"], m["size_unit"], m["params"])
        if layout is None:
            return
        size, q, t, inferred, shape = layout
        cur = self.take((operation, pattern, size, q, t), number)
        read_pct = 100.0 if operation == "read" else 0.0
        label = " ".join(m[0].partition(":")[0].split())
        self.add_row(cur, m.groups()[-5:], number, label, shape, pattern, operation, read_pct, size, q, t, inferred)

    def add_row(
        self,
        cur: _Result,
        figures: tuple[str, str, str | None, str | None, str | None],
        number: int,
        label: str,
        shape: str,
        pattern: str,
        operation: str,
        read_pct: float,
        size: int,
        q: int,
        t: int,
        inferred: list[str],
    ) -> None:
        value_text, unit, iops_text, latency_text, latency_unit = figures  # the _FIGURES groups
        value = float(value_text)
        iops = float(iops_text) if iops_text is not None else None
        if value == 0 and not iops:
            self.zero_rows += 1  # a slot CDM prints for a test that was not run
            return
        latency = float(latency_text) if latency_text is not None else None
        cur.rows.append(
            (shape, value, _UNIT[unit], iops, size, number, label, pattern, operation, read_pct, q, t, latency,
             "ms" if latency_unit == "ms" else "us", inferred)
        )  # fmt: skip


@lru_cache(maxsize=1024)
def _new_label(text: str) -> tuple[str, int, int, int, str, str] | None:
    """(pattern, block size (0: none), queue depth, threads, shape, label) of a 7.x-9.x/KDiskMark test label."""
    m = _LABEL_NEW.fullmatch(text)
    if m is None:
        return None
    kind, sep, size_text, gap, size_unit, q, t = m.groups()
    if kind in ("SEQ", "RND"):
        shape = "8.x-9.x"
    elif gap:
        # KDiskMark puts a space between number and unit; 3.x right-justifies the number to 3 places.
        shape = "kdiskmark 3.x" if len(sep) >= 2 else "kdiskmark 1.x-2.x"
    else:
        shape = "7.x"
    pattern = "sequential" if kind in ("SEQ", "Sequential") else "random"
    size = int(size_text) * _SIZE_FACTOR[size_unit[0]]
    return pattern, size, int(q), int(t), shape, " ".join(text.split())


def _size_bytes(number: str, unit: str) -> int | None:
    size = int(number) * _SIZE_FACTOR[unit[0].upper()]
    return size if size > 0 else None


def _old_layout(
    pattern: str, size_text: str | None, size_unit: str | None, params: str | None
) -> tuple[int, int, int, list[str], str] | None:
    """Block size, queue depth, threads for a 3.x-6.x label, with the version defaults the label omits.

    Defaults, from the versions' benchmark code (CrystalDiskMark DiskBench.cpp, DiskSpd options):
    - 3.x `Sequential Read`: 1 MiB blocks, QD1, 1 thread. `Random Read 512KB`: QD1, 1 thread.
      `Random Read 4KB (QD=1)` / `(QD=32)`: 1 thread (3.x has no thread setting).
    - 4.x/5.x `Sequential Read (T= 1)`: `-b1M -o1 -t1` (1 MiB, QD1).
    - 4.x-6.x `Sequential Read (Q= 32,T= 1)`: `-b128K -o<Q> -t<T>` (128 KiB blocks).
    """
    inferred: list[str] = []
    q_match = _PARAM_Q.search(params or "")
    t_match = _PARAM_T.search(params or "")
    q = int(q_match[1]) if q_match else None
    t = int(t_match[1]) if t_match else None
    if size_text is not None and size_unit is not None:
        size = _size_bytes(size_text, size_unit)
        if size is None:
            return None
    elif pattern == "sequential":
        size = 128 * KIB if q is not None else MIB
        inferred.append("block_size_bytes")
    else:
        return None  # a random test without a block size is no CrystalDiskMark label
    if q is None:
        q = 1
        inferred.append("queue_depth")
    if t is None:
        t = 1
        inferred.append("threads")
    if params is None or "QD" in params.upper():
        shape = "3.x"
    elif q_match is None:
        shape = "4.x-5.x"
    else:
        shape = "4.x-6.x"
    return size, q, t, inferred, shape


def _kdiskmark_kib_basis(rows: list[_Row]) -> bool:
    """Whether a KDiskMark result's MB/s are fio KiB/s / 1000 (every release so far) or decimal MB.

    Only lines whose printed figures are precise enough to tell 2.4 % apart vote (IOPS print 1 decimal)."""
    ratios = [
        value * 1e6 / (iops * size)
        for _, value, unit, iops, size, *_ in rows
        if iops and iops >= 50 and value >= 0.5 and unit == "MB/s"
    ]
    if not ratios:
        return True
    median = statistics.median(ratios)
    return abs(median - 1 / 1.024) < abs(median - 1.0)


def _version_from_shapes(shapes: list[str]) -> str:
    for shape in ("4.x-5.x", "3.x"):
        if shape in shapes:
            return shape
    return max(set(shapes), key=shapes.count).removeprefix("kdiskmark ")


def _started_at(date: str | None) -> str | None:
    m = _DATE.match(date or "")
    if not m:
        return None
    y, mo, d, h, mi, s = m.groups()
    try:
        stamp = datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0))
    except ValueError:
        return None
    return stamp.isoformat()


def _duration_s(metadata: dict[str, str]) -> float | None:
    for key in ("Time", "Test"):
        if m := _MEASURE.search(metadata.get(key, "")):
            return float(m["n"]) * (60 if m["unit"] == "min" else 1)
    return None


def _records(result: _Result, first_run: int) -> list[IoRecord]:
    rows = result.rows
    shapes = [row[0] for row in rows]
    tool = result.tool or ("kdiskmark" if all(s.startswith("kdiskmark") for s in shapes) else "crystaldiskmark")
    version, version_inferred = result.version, False
    if version is None:
        version, version_inferred = _version_from_shapes(shapes), True
    metadata = dict(result.metadata)
    kdiskmark = tool == "kdiskmark"
    kib_basis = kdiskmark and _kdiskmark_kib_basis(rows)
    if kib_basis:
        metadata["throughput_basis"] = "KDiskMark MB/s = fio KiB/s / 1000; stored as KiB/s"
    drive = _DRIVE.search(metadata.get("Test", ""))
    target = f"{drive['drive']}:" if drive else None
    started_at = _started_at(metadata.get("Date"))
    duration_s = _duration_s(metadata)

    records = []
    run_index = first_run
    for _, value, printed_unit, iops, size, line, label, pattern, operation, read_pct, q, t, latency, latency_unit, \
            inferred in rows:  # fmt: skip
        # `inferred` is this line's own list (made per line, read once): the record takes it over.
        if version_inferred:
            inferred.append("tool_version")
        row_metadata = dict(metadata, Label=label)
        throughput, unit = value, printed_unit
        if kib_basis:
            throughput = value * KDISKMARK_MB_IN_KIB * {"kB/s": 1e-3, "MB/s": 1.0, "GB/s": 1e3}[printed_unit]
            unit = "KiB/s"
            row_metadata["printed_throughput"] = f"{value:.3f} {printed_unit}"
        if iops is None:
            factor = {"KiB/s": KIB, "kB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9}[unit]
            iops = throughput * factor / size
            inferred.append("iops")
        mixed = operation == "mixed"
        if mixed and kdiskmark:
            row_metadata["mix_basis"] = "KDiskMark prints read% x read + write% x write (a weighted mean)"
        records.append(
            IoRecord(  # positional, in _IO_FIELDS order
                tool,
                run_index,
                line,
                pattern,  # type: ignore[arg-type]
                operation,  # type: ignore[arg-type]
                read_pct,
                "total" if mixed else operation,  # type: ignore[arg-type]
                size,
                t,
                q,
                iops,
                throughput,
                unit,
                latency_unit,
                latency,  # latency_avg
                None,  # latency_min .. latency_p999: not printed
                None,
                None,
                None,
                None,
                None,
                duration_s,
                version,
                target,
                started_at,
                inferred,
                row_metadata,
            )
        )
        run_index += 1
    return records


def parse(text: str) -> list[IoRecord]:
    return _Parser().run(text)
