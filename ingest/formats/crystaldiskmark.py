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
from datetime import datetime
from operator import itemgetter

from ingest.errors import ParseError
from ingest.records import IoRecord
from ingest.textio import find_rare, lines_holding

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

# Detection matches these at the start of the lines that hold their literal (textio.lines_holding).
_DETECT_HEADER = re.compile(r"[ \t>]*(?:CrystalDiskMark\s+\d|KDiskMark\s*\(\d)")
_DETECT_FOREIGN = re.compile(r"[ \t>]*(?:AmorphousDiskMark|tdeDiskMark|Flexible I/O Tester\s+-)")
# A test line or the units line, told apart by the group that matched (one starts with a label word, the other "*").
_DETECT_LINE = re.compile(
    r"[ \t>]*(?:(?P<row>(?:SEQ|RND|Sequential|Random)\b[^\n]{0,60}:\s*\d{1,12}(?:\.\d{1,6})?\s*MB/s)"
    r"|(?P<units>\*\s*MB/s\s*=\s*1,000,000\s*bytes?/s))"
)
_DETECT_HEAD = 131072
# The label words a test line starts with, each with the index of its character rarest in other tools' outputs.
_DETECT_WORDS = (("SEQ", 2), ("Sequential", 2), ("RND", 2), ("Random", 0))
# A text this short (a CrystalDiskMark result) is read faster by one str.find than through the gates below.
_DETECT_SHORT = 8192
_DETECT_ROWS_END = 65536  # test lines count only when their "MB/s" lies in the first 64 KiB


def detect(text: str) -> float:
    # Another tool's text costs memchr scans for a rare letter of each word that could start a line of interest
    # ("DiskMark", "Flexible I/O Tester", the label words, "1,000,000"; see textio.find_rare), and only where one of the
    # latter two is found a str.find scan for "MB/s" and one match at the start of each line holding it.
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
        # Only a line starting with "Flexible I/O Tester" can match here (one holding "AmorphousDiskMark" was read).
        for start in lines_holding(head, "Flexible I/O Tester"):
            if _DETECT_FOREIGN.match(head, start):
                foreign = True
                break
    if foreign and not header:
        return 0.1
    rows = 0
    units = False
    # The lines holding "MB/s" (each at its first one): test lines count up to two, within _DETECT_ROWS_END. A test
    # line counted holds its label word and "MB/s" before that end, the units line "*", "=" and "1,000,000": without
    # them no line can match, and the scan for "MB/s" (letters common in any text: str.find's slow case) is spared.
    i = -1
    if (
        len(head) <= _DETECT_SHORT
        or ("*" in head and "=" in head and find_rare(head, "1,000,000", 1) >= 0)
        # (a word starting before _DETECT_ROWS_END: inside head[:_DETECT_ROWS_END + len(word) - 1])
        or any(find_rare(head, word, k, _DETECT_ROWS_END + len(word) - 1) >= 0 for word, k in _DETECT_WORDS)
    ):
        i = head.find("MB/s")
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


# A test line as read, made into an IoRecord once its result is complete (header to footer). A plain tuple (a
# NamedTuple costs five times as much to make).
_Label = tuple[str, int, int, int, str, str, dict[str, str] | None]  # see _new_label
_Row = tuple[
    _Label,  # pattern, block size, queue depth, threads, shape (the line's layout family), label text, keys
    float,  # value: the throughput figure
    str,  # unit of value
    float | None,  # iops
    int,  # line
    str,  # operation
    str,  # direction
    float,  # read_pct
    float | None,  # latency
    str,  # latency_unit
    list[str],  # inferred
]
# Where the _FIGURES groups are in a test line's text from its colon on: (value start, end, iops start, end, latency
# start, end, unit, latency unit), None for an absent group; or None when _FIGURES does not match.
_Figures = tuple[int, int, int | None, int | None, int | None, int | None, str, str]

# A footer line: one of these keys, spaces, the line's first colon and at most 500 characters (the value; "Test Size"
# is stored as "Test"). Read with str methods: the regex `(Profile|...)\s*:(.{0,500})$` cost three times as much.
_FOOTER_KEYS = frozenset(("Profile", "Test Size", "Test", "Mode", "Time", "Date", "OS", "Comment"))
_FOOTER_VALUE_MAX = 500
_FOOTER_ONLY_FIRST = "PTMDO"  # first letters of the footer keys that start no other line kind ("C": headers too)
_SECTION_LINES = {"[Read]": ("Read", ""), "[Write]": ("Write", "")}  # the usual section lines, without _SECTION
_MISSING = object()


def parse(text: str) -> list[IoRecord]:
    """Read `text` line by line; a result runs from its header (or first line) to the next result's start.

    One function with the state of the result being read in local variables: a method call and an attribute read per
    line cost as much as the reading itself on a 30-line file. Each line kind is told by its first character, in the
    order that decides between look-alikes (headers, then look-alike tools' headers, then the rest)."""
    records: list[IoRecord] = []
    # The result being read: `have` says there is one (`foreign`: a look-alike tool's block, read and dropped).
    have = foreign = footer = False
    tool: str | None = None
    version: str | None = None
    section: str | None = None  # "read" | "write" | "mixed"
    mix: float | None = None  # read % of the [Mix] section
    metadata: dict[str, str] = {}
    rows: list[_Row] = []
    keys: set[str] = set()  # the result's test lines (_new_label's keys): a repeated one starts the next result
    # Of `section`'s test lines, set with it.
    direction = "read"
    read_pct = 0.0
    read_pct_inferred = False
    # For the error when nothing is found.
    header_line: int | None = None
    orphan_line: int | None = None  # a 7.x+ test line with no section: direction unknown
    zero_rows = 0
    labels = _LABELS
    shapes = _FIGURE_SHAPES
    digits = _DIGITS
    number = 0
    for raw in text.split("\n"):
        number += 1
        if not raw or len(raw) > 2000:
            continue
        line = raw.strip()
        if not line:
            continue
        first = line[0]
        if first == ">":  # Markdown quoting
            line = _QUOTE.sub("", line).strip()
            if not line:
                continue
            first = line[0]

        if first == "S" or first == "R":  # a test line, a look-alike tool's header, or junk
            colon = line.find(":")  # every test line has one before its figures
            if colon > 0:
                label = labels.get(line[:colon], _MISSING)
                if label is _MISSING:
                    label = _new_label(line[:colon])
            else:
                label = None
            if label is None or label is False:
                # No 7.x+ test line: a look-alike tool's header, a 3.x-6.x test line or junk. (A 7.x+ label is
                # neither: it has a space after its first word and no DiskMark before its colon.)
                if "DiskMark" in line and _FOREIGN_HEADER.match(line):
                    if rows and not foreign:
                        records += _records(tool, version, metadata, rows, len(records))
                    have, tool, version, foreign, footer, section, mix = True, None, None, True, False, None, None
                    metadata, rows, keys = {}, [], set()
                    continue
                if label is False or foreign or colon < 0:  # (False: a 7.x+ label of size 0)
                    continue
                m = _ROW_OLD.match(line)  # no 7.x+ label can be a 3.x-6.x one
                if m is None:
                    continue
                pattern = "sequential" if m["kind"] == "Sequential" else "random"
                operation = m["op"].lower()
                layout = _old_layout(pattern, m["size"], m["size_unit"], m["params"])
                if layout is None:
                    continue
                size, q, t, inferred, shape = layout
                key = f"{operation}|{pattern}|{size}|{q}|{t}"  # as _new_label's keys
                if not have or footer or key in keys:  # a repeated line or one after the footer starts the next
                    if not have or footer:
                        section = mix = None
                    if rows:
                        records += _records(tool, version, metadata, rows, len(records))
                    have, tool, version, footer = True, None, None, False
                    metadata, rows, keys = {}, [], set()
                keys.add(key)
                label = (pattern, size, q, t, shape, " ".join(m[0].partition(":")[0].split()), None)
                row = _old_row(m, number, label, operation, inferred)
                if row is None:
                    zero_rows += 1  # a slot CDM prints for a test that was not run
                else:
                    rows.append(row)
                continue
            if foreign:
                continue
            # The figures, read where _FIGURES matched the last line of their shape (digits as 0): a file's figures
            # come in a few shapes (fixed-width fields), and one lookup costs a third of a match.
            figures = line[colon:]
            shape_key = figures.encode("utf-8", "surrogatepass").translate(digits)
            spans = shapes.get(shape_key, _MISSING)
            if spans is _MISSING:
                spans = _figure_spans(figures, shape_key)
            if spans is None:
                continue
            if footer or section is None:  # (no result yet: no section either)
                if orphan_line is None:
                    orphan_line = number
                continue
            key = label[6][section]  # type: ignore[index]
            if key in keys:  # a repeated test line starts the next result, in the same section
                if rows:
                    records += _records(tool, version, metadata, rows, len(records))
                tool = version = None
                metadata, rows, keys = {}, [], set()
            keys.add(key)
            v0, v1, i0, i1, l0, l1, unit, latency_unit = spans
            value = float(figures[v0:v1])
            iops = float(figures[i0:i1]) if i0 is not None else None
            if value == 0 and not iops:
                zero_rows += 1  # a slot CDM prints for a test that was not run
                continue
            rows.append(
                (label, value, unit, iops, number, section, direction, read_pct,
                 float(figures[l0:l1]) if l0 is not None else None, latency_unit,
                 ["read_pct"] if read_pct_inferred else [])
            )  # fmt: skip

        elif first in _FOOTER_ONLY_FIRST:
            if "DiskMark" in line and _FOREIGN_HEADER.match(line):
                if rows and not foreign:
                    records += _records(tool, version, metadata, rows, len(records))
                have, tool, version, foreign, footer, section, mix = True, None, None, True, False, None, None
                metadata, rows, keys = {}, [], set()
            elif have and not foreign:
                key_text, colon_text, value_text = line.partition(":")
                if colon_text and len(value_text) <= _FOOTER_VALUE_MAX:
                    key_text = key_text.rstrip()
                    if key_text in _FOOTER_KEYS:
                        metadata.setdefault("Test" if key_text == "Test Size" else key_text, value_text.strip())
                        footer = True

        elif first == "-":  # a rule under or over the header
            continue

        elif first == "[":
            if foreign:
                continue
            name_rest = _SECTION_LINES.get(line)
            if name_rest is None:
                m = _SECTION.match(line)
                if m is None:
                    continue
                name_rest = m.group("section", "rest")
            name, rest = name_rest
            if not have or footer or (name == "Read" and rows):
                if rows:
                    records += _records(tool, version, metadata, rows, len(records))
                have, tool, version, footer, mix = True, None, None, False, None
                metadata, rows, keys = {}, [], set()
            if name == "Mix":
                section, direction = "mixed", "total"  # a [Mix] line is one combined figure
                ratio = _MIX_RATIO.search(rest)
                mix = min(100.0, float(ratio["read"])) if ratio else None
                # Without a ratio in the title: the default, listed in `inferred`.
                read_pct_inferred = mix is None
                read_pct = DEFAULT_MIX_READ_PCT if mix is None else mix
            else:
                section = direction = name.lower()
                read_pct = _SECTION_READ_PCT[section]
                read_pct_inferred = False

        elif first == "*":
            if foreign or "1,000,000" not in line or not _UNITS_LINE.match(line):
                continue
            if not have or rows or footer:
                if rows:
                    records += _records(tool, version, metadata, rows, len(records))
                have, tool, version, footer, section, mix = True, None, None, False, None, None
                metadata, rows, keys = {}, [], set()
            metadata["Units"] = line.lstrip("* ").strip()

        elif first == "C" and (m := _CDM_HEADER.match(line)) or first == "K" and (m := _KDM_HEADER.match(line)):
            if rows and not foreign:
                records += _records(tool, version, metadata, rows, len(records))
            have, foreign, footer, section, mix = True, False, False, None, None
            metadata, rows, keys = {}, [], set()
            if first == "C":
                tool, version = "crystaldiskmark", m["version"].strip()
            else:
                tool, version = "kdiskmark", m["version"]
            if header_line is None:
                header_line = number

        elif first == "F" and (m := _FIO_LINE.match(line)):
            if have:
                metadata["fio"] = m["fio"].strip()

        elif ("DiskMark" in line or first == "F") and _FOREIGN_HEADER.match(line):
            if rows and not foreign:
                records += _records(tool, version, metadata, rows, len(records))
            have, tool, version, foreign, footer, section, mix = True, None, None, True, False, None, None
            metadata, rows, keys = {}, [], set()

        elif first == "C" and have and not foreign and line.startswith("Comment"):  # the footer key starting with C
            key_text, colon_text, value_text = line.partition(":")
            if colon_text and len(value_text) <= _FOOTER_VALUE_MAX and key_text.rstrip() == "Comment":
                metadata.setdefault("Comment", value_text.strip())
                footer = True

    if rows and not foreign:
        records += _records(tool, version, metadata, rows, len(records))
    if records:
        return records
    if orphan_line is not None:
        raise ParseError(
            "test result line outside a [Read]/[Write]/[Mix] section: its direction is unknown", orphan_line
        )
    if zero_rows:
        raise ParseError("every test line reads 0 MB/s: no test was run", header_line or 1)
    if header_line is not None:
        raise ParseError("CrystalDiskMark/KDiskMark header without any test result line", header_line)
    raise ParseError("no CrystalDiskMark or KDiskMark test result line found", 1)


def _old_row(m: re.Match[str], number: int, label: _Label, operation: str, inferred: list[str]) -> _Row | None:
    """A 3.x-6.x test line's row, or None for a test that was not run (all zero)."""
    value_text, unit, iops_text, latency_text, latency_unit = m.groups()[-5:]  # the _FIGURES groups
    value = float(value_text)
    iops = float(iops_text) if iops_text is not None else None
    if value == 0 and not iops:
        return None
    latency = float(latency_text) if latency_text is not None else None
    read_pct = 100.0 if operation == "read" else 0.0
    return (label, value, _UNIT[unit], iops, number, operation, operation, read_pct, latency,
            "ms" if latency_unit == "ms" else "us", inferred)  # fmt: skip


# Every ASCII digit as 0: a text's shape, to which _FIGURES answers as to the text (it has no digit literal).
_DIGITS = bytes.maketrans(b"123456789", b"000000000")
# _figure_spans's results by the shape (UTF-8) of a test line's text from its colon on.
_FIGURE_SHAPES: dict[bytes, _Figures | None] = {}
_SHAPES_MAX = 4096


def _figure_spans(figures: str, shape: bytes) -> _Figures | None:
    if len(_FIGURE_SHAPES) >= _SHAPES_MAX:
        _FIGURE_SHAPES.clear()
    spans: _Figures | None = None
    m = _FIGURES_AT.match(figures)
    if m is not None:
        i0, i1 = m.span("iops") if m["iops"] is not None else (None, None)
        l0, l1 = m.span("latency") if m["latency"] is not None else (None, None)
        latency_unit = "ms" if m["latency_unit"] == "ms" else "us"
        spans = (*m.span("value"), i0, i1, l0, l1, _UNIT[m["unit"]], latency_unit)
    _FIGURE_SHAPES[shape] = spans
    return spans


# _new_label's results by label text: a file holds a few distinct labels, and files of one machine the same ones.
_LABELS: dict[str, _Label | bool | None] = {}
_LABELS_MAX = 4096


def _new_label(text: str) -> _Label | bool | None:
    """(pattern, block size, queue depth, threads, shape, label, {section: key}) of a 7.x-9.x/KDiskMark test label;
    None for other text, False for a label of block size 0 (no test line either, but no 3.x-6.x one to try).

    A key tells the test lines of a result apart: a repeated one starts the next result. It is a string (its hash
    is kept) made once per label and section."""
    if len(_LABELS) >= _LABELS_MAX:
        _LABELS.clear()
    label: _Label | bool | None = None
    m = _LABEL_NEW.fullmatch(text)
    if m is not None:
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
        q_n, t_n = int(q), int(t)
        keys = {section: f"{section}|{pattern}|{size}|{q_n}|{t_n}" for section in ("read", "write", "mixed")}
        label = (pattern, size, q_n, t_n, shape, " ".join(text.split()), keys) if size else False
    _LABELS[text] = label
    return label


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
        row[1] * 1e6 / (row[3] * row[0][1])  # value / (iops x block size)
        for row in rows
        if row[3] and row[3] >= 50 and row[1] >= 0.5 and row[2] == "MB/s"
    ]
    if not ratios:
        return True
    # statistics.median's arithmetic, without its type dispatch (a tenth of a KDiskMark file's parse)
    ratios.sort()
    half = len(ratios) // 2
    median = ratios[half] if len(ratios) % 2 else (ratios[half - 1] + ratios[half]) / 2
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


_IOPS = itemgetter(3)  # of a _Row
_KIB_FACTOR = {"kB/s": 1e-3, "MB/s": 1.0, "GB/s": 1e3}  # printed unit -> MB
_BYTES_PER_S = {"KiB/s": KIB, "kB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9}


def _records(
    tool: str | None, version: str | None, metadata: dict[str, str], rows: list[_Row], first_run: int
) -> list[IoRecord]:
    """The records of one result's rows: `metadata` (the result's own, read by nothing else once its result is
    complete) is every record's, with the record's label."""
    if tool is None:
        tool = "kdiskmark" if all(row[0][4].startswith("kdiskmark") for row in rows) else "crystaldiskmark"
    version_inferred = version is None
    if version_inferred:
        version = _version_from_shapes([row[0][4] for row in rows])
    kdiskmark = tool == "kdiskmark"
    kib_basis = kdiskmark and _kdiskmark_kib_basis(rows)
    if kib_basis:
        metadata = dict(metadata, throughput_basis="KDiskMark MB/s = fio KiB/s / 1000; stored as KiB/s")
    drive = _DRIVE.search(metadata.get("Test", ""))
    target = f"{drive['drive']}:" if drive else None
    started_at = _started_at(metadata.get("Date"))
    duration_s = _duration_s(metadata)

    if not (version_inferred or kdiskmark) and None not in map(_IOPS, rows):
        # CrystalDiskMark 7.x+ with its header: every figure as printed.
        return [
            IoRecord(  # positional, in records.IO_FIELD_ORDER; latency_min .. latency_p999 are not printed
                tool, run_index, line, pattern, operation, read_pct, direction, size, t, q, iops, value, unit,  # type: ignore[arg-type]
                latency_unit, latency, None, None, None, None, None, None, duration_s, version, target, started_at,
                inferred, dict(metadata, Label=label), [], "count", "io",
            )
            for run_index, ((pattern, size, q, t, _, label, _), value, unit, iops, line, operation, direction,
                            read_pct, latency, latency_unit, inferred) in enumerate(rows, first_run)
        ]  # fmt: skip

    records = []
    run_index = first_run
    for (pattern, size, q, t, _, label, _), value, unit, iops, line, operation, direction, read_pct, latency, \
            latency_unit, inferred in rows:  # fmt: skip
        # `inferred` is this line's own list (made per line, read once): the record takes it over.
        if version_inferred:
            inferred.append("tool_version")
        row_metadata = dict(metadata, Label=label)
        throughput = value
        if kib_basis:
            throughput = value * KDISKMARK_MB_IN_KIB * _KIB_FACTOR[unit]
            row_metadata["printed_throughput"] = f"{value:.3f} {unit}"
            unit = "KiB/s"
        if iops is None:
            iops = throughput * _BYTES_PER_S[unit] / size
            inferred.append("iops")
        if kdiskmark and direction == "total":
            row_metadata["mix_basis"] = "KDiskMark prints read% x read + write% x write (a weighted mean)"
        records.append(
            IoRecord(  # positional, in records.IO_FIELD_ORDER; latency_min .. latency_p999 are not printed
                tool, run_index, line, pattern, operation, read_pct, direction, size, t, q, iops, throughput,  # type: ignore[arg-type]
                unit, latency_unit, latency, None, None, None, None, None, None, duration_s, version, target,
                started_at, inferred, row_metadata, [], "count", "io",
            )
        )  # fmt: skip
        run_index += 1
    return records
