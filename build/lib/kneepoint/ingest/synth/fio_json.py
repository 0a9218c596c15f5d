"""Writer: records -> fio 3.x JSON output (`--output-format=json`, or `json+` with latency bins).

The layout is fio 3.33's (`"key" : value`, two-space indent, read/write/trim/sync blocks, `*_ns`
latencies, `latency_ns/us/ms` distributions, `iodepth_level`). One run (records sharing a run_index)
becomes one stonewalled job in its own group: with `group_reporting` one entry with `numjobs` = threads,
without it one entry per clone (same jobname), each with its share of the I/O, as fio prints them.

Figures are made the way fio makes them: `total_ios` = IOPS x runtime, `bw_bytes` = 1000 x io_bytes /
runtime, `iops` = 1000 x total_ios / runtime; latencies in ns. The latency distribution behind the
percentiles, the json+ bins and the `latency_*` shares is a log-linear interpolation through the
record's min, p50, p95, p99, p99.9 and max (`LatencyModel`), so fio's own percentile rule on the bins
gives the record's percentiles back within one bin (1/64 of a power of two, under 2 %).

No sample_files(): sample_data/fio/ holds a real fio sweep, which is better than a synthetic one.
"""

from __future__ import annotations

import json
import math
import time
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass

from kneepoint.ingest import units
from kneepoint.ingest.records import IoRecord

# fio's latency histogram (stat.c, FIO_IO_U_PLAT_BITS 6): bucket index -> [low, high) edges and the value
# printed for it (the middle), in ns.
_PLAT_BITS, _PLAT_VAL, _PLAT_NR = 6, 64, 29 * 64


def _bucket(idx: int) -> tuple[int, int, int]:
    if idx < _PLAT_VAL << 1:
        return idx, idx + 1, idx
    error_bits = (idx >> _PLAT_BITS) - 1
    width = 1 << error_bits
    low = (1 << (error_bits + _PLAT_BITS)) + (idx % _PLAT_VAL) * width
    return low, low + width, int(low + 0.5 * width)


BUCKETS = [_bucket(i) for i in range(_PLAT_NR)]
_BUCKET_LOWS = [b[0] for b in BUCKETS]
PERCENTILES = (1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99)
# fio's latency distribution buckets: (upper bound in ns, key, block)
DIST_NS = (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000)
DIST_US = DIST_NS
DIST_MS = (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000)
_RW = {
    ("sequential", "read"): "read",
    ("sequential", "write"): "write",
    ("sequential", "mixed"): "rw",
    ("random", "read"): "randread",
    ("random", "write"): "randwrite",
    ("random", "mixed"): "randrw",
}


@dataclass(frozen=True, slots=True)
class LatencyModel:
    """A latency distribution (ns) through known quantiles, interpolated log-linearly in between."""

    points: tuple[tuple[float, float], ...]  # (percent, latency ns), both increasing

    @classmethod
    def of(cls, rec: IoRecord) -> LatencyModel:
        to_ns = units.latency_units()[rec.latency_unit] * 1e6
        avg = (rec.latency_avg or rec.latency_p50 or 1.0) * to_ns
        known = [
            (0.0, rec.latency_min),
            (50.0, rec.latency_p50),
            (95.0, rec.latency_p95),
            (99.0, rec.latency_p99),
            (99.9, rec.latency_p999),
            (100.0, rec.latency_max),
        ]
        pts = [(p, v * to_ns) for p, v in known if v is not None and v > 0]
        if len(pts) < 3:  # no distribution printed: a plausible one around the mean
            pts = [(0.0, avg * 0.2), (50.0, avg * 0.9), (95.0, avg * 1.8), (99.0, avg * 2.6), (100.0, avg * 8)]
        if pts[0][0] > 0:
            pts.insert(0, (0.0, min(v for _, v in pts) * 0.5))
        if pts[-1][0] < 100:
            pts.append((100.0, pts[-1][1] * 2))
        out: list[tuple[float, float]] = []
        for p, v in pts:
            v = max(v, out[-1][1] if out else 1.0, 1.0)
            out.append((p, v))
        return cls(tuple(out))

    def quantile(self, p: float) -> float:
        pts = self.points
        for (p0, v0), (p1, v1) in zip(pts, pts[1:], strict=False):
            if p <= p1:
                if p1 == p0 or v1 == v0:
                    return v1
                f = (p - p0) / (p1 - p0)
                return math.exp(math.log(v0) + f * (math.log(v1) - math.log(v0)))
        return pts[-1][1]

    def cdf(self, x: float) -> float:
        """Share (0..1) of I/Os at or below x ns."""
        pts = self.points
        if x <= pts[0][1]:
            return 0.0
        if x >= pts[-1][1]:
            return 1.0
        for (p0, v0), (p1, v1) in zip(pts, pts[1:], strict=False):
            if x < v1:
                if v1 == v0:
                    return p1 / 100
                f = (math.log(x) - math.log(v0)) / (math.log(v1) - math.log(v0))
                return (p0 + f * (p1 - p0)) / 100
        return 1.0

    def bins(self, total: int) -> list[tuple[int, int]]:
        """fio json+ bins: (bucket value, count) for `total` I/Os, counts summing to `total`."""
        lo, hi = self.points[0][1], self.points[-1][1]
        first = max(0, bisect_left(_BUCKET_LOWS, lo) - 1)
        out: list[tuple[int, int]] = []
        done = 0
        for low, high, value in BUCKETS[first:]:
            if low > hi:
                break
            upto = round(total * self.cdf(high))
            if upto > done:
                out.append((value, upto - done))
                done = upto
        if done < total:
            if out:
                out[-1] = (out[-1][0], out[-1][1] + total - done)
            else:
                out.append((BUCKETS[min(len(BUCKETS) - 1, bisect_left(_BUCKET_LOWS, hi))][2], total))
        return out

    def shares(self, bounds_ns: Iterable[float]) -> list[float]:
        """Percent of I/Os in each (previous bound, bound] bucket, with fio's 0.01 floor for non-empty ones."""
        out = []
        prev = 0.0
        for b in bounds_ns:
            c = self.cdf(b)
            share = 100 * (c - prev)
            out.append(max(share, 0.01) if share > 1e-9 else 0.0)
            prev = c
        return out


@dataclass(slots=True)
class DirectionFigures:
    """One direction of one run the way fio counts it."""

    runtime_ms: int
    total_ios: int
    io_bytes: int
    lat_min: int
    lat_max: int
    lat_mean: float
    slat_mean: float
    model: LatencyModel

    @classmethod
    def of(cls, rec: IoRecord, default_runtime_s: float = 60.0) -> DirectionFigures:
        runtime_ms = max(1, round((rec.duration_s or default_runtime_s) * 1000))
        iops = rec.iops or 0.0
        bps = units.to_bytes_per_s(rec.throughput, rec.throughput_unit) or iops * (rec.block_size_bytes or 4096)
        model = LatencyModel.of(rec)
        to_ns = units.latency_units()[rec.latency_unit] * 1e6
        mean = (rec.latency_avg * to_ns) if rec.latency_avg else model.quantile(50)
        return cls(
            runtime_ms=runtime_ms,
            total_ios=max(0, round(iops * runtime_ms / 1000)),
            io_bytes=max(0, round(bps * runtime_ms / 1000)),
            lat_min=round(model.points[0][1]),
            lat_max=round(model.points[-1][1]),
            lat_mean=mean,
            slat_mean=min(mean * 0.03, 5000.0),
            model=model,
        )

    def split(self, n: int, i: int) -> DirectionFigures:
        """Clone i of n: an even share of the I/O (remainders to the first clones)."""
        ios = self.total_ios // n + (1 if i < self.total_ios % n else 0)
        nbytes = self.io_bytes // n + (1 if i < self.io_bytes % n else 0)
        return DirectionFigures(
            self.runtime_ms, ios, nbytes, self.lat_min, self.lat_max, self.lat_mean, self.slat_mean, self.model
        )


def rw_option(rec: IoRecord) -> str:
    return _RW.get((rec.pattern, rec.operation), "randread")


def bs_option(size: int | None) -> str:
    size = size or 4096
    for suffix, factor in (("m", 1 << 20), ("k", 1 << 10)):
        if size % factor == 0:
            return f"{size // factor}{suffix}"
    return str(size)


def runs(records: Iterable[IoRecord]) -> list[list[IoRecord]]:
    """Records grouped by run_index, in file order."""
    out: dict[int, list[IoRecord]] = {}
    for rec in records:
        out.setdefault(rec.run_index, []).append(rec)
    return list(out.values())


def write(
    records: Iterable[IoRecord],
    *,
    json_plus: bool = False,
    group_reporting: bool = True,
    version: str | None = None,
    timestamp: int = 1763683969,
    ioengine: str = "libaio",
    disk: str | None = "vda",
    note: str | None = None,
) -> str:
    """fio JSON for `records`. `note` is printed before the document, as fio does for its notes."""
    recs = list(records)
    version = version or next((r.tool_version for r in recs if r.tool_version), None) or "3.33"
    target = next((r.target for r in recs if r.target), None) or "/work/fio-test.dat"
    global_opts = {
        "filename": target,
        "direct": "1",
        "ioengine": ioengine,
        "time_based": "",
        "randrepeat": "0",
    }
    jobs = []
    total_read = total_write = 0
    for groupid, run in enumerate(runs(recs)):
        for job in _jobs(run, groupid, json_plus, group_reporting):
            jobs.append(job)
            total_read += (job.get("read") or job["mixed"])["total_ios"]
            total_write += job["write"]["total_ios"] if "write" in job else 0
    doc: dict[str, object] = {
        "fio version": f"fio-{version}",
        "timestamp": timestamp,
        "timestamp_ms": timestamp * 1000,
        "time": time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(timestamp)),
        "global options": global_opts,
        "jobs": jobs,
    }
    if disk:
        doc["disk_util"] = [
            {
                "name": disk,
                "read_ios": total_read,
                "write_ios": total_write,
                "read_merges": 0,
                "write_merges": 0,
                "read_ticks": 0,
                "write_ticks": 0,
                "in_queue": 0,
                "util": 90.0,
            }
        ]
    text = json.dumps(doc, indent=2, separators=(",", " : "))
    return (f"{note}\n" if note else "") + text + "\n"


def _jobs(run: list[IoRecord], groupid: int, json_plus: bool, group_reporting: bool) -> list[dict[str, object]]:
    first = run[0]
    threads = max(1, first.threads or 1)
    qd = max(1, first.queue_depth or 1)
    rw = rw_option(first)
    name = first.metadata.get("jobname") or f"{rw}-{bs_option(first.block_size_bytes)}-qd{qd}"
    options = {"name": name, "rw": rw, "bs": _bs_pair(run), "iodepth": str(qd), "numjobs": str(threads)}
    if any(r.direction == "total" for r in run):
        options["unified_rw_reporting"] = "mixed"
    if first.operation == "mixed":
        options["rwmixread"] = str(round(first.read_pct))
    if group_reporting:
        options["group_reporting"] = "1"
    by_dir = {("write" if r.direction == "write" else "read" if r.direction == "read" else "mixed"): r for r in run}
    figures = {key: DirectionFigures.of(rec) for key, rec in by_dir.items()}
    clones = 1 if group_reporting else threads
    out = []
    for i in range(clones):
        job: dict[str, object] = {
            "jobname": name,
            "groupid": groupid,
            "error": 0,
            "eta": 0,
            "elapsed": max(f.runtime_ms for f in figures.values()) // 1000 + 1,
            "job options": options,
        }
        if "mixed" in figures:  # unified_rw_reporting=mixed: one block instead of read/write/trim
            job["mixed"] = _direction(figures["mixed"].split(clones, i), json_plus)
        else:
            for key in ("read", "write", "trim"):
                fig = figures.get(key)
                job[key] = _direction(fig.split(clones, i) if fig else None, json_plus)
        job["sync"] = {"total_ios": 0, "lat_ns": _lat(0, 0, 0.0, 0)}
        runtime = max(f.runtime_ms for f in figures.values())
        ios = sum(f.split(clones, i).total_ios for f in figures.values())
        job.update(
            {
                "job_runtime": runtime,
                "usr_cpu": 3.5,
                "sys_cpu": 25.0,
                "ctx": ios,
                "majf": 0,
                "minf": 38,
                "iodepth_level": _depth_levels(qd),
                "iodepth_submit": _submit_levels(),
                "iodepth_complete": _submit_levels(),
            }
        )
        shares = distribution(figures.values())
        job["latency_ns"] = dict(zip(map(str, DIST_NS), shares[:10], strict=True))
        job["latency_us"] = dict(zip(map(str, DIST_US), shares[10:20], strict=True))
        job["latency_ms"] = dict(zip([*map(str, DIST_MS), ">=2000"], shares[20:], strict=True))
        job.update({"latency_depth": qd, "latency_target": 0, "latency_percentile": 100.0, "latency_window": 0})
        out.append(job)
    return out


DIST_BOUNDS_NS = (*DIST_NS, *(b * 1000 for b in DIST_US), *(b * 1_000_000 for b in DIST_MS), math.inf)


def distribution(figures: Iterable[DirectionFigures]) -> list[float]:
    """fio's `latency_ns/us/ms` shares (percent of the job's I/Os per bucket), all directions together."""
    figs = [f for f in figures if f.total_ios > 0]
    total = sum(f.total_ios for f in figs) or 1
    out = [0.0] * len(DIST_BOUNDS_NS)
    for f in figs:
        for i, share in enumerate(f.model.shares(DIST_BOUNDS_NS)):
            out[i] += share * f.total_ios / total
    return [round(v, 6) for v in out]


def _bs_pair(run: list[IoRecord]) -> str:
    sizes = {r.direction: r.block_size_bytes for r in run}
    read = sizes.get("read") or sizes.get("total") or sizes.get("write")
    write = sizes.get("write") or read
    return bs_option(read) if read == write else f"{bs_option(read)},{bs_option(write)}"


def _direction(fig: DirectionFigures | None, json_plus: bool) -> dict[str, object]:
    if fig is None or fig.total_ios == 0:
        return _empty_direction()
    runtime = fig.runtime_ms
    bw_bytes = 1000 * fig.io_bytes // runtime
    n = fig.total_ios
    clat: dict[str, object] = _lat(
        max(1, fig.lat_min - 100), max(1, fig.lat_max - 100), max(1.0, fig.lat_mean - fig.slat_mean), n
    )
    clat["percentile"] = {f"{p:.6f}": round(fig.model.quantile(p)) for p in PERCENTILES}
    if json_plus:
        clat["bins"] = {str(v): c for v, c in fig.model.bins(n)}
    iops = 1000.0 * n / runtime
    return {
        "io_bytes": fig.io_bytes,
        "io_kbytes": fig.io_bytes >> 10,
        "bw_bytes": bw_bytes,
        "bw": bw_bytes // 1024,
        "iops": round(iops, 6),
        "runtime": runtime,
        "total_ios": n,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": _lat(100, max(200, round(fig.slat_mean * 20)), fig.slat_mean, n),
        "clat_ns": clat,
        "lat_ns": _lat(fig.lat_min, fig.lat_max, fig.lat_mean, n),
        "bw_min": round(bw_bytes / 1024 * 0.95),
        "bw_max": round(bw_bytes / 1024 * 1.05),
        "bw_agg": 100.0,
        "bw_mean": round(bw_bytes / 1024, 6),
        "bw_dev": round(bw_bytes / 1024 * 0.02, 6),
        "bw_samples": max(1, runtime // 500),
        "iops_min": round(iops * 0.95),
        "iops_max": round(iops * 1.05),
        "iops_mean": round(iops, 6),
        "iops_stddev": round(iops * 0.02, 6),
        "iops_samples": max(1, runtime // 500),
    }


def _lat(lo: int, hi: int, mean: float, n: int) -> dict[str, object]:
    return {"min": lo, "max": hi, "mean": round(mean, 6), "stddev": round(mean * 0.35, 6), "N": n}


def _empty_direction() -> dict[str, object]:
    zero = _lat(0, 0, 0.0, 0)
    return {
        "io_bytes": 0,
        "io_kbytes": 0,
        "bw_bytes": 0,
        "bw": 0,
        "iops": 0.0,
        "runtime": 0,
        "total_ios": 0,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": dict(zero),
        "clat_ns": dict(zero),
        "lat_ns": dict(zero),
        "bw_min": 0,
        "bw_max": 0,
        "bw_agg": 0.0,
        "bw_mean": 0.0,
        "bw_dev": 0.0,
        "bw_samples": 0,
        "iops_min": 0,
        "iops_max": 0,
        "iops_mean": 0.0,
        "iops_stddev": 0.0,
        "iops_samples": 0,
    }


def _depth_levels(qd: int) -> dict[str, float]:
    keys = ("1", "2", "4", "8", "16", "32", ">=64")
    level = min(6, max(0, qd.bit_length() - 1))
    return {k: (100.0 if i == level else 0.0) for i, k in enumerate(keys)}


def _submit_levels() -> dict[str, float]:
    return {"0": 0.0, "4": 100.0, "8": 0.0, "16": 0.0, "32": 0.0, "64": 0.0, ">=64": 0.0}
