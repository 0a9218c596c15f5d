r"""SQLIO v1.5.SG text output (Microsoft's retired `sqlio.exe`), one or many runs per file.

Input (corpus `dataelisabeth-random-read-64k-8outstanding.txt`, as printed)::

    sqlio v1.5.SG
    using system counter for latency timings, 2539060 counts per second
    parameter file used: G:\param.txt
            file G:\testfile.dat with 64 threads (0-63) using mask 0x0 (0)
    64 threads reading for 15 secs from file G:\testfile.dat
            using 64KB random IOs
            enabling multiple I/Os per thread with 8 outstanding
    using specified size: 50000 MB for file: G:\testfile.dat
    initialization done
    CUMULATIVE DATA:
    throughput metrics:
    IOs/sec: 14122.49
    MBs/sec:   882.65
    latency metrics:
    Min_Latency(ms): 0
    Avg_Latency(ms): 35
    Max_Latency(ms): 749
    histogram:
    ms: 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24+
    %:  4 11 10  6  4  2  2  1  1  1  1  1  1  1  1  1  1  1  1  0  0  0  0  0 49

Record (normalized)::

    {"record": "io", "tool": "sqlio", "tool_version": "1.5.SG", "run_index": 0, "source_line": 1,
     "target": "G:\\testfile.dat", "pattern": "random", "operation": "read", "read_pct": 100.0,
     "direction": "read", "block_size_bytes": 65536, "threads": 64, "queue_depth": 8, "duration_s": 15.0,
     "iops": 14122.49, "throughput_bytes_per_s": 925525606.4, "latency_avg_ms": 35.0,
     "latency_min_ms": 0.0, "latency_max_ms": 749.0, "latency_p50_ms": 18.0, "latency_p95_ms": 750.0,
     "latency_p99_ms": 750.0, "latency_p999_ms": 750.0,
     "inferred": ["latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "latency_p999_ms"]}

Rules:
- One record per run. A run is the block from `sqlio v1.5.SG` (or, when pasted without it, from its first
  description or result line) to its histogram; a description line after a run's results, a repeated result
  line, or a new `sqlio v...` line starts the next run. Shell prompts, notes, `REM` lines and blank lines
  between runs are skipped.
- Queue depth is the per-thread `enabling multiple I/Os per thread with N outstanding`; SQLIO prints no such
  line for synchronous I/O (`-o0` or no `-o`), which is one I/O in flight per thread: 1, listed in `inferred`.
- `MBs/sec` is MiB/s (2^20 bytes): 26263.98 IOs/sec x 4 KiB = 102.59 MBs/sec in the corpus.
- Latencies are whole milliseconds as printed (SQLIO truncates them).
- Histogram (`histogram_kind` "share", the printed integer percentages): bucket `k` holds latencies of k whole
  ms, i.e. [k, k+1) ms, stored with upper bound k+1. The open bucket `24+` is stored with upper bound
  Max_Latency + 1 ms (no latency of the run lies above it; at least 25 ms). Percentiles p50/p95/p99/p99.9 are
  the upper bound of the first bucket whose cumulative share reaches p% of the printed shares' sum (SQLIO's
  truncated percentages rarely add up to 100), so each is an upper bound on the true percentile; they are
  listed in `inferred`.
- An echoed command line (`C:\SQLIO>sqlio -kR -t8 ... -Fparam.txt`) before a run is kept as
  `metadata["command_line"]`. The run's own lines win over it (a `-F` parameter file overrides `-t`); a
  disagreement is noted in `metadata["command_line_conflicts"]`. Only what the run does not print is taken
  from the command line, and listed in `inferred`.
- Numbers are read as people paste them (`_common.read_number`): `IOs/sec: 1,026,872.50`, `1.026.872,5`,
  `1 026 872` (space, U+00A0, U+202F).
- A histogram row wrapped over two lines (a line of bare numbers, or `24+`, right after a short `ms:` or `%:` row)
  is joined to it.
- One damaged line costs only what it says, never the file's other runs: a result line whose value is no number
  (`IOs/sec: 14122.…`, cut short) leaves that value empty, a histogram row of the wrong length or with a share that
  is no number leaves the run without a histogram, results with neither a description nor a command line to say
  read/write and random/sequential leave that run out; each is a warning `line N: ...` (ParsedFile.warnings). A
  run cut off before its results is skipped. A file where no run can be read raises ParseError at its first
  damaged line (or at the cut-off run, or the first line).
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_left
from dataclasses import dataclass, field
from itertools import accumulate
from typing import TypeVar

from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats._common import first_content_line, read_number
from kneepoint.ingest.records import IoRecord, ParsedRecords, line_warning
from kneepoint.ingest.textio import find_rare, iter_lines, lines_holding

T = TypeVar("T")

NAME = "sqlio"
TITLE = "SQLIO"
TOOLS = ("sqlio",)
HOST_KEYS: frozenset[str] = frozenset()
USER_KEYS: frozenset[str] = frozenset()
RESULT_KEY_PREFIXES: tuple[str, ...] = ()
RESULT_KEYS: tuple[str, ...] = ()
TOOL = "sqlio"

# The histogram SQLIO prints when a pasted run lost its `ms:` row.
_STANDARD_LABELS = [str(k) for k in range(24)] + ["24+"]
_CLOSED_BOUNDS = [float(k) + 1 for k in range(24)]  # bucket k holds [k, k+1) ms
_OPEN_BUCKET_MIN_MS = 25.0
_PERCENTILES = (50.0, 95.0, 99.0, 99.9)
_PERCENTILE_KEYS = ["latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "latency_p999_ms"]
_NO_PERCENTILES = (None, None, None, None)
_PERCENTILE_BASIS = "upper bounds of the 1-ms histogram buckets; the 24+ bucket ends at Max_Latency + 1 ms"

_NUMBER = re.compile(r"^\d{1,15}(?:\.\d{1,15})?$")
_CONTINUATION = re.compile(r"[0-9]{1,15}\+?(?:\s+[0-9]{1,15}\+?)*")  # the rest of a wrapped histogram row
_WHOLE = re.compile(r"[0-9]{1,9}")
# An echoed command: `C:\SQLIO>sqlio -kR ...`, `D:\sqlIO -kW ...`, `& "C:\...\sqlio.exe" -kR ...`.
_COMMAND = re.compile(r"""(?:^|[\s>\\/"'&])(sqlio(?:\.exe)?["']?\s+-.*)$""", re.IGNORECASE)
_TOKEN = re.compile(r'"[^"]*"|\S+')  # a command's words, a quoted one whole

# Every line SQLIO prints that the parser reads: the ASCII characters it can start with, and its pattern, matched at
# the start of a stripped line. A line is tried against the patterns that can start with its first character (a
# line starting with any other character against all: case-insensitive matching lets some letters outside ASCII
# match), in this order, which decides between patterns that fit the same line; the outer group's name
# (`lastgroup`) says which one matched. A line matching none is junk (or an echoed command).
_LINE_PATTERNS = (
    ("sS", r"(?P<version>(?i:sqlio v)(?P<version_id>\d\S*))"),
    (
        "0123456789",
        r"(?P<threads>(?i:(?P<threads_n>\d{1,9}) threads? (?P<threads_op>reading|writing)"
        r" for (?P<threads_secs>\d{1,9}) secs? (?:from|to) file (?P<threads_target>.+)$))",
    ),
    ("uU", r"(?P<io_size>(?i:using (?P<io_kb>\d{1,9})\s*KB (?P<io_pattern>random|sequential) IOs?\b))"),
    ("eE", r"(?P<outstanding>(?i:enabling multiple I/Os per thread with (?P<outstanding_n>\d{1,9}) outstanding))"),
    (
        "fF",
        r"(?P<file_mask>(?i:file (?P<mask_target>.+?) with (?P<mask_threads>\d{1,9}) threads? \([^)]{0,40}\)"
        r" using mask (?P<mask>.+)$))",
    ),
    ("pP", r"(?P<parameter_file>(?i:parameter file used:\s*(?P<parameter_file_v>.+)$))"),
    ("bB", r"(?P<buffering>(?i:buffering set to (?P<buffering_v>.+)$))"),
    (
        "cC",
        r"(?P<file_bytes_before_expanding>(?i:current file size:\s*(?P<file_bytes_before_expanding_v>\d{1,20}) bytes))",
    ),
    ("nN", r"(?P<file_bytes_expanded_by>(?i:need to expand by:\s*(?P<file_bytes_expanded_by_v>\d{1,20}) bytes))"),
    (
        "uU",
        r"(?P<counter>(?i:using (?P<counter_v>.+?) for latency timings"
        r"(?:,\s*(?P<counter_cps>\d+) counts per second)?))",
    ),
    (
        "uU",
        r"(?P<size>(?i:using (?P<size_source>specified|current) size:"
        r"\s*(?P<size_v>\d{1,15}\s*[A-Za-z]{1,4}) for file:))",
    ),
    ("iIsSeE", r"(?P<other>(?i:initialization done|size of file .+ needs to be:|expanding .+ done))"),
    ("cC", r"(?P<cumulative>(?i:CUMULATIVE DATA:))"),
    ("iI", r"(?P<iops>(?i:IOs/sec:))"),
    ("mM", r"(?P<mbs>(?i:MBs/sec:))"),
    ("mMaA", r"(?P<latency>(?i:(?P<latency_kind>Min|Avg|Max)_Latency\(ms\):))"),
    ("m", r"(?P<labels>ms:\s*0\s)"),
    ("%", r"(?P<shares>%:\s*\d)"),
)
_LINE = re.compile("|".join(pattern for _, pattern in _LINE_PATTERNS))
_LINE_BY_FIRST = {
    first: re.compile("|".join(pattern for starts, pattern in _LINE_PATTERNS if first in starts))
    for first in {c for starts, _ in _LINE_PATTERNS for c in starts}
}
_METADATA_LINES = ("parameter_file", "buffering", "file_bytes_before_expanding", "file_bytes_expanded_by")

# Detection matches these at the start of the lines that hold their literal (textio.lines_holding).
_DETECT_VERSION = re.compile(r"[ \t]*sqlio v\d", re.IGNORECASE)
_DETECT_THREADS = re.compile(r"[ \t]*\d+ threads? (?:reading|writing) for \d+ secs?")
_DETECT_USING = re.compile(r"[ \t]*using \d+KB (?:random|sequential) IOs")


def detect(text: str) -> float:
    head = text[:65536]
    # Every file of unknown format passes through here: the version and latency labels are found by their letters
    # rare in other tools' outputs (textio.find_rare), the rates by their common tail. Without any of them the score
    # could not reach the registry's threshold (the run lines give 0.25).
    version = (find_rare(head, "sqlio v", 1) >= 0 and _starts(_DETECT_VERSION, head, "sqlio v")) or (
        find_rare(head, "SQLIO v", 1) >= 0 and _starts(_DETECT_VERSION, head, "SQLIO v")
    )
    latency = find_rare(head, "_Latency(ms):", 0) >= 0
    rates = head.rfind("s/sec:") >= 0
    ios, mbs = rates and "IOs/sec:" in head, rates and "MBs/sec:" in head
    if not (version or ios or mbs or latency):
        return 0.0
    score = 0.0
    if version:
        score += 0.45
    if ios:
        score += 0.2
    if mbs:
        score += 0.15
    if latency:
        score += 0.1
    if _starts(_DETECT_THREADS, head, " for ") or _starts(_DETECT_USING, head, "using "):
        score += 0.25
    return min(score, 0.99)


def _starts(pattern: re.Pattern[str], head: str, literal: str) -> bool:
    return any(pattern.match(head, start) for start in lines_holding(head, literal))


@dataclass(slots=True)
class _Command:
    """An echoed command line, read once per distinct text (a batch log repeats its commands): never changed."""

    text: str
    options: dict[str, str] = field(default_factory=dict)
    target: str | None = None
    integers: dict[str, int] = field(default_factory=dict)  # options whose value is a whole number
    operation: str | None = None
    pattern: str | None = None
    # What the command says of what _conflicts compares, in its order (-o at least 1); None where it says nothing.
    says: tuple[int | str | None, ...] = ()

    @classmethod
    def parse(cls, text: str) -> _Command:
        cmd = cls(text=text)
        # Without quotes, _TOKEN's tokens are split()'s (re's \s is str.isspace()).
        for token in (_TOKEN.findall(text) if '"' in text else text.split())[1:]:
            if token.startswith("-") and len(token) > 1:
                cmd.options.setdefault(token[1], token[2:].strip('"'))
            elif not token.startswith(("<", ">", "|")):
                cmd.target = token.strip('"')
        # As _WHOLE.fullmatch: 1 to 9 ASCII digits.
        cmd.integers = {k: int(v) for k, v in cmd.options.items() if v.isascii() and v.isdigit() and len(v) <= 9}
        cmd.operation = {"R": "read", "W": "write"}.get(cmd.options.get("k", "")[:1].upper())
        pattern = cmd.options.get("f", "").lower()
        cmd.pattern = pattern if pattern in ("random", "sequential") else None
        number = cmd.integers.get
        o = number("o")
        cmd.says = (number("t"), number("s"), number("b"), cmd.operation, cmd.pattern, None if o is None else max(1, o))
        return cmd

    def integer(self, flag: str) -> int | None:
        return self.integers.get(flag)


@dataclass(slots=True)
class _Run:
    """One run as read so far: its description, its results and where they are."""

    start_line: int
    command: _Command | None
    version: str | None = None
    operation: str | None = None
    pattern: str | None = None
    threads: int | None = None
    file_threads: list[int] = field(default_factory=list)
    duration_s: float | None = None
    block_size_bytes: int | None = None
    queue_depth: int | None = None
    targets: list[str] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)
    described: bool = False
    result_line: int | None = None
    iops: float | None = None
    mbs: float | None = None
    latency: dict[str, float] = field(default_factory=dict)
    labels: list[str] | None = None
    shares: tuple[float, ...] | None = None  # () once the `%:` row is seen: its values are read at the run's end
    shares_row: list[str] | None = None
    shares_line: int = 0

    @property
    def has_results(self) -> bool:
        return self.result_line is not None

    @property
    def has_values(self) -> bool:
        """Whether any result was read (a `CUMULATIVE DATA:` line alone, or damaged values, make no record)."""
        return self.iops is not None or self.mbs is not None or bool(self.latency) or self.shares_row is not None


def parse(text: str) -> ParsedRecords:
    reader = _Reader()
    reader.read(text)
    if not reader.records:
        if reader.damage:
            raise reader.damage[0]
        if reader.first_unfinished is not None:
            raise ParseError(
                "SQLIO run has no results: the output ends before 'CUMULATIVE DATA' (cut short or aborted)",
                reader.first_unfinished.start_line,
            )
        raise ParseError(
            "no SQLIO result found (no 'IOs/sec:' or 'MBs/sec:' line of a sqlio run)", first_content_line(text)
        )
    return ParsedRecords(reader.records, [line_warning(e.line, e.reason) for e in reader.damage])


class _Reader:
    """The line dispatcher: the records so far, the current run, the echoed command waiting for the next run."""

    def __init__(self) -> None:
        self.records: list[IoRecord] = []
        self.run: _Run | None = None
        self.pending: _Command | None = None
        self.first_unfinished: _Run | None = None
        self.damage: list[ParseError] = []  # what could not be read, in file order: the file's warnings
        self.wrapped: list[str] | None = None  # a short histogram row a wrapped line may continue
        self.commands: dict[str, _Command] = {}  # a batch log echoes the same few commands run after run
        # ... and its histograms hold the same few (bound, share) pairs: its records share them (a pair of floats
        # is ~100 bytes; a log of 100,000 runs held 250 MB of equal ones).
        self.pairs: dict[tuple[float, float], tuple[float, float]] = {}

    def read(self, text: str) -> None:
        for lineno, raw in enumerate(iter_lines(text), 1):
            line = raw.strip()
            if line:
                self.line(line, lineno)
        self.close()

    def line(self, line: str, lineno: int) -> None:
        first = line[0]
        pattern = _LINE_BY_FIRST.get(first) if first.isascii() else _LINE
        m = pattern.match(line) if pattern is not None else None
        if m is None:
            if self.wrapped is not None and _CONTINUATION.fullmatch(line):
                self.wrapped.extend(line.split())  # the rest of a histogram row wrapped over two lines
                return
            # Each spelling _COMMAND accepts holds "ql" once lower-cased (only q/Q and l/L match there).
            if "ql" in line.lower() and (command := _COMMAND.search(line)):
                self.pending = self.command(command.group(1).rstrip())
            return
        kind = m.lastgroup
        run = self.run
        self.wrapped = None
        if kind == "version":
            self.start(lineno).version = m.group("version_id")
        elif kind in _DESCRIPTIONS:
            # A description after the results belongs to the next run.
            if run is None or run.has_results:
                run = self.start(lineno)
            _describe(m, kind, run)
        else:
            if kind == "latency":
                kind = m.group("latency_kind").lower()
            # A result the run already has is the next run's, pasted without its description.
            if run is None or _repeats(run, kind):
                run = self.start(lineno)
            try:
                _result(line, kind, lineno, run)
            except ParseError as exc:
                self.damage.append(exc)
            if kind in ("labels", "shares") and len(row := _row(run, kind)) < len(_STANDARD_LABELS):
                self.wrapped = row

    def command(self, text: str) -> _Command:
        if text not in self.commands:
            self.commands[text] = _Command.parse(text)
        return self.commands[text]

    def start(self, line: int) -> _Run:
        self.close()
        run = self.run = _Run(line, self.pending)
        self.pending = None
        return run

    def close(self) -> None:
        run = self.run
        if run is None:
            return
        if run.has_values:
            try:
                self.records.append(_record(run, len(self.records), self.damage, self.pairs))
            except ParseError as exc:
                self.damage.append(exc)
        elif self.first_unfinished is None and (run.described or run.version) and not run.has_results:
            self.first_unfinished = run
        self.run = None


_DESCRIPTIONS = frozenset(
    ("threads", "io_size", "outstanding", "file_mask", "counter", "size", "other", *_METADATA_LINES)
)


def _describe(m: re.Match[str], kind: str, run: _Run) -> None:
    """Record what a description line (matched by _LINE as `kind`) says; the run's first such line wins."""
    if kind == "threads":
        run.described = True
        if run.threads is None:
            run.threads = int(m.group("threads_n"))
            run.operation = "read" if m.group("threads_op").lower() == "reading" else "write"
            run.duration_s = float(m.group("threads_secs"))
        _add_target(run, m.group("threads_target"))
    elif kind == "io_size":
        run.described = True
        if run.block_size_bytes is None:
            run.block_size_bytes = int(m.group("io_kb")) * 1024
            run.pattern = sys.intern(m.group("io_pattern").lower())
    elif kind == "outstanding":
        run.described = True
        run.queue_depth = int(m.group("outstanding_n"))
    elif kind == "file_mask":
        run.file_threads.append(int(m.group("mask_threads")))
        _add_target(run, m.group("mask_target"))
        run.metadata.setdefault("affinity_mask", m.group("mask").strip())
    elif kind in _METADATA_LINES:
        run.metadata.setdefault(kind, m.group(kind + "_v").strip())
    elif kind == "counter":
        run.metadata.setdefault("latency_timer", m.group("counter_v"))
        if m.group("counter_cps"):
            run.metadata.setdefault("latency_timer_counts_per_second", m.group("counter_cps"))
    elif kind == "size":
        run.metadata.setdefault("file_size", m.group("size_v"))
        run.metadata.setdefault("file_size_source", m.group("size_source").lower())


def _add_target(run: _Run, target: str) -> None:
    target = target.strip()
    if target and target not in run.targets:
        run.targets.append(target)


def _repeats(run: _Run, kind: str) -> bool:
    """Whether the run already has this result (kind: cumulative, iops, mbs, min/avg/max, labels, shares)."""
    if kind == "cumulative":
        return run.has_results
    if kind == "iops":
        return run.iops is not None
    if kind == "mbs":
        return run.mbs is not None
    if kind == "labels":
        return run.labels is not None
    if kind == "shares":
        return run.shares is not None
    return kind in run.latency


def _row(run: _Run, kind: str) -> list[str]:
    """The run's labels row, or its shares row as a list that a wrapped line extends."""
    if kind == "labels":
        return run.labels or []
    if run.shares_row is None:
        run.shares_row = []
    return run.shares_row


def _result(line: str, kind: str, lineno: int, run: _Run) -> None:
    """Record a result line; ParseError (the run's other results kept) when its value is no number."""
    if kind == "cumulative":
        run.result_line = run.result_line or lineno
        return
    if kind == "labels":
        run.labels = line.split(":", 1)[1].split()
        return
    if kind == "shares":
        # Read at the run's end (a wrapped row is joined first): the shares row makes the run a result.
        run.shares_row = line.split(":", 1)[1].split()
        run.shares = ()
        run.shares_line = lineno
        run.result_line = run.result_line or lineno
        return
    label = {"iops": "IOs/sec", "mbs": "MBs/sec"}.get(kind, f"{kind.capitalize()}_Latency(ms)")
    number = _number(line.split(":", 1)[1].strip(), label, lineno)
    if kind == "iops":
        run.iops = number
    elif kind == "mbs":
        run.mbs = number
    else:
        run.latency[kind] = number
    run.result_line = run.result_line or lineno


def _number(value: str, label: str, lineno: int) -> float:
    # SQLIO prints no sign: a signed value is as damaged as any other text.
    number = float(value) if _NUMBER.match(value) else read_number(value) if value[:1].isdigit() else None
    if number is None:
        raise ParseError(f"SQLIO {label} value {value[:40]!r} is not a number", lineno)
    return number


def _record(
    run: _Run, run_index: int, damage: list[ParseError], pairs: dict[tuple[float, float], tuple[float, float]]
) -> IoRecord:
    """The run's record; ParseError when it cannot say what the run did. A histogram that cannot be read is left out
    (noted in `damage`). `pairs`: the histogram pairs of the runs before, shared by this one where equal."""
    cmd = run.command
    inferred: list[str] = []
    metadata = run.metadata  # the run is done with: its dict becomes the record's
    fallback = _Fallback(inferred)

    operation = run.operation or fallback.take("operation", cmd.operation if cmd else None)
    pattern = run.pattern or fallback.take("pattern", cmd.pattern if cmd else None)
    if operation is None or pattern is None:
        raise ParseError(
            "SQLIO result without its run description ('N threads reading/writing ...', 'using NKB random IOs')"
            " and no echoed command line to take it from",
            run.result_line or run.start_line,
        )

    threads = _run_threads(run)
    # A -F parameter file sets the thread count, so -t says nothing then.
    if threads is None and cmd and "F" not in cmd.options:
        threads = fallback.take("threads", cmd.integer("t"))

    queue_depth = run.queue_depth
    if queue_depth is None and not run.described and cmd and (o := cmd.integer("o")) is not None:
        queue_depth = fallback.take("queue_depth", max(1, o))
    if queue_depth is None:
        queue_depth = 1  # no "enabling multiple I/Os" line: synchronous I/O, one in flight per thread
        inferred.append("queue_depth")

    block_size = run.block_size_bytes
    if block_size is None and cmd and (kb := cmd.integer("b")) is not None:
        block_size = fallback.take("block_size_bytes", kb * 1024)
    duration = run.duration_s
    if duration is None and cmd and (secs := cmd.integer("s")) is not None:
        duration = fallback.take("duration_s", float(secs))
    target = ", ".join(run.targets) or fallback.take("target", cmd.target if cmd else None)

    if cmd is not None:
        metadata["command_line"] = cmd.text
        conflicts = _conflicts(run, cmd)
        if conflicts:
            metadata["command_line_conflicts"] = "; ".join(conflicts)
    if fallback.used:
        metadata["from_command_line"] = ", ".join(fallback.used)

    try:
        histogram, percentiles = _histogram(run)
    except ParseError as exc:
        damage.append(exc)
        histogram, percentiles = [], None
    # list(tuple): a list of its exact size (a comprehension's has room for a quarter more).
    histogram = list(tuple(pairs.setdefault(pair, pair) for pair in histogram))
    # The texts a batch log repeats run after run (conditions, target, version): one string each for all its runs.
    for key, value in metadata.items():
        metadata[key] = sys.intern(value)
    if histogram:
        if percentiles is not None:
            inferred += _PERCENTILE_KEYS
        metadata["latency_percentiles"] = _PERCENTILE_BASIS
    p50, p95, p99, p999 = percentiles or _NO_PERCENTILES

    return IoRecord(
        tool=TOOL,
        tool_version=sys.intern(run.version) if run.version else None,
        run_index=run_index,
        source_line=run.start_line,
        target=sys.intern(target) if target else None,
        pattern=pattern,  # type: ignore[arg-type]
        operation=operation,  # type: ignore[arg-type]
        read_pct=100.0 if operation == "read" else 0.0,
        direction=operation,  # type: ignore[arg-type]
        block_size_bytes=block_size,
        threads=threads,
        queue_depth=queue_depth,
        duration_s=duration,
        iops=run.iops,
        throughput=run.mbs,
        throughput_unit="MiB/s",
        latency_unit="ms",
        latency_min=run.latency.get("min"),
        latency_avg=run.latency.get("avg"),
        latency_max=run.latency.get("max"),
        latency_p50=p50,
        latency_p95=p95,
        latency_p99=p99,
        latency_p999=p999,
        inferred=inferred,
        metadata=metadata,
        histogram=histogram,
        histogram_kind="share",
    )


class _Fallback:
    """Values the run does not print, taken from its echoed command line: listed in `inferred`."""

    __slots__ = ("inferred", "used")

    def __init__(self, inferred: list[str]) -> None:
        self.inferred = inferred
        self.used: list[str] = []

    def take(self, key: str, value: T | None) -> T | None:
        if value is not None:
            self.inferred.append(key)
            self.used.append(key)
        return value


def _run_threads(run: _Run) -> int | None:
    """The run's `N threads reading` line, else the sum of its parameter-file `file ... with N threads` lines."""
    if run.threads is not None:
        return run.threads
    return sum(run.file_threads) or None


def _conflicts(run: _Run, cmd: _Command) -> list[str]:
    """Where the echoed command line and the run's own lines disagree (the run's lines are kept)."""
    duration, block_size = run.duration_s, run.block_size_bytes
    in_run = (
        _run_threads(run),
        int(duration) if duration is not None else None,
        block_size // 1024 if block_size else None,
        run.operation,
        run.pattern,
        (run.queue_depth or 1) if run.described else None,
    )
    if in_run == cmd.says:  # a batch log's usual case
        return []
    return [
        f"{key}: command line -{flag}{cmd.options.get(flag, '')}, run {run_value}"
        for key, flag, command_value, run_value in zip(_CONFLICT_KEYS, _CONFLICT_FLAGS, cmd.says, in_run, strict=True)
        if command_value is not None and run_value is not None and command_value != run_value
    ]


# What _conflicts compares, in the order of _Command.says.
_CONFLICT_KEYS = ("threads", "duration_s", "block_size_kb", "operation", "pattern", "queue_depth")
_CONFLICT_FLAGS = ("t", "s", "b", "k", "f", "o")


def _histogram(run: _Run) -> tuple[list[tuple[float, float]], tuple[float, ...] | None]:
    """The run's histogram (empty without a `%:` row) and its p50, p95, p99, p99.9 (None: the shares add up to 0)."""
    if run.shares_row is None:
        return [], None
    if all(map(_NUMBER.match, run.shares_row)):
        shares = tuple(map(float, run.shares_row))
    else:  # (raises at the first share that is no number)
        shares = tuple(_number(value, "histogram share", run.shares_line) for value in run.shares_row)
    labels = run.labels if run.labels is not None else _STANDARD_LABELS
    if len(labels) != len(shares):
        raise ParseError(f"SQLIO histogram has {len(shares)} shares for {len(labels)} buckets", run.shares_line)
    max_ms = run.latency.get("max")
    # Open bucket: nothing in the run took longer than Max_Latency (truncated to whole ms).
    open_bound = max(_OPEN_BUCKET_MIN_MS, (max_ms + 1) if max_ms is not None else 0.0)
    if labels == _STANDARD_LABELS:
        out = list(zip(_CLOSED_BOUNDS, shares[:-1], strict=True))
        out.append((open_bound, shares[-1]))
    else:
        out = []
        for label, share in zip(labels, shares, strict=True):
            low = label.rstrip("+")
            if not _WHOLE.fullmatch(low):
                raise ParseError(f"SQLIO histogram bucket {label[:20]!r} is not a whole number of ms", run.shares_line)
            bound = float(low) + 1
            out.append((max(bound, open_bound) if label.endswith("+") else bound, share))
    picks = _percentile_buckets(shares)
    if picks is None:
        return out, None
    p50, p95, p99, p999 = picks
    return out, (out[p50][0], out[p95][0], out[p99][0], out[p999][0])


def _percentile_buckets(shares: tuple[float, ...]) -> tuple[int, ...] | None:
    """For each percentile, the first bucket whose cumulative share reaches p% of the shares' sum (None: sum 0)."""
    total = sum(shares)
    if total <= 0:
        return None
    # Shares are never negative, so the running sums are sorted and bisect finds that first bucket.
    running = list(accumulate(shares))
    last = len(shares) - 1
    return tuple(min(bisect_left(running, total * p / 100.0 - 1e-9), last) for p in _PERCENTILES)
