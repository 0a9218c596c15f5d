"""DiskSpd writers: records -> DiskSpd's text output (`-Rtext`) or its XML output (`-Rxml`).

The text follows DiskSpd 2.0.21a's layout by default (`layout="2.0.17"`: the older `MB/s` header and no
System information; `layout="2.2"`: `4KiB` sizes, `... per thread` and the Core | CPU table). One
record group per `run_index` is one invocation, written as a batch script log: a shell prompt with the
command, then DiskSpd's output. The totals are consistent the way DiskSpd's are: I/Os = IOPS x seconds,
bytes = I/Os x block size, the rates recomputed from those, thread rows summing to the total row.
Per-thread variation, CPU load and latency spread are synthetic and deterministic (seeded).

    >>> from ingest.synth.disk_model import DiskModel, sweep
    >>> text = write(sweep(DiskModel("d"), "diskspd", block_size_bytes=8192, threads=(2,), queue_depths=(4,)))
    >>> "Results for timespan 1:" in text and "thread count:\\t\\t2" in text
    True
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Iterable
from datetime import datetime, timedelta

from kneepoint.ingest import units
from kneepoint.ingest.formats._common import PERCENTILE_LABELS
from kneepoint.ingest.records import IoRecord
from kneepoint.ingest.synth.disk_model import DiskModel, sweep

SAMPLE_FOLDER = "diskspd"
MIB = 1024 * 1024
GIB = 1024 * MIB
LAYOUTS = ("2.0.17", "2.0.21a", "2.2")
# DiskSpd's -Rxml percentiles: 0 (min), 1..99, 99.9 .. 99.9999999, 100 (max).
XML_PERCENTILES = [0.0, *range(1, 100), 99.9, 99.99, 99.999, 99.9999, 99.99999, 99.999999, 99.9999999, 100.0]

SAMPLE_DISK = DiskModel(
    "synthetic 4-disk Storage Spaces stripe (modelled)",
    service_time_ms=0.12,  # SATA SSD random read at QD1 plus the Storage Spaces hop
    sigma=0.03,  # contention: four columns, one pool
    kappa=0.0002,  # coherency: peaks near 70 outstanding I/Os, then falls back
    max_bytes_per_s=1.6e9,  # four ~450 MB/s SATA SSDs less striping overhead
    write_penalty=1.8,  # two-way mirror-less simple space, but SSD writes are slower
    sequential_speedup=2.5,
    noise=0.02,
)


class _Run:
    """One invocation's figures, derived once from its records."""

    def __init__(self, recs: list[IoRecord], default_target: str, default_seconds: float) -> None:
        base = recs[0]
        self.base = base
        self.seconds = float(base.duration_s or default_seconds)
        self.block = int(base.block_size_bytes or 65536)
        self.threads = max(1, int(base.threads or 1))
        self.queue_depth = max(1, int(base.queue_depth or 1))
        self.target = base.target or default_target
        self.pattern = base.pattern
        by_dir: dict[str, IoRecord] = {}
        for r in recs:
            by_dir.setdefault(r.direction, r)
        if "read" not in by_dir and "write" not in by_dir and "total" in by_dir:
            total = by_dir["total"]
            if base.operation in ("read", "write"):
                by_dir[base.operation] = total
            else:  # only a total for a mixed run: split it by the read share
                by_dir["read"] = _scaled(total, base.read_pct / 100)
                by_dir["write"] = _scaled(total, 1 - base.read_pct / 100)
        self.recs = {d: by_dir[d] for d in ("read", "write") if d in by_dir}
        if base.operation == "read":
            self.write_ratio = 0
        elif base.operation == "write":
            self.write_ratio = 100
        else:
            self.write_ratio = int(round(100 - base.read_pct))
        self.ios = {d: max(0, round((r.iops or 0.0) * self.seconds)) for d, r in self.recs.items()}
        self.measure_latency = any(r.latency_avg is not None for r in self.recs.values())
        self.dists = {d: _dist(r) for d, r in self.recs.items()}

    def direction_ios(self, direction: str) -> int:
        return self.ios.get(direction, 0)

    @property
    def total_ios(self) -> int:
        return sum(self.ios.values())


def _scaled(rec: IoRecord, share: float) -> IoRecord:
    from dataclasses import replace

    return replace(
        rec,
        iops=(rec.iops or 0.0) * share,
        throughput=(rec.throughput or 0.0) * share if rec.throughput is not None else None,
    )


def _runs(records: Iterable[IoRecord], default_target: str, default_seconds: float) -> list[_Run]:
    groups: dict[int, list[IoRecord]] = {}
    for r in records:
        if r.direction != "total":  # (a parsed mixed run's Total IO row: the writer sums its own)
            groups.setdefault(r.run_index, []).append(r)
    return [_Run(recs, default_target, default_seconds) for _, recs in sorted(groups.items())]


# --------------------------------------------------------------------------------------------- latency


class _Dist:
    """A latency distribution (ms) through known percentile points.

    Between points the latency is linear in "nines" (x = -log10(1 - p/100)), the axis DiskSpd's %-ile
    table is laid out on; the max sits where one I/O of the run is (x = log10(I/Os))."""

    def __init__(self, points: list[tuple[float, float]], ios: float) -> None:
        self.top = max(3.5, math.log10(max(ios, 10.0)))
        self.xs: list[float] = []
        self.ys: list[float] = []
        for p, v in sorted(points):
            x = self._nines(p)
            if self.xs and x <= self.xs[-1]:
                self.ys[-1] = max(self.ys[-1], v)
                continue
            self.xs.append(x)
            self.ys.append(max(v, self.ys[-1]) if self.ys else v)

    def _nines(self, p: float) -> float:
        return self.top if p >= 100.0 else min(self.top, -math.log10(1 - p / 100))

    def quantile(self, p: float) -> float:
        xs, ys = self.xs, self.ys
        x = self._nines(p)
        if x <= xs[0]:
            return ys[0]
        if x >= xs[-1]:
            return ys[-1]
        k = bisect.bisect_right(xs, x)
        return ys[k - 1] + (ys[k] - ys[k - 1]) * (x - xs[k - 1]) / (xs[k] - xs[k - 1])

    def cdf(self, lat: float) -> float:
        """Percent of I/Os at or below `lat` (the inverse of `quantile`)."""
        xs, ys = self.xs, self.ys
        if lat < ys[0]:
            return 0.0
        if lat >= ys[-1]:
            return 100.0
        k = bisect.bisect_right(ys, lat)
        x = xs[k - 1] + (xs[k] - xs[k - 1]) * (lat - ys[k - 1]) / (ys[k] - ys[k - 1])
        return 100.0 * (1 - 10**-x)


def _dist(rec: IoRecord) -> _Dist | None:
    """The record's latency distribution: its share histogram, else its named percentiles."""
    factor = units.latency_units()[rec.latency_unit]
    points: list[tuple[float, float]] = []
    if rec.histogram and rec.histogram_kind == "share":
        cum = 0.0
        if rec.latency_min is not None:
            points.append((0.0, rec.latency_min * factor))
        for bound, share in rec.histogram:
            cum += share
            points.append((min(cum, 100.0), bound * factor))
    else:
        named = (
            (0.0, rec.latency_min),
            (50.0, rec.latency_p50),
            (95.0, rec.latency_p95),
            (99.0, rec.latency_p99),
            (99.9, rec.latency_p999),
            (100.0, rec.latency_max),
        )
        points = [(p, v * factor) for p, v in named if v is not None]
    if not points:
        if rec.latency_avg is None:
            return None
        avg = rec.latency_avg * factor  # only a mean: the disk model's shape around it
        points = [(0.0, avg * 0.2), (50.0, avg * 0.9), (99.0, avg * 2.6), (100.0, avg * 8)]
    return _Dist(points, (rec.iops or 1.0) * float(rec.duration_s or 60.0))


def _mixture(run: _Run, p: float) -> float | None:
    """Total latency at percentile p: the read and write distributions weighted by their I/Os."""
    parts = [(run.direction_ios(d), dist) for d, dist in run.dists.items() if dist is not None and run.direction_ios(d)]
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0][1].quantile(p)
    lo = min(dist.quantile(0.0) for _, dist in parts)
    hi = max(dist.quantile(100.0) for _, dist in parts)
    if p <= 0 or p >= 100:
        return lo if p <= 0 else hi
    total = sum(n for n, _ in parts)
    for _ in range(40):
        mid = (lo + hi) / 2
        if sum(n * dist.cdf(mid) for n, dist in parts) / total < p:
            lo = mid
        else:
            hi = mid
    return hi


# --------------------------------------------------------------------------------------------- text


def write(
    records: Iterable[IoRecord],
    *,
    layout: str = "2.0.21a",
    prompt: str | None = "PS C:\\diskspd> ",
    notes: Iterable[str] = (),
    computer_name: str = "SYNTHETIC-SQL01",
    proc_count: int = 8,
    start: str = "2026/01/05 09:00:00",
    target: str = "D:\\diskspd\\testfile.dat",
    file_size_bytes: int = 8 * GIB,
    default_seconds: float = 60.0,
    warmup_s: int = 5,
    seed: int = 0,
) -> str:
    """DiskSpd text output of every run in `records`, appended like a batch script's log."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown DiskSpd layout {layout!r}; known: {', '.join(LAYOUTS)}")
    out: list[str] = [f"{n}\n" for n in notes]
    clock = datetime.strptime(start, "%Y/%m/%d %H:%M:%S")
    for k, run in enumerate(_runs(records, target, default_seconds)):
        rng = random.Random(seed * 1_000_003 + k)
        cmd = _command(run, file_size_bytes, warmup_s)
        if out:
            out.append("\n")
        if prompt is not None:
            out.append(f"{prompt}.\\{cmd}\n")  # the script runs .\diskspd.exe from its folder
        started = _start_time(run, clock)
        out.append(_text_run(run, cmd, layout, computer_name, proc_count, started, file_size_bytes, warmup_s, rng))
        clock = started + timedelta(seconds=run.seconds + warmup_s + 2)
    return "".join(out)


def _command(run: _Run, file_size_bytes: int, warmup_s: int) -> str:
    size = f"{file_size_bytes // GIB}G" if file_size_bytes % GIB == 0 else f"{file_size_bytes // MIB}M"
    block = f"{run.block // 1024}K" if run.block % 1024 == 0 else str(run.block)
    access = "-r " if run.pattern == "random" else ""
    return (
        f"diskspd.exe -c{size} -d{round(run.seconds)} -W{warmup_s} -b{block} -t{run.threads} -o{run.queue_depth} "
        f"{access}-w{run.write_ratio} -Sh -L {run.target}"
    )


def _start_time(run: _Run, clock: datetime) -> datetime:
    if run.base.started_at:
        try:
            return datetime.fromisoformat(run.base.started_at).replace(tzinfo=None)
        except ValueError:
            pass
    return clock


def _kmgt(n: int) -> str:
    """DiskSpd 2.2's Util::GetSizeKMGT for whole sizes."""
    for unit, factor in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= factor and n % factor == 0:
            return f"{n // factor}{unit}"
    return f"{n}B" if n else "0"


def _display_size(n: int, layout: str) -> str:
    """DiskSpd's _DisplayFileSize: the unit steps at 10x (2.0.17 prints MB / KB)."""
    mib, kib, gib = ("MB", "KB", "GB") if layout == "2.0.17" else ("MiB", "KiB", "GiB")
    if n > 10 * GIB:
        return f"{n >> 30}{gib}"
    if n > 10 * MIB:
        return f"{n >> 20}{mib}"
    if n > 10 * 1024:
        return f"{n >> 10}{kib}"
    return f"{n}B"


def _text_run(
    run: _Run,
    cmd: str,
    layout: str,
    computer_name: str,
    proc_count: int,
    started: datetime,
    file_size_bytes: int,
    warmup_s: int,
    rng: random.Random,
) -> str:
    v22 = layout == "2.2"
    o: list[str] = [f"\nCommand Line: {cmd}\n\nInput parameters:\n\n"]
    o.append(f"\ttimespan:   1\n\t-------------\n\tduration: {round(run.seconds)}s\n")
    o.append(f"\twarm up time: {warmup_s}s\n\tcool down time: 0s\n")
    if run.measure_latency:
        o.append("\tmeasuring latency\n")
    o.append("\trandom seed: 0\n")
    o.append(f"\tpath: '{run.target}'\n\t\tthink time: 0ms\n\t\tburst size: 0\n")
    o.append("\t\tsoftware cache disabled\n\t\thardware write cache disabled, writethrough on\n")
    if run.write_ratio == 0:
        o.append("\t\tperforming read test\n")
    elif run.write_ratio == 100:
        o.append("\t\tperforming write test\n")
    else:
        o.append(f"\t\tperforming mix test (read/write ratio: {100 - run.write_ratio}/{run.write_ratio})\n")
    size = _kmgt(run.block) if v22 else str(run.block)
    o.append(f"\t\tblock size: {size}\n")
    if run.pattern == "random":
        o.append(f"\t\tusing random I/O (alignment: {size})\n")
    else:
        o.append(f"\t\tusing sequential I/O (stride: {size})\n")
    per_thread = " per thread" if v22 else ""
    o.append(f"\t\tnumber of outstanding I/O operations{per_thread}: {run.queue_depth}\n")
    if not v22:
        o.append("\t\tthread stride size: 0\n")
    o.append(f"\t\tthreads per file: {run.threads}\n")
    if run.queue_depth > 1:
        o.append("\t\tusing I/O Completion Ports\n")
    o.append("\t\tIO priority: normal\n\n")
    if layout != "2.0.17":
        o.append(f"System information:\n\n\tcomputer name: {computer_name}\n")
        o.append(f"\tstart time: {started:%Y/%m/%d %H:%M:%S} UTC\n\n")
        if v22:
            o.append(f"\tcpu count:\t\t{proc_count}\n\tcore count:\t\t{max(1, proc_count // 2)}\n")
            o.append("\tgroup count:\t\t1\n\tnode count:\t\t1\n\tsocket count:\t\t1\n\theterogeneous cores:\tn\n\n")
    else:
        o.append("\n\n")
    o.append("Results for timespan 1:\n" + "*" * 79 + "\n\n")
    o.append(f"actual test time:\t{run.seconds:.2f}s\nthread count:\t\t{run.threads}\n")
    if not v22:
        o.append(f"proc count:\t\t{proc_count}\n")
    o.append(_cpu_table(run, proc_count, v22, rng))
    shares = _thread_shares(run.threads, rng)
    lat_noise = [1 + rng.uniform(-0.03, 0.03) for _ in range(run.threads)]
    mean_noise = sum(s * n for s, n in zip(shares, lat_noise, strict=True))
    lat_noise = [n / mean_noise for n in lat_noise]  # thread rows average back to the total row
    tput = "MB/s" if layout == "2.0.17" else "MiB/s"
    file_cell = f"{run.target} ({_display_size(file_size_bytes, layout)})"
    for title, dirs in (("Total IO", ("read", "write")), ("Read IO", ("read",)), ("Write IO", ("write",))):
        o.append(f"\n{title}\n")
        o.append(_io_table(run, dirs, shares, lat_noise, tput, file_cell))
    if run.measure_latency:
        label = "Total latency distribution:" if v22 else "total:"
        if layout == "2.0.17":
            o.append("\n\n")  # no label before the one %-ile table
        else:
            o.append(f"{chr(10) if v22 else chr(10) * 3}{label}\n")
        o.append(_percentile_table(run))
    return "".join(o)


def _cpu_table(run: _Run, procs: int, v22: bool, rng: random.Random) -> str:
    # About 12 us of CPU per I/O, spread over the processors.
    busy = min(95.0, 0.3 + run.total_ios / run.seconds * 12e-6 * 100 / procs)
    rows = []
    sums = [0.0, 0.0, 0.0, 0.0]
    for cpu in range(procs):
        usage = min(99.0, busy * (1 + rng.uniform(-0.25, 0.25)))
        user = usage * 0.08
        kernel = usage - user
        idle = 100.0 - usage
        for j, v in enumerate((usage, user, kernel, idle)):
            sums[j] += v
        if v22:
            rows.append(f"{cpu // 2:5d}|{cpu:5d}| {usage:6.2f}%| {user:6.2f}%| {kernel:6.2f}%| {idle:6.2f}%\n")
        else:
            rows.append(f"{cpu:4d}| {usage:6.2f}%| {user:6.2f}%|  {kernel:6.2f}%| {idle:6.2f}%\n")
    avg = [s / procs for s in sums]
    if v22:
        head, rule = "\nCore | CPU |  Usage |  User  | Kernel |  Idle\n", "-" * 47 + "\n"
        tail = f"       avg.| {avg[0]:6.2f}%| {avg[1]:6.2f}%| {avg[2]:6.2f}%| {avg[3]:6.2f}%\n"
    else:
        head, rule = "\nCPU |  Usage |  User  |  Kernel |  Idle\n", "-" * 43 + "\n"
        tail = f"avg.| {avg[0]:6.2f}%| {avg[1]:6.2f}%|  {avg[2]:6.2f}%| {avg[3]:6.2f}%\n"
    return head + rule + "".join(rows) + rule + tail


def _thread_shares(threads: int, rng: random.Random) -> list[float]:
    weights = [1 + rng.uniform(-0.04, 0.04) for _ in range(threads)]
    total = sum(weights)
    return [w / total for w in weights]


def _split(n: int, shares: list[float]) -> list[int]:
    parts = [math.floor(n * s) for s in shares]
    parts[0] += n - sum(parts)
    return parts


def _io_table(
    run: _Run,
    dirs: tuple[str, ...],
    shares: list[float],
    lat_noise: list[float],
    tput: str,
    file_cell: str,
) -> str:
    lat = run.measure_latency
    header = f"thread |       bytes     |     I/Os     |    {tput:<5}   |  I/O per s "
    header += "|  AvgLat  | LatStdDev |  file\n" if lat else "|  file\n"
    rule = "-" * (66 + (23 if lat else 0) + 12) + "\n"
    per_dir = {d: _split(run.direction_ios(d), shares) for d in dirs}
    out = [header, rule]
    tot_bytes = tot_ios = 0
    for t in range(run.threads):
        ios = sum(per_dir[d][t] for d in dirs)
        nbytes = ios * run.block
        tot_bytes += nbytes
        tot_ios += ios
        row = f"{t:6d} | {nbytes:15d} | {ios:12d} | {nbytes / MIB / run.seconds:10.2f} | {ios / run.seconds:10.2f}"
        if lat:
            row += _lat_cells(run, dirs, [per_dir[d][t] for d in dirs], lat_noise[t])
        out.append(f"{row} | {file_cell}\n")
    out.append(rule)
    rates = f"{tot_bytes / MIB / run.seconds:10.2f} | {tot_ios / run.seconds:10.2f}"
    total = f"total:   {tot_bytes:15d} | {tot_ios:12d} | {rates}"
    if lat:
        total += _lat_cells(run, dirs, [run.direction_ios(d) for d in dirs], 1.0)
    out.append(total + "\n")
    return "".join(out)


def _lat_cells(run: _Run, dirs: tuple[str, ...], counts: list[int], noise: float) -> str:
    n = sum(counts)
    if n == 0:
        return f" | {0.0:8.3f} |       N/A"
    avg = sum(_avg_ms(run, d) * c for d, c in zip(dirs, counts, strict=True)) / n * noise
    std = sum(_std_ms(run, d) * c for d, c in zip(dirs, counts, strict=True)) / n * noise
    return f" | {avg:8.3f} |  {std:8.3f}"


def _avg_ms(run: _Run, direction: str) -> float:
    rec = run.recs.get(direction)
    if rec is None or rec.latency_avg is None:
        return 0.0
    return rec.latency_avg * units.latency_units()[rec.latency_unit]


def _std_ms(run: _Run, direction: str) -> float:
    printed = run.base.metadata.get(f"{direction}.latency_stddev_ms")
    if printed:
        try:
            return float(printed)
        except ValueError:
            pass
    dist = run.dists.get(direction)
    if dist is None:
        return 0.0
    return max(
        0.0, (dist.quantile(99.0) - dist.quantile(50.0)) / 2.326
    )  # a normal tail's spread, close enough for a sample


def _percentile_table(run: _Run) -> str:
    out = ["  %-ile |  Read (ms) | Write (ms) | Total (ms)\n", "-" * 46 + "\n"]
    for label, p in PERCENTILE_LABELS.items():
        cells = []
        for d in ("read", "write"):
            dist = run.dists.get(d)
            cells.append(f"{dist.quantile(p):10.3f}" if dist is not None and run.direction_ios(d) else f"{'N/A':>10}")
        total = _mixture(run, p)
        out.append(f"{label:>7} | {cells[0]} | {cells[1]} | {(total or 0.0):10.3f}\n")
    return "".join(out)


# --------------------------------------------------------------------------------------------- XML


def write_xml(
    records: Iterable[IoRecord],
    *,
    computer_name: str = "SYNTHETIC-SQL01",
    proc_count: int = 8,
    start: str = "2026/01/05 09:00:00",
    target: str = "D:\\diskspd\\testfile.dat",
    file_size_bytes: int = 8 * GIB,
    default_seconds: float = 60.0,
    warmup_s: int = 5,
    version: str = "2.0.21a",
    comment: str | None = None,
    seed: int = 0,
) -> str:
    """DiskSpd 2.0.21a `-Rxml` output, one `<Results>` document per run, appended one after another."""
    out: list[str] = [f"<!-- {comment} -->\n"] if comment else []
    clock = datetime.strptime(start, "%Y/%m/%d %H:%M:%S")
    for k, run in enumerate(_runs(records, target, default_seconds)):
        rng = random.Random(seed * 1_000_003 + k)
        started = _start_time(run, clock)
        out.append(_xml_run(run, computer_name, proc_count, started, file_size_bytes, warmup_s, version, rng))
        clock = started + timedelta(seconds=run.seconds + warmup_s + 2)
    return "".join(out)


def _xml_run(
    run: _Run,
    computer_name: str,
    procs: int,
    started: datetime,
    file_size_bytes: int,
    warmup_s: int,
    version: str,
    rng: random.Random,
) -> str:
    x = _Xml()
    x.open("Results")
    x.open("System")
    x.leaf("ComputerName", computer_name)
    x.open("Tool")
    x.leaf("Version", version)
    x.leaf("VersionDate", "2018/9/21")
    x.close("Tool")
    x.leaf("RunTime", f"{started:%Y/%m/%d %H:%M:%S} UTC")
    x.open("ProcessorTopology")
    mask = f"0x{(1 << procs) - 1:x}"
    x.raw(f'<Group Group="0" MaximumProcessors="{procs}" ActiveProcessors="{procs}" ActiveProcessorMask="{mask}" />')
    x.raw(f'<Node Node="0" Group="0" Processors="{mask}" />')
    x.close("ProcessorTopology")
    x.close("System")
    x.open("Profile")
    for tag, value in (("Progress", 0), ("ResultFormat", "xml"), ("Verbose", "false")):
        x.leaf(tag, value)
    x.open("TimeSpans")
    x.open("TimeSpan")
    x.leaf("CompletionRoutines", "false")
    x.leaf("MeasureLatency", "true" if run.measure_latency else "false")
    for tag, value in (
        ("CalculateIopsStdDev", "false"),
        ("DisableAffinity", "false"),
        ("Duration", round(run.seconds)),
        ("Warmup", warmup_s),
        ("Cooldown", 0),
        ("ThreadCount", 0),
        ("RequestCount", 0),
        ("IoBucketDuration", 1000),
        ("RandSeed", 0),
    ):
        x.leaf(tag, value)
    x.open("Targets")
    x.open("Target")
    x.leaf("Path", run.target)
    x.leaf("BlockSize", run.block)
    for tag, value in (
        ("BaseFileOffset", 0),
        ("SequentialScan", "false"),
        ("RandomAccess", "false"),
        ("TemporaryFile", "false"),
        ("UseLargePages", "false"),
        ("DisableOSCache", "true"),
        ("WriteThrough", "true"),
    ):
        x.leaf(tag, value)
    x.open("WriteBufferContent")
    x.leaf("Pattern", "sequential")
    x.close("WriteBufferContent")
    x.leaf("ParallelAsyncIO", "false")
    x.leaf("FileSize", file_size_bytes)
    if run.pattern == "random":
        x.leaf("Random", run.block)
    else:
        x.leaf("StrideSize", run.block)
        x.leaf("InterlockedSequential", "false")
    for tag, value in (
        ("ThreadStride", 0),
        ("MaxFileSize", 0),
        ("RequestCount", run.queue_depth),
        ("WriteRatio", run.write_ratio),
        ("Throughput", 0),
        ("ThreadsPerFile", run.threads),
        ("IOPriority", 3),
        ("Weight", 1),
    ):
        x.leaf(tag, value)
    x.close("Target")
    x.close("Targets")
    x.close("TimeSpan")
    x.close("TimeSpans")
    x.close("Profile")

    x.open("TimeSpan")
    x.leaf("TestTimeSeconds", f"{run.seconds:.2f}")
    x.leaf("ThreadCount", run.threads)
    x.leaf("RequestCount", 0)
    x.leaf("ProcCount", procs)
    _xml_cpu(x, run, procs, rng)
    if run.measure_latency:
        _xml_latency(x, run)
    shares = _thread_shares(run.threads, rng)
    split = {d: _split(run.direction_ios(d), shares) for d in ("read", "write")}
    for t in range(run.threads):
        r, w = split["read"][t], split["write"][t]
        x.open("Thread")
        x.leaf("Id", t)
        x.open("Target")
        x.leaf("Path", run.target)
        x.leaf("BytesCount", (r + w) * run.block)
        x.leaf("FileSize", file_size_bytes)
        x.leaf("IOCount", r + w)
        x.leaf("ReadBytes", r * run.block)
        x.leaf("ReadCount", r)
        x.leaf("WriteBytes", w * run.block)
        x.leaf("WriteCount", w)
        if run.measure_latency:
            if r:
                x.leaf("AverageReadLatencyMilliseconds", f"{_avg_ms(run, 'read'):.3f}")
                x.leaf("ReadLatencyStdev", f"{_std_ms(run, 'read'):.3f}")
            if w:
                x.leaf("AverageWriteLatencyMilliseconds", f"{_avg_ms(run, 'write'):.3f}")
                x.leaf("WriteLatencyStdev", f"{_std_ms(run, 'write'):.3f}")
        x.close("Target")
        x.close("Thread")
    x.close("TimeSpan")
    x.close("Results", newline=False)
    return x.text() + "\n"


def _xml_cpu(x: _Xml, run: _Run, procs: int, rng: random.Random) -> None:
    busy = min(95.0, 0.3 + run.total_ios / run.seconds * 12e-6 * 100 / procs)
    sums = [0.0, 0.0, 0.0, 0.0]
    x.open("CpuUtilization")
    for cpu in range(procs):
        usage = min(99.0, busy * (1 + rng.uniform(-0.25, 0.25)))
        values = (usage, usage * 0.08, usage * 0.92, 100.0 - usage)
        x.open("CPU")
        for tag, value in (("Socket", 0), ("Node", 0), ("Group", 0), ("Core", cpu // 2), ("EfficiencyClass", 0)):
            x.leaf(tag, value)
        x.leaf("Id", cpu)
        for j, tag in enumerate(("UsagePercent", "UserPercent", "KernelPercent", "IdlePercent")):
            x.leaf(tag, f"{values[j]:.2f}")
            sums[j] += values[j]
        x.close("CPU")
    x.open("Average")
    for j, tag in enumerate(("UsagePercent", "UserPercent", "KernelPercent", "IdlePercent")):
        x.leaf(tag, f"{sums[j] / procs:.2f}")
    x.close("Average")
    x.close("CpuUtilization")


def _xml_latency(x: _Xml, run: _Run) -> None:
    dists = {d: dist for d, dist in run.dists.items() if dist is not None and run.direction_ios(d)}
    x.open("Latency")
    dirs = list(dists)
    for d in dirs:
        tag = "Read" if d == "read" else "Write"
        x.leaf(f"Average{tag}Milliseconds", f"{_avg_ms(run, d):.3f}")
        x.leaf(f"{tag}LatencyStdev", f"{_std_ms(run, d):.3f}")
    if dirs:
        n = sum(run.direction_ios(d) for d in dirs)
        x.leaf("AverageTotalMilliseconds", f"{sum(_avg_ms(run, d) * run.direction_ios(d) for d in dirs) / n:.3f}")
        x.leaf("LatencyStdev", f"{sum(_std_ms(run, d) * run.direction_ios(d) for d in dirs) / n:.3f}")
    for p in XML_PERCENTILES:
        x.open("Bucket")
        x.leaf("Percentile", _percentile_text(p))
        for d, dist in dists.items():
            x.leaf("ReadMilliseconds" if d == "read" else "WriteMilliseconds", f"{dist.quantile(p):.3f}")
        total = _mixture(run, p)
        if total is not None:
            x.leaf("TotalMilliseconds", f"{total:.3f}")
        x.close("Bucket")
    x.close("Latency")


def _percentile_text(p: float) -> str:
    """As DiskSpd prints it: 0, 1..99, 99.9 .. 99.9999999, 100."""
    if float(p).is_integer():
        return str(int(p))
    return f"{p:.7f}".rstrip("0")


class _Xml:
    """DiskSpd 2.0.21a's XML writer: one element per line, three spaces per level."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.depth = 0

    def open(self, tag: str) -> None:
        self.parts.append(f"{'   ' * self.depth}<{tag}>\n")
        self.depth += 1

    def close(self, tag: str, newline: bool = True) -> None:
        self.depth -= 1
        self.parts.append(f"{'   ' * self.depth}</{tag}>{chr(10) if newline else ''}")

    def leaf(self, tag: str, value: object) -> None:
        text = str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        self.parts.append(f"{'   ' * self.depth}<{tag}>{text}</{tag}>\n")

    def raw(self, line: str) -> None:
        self.parts.append(f"{'   ' * self.depth}{line}\n")

    def text(self) -> str:
        return "".join(self.parts)


# --------------------------------------------------------------------------------------------- samples


def sample_records() -> list[IoRecord]:
    """The sample text file's sweeps: 8 KiB random read, 8 KiB random write, 64 KiB sequential read."""
    records: list[IoRecord] = []
    plans = (
        ("random", "read", 8192, 1),
        ("random", "write", 8192, 2),
        ("sequential", "read", 65536, 3),
    )
    for pattern, operation, block, seed in plans:
        recs = sweep(
            SAMPLE_DISK,
            "diskspd",
            pattern=pattern,
            operation=operation,
            block_size_bytes=block,
            threads=(1, 2, 4, 8),
            queue_depths=(1, 2, 4, 8, 16, 32),
            duration_s=60.0,
            seed=seed,
            target="D:\\diskspd\\testfile.dat",
        )
        offset = (records[-1].run_index + 1) if records else 0
        for r in recs:
            r.run_index += offset
        records.extend(recs)
    return records


def sample_xml_records() -> list[IoRecord]:
    """The sample XML file's sweep: 8 KiB random 70/30 read/write, 4 threads, queue depth 1 to 32."""
    return sweep(
        SAMPLE_DISK,
        "diskspd",
        pattern="random",
        operation="mixed",
        read_pct=70.0,
        block_size_bytes=8192,
        threads=(4,),
        queue_depths=(1, 2, 4, 8, 16, 32),
        duration_s=60.0,
        seed=4,
        target="D:\\diskspd\\testfile.dat",
    )


def sample_files() -> dict[str, str | bytes]:
    note = (
        'Synthetic DiskSpd output for the disk "synthetic 4-disk Storage Spaces stripe (modelled)": written by '
        "kneepoint's ingest/synth/diskspd.py from a disk model, not measured."
    )
    text = write(
        sample_records(),
        notes=(note, "Batch: 8 KiB random read, 8 KiB random write, 64 KiB sequential read; -t1..8 x -o1..32."),
    )
    xml = write_xml(sample_xml_records(), comment=note + " 8 KiB random 70/30, -t4 -o1..32, -Rxml.")
    return {
        "synthetic-ss-stripe-sweep.txt": text.replace("\n", "\r\n"),  # as Windows writes it
        "synthetic-ss-stripe-mixed-8k.xml": xml.replace("\n", "\r\n"),
    }
