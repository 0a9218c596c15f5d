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
- A run whose results cannot be read (a result line without a number, a histogram row of the wrong length,
  results with neither a description nor a command line to say read/write and random/sequential) raises
  ParseError at that line; a run cut off before its results is skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TypeVar

from ingest.errors import ParseError
from ingest.records import IoRecord
from ingest.textio import lines_holding

T = TypeVar("T")

NAME = "sqlio"
TOOL = "sqlio"

# The histogram SQLIO prints when a pasted run lost its `ms:` row.
_STANDARD_LABELS = [str(k) for k in range(24)] + ["24+"]
_OPEN_BUCKET_MIN_MS = 25.0
_PERCENTILES = {"p50": 50.0, "p95": 95.0, "p99": 99.0, "p999": 99.9}
_PERCENTILE_BASIS = "upper bounds of the 1-ms histogram buckets; the 24+ bucket ends at Max_Latency + 1 ms"

_NUMBER = re.compile(r"^\d{1,15}(?:\.\d{1,15})?$")
_WHOLE = re.compile(r"[0-9]{1,9}")
_VERSION = re.compile(r"^sqlio v(\d\S*)", re.IGNORECASE)
# An echoed command: `C:\SQLIO>sqlio -kR ...`, `D:\sqlIO -kW ...`, `& "C:\...\sqlio.exe" -kR ...`.
_COMMAND = re.compile(r"""(?:^|[\s>\\/"'&])(sqlio(?:\.exe)?["']?\s+-.*)$""", re.IGNORECASE)

_COUNTER = re.compile(r"^using (.+?) for latency timings(?:,\s*(\d+) counts per second)?", re.IGNORECASE)
_PARAM_FILE = re.compile(r"^parameter file used:\s*(.+)$", re.IGNORECASE)
_FILE_MASK = re.compile(r"^file (.+?) with (\d{1,9}) threads? \([^)]{0,40}\) using mask (.+)$", re.IGNORECASE)
_THREADS = re.compile(
    r"^(\d{1,9}) threads? (reading|writing) for (\d{1,9}) secs? (?:from|to) file (.+)$", re.IGNORECASE
)
_IO_SIZE = re.compile(r"^using (\d{1,9})\s*KB (random|sequential) IOs?\b", re.IGNORECASE)
_OUTSTANDING = re.compile(r"^enabling multiple I/Os per thread with (\d{1,9}) outstanding", re.IGNORECASE)
_BUFFERING = re.compile(r"^buffering set to (.+)$", re.IGNORECASE)
_SIZE = re.compile(r"^using (specified|current) size:\s*(\d{1,15}\s*[A-Za-z]{1,4}) for file:", re.IGNORECASE)
_EXPAND = re.compile(r"^need to expand by:\s*(\d{1,20}) bytes", re.IGNORECASE)
_SIZE_BEFORE = re.compile(r"^current file size:\s*(\d{1,20}) bytes", re.IGNORECASE)
_OTHER_DESCRIPTION = re.compile(
    r"^(?:initialization done|size of file .+ needs to be:|expanding .+ done)", re.IGNORECASE
)

# Detection matches these at the start of the lines that hold their literal (textio.lines_holding).
_DETECT_VERSION = re.compile(r"[ \t]*sqlio v\d", re.IGNORECASE)
_DETECT_THREADS = re.compile(r"[ \t]*\d+ threads? (?:reading|writing) for \d+ secs?")
_DETECT_USING = re.compile(r"[ \t]*using \d+KB (?:random|sequential) IOs")

_CUMULATIVE = re.compile(r"^CUMULATIVE DATA:", re.IGNORECASE)
_IOPS = re.compile(r"^IOs/sec:\s*(.*)$", re.IGNORECASE)
_MBS = re.compile(r"^MBs/sec:\s*(.*)$", re.IGNORECASE)
_LATENCY = re.compile(r"^(Min|Avg|Max)_Latency\(ms\):\s*(.*)$", re.IGNORECASE)
_HIST_LABELS = re.compile(r"^ms:\s*0\s")
_HIST_SHARES = re.compile(r"^%:\s*\d")


def detect(text: str) -> float:
    head = text[:65536]
    score = 0.0
    if _starts(_DETECT_VERSION, head, "sqlio v") or _starts(_DETECT_VERSION, head, "SQLIO v"):
        score += 0.45
    if "IOs/sec:" in head:
        score += 0.2
    if "MBs/sec:" in head:
        score += 0.15
    if "_Latency(ms):" in head:
        score += 0.1
    if _starts(_DETECT_THREADS, head, " for ") or _starts(_DETECT_USING, head, "using "):
        score += 0.25
    return min(score, 0.99)


def _starts(pattern: re.Pattern[str], head: str, literal: str) -> bool:
    return any(pattern.match(head, start) for start in lines_holding(head, literal))


@dataclass(slots=True)
class _Command:
    text: str
    options: dict[str, str] = field(default_factory=dict)
    target: str | None = None

    @classmethod
    def parse(cls, text: str) -> _Command:
        cmd = cls(text=text)
        for token in re.findall(r'"[^"]*"|\S+', text)[1:]:
            if token.startswith("-") and len(token) > 1:
                cmd.options.setdefault(token[1], token[2:].strip('"'))
            elif not token.startswith(("<", ">", "|")):
                cmd.target = token.strip('"')
        return cmd

    def integer(self, flag: str) -> int | None:
        value = self.options.get(flag, "")
        return int(value) if _WHOLE.fullmatch(value) else None

    @property
    def operation(self) -> str | None:
        kind = self.options.get("k", "")[:1].upper()
        return {"R": "read", "W": "write"}.get(kind)

    @property
    def pattern(self) -> str | None:
        value = self.options.get("f", "").lower()
        return value if value in ("random", "sequential") else None


@dataclass(slots=True)
class _Run:
    start_line: int
    version: str | None = None
    command: _Command | None = None
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
    shares: list[float] | None = None
    shares_line: int = 0

    @property
    def has_results(self) -> bool:
        return self.result_line is not None


def parse(text: str) -> list[IoRecord]:
    records: list[IoRecord] = []
    run: _Run | None = None
    pending: _Command | None = None
    first_unfinished: _Run | None = None

    def close() -> None:
        nonlocal first_unfinished
        if run is None:
            return
        if run.has_results:
            records.append(_record(run, len(records)))
        elif first_unfinished is None and (run.described or run.version):
            first_unfinished = run

    def start(line: int) -> _Run:
        nonlocal pending
        close()
        new = _Run(start_line=line, command=pending)
        pending = None
        return new

    for lineno, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        if not line:
            continue
        if m := _VERSION.match(line):
            run = start(lineno)
            run.version = m.group(1)
            continue
        if _description(line, None):
            if run is None or run.has_results:
                run = start(lineno)
            _description(line, run)
            continue
        if (kind := _result_kind(line)) is not None:
            if run is None or _repeats(run, kind):
                run = start(lineno)
            _result(line, kind, lineno, run)
            continue
        if m := _COMMAND.search(line):
            pending = _Command.parse(m.group(1).rstrip())
    close()

    if not records:
        if first_unfinished is not None:
            raise ParseError(
                "SQLIO run has no results: the output ends before 'CUMULATIVE DATA' (cut short or aborted)",
                first_unfinished.start_line,
            )
        raise ParseError("no SQLIO result found (no 'IOs/sec:' or 'MBs/sec:' line of a sqlio run)", _first_line(text))
    return records


def _description(line: str, run: _Run | None) -> bool:
    """Whether `line` describes a run (before its results); with a run, record what it says."""
    if m := _THREADS.match(line):
        if run is not None:
            run.described = True
            if run.threads is None:
                run.threads = int(m.group(1))
                run.operation = "read" if m.group(2).lower() == "reading" else "write"
                run.duration_s = float(m.group(3))
            _add_target(run, m.group(4))
        return True
    if m := _IO_SIZE.match(line):
        if run is not None:
            run.described = True
            if run.block_size_bytes is None:
                run.block_size_bytes = int(m.group(1)) * 1024
                run.pattern = m.group(2).lower()
        return True
    if m := _OUTSTANDING.match(line):
        if run is not None:
            run.described = True
            run.queue_depth = int(m.group(1))
        return True
    if m := _FILE_MASK.match(line):
        if run is not None:
            run.file_threads.append(int(m.group(2)))
            _add_target(run, m.group(1))
            run.metadata.setdefault("affinity_mask", m.group(3).strip())
        return True
    for pattern, key in (
        (_PARAM_FILE, "parameter_file"),
        (_BUFFERING, "buffering"),
        (_SIZE_BEFORE, "file_bytes_before_expanding"),
        (_EXPAND, "file_bytes_expanded_by"),
    ):
        if m := pattern.match(line):
            if run is not None:
                run.metadata.setdefault(key, m.group(1).strip())
            return True
    if m := _COUNTER.match(line):
        if run is not None:
            run.metadata.setdefault("latency_timer", m.group(1))
            if m.group(2):
                run.metadata.setdefault("latency_timer_counts_per_second", m.group(2))
        return True
    if m := _SIZE.match(line):
        if run is not None:
            run.metadata.setdefault("file_size", m.group(2))
            run.metadata.setdefault("file_size_source", m.group(1).lower())
        return True
    return bool(_OTHER_DESCRIPTION.match(line))


def _add_target(run: _Run, target: str) -> None:
    target = target.strip()
    if target and target not in run.targets:
        run.targets.append(target)


def _result_kind(line: str) -> str | None:
    if _CUMULATIVE.match(line):
        return "cumulative"
    if _IOPS.match(line):
        return "iops"
    if _MBS.match(line):
        return "mbs"
    if m := _LATENCY.match(line):
        return m.group(1).lower()
    if _HIST_LABELS.match(line):
        return "labels"
    if _HIST_SHARES.match(line):
        return "shares"
    return None


def _repeats(run: _Run, kind: str) -> bool:
    """A result line the current run already has: the next run's output, pasted without its description."""
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


def _result(line: str, kind: str, lineno: int, run: _Run) -> None:
    if kind == "cumulative":
        run.result_line = run.result_line or lineno
        return
    if kind == "labels":
        run.labels = line.split(":", 1)[1].split()
        return
    if kind == "shares":
        run.shares = [_number(v, "histogram share", lineno) for v in line.split(":", 1)[1].split()]
        run.shares_line = lineno
        run.result_line = run.result_line or lineno
        return
    value = line.split(":", 1)[1].strip()
    label = {"iops": "IOs/sec", "mbs": "MBs/sec"}.get(kind, f"{kind.capitalize()}_Latency(ms)")
    number = _number(value, label, lineno)
    if kind == "iops":
        run.iops = number
    elif kind == "mbs":
        run.mbs = number
    else:
        run.latency[kind] = number
    run.result_line = run.result_line or lineno


def _number(value: str, label: str, lineno: int) -> float:
    if not _NUMBER.match(value):
        raise ParseError(f"SQLIO {label} value {value[:40]!r} is not a number", lineno)
    return float(value)


def _record(run: _Run, run_index: int) -> IoRecord:
    cmd = run.command
    inferred: list[str] = []
    metadata = dict(run.metadata)
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

    histogram = _histogram(run)
    percentiles: dict[str, float | None] = dict.fromkeys(_PERCENTILES)
    if histogram:
        percentiles = {k: _percentile(histogram, p) for k, p in _PERCENTILES.items()}
        inferred += [f"latency_{k}_ms" for k, v in percentiles.items() if v is not None]
        metadata["latency_percentiles"] = _PERCENTILE_BASIS

    return IoRecord(
        tool=TOOL,
        tool_version=run.version,
        run_index=run_index,
        source_line=run.start_line,
        target=target or None,
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
        latency_p50=percentiles["p50"],
        latency_p95=percentiles["p95"],
        latency_p99=percentiles["p99"],
        latency_p999=percentiles["p999"],
        inferred=inferred,
        metadata=metadata,
        histogram=histogram,
        histogram_kind="share",
    )


class _Fallback:
    """Values the run does not print, taken from its echoed command line: listed in `inferred`."""

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
    out: list[str] = []
    pairs: list[tuple[str, str, object, object]] = [
        ("threads", "-t", cmd.integer("t"), _run_threads(run)),
        ("duration_s", "-s", cmd.integer("s"), int(run.duration_s) if run.duration_s is not None else None),
        ("block_size_kb", "-b", cmd.integer("b"), run.block_size_bytes // 1024 if run.block_size_bytes else None),
        ("operation", "-k", cmd.operation, run.operation),
        ("pattern", "-f", cmd.pattern, run.pattern),
    ]
    if run.described:
        o = cmd.integer("o")
        pairs.append(("queue_depth", "-o", max(1, o) if o is not None else None, run.queue_depth or 1))
    for key, flag, on_command, in_run in pairs:
        if on_command is not None and in_run is not None and on_command != in_run:
            out.append(f"{key}: command line {flag}{cmd.options.get(flag[1], '')}, run {in_run}")
    return out


def _histogram(run: _Run) -> list[tuple[float, float]]:
    if run.shares is None:
        return []
    labels = run.labels if run.labels is not None else _STANDARD_LABELS
    if len(labels) != len(run.shares):
        raise ParseError(f"SQLIO histogram has {len(run.shares)} shares for {len(labels)} buckets", run.shares_line)
    max_ms = run.latency.get("max")
    out: list[tuple[float, float]] = []
    for label, share in zip(labels, run.shares, strict=True):
        low = label.rstrip("+")
        if not _WHOLE.fullmatch(low):
            raise ParseError(f"SQLIO histogram bucket {label[:20]!r} is not a whole number of ms", run.shares_line)
        if label.endswith("+"):
            # Open bucket: nothing in the run took longer than Max_Latency (truncated to whole ms).
            bound = max(float(low) + 1, _OPEN_BUCKET_MIN_MS, (max_ms + 1) if max_ms is not None else 0.0)
        else:
            bound = float(low) + 1
        out.append((bound, share))
    return out


def _percentile(histogram: list[tuple[float, float]], p: float) -> float | None:
    total = sum(share for _, share in histogram)
    if total <= 0:
        return None
    need = total * p / 100.0
    acc = 0.0
    for bound, share in histogram:
        acc += share
        if acc >= need - 1e-9:
            return bound
    return histogram[-1][0]


def _first_line(text: str) -> int:
    for i, line in enumerate(text.split("\n"), 1):
        if line.strip():
            return i
    return 1
