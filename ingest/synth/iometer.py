"""Iometer 1.1.0 results CSV writer: IoRecords (as `disk_model.sweep` makes them, throughput in MiB/s, latency in
ms) back into `results.csv`, one test block per run, the layout of `ManagerList::SaveResults` (see
ingest/formats/iometer.py): the test header, the access specification, the `'Results` block with its ALL,
MANAGER, WORKER and DISK rows, and the closing time stamp. Each worker has the one target, so Iometer's
outstanding I/Os per target per worker is the record's queue depth.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from kneepoint.ingest.records import IoRecord

VERSION = "1.1.0"
_BINS = ("0 to 50 uS,50 to 100 uS,100 to 200 uS,200 to 500 uS,0.5 to 1 mS,1 to 2 mS,2 to 5 mS,5 to 10 mS,"
         "10 to 15 mS,15 to 20 mS,20 to 30 mS,30 to 50 mS,50 to 100 mS,100 to 200 mS,200 to 500 mS,0.5 to 1 S,"
         "1 to 2 s,2 to 4.7 s,4.7 to 5 s,5 to 10 s, >= 10 s")  # fmt: skip
HEADER = (
    "'Target Type,Target Name,Access Specification Name,# Managers,# Workers,# Disks,IOps,Read IOps,Write IOps,"
    "MiBps (Binary),Read MiBps (Binary),Write MiBps (Binary),MBps (Decimal),Read MBps (Decimal),"
    "Write MBps (Decimal),Transactions per Second,Connections per Second,Average Response Time,"
    "Average Read Response Time,Average Write Response Time,Average Transaction Time,Average Connection Time,"
    "Maximum Response Time,Maximum Read Response Time,Maximum Write Response Time,Maximum Transaction Time,"
    "Maximum Connection Time,Errors,Read Errors,Write Errors,Bytes Read,Bytes Written,Read I/Os,Write I/Os,"
    "Connections,Transactions per Connection,Total Raw Read Response Time,Total Raw Write Response Time,"
    "Total Raw Transaction Time,Total Raw Connection Time,Maximum Raw Read Response Time,"
    "Maximum Raw Write Response Time,Maximum Raw Transaction Time,Maximum Raw Connection Time,Total Raw Run Time,"
    "Starting Sector,Maximum Size,Queue Depth,% CPU Utilization,% User Time,% Privileged Time,% DPC Time,"
    "% Interrupt Time,Processor Speed,Interrupts per Second,CPU Effectiveness,Packets/Second,Packet Errors,"
    "Segments Retransmitted/Second," + _BINS
)
MIB = 1024 * 1024


def write(
    records: Iterable[IoRecord],
    *,
    manager: str = "BENCH01",
    target: str = "E:",
    description: str = "",
    start: datetime = datetime(2024, 2, 7, 10, 15, 2),
    seconds: float = 60.0,
) -> str:
    runs: dict[int, list[IoRecord]] = {}
    for r in records:
        runs.setdefault(r.run_index, []).append(r)
    out: list[str] = []
    stamp = start
    for recs in runs.values():
        first = recs[0]
        by = {r.direction: r for r in recs}
        read, write_ = by.get("read"), by.get("write")
        spec = _spec_name(first)
        random = 100 if first.pattern == "random" else 0
        out += ["'Test Type,Test Description", f"0,{description}", "'Version", VERSION, "'Time Stamp", _stamp(stamp),
                "'Access specifications", "'Access specification name,default assignment", f"{spec},NONE",
                "'size,% of size,% reads,% random,delay,burst,align,reply",
                f"{first.block_size_bytes},100,{first.read_pct:g},{random},0,1,0,0",
                "'End access specifications", "'Results", HEADER]  # fmt: skip
        workers = first.threads or 1
        row_all = _row("ALL", "All", spec, read, write_, workers, workers, first.queue_depth or 1, seconds)
        out += [row_all, "'Manager ID,Manager Name", f"1,{manager}", "'Manager network address", "", HEADER]
        out.append(_row("MANAGER", manager, spec, read, write_, workers, workers, first.queue_depth or 1, seconds))
        for w in range(workers):
            share = 1 / workers
            wr = [_share(r, share) for r in (read, write_)]
            out.append(_row("WORKER", f"Worker {w + 1}", spec, wr[0], wr[1], 1, 1, first.queue_depth or 1, seconds))
            out.append(_row("DISK", target, "", wr[0], wr[1], 1, 1, first.queue_depth or 1, seconds))
        stamp += timedelta(seconds=seconds + 5)
        out += ["'Time Stamp", _stamp(stamp), "'End Test"]
    return "\n".join(out) + "\n"


def _spec_name(rec: IoRecord) -> str:
    size = rec.block_size_bytes or 0
    size_text = f"{size // MIB}M" if size >= MIB else f"{size // 1024}K" if size >= 1024 else f"{size}B"
    return f"{size_text}; {rec.read_pct:g}% Read; {100 if rec.pattern == 'random' else 0}% random"


def _share(rec: IoRecord | None, share: float) -> IoRecord | None:
    if rec is None:
        return None
    return IoRecord(
        tool=rec.tool, run_index=rec.run_index, source_line=rec.source_line, pattern=rec.pattern,
        operation=rec.operation, read_pct=rec.read_pct, direction=rec.direction,
        block_size_bytes=rec.block_size_bytes, threads=rec.threads, queue_depth=rec.queue_depth,
        iops=(rec.iops or 0.0) * share, throughput=(rec.throughput or 0.0) * share, latency_avg=rec.latency_avg,
    )  # fmt: skip


def _row(kind: str, name: str, spec: str, read: IoRecord | None, write: IoRecord | None, workers: int, disks: int,
         depth: int, seconds: float) -> str:  # fmt: skip
    r_iops, w_iops = (read.iops or 0.0) if read else 0.0, (write.iops or 0.0) if write else 0.0
    r_mib, w_mib = (read.throughput or 0.0) if read else 0.0, (write.throughput or 0.0) if write else 0.0
    r_lat, w_lat = (read.latency_avg or 0.0) if read else 0.0, (write.latency_avg or 0.0) if write else 0.0
    iops = r_iops + w_iops
    avg = (r_lat * r_iops + w_lat * w_iops) / iops if iops else 0.0
    r_ios, w_ios = round(r_iops * seconds), round(w_iops * seconds)
    r_bytes, w_bytes = round(r_mib * MIB * seconds), round(w_mib * MIB * seconds)
    cells = [kind, name, spec, "1" if kind == "ALL" else "", str(workers) if kind in ("ALL", "MANAGER") else "",
             str(disks), f"{iops:.6f}", f"{r_iops:.6f}", f"{w_iops:.6f}", f"{r_mib + w_mib:.6f}", f"{r_mib:.6f}",
             f"{w_mib:.6f}", f"{(r_mib + w_mib) * MIB / 1e6:.6f}", f"{r_mib * MIB / 1e6:.6f}",
             f"{w_mib * MIB / 1e6:.6f}", f"{iops:.6f}", "0.000000", f"{avg:.6f}", f"{r_lat:.6f}", f"{w_lat:.6f}",
             f"{avg:.6f}", "0.000000", f"{max(r_lat, w_lat) * 9:.6f}", f"{r_lat * 9:.6f}", f"{w_lat * 9:.6f}",
             f"{max(r_lat, w_lat) * 9:.6f}", "0.000000", "0", "0", "0", str(r_bytes), str(w_bytes), str(r_ios),
             str(w_ios), "0", "", "", "", "", "", "", "", "", "", "", "0", "0", str(depth), "12.5", "2.1", "10.4",
             "0.6", "0.9", "", "48211.3", f"{iops / 12.5:.4f}", "0.0", "0.0", "0.0"]  # fmt: skip
    cells += ["0"] * 21
    return ",".join(cells)


def _stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S") + f":{t.microsecond // 1000:03d}"
