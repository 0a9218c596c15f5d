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

    {"tool": "crystaldiskmark", "tool_version": "8.0.4", "run_index": 0, "source_line": 9,
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
  `started_at` is the Date line (local time of saving, no zone). `target`: a target line of the footer (`Device:`,
  `Target:`, `Drive:`, `Path:`, as KDiskMark and hand-edited results name it), else the drive letter or mount point
  in the Test line (`[C: 4% ...]`, `[/home: ...]`), else a drive named by a line of prose before the result
  (`E: WD Blue 2TB`, `Drive D:`).
- `tool_version` is the version number of the header (`8.0.4`); the rest of it is the run's metadata:
  `architecture` (x64, x86, ARM64) and `edition` (`Shizuku Edition`, `UWP`).
- Several results per file, e.g. several drives one after the other (a new header, a new `[Read]` after a footer or
  after test lines, or a repeated test line starts the next one), prose between them skipped; results pasted
  without their header (the version is then guessed from the line shapes, e.g. "3.x", and listed in `inferred`);
  Markdown `>` quoting and indentation; blocks of look-alike tools (AmorphousDiskMark, whose `4KiB (QD=...)`
  labels no CrystalDiskMark prints, tdeDiskMark, fio scripts) are skipped.
- What users paste: a test line wrapped onto the next line (its figures or the end of its label) is joined;
  numbers with thousands separators read (`1,026,872.5`, `1.026.872,5`, `1 026 872.5`, no-break spaces); a line
  cut short (`…`, `..`) or damaged keeps the figures it shows whole (each with its unit after it) and is reported
  as a warning (`line N: ...`); the file is refused only when no test line is read.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats._common import how_damaged, reread_ungrouped
from kneepoint.ingest.records import IoRecord, ParsedRecords, add_line_warning
from kneepoint.ingest.textio import find_rare, lines_holding

NAME = "crystaldiskmark"
TITLE = "CrystalDiskMark / KDiskMark"
TOOLS = ("crystaldiskmark", "kdiskmark")
# Neither tool prints a host or user name.
HOST_KEYS: frozenset[str] = frozenset()
USER_KEYS: frozenset[str] = frozenset()
RESULT_KEY_PREFIXES: tuple[str, ...] = ()
RESULT_KEYS = ("printed_throughput",)

KIB = 1024
MIB = 1024 * 1024
# KDiskMark's "MB" is 1000 KiB: printed MB/s x 1000 = KiB/s.
KDISKMARK_MB_IN_KIB = 1000.0
DEFAULT_MIX_READ_PCT = 70.0  # CDM 8 and KDiskMark default mix ratio (R70%/W30%)
MAX_LINE = 2000  # longer lines are no tool's output

_QUOTE = re.compile(r"^(?:>[ \t]?)+")
_CDM_HEADER = re.compile(r"^CrystalDiskMark\s+(?P<version>\d{1,2}\.\d[^\n]{0,60}?)\s*(?:\(C\)[^\n]*)?$")
_KDM_HEADER = re.compile(r"^KDiskMark\s*\((?P<version>[^)\s]{1,40})\)")
# The version number of a header's version text; the rest is the edition and the architecture (`8.0.4 x64`,
# `8.0.4 Shizuku Edition x64`, `8.0.0 x64 (UWP)`).
_VERSION_NUMBER = re.compile(r"\d{1,2}\.\d{1,3}(?:\.\d{1,4})?[a-z]?")
_ARCHITECTURES = frozenset(("x64", "x86", "arm64", "a64", "arm32", "x86_64", "amd64"))
_FIO_LINE = re.compile(r"^Flexible I/O Tester\s*\((?P<fio>[^)]{1,40})\)")
# Look-alike tools whose text mimics CrystalDiskMark's but whose figures mean other things.
_FOREIGN_HEADER = re.compile(r"^(?:(?!CrystalDiskMark|KDiskMark)[A-Za-z]{1,20}DiskMark\b|Flexible I/O Tester\s+-)")
_UNITS_LINE = re.compile(r"^\*\s*MB/s\s*=\s*1,000,000\s*bytes?/s")
_SECTION = re.compile(r"^\[(?P<section>Read|Write|Mix)\](?P<rest>.{0,80})$")
_MIX_RATIO = re.compile(r"Read\s*(?P<read>\d{1,3})\s*%")
# Possessive quantifiers: what follows each is a literal or a unit, so giving characters back never helps a match
# and damaged lines cannot make the engine backtrack.
_NUM = r"\d{1,12}+(?:\.\d{1,6}+)?+"
_FIGURES = (
    rf"\s*+:\s*+(?P<value>{_NUM})\s*+(?P<unit>[KMG]B/s)"
    rf"\s*+(?:\[\s*+(?P<iops>{_NUM})\s*+IOPS\s*+\])?+"
    rf"\s*+(?:<\s*+(?P<latency>{_NUM})\s*+(?P<latency_unit>us|µs|μs|ms)\s*+>)?+"
)
# 7.x-9.x and KDiskMark: `SEQ    1MiB (Q=  8, T= 1):`, `Sequential 1MiB (...)`, `Random   4 KiB (...)`. The label
# holds no colon: it is the text before a line's first colon, the figures follow from that colon on.
_LABEL_NEW = re.compile(
    r"(?P<kind>SEQ|RND|Sequential|Random)(?P<sep>\s{1,8})(?P<size>\d{1,6})(?P<gap>\s{0,3})(?P<size_unit>[KMG]i?B)"
    r"\s*\(\s*Q\s*=\s*(?P<q>\d{1,4})\s*,\s*T\s*=\s*(?P<t>\d{1,4})\s*\)\s*"
)
_FIGURES_NEW = re.compile(_FIGURES)
# 3.x-6.x: `Sequential Read (Q= 32,T= 1) :`, `Random Write 4KB (QD=32) :`, `Random Read 512KB :`.
_ROW_OLD = re.compile(
    r"^(?P<kind>Sequential|Random)\s{1,8}(?P<op>Read|Write)"
    r"(?:\s{1,8}(?P<size>\d{1,6})\s{0,3}(?P<size_unit>[KMG]i?B))?"
    r"\s*(?:\((?P<params>[^)]{0,40})\))?" + _FIGURES
)
_OLD_LABEL_START = re.compile(r"(?:Sequential|Random)\s{1,8}(?:Read|Write)\b[^:]{0,60}:")
# The rest of a test line a console or a paste wrapped onto the next line: figures, or the end of the label.
_CONTINUATION = re.compile(r"\s*+(?:[\[<]\s*+\d|\d|IOPS\s*+\]|[KMG]B/s|[um]s\s*+>|T\s*+=|Q\s*+=|\()")
_PARAM_Q = re.compile(r"Q(?:D)?\s*=\s*(\d{1,4})")
_PARAM_T = re.compile(r"T\s*=\s*(\d{1,4})")
_DRIVE = re.compile(r"\[(?P<drive>[A-Z]):")
# KDiskMark and hand-written results name the target on a line of its own, or as a mount point in the Test line.
_MOUNT = re.compile(r"\[(?P<path>/[^:\]]{0,200}):")
_TARGET_KEYS = ("Target", "Device", "Drive", "Path")  # (first letters among the footer's: see _Reader.line)
# A line of prose between results that names the next one's drive: `E: Samsung 970 EVO`, `Drive D:`.
_PROSE_DRIVE = re.compile(r"^(?:(?P<letter>[A-Z]):(?:\s|$)|.{0,60}?\b[Dd]rive\s+(?P<named>[A-Z]):)")
_MEASURE = re.compile(r"Measure:?\s*(?P<n>\d{1,5})\s*(?P<unit>sec|min|s)\b")
_DATE = re.compile(
    r"^(?P<y>\d{4})[/-](?P<mo>\d{1,2})[/-](?P<d>\d{1,2})(?:\s+(?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2}))?)?"
)
_UNIT = {"KB/s": "kB/s", "MB/s": "MB/s", "GB/s": "GB/s"}
_SIZE_FACTOR = {"K": KIB, "M": MIB, "G": 1024 * MIB}
_SECTION_READ_PCT = {"read": 100.0, "write": 0.0}
_KIB_FACTOR = {"kB/s": 1e-3, "MB/s": 1.0, "GB/s": 1e3}  # printed unit -> MB
_BYTES_PER_S = {"KiB/s": KIB, "kB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9}
# A footer line is `KEY: value` with one of these keys ("Test Size" is stored as "Test"), its value short.
_FOOTER_KEYS = frozenset(("Profile", "Test Size", "Test", "Mode", "Time", "Date", "OS", "Comment", *_TARGET_KEYS))
_FOOTER_VALUE_MAX = 500

# Detection matches these at the start of the lines that hold their literal (textio.lines_holding).
_DETECT_HEADER = re.compile(r"[ \t>]*(?:CrystalDiskMark\s+\d|KDiskMark\s*\(\d)")
_DETECT_FOREIGN = re.compile(r"[ \t>]*(?:AmorphousDiskMark|tdeDiskMark|Flexible I/O Tester\s+-)")
# A test line or the units line, told apart by the group that matched.
_DETECT_LINE = re.compile(
    r"[ \t>]*(?:(?P<row>(?:SEQ|RND|Sequential|Random)\b[^\n]{0,60}:\s*\d{1,12}(?:\.\d{1,6})?\s*MB/s)"
    r"|(?P<units>\*\s*MB/s\s*=\s*1,000,000\s*bytes?/s))"
)
_DETECT_HEAD = 131072
# The label words a test line starts with, each with the index of its letter that is rare in other tools' outputs
# (what textio.find_rare scans for).
_DETECT_WORDS = (("SEQ", 2), ("Sequential", 2), ("RND", 2), ("Random", 0))
_DETECT_SHORT = 8192  # a text this short is scanned for "MB/s" without the gates below
_DETECT_ROWS_END = 65536  # test lines count only when their "MB/s" lies in the first 64 KiB


def detect(text: str) -> float:
    # Every file of unknown format passes through this detector, most of them large outputs of other tools: the
    # head is searched for the few rare words that can start a line of interest before any line is matched.
    head = text[:_DETECT_HEAD]
    header = foreign = False
    if find_rare(head, "DiskMark", 0) >= 0:
        for start in lines_holding(head, "DiskMark"):
            if _DETECT_HEADER.match(head, start):
                header = True
                break
            if not foreign and _DETECT_FOREIGN.match(head, start):
                foreign = True
    if not header and not foreign and find_rare(head, "Flexible I/O Tester", 0) >= 0:
        for start in lines_holding(head, "Flexible I/O Tester"):
            if _DETECT_FOREIGN.match(head, start):
                foreign = True
                break
    if foreign and not header:
        return 0.1
    rows = 0
    units = False
    # A test line holds a label word and "MB/s", the units line "*", "=" and "1,000,000": a text without them
    # cannot score, and is not scanned for "MB/s".
    i = -1
    if (
        len(head) <= _DETECT_SHORT
        or ("*" in head and "=" in head and find_rare(head, "1,000,000", 1) >= 0)
        # (a word starting before _DETECT_ROWS_END: inside head[:_DETECT_ROWS_END + len(word) - 1])
        or any(find_rare(head, word, k, _DETECT_ROWS_END + len(word) - 1) >= 0 for word, k in _DETECT_WORDS)
    ):
        i = head.find("MB/s")
    # The lines holding "MB/s", each matched from its start once: test lines count up to two.
    while i >= 0:
        in_rows = i + 4 <= _DETECT_ROWS_END
        if units and not in_rows:
            break
        start = head.rfind("\n", 0, i) + 1
        m = _DETECT_LINE.match(head, start)
        if m is not None:
            if m.lastgroup == "row":
                if rows < 2 and in_rows:
                    rows += 1
            else:
                units = True
            if (header and (rows or units)) or (units and rows >= 2):
                break
        stop = head.find("\n", i)
        if stop < 0:
            break
        i = head.find("MB/s", stop)
    if header and (rows or units):
        return 0.95
    if header:
        return 0.6
    if rows >= 2:
        return 0.85 if units else 0.8
    if rows == 1:
        return 0.5
    return 0.35 if units else 0.0


# --------------------------------------------------------------------------------------------- reading


class _Label(NamedTuple):
    """What a test label says: `SEQ 1MiB (Q= 8, T= 1)`."""

    pattern: str
    block_size: int
    queue_depth: int
    threads: int
    shape: str  # the layout family, which tells the version when no header names it
    text: str  # as printed, runs of blanks made one space


# A test line as read: label, the throughput figure and its printed unit, IOPS (None where not printed), line number,
# operation, direction, read %, mean latency and its unit, the fields inferred.
_TestLine = tuple[_Label, float, str, float | None, int, str, str, float, float | None, str, list[str]]


@dataclass(slots=True)
class _Result:
    """One result, from its header (or first line) to the next result's start."""

    tool: str | None = None
    version: str | None = None
    footer: bool = False  # a footer line was read: a test line after it starts the next result
    metadata: dict[str, str] = field(default_factory=dict)
    # Its test lines as read; their records are made when the result is complete (its footer is their metadata).
    lines: list[_TestLine] = field(default_factory=list)
    prose_drive: str | None = None  # the drive letter a line of prose before the result named
    # (section, pattern, block size, queue depth, threads) of each test line: a repeated one starts the next result
    keys: set[tuple[str, str, int, int, int]] = field(default_factory=set)


_UNREAD = object()


class _Reader:
    """The line dispatcher: the result being read, the section it is in, and what the error needs."""

    def __init__(self) -> None:
        self.records: list[IoRecord] = []
        self.result: _Result | None = None
        self.foreign = False  # the result is a look-alike tool's block: read and dropped
        self.section: str | None = None  # "read" | "write" | "mixed"
        # Of the section's test lines, set with it.
        self.direction = "read"
        self.read_pct = 0.0
        self.read_pct_inferred = False
        # For the error when nothing is found.
        self.header_line: int | None = None
        self.orphan_line: int | None = None  # a 7.x+ test line outside a section: direction unknown
        self.zero_lines = 0
        # Labels read so far: every section of a result repeats the same few.
        self.labels: dict[str, _Label | bool | None] = {}
        self.warnings: list[str] = []  # damaged lines, `line N: ...`
        self.prose_drive: str | None = None  # a drive named by prose before the next result

    def warn(self, number: int, what: str) -> None:
        add_line_warning(self.warnings, number, what)

    def read(self, text: str) -> list[IoRecord]:
        lines = text.split("\n")
        joined = 0  # the line the last test line took as its wrapped rest
        test_line, other_line = self.test_line, self.line  # (bound once: called for every line)
        for number, raw in enumerate(lines, 1):
            if not raw or len(raw) > MAX_LINE or number == joined:
                continue
            line = raw.strip()
            if line and line[0] == ">":  # Markdown quoting
                line = _QUOTE.sub("", line).strip()
            if not line:
                continue
            if line[0] in "SR":  # most lines of a result are test lines: no dispatch for them
                if line[-1] != ">" and number < len(lines) and (rest := _continuation(lines[number])):
                    line, joined = f"{line} {rest}", number + 1  # a console or a paste wrapped it
                test_line(line, number)
            else:
                other_line(line, number)
        self.close()
        if self.records:
            return ParsedRecords(self.records, self.warnings)
        if self.orphan_line is not None:
            raise ParseError(
                "test result line outside a [Read]/[Write]/[Mix] section: its direction is unknown", self.orphan_line
            )
        if self.zero_lines:
            raise ParseError("every test line reads 0 MB/s: no test was run", self.header_line or 1)
        if self.header_line is not None:
            raise ParseError("CrystalDiskMark/KDiskMark header without any test result line", self.header_line)
        raise ParseError("no CrystalDiskMark or KDiskMark test result line found", 1)

    def line(self, line: str, number: int) -> None:
        """One stripped line but a test line, told by its first character; the order decides between look-alikes."""
        first = line[0]
        if first == "-":  # a rule under or over the header
            pass
        elif first == "[":
            self.section_line(line)
        elif first == "*":
            self.units_line(line)
        elif first == "C" and (m := _CDM_HEADER.match(line)):
            self.header(number, "crystaldiskmark", m["version"].strip())
        elif first == "K" and (m := _KDM_HEADER.match(line)):
            self.header(number, "kdiskmark", m["version"])
        elif first == "F" and (m := _FIO_LINE.match(line)):
            if self.result is not None:
                self.result.metadata["fio"] = m["fio"].strip()
        elif ("DiskMark" in line or first == "F") and _FOREIGN_HEADER.match(line):
            self.start(foreign=True)
        elif first in "PTMDOC" and self.footer_line(line):
            pass
        elif (line[1:2] == ":" or "rive" in line) and (m := _PROSE_DRIVE.match(line)) and self.between_results():
            self.prose_drive = m["letter"] or m["named"]  # prose naming the next result's drive

    # -- results

    def between_results(self) -> bool:
        return self.result is None or self.result.footer or bool(self.result.lines)

    def close(self) -> None:
        result = self.result
        if result is not None and result.lines and not self.foreign:
            self.records += _finish(result, len(self.records))

    def start(self, foreign: bool = False, keep_section: bool = False) -> _Result:
        """Close the result being read and start the next."""
        self.close()
        if not keep_section:
            self.section = None
        self.foreign = foreign
        self.result = _Result(prose_drive=self.prose_drive)
        self.prose_drive = None
        return self.result

    def header(self, number: int, tool: str, version: str) -> None:
        result = self.start()
        result.tool, result.version = tool, version
        # `8.0.4 Shizuku Edition x64`, `8.0.0 x64 (UWP)`: the version is the number; edition and architecture are
        # the run's metadata.
        numeral, _, rest = version.partition(" ")
        if rest and _VERSION_NUMBER.fullmatch(numeral):
            result.version = numeral
            words = rest.replace("(", " ").replace(")", " ").split()
            arch = [w for w in words if w.lower() in _ARCHITECTURES]
            if arch:
                result.metadata["architecture"] = arch[0]
            if edition := " ".join(w for w in words if w.lower() not in _ARCHITECTURES):
                result.metadata["edition"] = edition
        if self.header_line is None:
            self.header_line = number

    def section_line(self, line: str) -> None:
        m = _SECTION.match(line)
        if m is None or self.foreign:
            return
        name = m["section"]
        result = self.result
        if result is None or result.footer or (name == "Read" and result.lines):
            self.start()
        if name == "Mix":
            self.section, self.direction = "mixed", "total"  # a [Mix] line is one combined figure
            ratio = _MIX_RATIO.search(m["rest"])
            # Without a ratio in the title: the default, listed in `inferred`.
            self.read_pct_inferred = ratio is None
            self.read_pct = DEFAULT_MIX_READ_PCT if ratio is None else min(100.0, float(ratio["read"]))
        else:
            self.section = self.direction = name.lower()
            self.read_pct = _SECTION_READ_PCT[self.section]
            self.read_pct_inferred = False

    def units_line(self, line: str) -> None:
        if self.foreign or not _UNITS_LINE.match(line):
            return
        result = self.result
        if result is None or result.lines or result.footer:
            result = self.start()
        result.metadata["Units"] = line.lstrip("* ").strip()

    def footer_line(self, line: str) -> bool:
        """A `KEY: value` line of a result's footer (True when it was one)."""
        result = self.result
        if result is None or self.foreign:
            return False
        key, colon, value = line.partition(":")
        key = key.rstrip()
        if colon and len(value) <= _FOOTER_VALUE_MAX and key in _FOOTER_KEYS:
            result.metadata.setdefault("Test" if key == "Test Size" else key, value.strip())
            result.footer = True
            return True
        return False

    # -- test lines

    def test_line(self, line: str, number: int) -> None:
        """A 7.x+ or 3.x-6.x test line, a look-alike tool's header, or junk."""
        colon = line.find(":")  # every test line has one before its figures
        label = None
        if colon > 0:
            text = line[:colon]
            label = self.labels.get(text, _UNREAD)
            if label is _UNREAD:
                label = self.labels[text] = _new_label(text)
        if label is None or label is False:
            # A 7.x+ label has a space after its first word and no DiskMark before its colon: neither is one.
            if "DiskMark" in line and _FOREIGN_HEADER.match(line):
                self.start(foreign=True)
            elif label is None and not self.foreign and colon > 0:
                self.old_test_line(line, number)
            return
        if self.foreign:
            return
        m = _FIGURES_NEW.match(line, colon)
        if m is None or m.end() != len(line):
            m, line = self.damaged(line, colon, m, number)
            if m is None:
                return
        result, section = self.result, self.section
        if result is None or section is None or result.footer:
            if self.orphan_line is None:
                self.orphan_line = number
            return
        key = (section, label.pattern, label.block_size, label.queue_depth, label.threads)
        if key in result.keys:  # a repeated test line starts the next result, in the same section
            result = self.start(keep_section=True)
        result.keys.add(key)
        value_text, unit, iops_text, latency_text, latency_unit = m.groups()
        value = float(value_text)
        iops = float(iops_text) if iops_text is not None else None
        if value == 0 and not iops:
            self.zero_lines += 1  # a slot CDM prints for a test that was not run
            return
        result.lines.append(
            (
                label,
                value,
                _UNIT[unit],
                iops,
                number,
                section,
                self.direction,
                self.read_pct,
                float(latency_text) if latency_text is not None else None,
                "ms" if latency_unit == "ms" else "us",
                ["read_pct"] if self.read_pct_inferred else [],
            )
        )

    def damaged(self, line: str, colon: int, m: re.Match[str] | None, number: int) -> tuple[re.Match[str] | None, str]:
        """A test line its figures' pattern did not read to the end: with grouped numbers (`1,026,872.5`) it reads
        written plainly; otherwise what it read whole is kept (a figure counts only with its unit after it, so a
        cut one is never taken) and the line is reported."""
        m, line = reread_ungrouped(_figures_new, line, m)
        if m is not None and m.end() == len(line):
            return m, line
        how = how_damaged(line)
        if m is None:
            self.warn(number, f"{how} test line, no MB/s figure to read: skipped")
        else:
            self.warn(number, f"{how} test line: {line[m.end() :].strip()[:40]!r} not read")
        return m, line

    def old_test_line(self, line: str, number: int) -> None:
        """3.x-6.x: the direction is in the label, there are no sections."""
        m = _ROW_OLD.match(line)
        if m is not None and m.end() != len(line) or m is None and _OLD_LABEL_START.match(line):
            m, line = reread_ungrouped(_ROW_OLD.match, line, m)
            if m is None or m.end() != len(line):
                how = how_damaged(line)
                what = "no MB/s figure to read: skipped" if m is None else f"{line[m.end() :].strip()[:40]!r} not read"
                self.warn(number, f"{how} test line, {what}")
        if m is None:
            return
        pattern = "sequential" if m["kind"] == "Sequential" else "random"
        operation = m["op"].lower()
        layout = _old_layout(pattern, m["size"], m["size_unit"], m["params"])
        if layout is None:
            return
        size, q, t, inferred, shape = layout
        key = (operation, pattern, size, q, t)
        result = self.result
        if result is None or result.footer or key in result.keys:  # a repeated line or one after the footer
            result = self.start(keep_section=result is not None and not result.footer)
        result.keys.add(key)
        value = float(m["value"])
        iops = float(m["iops"]) if m["iops"] is not None else None
        if value == 0 and not iops:
            self.zero_lines += 1
            return
        label = _Label(pattern, size, q, t, shape, " ".join(m[0].partition(":")[0].split()))
        latency = float(m["latency"]) if m["latency"] is not None else None
        result.lines.append(
            (
                label,
                value,
                _UNIT[m["unit"]],
                iops,
                number,
                operation,
                operation,
                100.0 if operation == "read" else 0.0,
                latency,
                "ms" if m["latency_unit"] == "ms" else "us",
                inferred,
            )
        )


def parse(text: str) -> list[IoRecord]:
    return _Reader().read(text)


def _new_label(text: str) -> _Label | bool | None:
    """A 7.x-9.x/KDiskMark test label; None for other text, False for a label of block size 0 (no test line
    either, and no 3.x-6.x one to try)."""
    m = _LABEL_NEW.fullmatch(text)
    if m is None:
        return None
    kind, sep, size_text, gap, size_unit, q, t = m.groups()
    size = int(size_text) * _SIZE_FACTOR[size_unit[0]]
    if not size:
        return False
    if kind in ("SEQ", "RND"):
        shape = "8.x-9.x"
    elif gap:
        # KDiskMark puts a space between number and unit; 3.x right-justifies the number to 3 places.
        shape = "kdiskmark 3.x" if len(sep) >= 2 else "kdiskmark 1.x-2.x"
    else:
        shape = "7.x"
    pattern = "sequential" if kind in ("SEQ", "Sequential") else "random"
    return _Label(pattern, size, int(q), int(t), shape, " ".join(text.split()))


def _old_layout(
    pattern: str, size_text: str | None, size_unit: str | None, params: str | None
) -> tuple[int, int, int, list[str], str] | None:
    """Block size, queue depth, threads for a 3.x-6.x label, with the version defaults the label omits, the fields
    defaulted and the label's shape.

    Defaults, from the versions' benchmark code (CrystalDiskMark DiskBench.cpp, DiskSpd options):
    - 3.x `Sequential Read`: 1 MiB blocks, QD1, 1 thread. `Random Read 512KB`: QD1, 1 thread.
      `Random Read 4KB (QD=1)` / `(QD=32)`: 1 thread (3.x has no thread setting).
    - 4.x/5.x `Sequential Read (T= 1)`: `-b1M -o1 -t1` (1 MiB, QD1).
    - 4.x-6.x `Sequential Read (Q= 32,T= 1)`: `-b128K -o<Q> -t<T>` (128 KiB blocks).
    """
    inferred: list[str] = []
    if params is not None and "QD" in params and size_unit is not None and "i" in size_unit:
        return None  # `Random Read 4KiB (QD=  64)`: AmorphousDiskMark's label (CrystalDiskMark 3.x prints `4KB`)
    q_match = _PARAM_Q.search(params or "")
    t_match = _PARAM_T.search(params or "")
    q = int(q_match[1]) if q_match else None
    t = int(t_match[1]) if t_match else None
    if size_text is not None and size_unit is not None:
        size = int(size_text) * _SIZE_FACTOR[size_unit[0].upper()]
        if size <= 0:
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


# --------------------------------------------------------------------------------------------- records


def _finish(result: _Result, first_run: int) -> list[IoRecord]:
    """The records of a complete result: what each test line says, and its footer as every record's metadata (with
    the record's label)."""
    lines = result.lines
    labels = [line[0] for line in lines]
    tool = result.tool
    if tool is None:
        kdiskmark_shapes = all(label.shape.startswith("kdiskmark") for label in labels)
        tool = "kdiskmark" if kdiskmark_shapes else "crystaldiskmark"
    version = result.version
    version_inferred = version is None
    if version is None:
        version = _version_from_shapes([label.shape for label in labels])
    kdiskmark = tool == "kdiskmark"
    kib_basis = kdiskmark and _kdiskmark_kib_basis(lines)
    metadata = result.metadata
    if kib_basis:
        metadata = dict(metadata, throughput_basis="KDiskMark MB/s = fio KiB/s / 1000; stored as KiB/s")
    target = _target(result)
    started_at = _started_at(metadata.get("Date"))
    duration_s = _duration_s(metadata)

    records = []
    for run_index, line in enumerate(lines, first_run):
        label, value, unit, iops, number, operation, direction, read_pct, latency, latency_unit, inferred = line
        if version_inferred:
            inferred.append("tool_version")
        record_metadata = dict(metadata, Label=label.text)
        throughput = value
        if kib_basis:
            throughput = value * KDISKMARK_MB_IN_KIB * _KIB_FACTOR[unit]
            record_metadata["printed_throughput"] = f"{value:.3f} {unit}"
            unit = "KiB/s"
        if iops is None:
            iops = throughput * _BYTES_PER_S[unit] / label.block_size
            inferred.append("iops")
        if kdiskmark and direction == "total":
            record_metadata["mix_basis"] = "KDiskMark prints read% x read + write% x write (a weighted mean)"
        records.append(
            IoRecord(
                tool=tool,
                tool_version=version,
                run_index=run_index,
                source_line=number,
                target=target,
                started_at=started_at,
                pattern=label.pattern,  # type: ignore[arg-type]
                operation=operation,  # type: ignore[arg-type]
                read_pct=read_pct,
                direction=direction,  # type: ignore[arg-type]
                block_size_bytes=label.block_size,
                threads=label.threads,
                queue_depth=label.queue_depth,
                duration_s=duration_s,
                iops=iops,
                throughput=throughput,
                throughput_unit=unit,
                latency_unit=latency_unit,
                latency_avg=latency,
                inferred=inferred,
                metadata=record_metadata,
            )
        )
    return records


def _target(result: _Result) -> str | None:
    """The result's target: a target line of its own (KDiskMark's device), else the drive letter or mount point
    of its Test line, else a drive a line of prose before the result named."""
    metadata = result.metadata
    for key in _TARGET_KEYS:
        if value := metadata.get(key):
            return value
    test = metadata.get("Test", "")
    if drive := _DRIVE.search(test):
        return f"{drive['drive']}:"
    if mount := _MOUNT.search(test):
        return mount["path"]
    return f"{result.prose_drive}:" if result.prose_drive else None


def _continuation(raw: str) -> str | None:
    """The next line, stripped, when it is the rest of a wrapped test line (it starts with a figure, a unit or the
    end of a label), else None."""
    line = raw.strip()
    return line if line and len(line) <= MAX_LINE and _CONTINUATION.match(line) else None


def _kdiskmark_kib_basis(lines: list[_TestLine]) -> bool:
    """Whether a KDiskMark result's MB/s are fio KiB/s / 1000 (every release so far) or decimal MB.

    Only lines whose printed figures are precise enough to tell 2.4 % apart vote (IOPS print 1 decimal)."""
    ratios = [
        value * 1e6 / (iops * label.block_size)
        for label, value, unit, iops, *_ in lines
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


def _figures_new(line: str) -> re.Match[str] | None:
    """A 7.x+ test line's figures, read from its colon on."""
    return _FIGURES_NEW.match(line, line.find(":"))
