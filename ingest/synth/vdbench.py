"""vdbench 5.04.07 writer: IoRecords (as `disk_model.sweep` makes them: throughput in MiB/s, latency in ms) back into
its console output (`console`) or `flatfile.html` (`flatfile`), the layouts ingest/formats/vdbench.py reads.

Each run is a run definition's For-loop value (`threads=`): a `Starting RD=` line, the two header lines, a few
interval lines around the run's figures and its `avg_` line. vdbench's threads keep one I/O outstanding each, so
a record's threads x queue depth is written as its vdbench threads. A mixed run (a read and a write record) is
one line: the summed rate, the measured read share, the per-direction response times.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from kneepoint.ingest.records import IoRecord

DISTRIBUTION = "vdbench50407"
_HEAD_1 = (
    "interval        i/o   MB/sec   bytes   read     resp     read    write     read    write     resp  queue"
    "  cpu%  cpu%"
)
_HEAD_2 = (
    "                               rate  1024**2     i/o    pct     time     resp     resp      max      max   stddev"
    "  depth sys+u   sys"
)
_FLAT = [
    *("tod", "Run", "Interval", "reqrate", "rate", "MB/sec", "bytes/io", "read%", "resp", "read_resp", "write_resp"),
    *("resp_max", "read_max", "write_max", "resp_std", "read_std", "write_std", "xfersize", "threads", "rdpct"),
    *("rhpct", "whpct", "seekpct", "lunsize", "version", "compratio", "dedupratio", "queue_depth", "cpu_used"),
    *("cpu_user", "cpu_kernel", "cpu_wait", "cpu_idle"),
]


def write(records: Iterable[IoRecord], *, layout: str = "console", lun: str = "/dev/sdb", rd: str = "rd1",
          start: datetime = datetime(2025, 3, 11, 9, 12, 0), intervals: int = 5) -> str:  # fmt: skip
    runs = _runs(records)
    t = start
    if layout == "flatfile":
        out = ["* vdbench flatfile: one row per interval and per run average", " ".join(f"{c:>12}" for c in _FLAT)]
        for run in runs:
            for k in [*range(1, intervals + 1), f"avg_2-{intervals}"]:
                t += timedelta(seconds=1)
                out.append(" ".join(f"{v:>12}" for v in _flat_row(run, str(k), t, rd)))
        return "\n".join(out) + "\n"
    out = ["", f"Vdbench distribution: {DISTRIBUTION} Tue June 05  9:49:29 MDT 2018", ""]
    out += [f"sd=sd1,lun={lun},openflags=o_direct"]
    if runs:  # the parameter file pasted with the output: its workload definition
        first = runs[0]
        out += [f"wd=wd1,sd=sd1,xfersize={first['xfersize']},rdpct={first['rdpct']:g},seekpct={first['seekpct']}",
                f"rd={rd},wd=wd1,iorate=max,elapsed={intervals},interval=1"]  # fmt: skip
    for run in runs:
        t += timedelta(seconds=2)
        out += [f"{_tod(t)} Starting RD={rd}; I/O rate: Uncontrolled MAX; elapsed={intervals}; "
                f"For loops: xfersize={run['xfersize']} threads={run['threads']} rdpct={run['rdpct']:g}", "",
                f"{t:%b %d, %Y}    {_HEAD_1}", _HEAD_2]  # fmt: skip
        for k in range(1, intervals + 1):
            t += timedelta(seconds=1)
            out.append(_line(t, f"{k:>10}", run, 0.97 if k == 1 else 1.0))
        out.append(_line(t, f"avg_2-{intervals:<3}".rjust(10), run, 1.0))
    out.append(f"{_tod(t)} Vdbench execution completed successfully.")
    return "\n".join(out) + "\n"


def _runs(records: Iterable[IoRecord]) -> list[dict]:
    groups: dict[int, list[IoRecord]] = {}
    for r in records:
        if r.direction != "total":
            groups.setdefault(r.run_index, []).append(r)
    runs = []
    for recs in groups.values():
        first = recs[0]
        by = {r.direction: r for r in recs}
        read, write_ = by.get("read"), by.get("write")
        iops = sum(r.iops or 0.0 for r in recs)
        r_iops = (read.iops or 0.0) if read else 0.0
        avg = sum((r.latency_avg or 0.0) * (r.iops or 0.0) for r in recs) / iops if iops else 0.0
        bs = first.block_size_bytes or 4096
        runs.append({
            "iops": iops, "mib": iops * bs / 1048576, "bytes": bs, "read_pct": 100 * r_iops / iops if iops else 0.0,
            "resp": avg, "read_resp": (read.latency_avg or 0.0) if read else 0.0,
            "write_resp": (write_.latency_avg or 0.0) if write_ else 0.0,
            "threads": (first.threads or 1) * (first.queue_depth or 1),
            "xfersize": f"{bs // 1024}k" if bs % 1024 == 0 else str(bs), "rdpct": first.read_pct,
            "seekpct": 0 if first.pattern == "sequential" else 100,
        })  # fmt: skip
    return runs


def _tod(t: datetime) -> str:
    return f"{t:%H:%M:%S}.{t.microsecond // 1000:03d}"


def _line(t: datetime, interval: str, run: dict, f: float) -> str:
    return (f"{_tod(t)} {interval} {run['iops'] * f:10.2f} {run['mib'] * f:8.2f} {run['bytes']:7d} "
            f"{run['read_pct']:6.2f} {run['resp']:8.3f} {run['read_resp']:8.3f} {run['write_resp']:8.3f} "
            f"{run['read_resp'] * 8:8.2f} {run['write_resp'] * 8:8.2f} {run['resp'] * 0.3:8.3f} "
            f"{min(run['threads'], run['iops'] * run['resp'] / 1000):6.1f} {12.5:5.1f} {8.1:5.1f}")  # fmt: skip


def _flat_row(run: dict, interval: str, t: datetime, rd: str) -> list[str]:
    resp = run["resp"]
    return [_tod(t), f"{rd}_t{run['threads']}", interval, f"{run['iops']:.1f}", f"{run['iops']:.1f}",
            f"{run['mib']:.2f}", str(run["bytes"]), f"{run['read_pct']:.2f}", f"{resp:.3f}",
            f"{run['read_resp']:.3f}", f"{run['write_resp']:.3f}", f"{resp * 8:.3f}", f"{run['read_resp'] * 8:.3f}",
            f"{run['write_resp'] * 8:.3f}", f"{resp * 0.3:.3f}", "0.000", "0.000", str(run["bytes"]),
            str(run["threads"]), f"{run['rdpct']:g}", "0", "0", str(run["seekpct"]), "1600321314816", DISTRIBUTION,
            "1.0", "1.0", f"{run['threads']:.1f}", "0.14", "0.04", "0.10", "0.00", "0.86"]  # fmt: skip
