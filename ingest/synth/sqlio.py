r"""SQLIO v1.5.SG writer: IoRecords back into sqlio.exe's text output, one run after another as a batch file's
log has them (`run.bat > results.txt` with echo on: a blank line and the echoed `C:\SQLIO>sqlio ...` command
before each run).

The layout is SQLIO 1.5.SG's (see ingest/formats/sqlio.py and the corpus): tab-indented description lines,
`IOs/sec: %8.2f`, `MBs/sec: %8.2f` (MiB/s), whole-ms latencies (truncated, as SQLIO prints them) and the
25-bucket histogram of integer percentages. A record's own run metadata (as the parser keeps it: command line,
parameter file, affinity mask, buffering, file size, latency timer) is written back, so a parsed run is written
as it was printed; records from `ingest.synth.disk_model.sweep` get a `-BH -LS` command line on a test file.
A record without a share histogram gets one from a log-normal latency distribution with the record's mean.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from kneepoint.ingest import units
from kneepoint.ingest.records import IoRecord
from kneepoint.ingest.synth.disk_model import DiskModel, lognormal_histogram, sweep

SAMPLE_FOLDER = "sqlio"
VERSION = "1.5.SG"

_BUFFERING_TEXT = {"H": "use hardware disk cache (but not file cache)"}
_LABELS = "ms: 0" + "".join(f" {k:2d}" for k in range(1, 24)) + " 24+"
_CLOSED_BOUNDS_MS = [float(k) for k in range(1, 25)]  # bucket k holds [k, k+1) ms


def write(
    records: Iterable[IoRecord],
    *,
    echo_commands: bool = True,
    prompt: str = "C:\\SQLIO>",
    notes: Iterable[str] = (),
    target: str = "E:\\testfile.dat",
    buffering: str | None = "H",
    file_size_mb: int = 20480,
    counts_per_second: int = 10_000_000,
    version_header: bool = True,
    newline: str = "\n",
) -> str:
    """SQLIO output for `records` (one run each, read or write, whole-KiB blocks).

    `notes` are lines put first (e.g. `C:\\SQLIO>REM ...`); `target`, `buffering` (a `-B` letter or None),
    `file_size_mb` and `counts_per_second` fill in what a record's metadata does not say."""
    lines: list[str] = list(notes)
    opts = {
        "prompt": prompt,
        "target": target,
        "buffering": buffering,
        "file_size_mb": file_size_mb,
        "counts_per_second": counts_per_second,
    }
    for rec in records:
        run = _run_lines(rec, opts, version_header)
        if echo_commands:
            lines += ["", f"{prompt}{_command(rec, opts)}"]
        lines += run
    return newline.join(lines) + newline


def _run_lines(rec: IoRecord, opts: dict, version_header: bool) -> list[str]:
    if rec.operation not in ("read", "write"):
        raise ValueError(f"SQLIO runs only read or only write, not {rec.operation!r}")
    if rec.pattern not in ("random", "sequential"):
        raise ValueError(f"SQLIO runs random or sequential I/O, not {rec.pattern!r}")
    if not rec.block_size_bytes or rec.block_size_bytes % 1024:
        raise ValueError(f"SQLIO block sizes are whole KiB, not {rec.block_size_bytes!r} bytes")
    if not rec.threads or rec.iops is None or rec.latency_avg is None:
        raise ValueError("SQLIO output needs threads, IOPS and an average latency")
    md = rec.metadata
    target = rec.target or opts["target"]
    threads = rec.threads
    secs = int(rec.duration_s) if rec.duration_s is not None else 60
    reading = rec.operation == "read"
    avg_ms = units.to_ms(rec.latency_avg, rec.latency_unit) or 0.0
    min_ms = units.to_ms(rec.latency_min, rec.latency_unit)
    max_ms = units.to_ms(rec.latency_max, rec.latency_unit)
    mib_s = _mib_per_s(rec)

    out: list[str] = []
    if version_header:
        out.append(f"sqlio v{rec.tool_version or VERSION}")
    timer = md.get("latency_timer", "system counter")
    out.append(
        f"using {timer} for latency timings, {md.get('latency_timer_counts_per_second', opts['counts_per_second'])}"
        " counts per second"
    )
    if "parameter_file" in md:
        span = "0" if threads == 1 else f"0-{threads - 1}"
        out.append(f"parameter file used: {md['parameter_file']}")
        out.append(f"\tfile {target} with {threads} {_threads_word(threads)} ({span}) using mask {_mask(md)}")
    out.append(
        f"{threads} {_threads_word(threads)} {'reading' if reading else 'writing'} for {secs} secs"
        f" {'from' if reading else 'to'} file {target}"
    )
    out.append(f"\tusing {rec.block_size_bytes // 1024}KB {rec.pattern} IOs")
    if "queue_depth" not in rec.inferred and rec.queue_depth:
        out.append(f"\tenabling multiple I/Os per thread with {rec.queue_depth} outstanding")
    if "file_bytes_expanded_by" in md:
        before = int(md.get("file_bytes_before_expanding", "0"))
        grow = int(md["file_bytes_expanded_by"])
        out += [
            f"size of file {target} needs to be: {before + grow} bytes",
            f"current file size:\t{before} bytes",
            f"need to expand by:\t{grow} bytes",
            f"expanding {target} ... done.",
        ]
    # A parsed run's metadata says what it printed; a modelled one gets the options.
    buffering = md.get("buffering") if md else _BUFFERING_TEXT.get(opts["buffering"] or "")
    if buffering:
        out.append(f"\tbuffering set to {buffering}")
    source = md.get("file_size_source", "specified" if "parameter_file" in md else "current")
    size = md.get("file_size") or f"{opts['file_size_mb']} MB"
    out.append(f"using {source} size: {size} for file: {target}")
    out += [
        "initialization done",
        "CUMULATIVE DATA:",
        "throughput metrics:",
        f"IOs/sec: {rec.iops:8.2f}",
        f"MBs/sec: {mib_s:8.2f}",
        "latency metrics:",
        f"Min_Latency(ms): {_whole_ms(min_ms if min_ms is not None else avg_ms)}",
        f"Avg_Latency(ms): {_whole_ms(avg_ms)}",
        f"Max_Latency(ms): {_whole_ms(max_ms if max_ms is not None else avg_ms)}",
        "histogram:",
        _LABELS,
        "%:" + "".join(f" {share:2d}" for share in _shares(rec, avg_ms)),
    ]
    return out


def _command(rec: IoRecord, opts: dict) -> str:
    if "command_line" in rec.metadata:
        return rec.metadata["command_line"]
    kind = "R" if rec.operation == "read" else "W"
    secs = int(rec.duration_s) if rec.duration_s is not None else 60
    parts = [f"sqlio -k{kind} -t{rec.threads} -s{secs}"]
    if "queue_depth" not in rec.inferred and rec.queue_depth:
        parts.append(f"-o{rec.queue_depth}")
    parts.append(f"-f{rec.pattern} -b{(rec.block_size_bytes or 0) // 1024}")
    if opts["buffering"] and not rec.metadata:
        parts.append(f"-B{opts['buffering']}")
    parts.append("-LS")
    if "parameter_file" in rec.metadata:
        parts.append(f"-F{rec.metadata['parameter_file']}")
    else:
        parts.append(rec.target or opts["target"])
    return " ".join(parts)


def _threads_word(threads: int) -> str:
    return "thread" if threads == 1 else "threads"


def _mask(md: dict[str, str]) -> str:
    return md.get("affinity_mask", "0x0 (0)")


def _mib_per_s(rec: IoRecord) -> float:
    if rec.throughput is not None:
        return (units.to_bytes_per_s(rec.throughput, rec.throughput_unit) or 0.0) / 2**20
    return (rec.iops or 0.0) * (rec.block_size_bytes or 0) / 2**20


def _whole_ms(ms: float) -> int:
    return int(math.floor(ms + 1e-9))  # SQLIO truncates latencies to whole ms


def _shares(rec: IoRecord, avg_ms: float) -> list[int]:
    """The 25 printed percentages: the record's own share histogram, else a log-normal one around its mean."""
    if rec.histogram_kind == "share" and len(rec.histogram) == 25:
        return [int(round(share)) for _, share in rec.histogram]
    closed = [share for _, share in lognormal_histogram(max(avg_ms, 0.01), _CLOSED_BOUNDS_MS)]
    shares = closed + [max(0.0, 100.0 - sum(closed))]
    return [int(share) for share in shares]  # SQLIO truncates, so they rarely add up to 100


# The sample's modelled disk; sample_data's Perfmon counter log (ingest/synth/perfmon_csv.py) is its production.
P10 = DiskModel(
    "synthetic P10 (modelled)",
    service_time_ms=5.0,
    sigma=0.05,
    kappa=0.0006,
    max_bytes_per_s=100e6,
    write_penalty=0.6,  # host write cache: writes complete before reads
    sequential_speedup=2.5,
    noise=0.03,
)


def sample_files() -> dict[str, str | bytes]:
    """A batch log of a threads x outstanding sweep on a modelled Azure P10-like disk (write cache on)."""
    disk = P10
    records: list[IoRecord] = []
    seed = 0
    for block_kib, patterns in ((64, ("random", "sequential")), (8, ("random",))):
        for pattern in patterns:
            for operation in ("read", "write"):
                seed += 1
                records += sweep(
                    disk,
                    "sqlio",
                    pattern=pattern,
                    operation=operation,
                    block_size_bytes=block_kib * 1024,
                    threads=(1, 2, 4, 8),
                    queue_depths=(1, 2, 4, 8, 16, 32, 64),
                    duration_s=60,
                    seed=seed,
                    tool_version=VERSION,
                    target="E:\\testfile.dat",
                )
    notes = [
        "",
        "C:\\SQLIO>REM SYNTHETIC sample: written by kneepoint's ingest/synth/sqlio.py from a modelled disk,",
        "",
        "C:\\SQLIO>REM not measured. Disk: synthetic P10 (modelled), ~5 ms service time, host write cache on,",
        "",
        "C:\\SQLIO>REM 100 MB/s bandwidth cap. Sweep: threads 1,2,4,8 x outstanding 1..64, 60 s per run.",
    ]
    text = write(records, notes=notes, newline="\r\n")
    return {"synthetic-p10-sweep.txt": text}
