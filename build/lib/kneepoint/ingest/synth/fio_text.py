"""Writer: records -> fio 3.x normal text output (`--output-format=normal`), as fio 3.33 prints it.

One run (records sharing a run_index) is one stonewalled job in its own group: its header line
(`name: (g=N): rw=..., bs=(R) ..., ioengine=..., iodepth=N`, then `...` when numjobs > 1), then
`fio-3.33` / `Starting N processes`, the job result blocks, `Run status group N` sections and `Disk
stats`. With `group_reporting` a job is one block (`jobs=N`); without it, one block per clone with its
share of the I/O. Numbers go through fio's own formatting (num2str with 4 significant figures, the
nsec/usec/msec choice of display_lat, percentiles rounded up in the scale show_clat_percentiles picks)
from figures made as fio makes them (see ingest.synth.fio_json: DirectionFigures, LatencyModel).
A synchronous `ioengine` with iodepth > 1 prints fio's `queue depth will be capped at 1` note.

No sample_files(): sample_data/fio-text/ holds a real fio text output from run_text_sweep.sh.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable

from kneepoint.ingest.formats._common import CAPPED_NOTE, SYNC_ENGINES
from kneepoint.ingest.records import IoRecord
from kneepoint.ingest.synth.fio_json import PERCENTILES, DirectionFigures, distribution, runs, rw_option

_SI = ("", "k", "M", "G", "T", "P", "E")
_IEC = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DIST_RANGES = (
    ("nsec", ("2", "4", "10", "20", "50", "100", "250", "500", "750", "1000")),
    ("usec", ("2", "4", "10", "20", "50", "100", "250", "500", "750", "1000")),
    ("msec", ("2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000")),
)


def num2str(num: int, maxlen: int = 4, base: int = 1, pow2: bool = False, unit: str = "") -> str:
    """fio's lib/num2str.c: `num` shortened to `maxlen` digits with an SI (or IEC) prefix."""
    thousand = 1024 if pow2 else 1000
    prefixes = _IEC if pow2 else _SI
    post = 0
    while base > 1:
        base //= thousand
        post += 1
    if unit.startswith("bit"):
        num *= 8
    modulo = -1
    carry = False
    while post < len(prefixes):
        if len(str(num)) <= maxlen:
            break
        modulo = num % thousand
        num //= thousand
        carry = modulo >= thousand // 2
        post += 1
    if post >= len(prefixes):
        post = 0
    if modulo == -1:
        return f"{num}{prefixes[post]}{unit}"
    digits = len(str(num))
    if maxlen - digits <= 1:
        if carry:
            num += 1
        return f"{num}{prefixes[post]}{unit}"
    tmp = f"{modulo / thousand:.{maxlen - digits - 1}f}"
    if tmp[0] == "1":
        num += 1
    return f"{num}.{tmp[2:]}{prefixes[post]}{unit}"


def write(
    records: Iterable[IoRecord],
    *,
    group_reporting: bool = True,
    version: str | None = None,
    ioengine: str = "libaio",
    disk: str | None = "vda",
    timestamp: int = 1763683969,
    pid: int = 17166,
) -> str:
    recs = list(records)
    version = version or next((r.tool_version for r in recs if r.tool_version), None) or "3.33"
    jobs = []
    for groupid, run in enumerate(runs(recs)):
        first = run[0]
        by_dir = {r.direction: r for r in run}
        jobs.append(
            {
                "groupid": groupid,
                "run": run,
                "first": first,
                "threads": max(1, first.threads or 1),
                "qd": max(1, first.queue_depth or 1),
                "name": first.metadata.get("jobname")
                or f"{rw_option(first)}-{_bs_short(first.block_size_bytes)}-qd{first.queue_depth or 1}",
                "figures": {d: DirectionFigures.of(r) for d, r in by_dir.items()},
            }
        )
    date = time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(timestamp))
    out: list[str] = []
    for job in jobs:
        out.append(_header(job, ioengine))
        if job["threads"] > 1:
            out.append("...\n")
    processes = sum(j["threads"] for j in jobs)
    out.append(f"fio-{version}\nStarting {processes} process{'es' if processes != 1 else ''}\n")
    if ioengine in SYNC_ENGINES and any(j["qd"] > 1 for j in jobs):
        out.append(f"note: both iodepth >= 1 and synchronous I/O engine are selected, {CAPPED_NOTE}\n")
    out.append("\n")
    for job in jobs:
        clones = 1 if group_reporting else job["threads"]
        for i in range(clones):
            figs = {d: f.split(clones, i) for d, f in job["figures"].items()}
            out.append(_block(job, figs, 1 if clones > 1 else job["threads"], pid + i, date))
        pid += clones
    for job in jobs:
        out.append(_group(job))
    if disk:
        reads = sum(f.total_ios for j in jobs for d, f in j["figures"].items() if d != "write")
        writes = sum(f.total_ios for j in jobs for d, f in j["figures"].items() if d == "write")
        out.append(
            f"\nDisk stats (read/write):\n  {disk}: ios={reads}/{writes}, merge=0/0, ticks=0/0, "
            f"in_queue=0, util=90.00%\n"
        )
    return "".join(out)


def _bs_short(size: int | None) -> str:
    size = size or 4096
    return f"{size // 1024}k" if size % 1024 == 0 else str(size)


def _header(job: dict, ioengine: str) -> str:
    sizes = {r.direction: r.block_size_bytes or 4096 for r in job["run"]}
    read = sizes.get("read") or sizes.get("total") or sizes.get("write") or 4096
    write = sizes.get("write") or read
    r = num2str(read, 4, 1, True, "B")
    w = num2str(write, 4, 1, True, "B")
    return (
        f"{job['name']}: (g={job['groupid']}): rw={rw_option(job['first'])}, bs=(R) {r}-{r}, (W) {w}-{w}, "
        f"(T) {r}-{r}, ioengine={ioengine}, iodepth={job['qd']}\n"
    )


def _block(job: dict, figs: dict[str, DirectionFigures], jobs: int, pid: int, date: str) -> str:
    lines = [f"{job['name']}: (groupid={job['groupid']}, jobs={jobs}): err= 0: pid={pid}: {date}\n"]
    for direction in ("read", "write", "total"):
        fig = figs.get(direction)
        if fig is not None and fig.total_ios > 0:
            lines.append(_direction(direction, fig))
    lines.append(_distribution(figs.values()))
    ios = {d: f.total_ios for d, f in figs.items()}
    total = sum(ios.values())
    lines.append(
        f"  cpu          : usr=3.80%, sys=30.00%, ctx={total}, majf=0, minf=38\n"
        f"  IO depths    : {_depths(job['qd'])}\n"
        "     submit    : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%\n"
        "     complete  : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%\n"
        f"     issued rwts: total={ios.get('read', 0) + ios.get('total', 0)},{ios.get('write', 0)},0,0 "
        "short=0,0,0,0 dropped=0,0,0,0\n"
        f"     latency   : target=0, window=0, percentile=100.00%, depth={job['qd']}\n"
    )
    return "".join(lines)


def _direction(direction: str, fig: DirectionFigures) -> str:
    runtime = fig.runtime_ms
    bw = 1000 * fig.io_bytes // runtime
    iops = 1000 * fig.total_ios // runtime
    name = {"read": "read", "write": "write", "total": "mixed"}[direction]
    post = "; 0 zone resets" if direction == "write" else ""
    out = [
        f"  {name}: IOPS={num2str(iops)}, BW={num2str(bw, 4, 1, True, 'B/s')} ({num2str(bw, 4, 1, False, 'B/s')})"
        f"({num2str(fig.io_bytes, 4, 1, True, 'B')}/{runtime}msec){post}\n"
    ]
    slat_mean = fig.slat_mean
    out.append(_lat("slat", 100, max(200, round(slat_mean * 20)), slat_mean))
    clat_mean = max(1.0, fig.lat_mean - slat_mean)
    out.append(_lat("clat", max(1, fig.lat_min - 100), max(1, fig.lat_max - 100), clat_mean))
    out.append(_lat(" lat", fig.lat_min, fig.lat_max, fig.lat_mean))
    out.append(_percentiles([(p, round(fig.model.quantile(p))) for p in PERCENTILES]))
    kib = bw / 1024
    samples = max(1, runtime // 500)
    unit, scale = ("MiB", 1024.0) if kib > 1024 * 1024 else ("KiB", 1.0)
    out.append(
        f"   bw ({unit:>5}/s): min={round(kib * 0.95 / scale):5d}, max={round(kib * 1.05 / scale):5d}, "
        f"per=100.00%, avg={kib / scale:5.02f}, stdev={kib * 0.02 / scale:5.02f}, samples={samples}\n"
    )
    out.append(
        f"   iops        : min={round(iops * 0.95):5d}, max={round(iops * 1.05):5d}, avg={iops:5.02f}, "
        f"stdev={iops * 0.02:5.02f}, samples={samples}\n"
    )
    return "".join(out)


def _lat(name: str, lo: int, hi: int, mean: float) -> str:
    """stat.c display_lat: nsec, or usec / msec when min, max and stdev are all large enough."""
    dev = mean * 0.35
    base = "nsec"
    if lo > 2_000_000 and hi > 99_999_999 and dev > 1_000_000.0:
        lo, hi, mean, dev, base = lo // 1_000_000, hi // 1_000_000, mean / 1e6, dev / 1e6, "msec"
    elif lo > 2000 and hi > 99_999 and dev > 1000.0:
        lo, hi, mean, dev, base = lo // 1000, hi // 1000, mean / 1e3, dev / 1e3, "usec"
    return f"    {name} ({base}): min={num2str(lo, 6)}, max={num2str(hi, 6)}, avg={mean:5.02f}, stdev={dev:5.02f}\n"


def _percentiles(values: list[tuple[float, int]]) -> str:
    """stat.c show_clat_percentiles: the scale from the smallest and largest value, rounded up."""
    minv = min(v for _, v in values)
    maxv = max(v for _, v in values)
    if minv > 2_000_000 and maxv > 99_999_999:
        scale, divisor, unit = 2, 1_000_000, "msec"
    elif minv > 2000 and maxv > 99_999:
        scale, divisor, unit = 1, 1000, "usec"
    else:
        scale, divisor, unit = 0, 1, "nsec"
    width = max(5, int(math.log10(max(1, maxv // divisor)) + 1))
    per_line = (80 - 7) // (2 + 10 + width)
    out = [f"    clat percentiles ({unit}):\n     |"]
    for j, (p, v) in enumerate(values):
        if j and j % per_line == 0:
            out.append("     |")
        for _ in range(scale):
            v = (v + 999) // 1000
        last = j == len(values) - 1
        out.append(f" {p:5.2f}th=[{v:{width}d}]" + ("\n" if last else ","))
        if not last and j % per_line == per_line - 1:
            out.append("\n")
    return "".join(out)


def _distribution(figs: Iterable[DirectionFigures]) -> str:
    """stat.c show_latencies: `lat (usec)   : 250=84.91%, ...`, five per line, empty buckets left out."""
    shares = distribution(figs)
    out = []
    i = 0
    for unit, ranges in _DIST_RANGES:
        shown = [f"{r}={s:3.2f}%" for r, s in zip(ranges, shares[i : i + len(ranges)], strict=True) if s > 0]
        i += len(ranges)
        for k in range(0, len(shown), 5):
            out.append(f"  lat ({unit})   : " + ", ".join(shown[k : k + 5]) + "\n")
    return "".join(out)


def _depths(qd: int) -> str:
    keys = ("1", "2", "4", "8", "16", "32", ">=64")
    level = min(6, max(0, qd.bit_length() - 1))
    return ", ".join(f"{k}={100.0 if i == level else 0.0:3.1f}%" for i, k in enumerate(keys))


def _group(job: dict) -> str:
    out = [f"\nRun status group {job['groupid']} (all jobs):\n"]
    for direction, label in (("read", "   READ"), ("total", "  MIXED"), ("write", "  WRITE")):
        fig = job["figures"].get(direction)
        if fig is None or fig.total_ios == 0:
            continue
        bw = 1000 * fig.io_bytes // fig.runtime_ms
        b2, b10 = num2str(bw, 4, 1, True, "B/s"), num2str(bw, 4, 1, False, "B/s")
        out.append(
            f"{label}: bw={b2} ({b10}), {b2}-{b2} ({b10}-{b10}), io={num2str(fig.io_bytes, 4, 1, True, 'B')} "
            f"({num2str(fig.io_bytes, 4, 1, False, 'B')}), run={fig.runtime_ms}-{fig.runtime_ms}msec\n"
        )
    return "".join(out)
