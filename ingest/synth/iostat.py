"""Linux `iostat -x` writer: IntervalRecords back into the text of sysstat 9, 10, 11 or 12 (the layouts
ingest/formats/iostat.py reads), or its JSON (`-o JSON`).

Records with one interval_index make one report (a `Device` header and a line per device); a record marked
since_boot opens the run as iostat's first report does, otherwise the command line says `-y`. With `timestamps`
each report gets the `-t` line: the first report at `start`, each next one interval_s later. `observed` makes a run
of plausible records to write (a load that swells and falls, latency growing with it).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterable
from datetime import datetime, timedelta

from kneepoint.ingest.records import IntervalRecord


def _columns(header: str) -> list[str]:
    return header.split()


# Column layouts: (the device header word, the column names after it).
LAYOUTS: dict[str, tuple[str, list[str]]] = {
    # sysstat 9.0: one await for both directions
    "sysstat9": ("Device:", _columns("rrqm/s wrqm/s r/s w/s rkB/s wkB/s avgrq-sz avgqu-sz await svctm %util")),
    # sysstat 9.1.3 - 10.x
    "sysstat10": (
        "Device:",
        _columns("rrqm/s wrqm/s r/s w/s rkB/s wkB/s avgrq-sz avgqu-sz await r_await w_await svctm %util"),
    ),
    "sysstat11": (
        "Device",
        _columns("r/s w/s rkB/s wkB/s rrqm/s wrqm/s %rrqm %wrqm r_await w_await aqu-sz rareq-sz wareq-sz svctm %util"),
    ),
    "sysstat12": (
        "Device",
        _columns(
            "r/s rkB/s rrqm/s %rrqm r_await rareq-sz w/s wkB/s wrqm/s %wrqm w_await wareq-sz "
            "d/s dkB/s drqm/s %drqm d_await dareq-sz f/s f_await aqu-sz %util"
        ),
    ),
}
VERSIONS = {"sysstat9": "9.0.4", "sysstat10": "10.1.5", "sysstat11": "11.6.1", "sysstat12": "12.5.2"}


def write(
    records: Iterable[IntervalRecord],
    *,
    layout: str = "sysstat12",
    host: str = "db01",
    kernel: str = "5.15.0-91-generic",
    timestamps: bool = True,
    iso: bool = False,
    megabytes: bool = False,
    start: datetime = datetime(2026, 11, 27, 14, 15, 1),
    version: bool = True,
    output: str = "text",
) -> str:
    reports = _reports(records)
    since_boot = bool(reports) and reports[0][0].since_boot
    interval = next((r[0].interval_s for r in reports if r[0].interval_s), 5.0)
    flags = "-x" + ("t" if timestamps else "") + ("m" if megabytes else "") + ("" if since_boot else "y")
    prompt = f"[admin@{host} ~]$ "
    out = []
    if version:
        out += [f"{prompt}iostat -V", f"sysstat version {VERSIONS.get(layout, '12.5.2')}",
                "(C) Sebastien Godard (sysstat <at> orange.fr)"]  # fmt: skip
    env = "S_TIME_FORMAT=ISO " if iso else ""
    out.append(f"{prompt}{env}iostat {flags}{' -o JSON' if output == 'json' else ''} {interval:g} {len(reports)}")
    if output == "json":
        return "\n".join(out) + "\n" + _json(reports, host, kernel, timestamps, iso, megabytes, start) + "\n"
    day = f"{start:%Y-%m-%d}" if iso else f"{start:%m/%d/%Y}"
    out += [f"Linux {kernel} ({host}) \t{day} \t_x86_64_\t(8 CPU)", ""]
    device_word, columns = LAYOUTS[layout]
    if megabytes:
        columns = [c.replace("kB/s", "MB/s") for c in columns]
    t = start
    for k, report in enumerate(reports):
        if k:
            t += timedelta(seconds=report[0].interval_s or interval)
        if timestamps:
            out.append(_stamp(t, iso))
        cpu = (3.4 + k % 3, 0.42, 1.41, 0.18 + k % 2, 0.0, 94.0 - k % 3)
        out += ["avg-cpu:  %user   %nice %system %iowait  %steal   %idle", f"{cpu[0]:15.2f}" + "".join(
            f"{v:8.2f}" for v in cpu[1:]), ""]  # fmt: skip
        width = max(13, *(len(r.device) + 1 for r in report))
        out.append(f"{device_word:<{width}}" + "".join(f" {c:>{max(7, len(c))}}" for c in columns))
        for rec in report:
            cells = _cells(rec, megabytes)
            out.append(
                f"{rec.device:<{width}}" + "".join(f" {cells.get(c, 0.0):>{max(7, len(c))}.2f}" for c in columns)
            )
        out.append("")
    return "\n".join(out) + "\n"


def _reports(records: Iterable[IntervalRecord]) -> list[list[IntervalRecord]]:
    groups: dict[int, list[IntervalRecord]] = {}
    for rec in records:
        groups.setdefault(rec.interval_index, []).append(rec)
    return [groups[k] for k in sorted(groups)]


def _stamp(t: datetime, iso: bool) -> str:
    return f"{t:%Y-%m-%dT%H:%M:%S}+0100" if iso else f"{t:%m/%d/%Y %I:%M:%S %p}"


def _cells(rec: IntervalRecord, megabytes: bool) -> dict[str, float]:
    """The figures of one device line, by column name."""
    reads, writes = rec.reads_per_s or 0.0, rec.writes_per_s or 0.0
    unit = 1048576.0 if megabytes else 1024.0
    rbytes, wbytes = rec.read_bytes_per_s or 0.0, rec.write_bytes_per_s or 0.0
    r_await, w_await = rec.read_latency_ms or 0.0, rec.write_latency_ms or 0.0
    total = reads + writes
    suffix = "MB/s" if megabytes else "kB/s"
    return {
        "r/s": reads, "w/s": writes, f"r{suffix}": rbytes / unit, f"w{suffix}": wbytes / unit,
        "rrqm/s": reads * 0.05, "wrqm/s": writes * 0.3, "%rrqm": 4.76, "%wrqm": 23.08,
        "r_await": r_await, "w_await": w_await,
        "await": (reads * r_await + writes * w_await) / total if total else 0.0,
        "avgrq-sz": (rbytes + wbytes) / total / 512 if total else 0.0,
        "rareq-sz": rbytes / reads / 1024 if reads else 0.0, "wareq-sz": wbytes / writes / 1024 if writes else 0.0,
        "avgqu-sz": rec.queue_length or 0.0, "aqu-sz": rec.queue_length or 0.0,
        "svctm": (rec.utilization_pct or 0.0) * 10 / total if total else 0.0, "%util": rec.utilization_pct or 0.0,
    }  # fmt: skip


def _json(
    reports: list[list[IntervalRecord]], host: str, kernel: str, timestamps: bool, iso: bool, megabytes: bool,
    start: datetime,
) -> str:  # fmt: skip
    statistics = []
    t = start
    suffix = "MB/s" if megabytes else "kB/s"
    for k, report in enumerate(reports):
        if k:
            t += timedelta(seconds=report[0].interval_s or 5.0)
        entry: dict = {}
        if timestamps:
            entry["timestamp"] = _stamp(t, iso)
        entry["avg-cpu"] = {"user": 3.41, "nice": 0.42, "system": 1.41, "iowait": 0.18, "steal": 0.0, "idle": 94.58}
        disks = []
        for rec in report:
            cells = _cells(rec, megabytes)
            disk = {"disk_device": rec.device}
            for key in ("r/s", "w/s", f"r{suffix}", f"w{suffix}", "rrqm/s", "wrqm/s", "r_await", "w_await", "aqu-sz"):
                disk[key] = round(cells[key], 2)
            disk["util"] = round(cells["%util"], 2)
            disks.append(disk)
        entry["disk"] = disks
        statistics.append(entry)
    doc = {"sysstat": {"hosts": [{
        "nodename": host, "sysname": "Linux", "release": kernel, "machine": "x86_64", "number-of-cpus": 8,
        "date": f"{start:%Y-%m-%d}" if iso else f"{start:%m/%d/%y}", "statistics": statistics,
    }]}}  # fmt: skip
    # iostat opens its document with `{"sysstat": {` on one line
    return '{"sysstat": ' + json.dumps(doc["sysstat"], indent="\t") + "}"


def observed(
    devices: tuple[str, ...] = ("sda", "nvme0n1"),
    reports: int = 12,
    interval_s: float = 5.0,
    *,
    since_boot: bool = True,
    seed: int = 0,
    host: str = "db01",
) -> list[IntervalRecord]:
    """A run of iostat reports: the first since boot (a quiet average) where `since_boot`, then a load that swells
    and falls, its latency growing with the load as a disk's does near saturation; figures rounded as iostat
    prints them (2 decimals, bytes in whole kB)."""
    rng = random.Random(seed)
    out: list[IntervalRecord] = []
    for k in range(reports):
        boot = since_boot and k == 0
        for d, device in enumerate(devices):
            load = 0.1 if boot else 0.5 + 0.45 * math.sin(k / max(1, reports - 1) * math.pi) + rng.uniform(-0.05, 0.05)
            capacity = 9000.0 if device.startswith("nvme") else 800.0
            reads = round(capacity * 0.7 * load, 2)
            writes = round(capacity * 0.3 * load * (0 if d == 2 else 1), 2)
            base = 0.15 if device.startswith("nvme") else 2.5
            latency = base / max(0.05, 1.0 - min(0.95, load))
            out.append(
                IntervalRecord(
                    interval_index=k,
                    source_line=0,
                    device=device,
                    device_kind="block_device",
                    interval_start=None,
                    interval_s=None if boot else interval_s,
                    reads_per_s=reads,
                    writes_per_s=writes,
                    read_bytes_per_s=round(reads * 8.0) * 1024.0,
                    write_bytes_per_s=round(writes * 16.0) * 1024.0,
                    read_latency_ms=round(latency, 2) if reads else None,
                    write_latency_ms=round(latency * 1.6, 2) if writes else None,
                    queue_length=round((reads * latency + writes * latency * 1.6) / 1000, 2),
                    utilization_pct=round(min(100.0, 100 * load), 2),
                    host=host,
                    since_boot=boot,
                    tool="iostat",
                )
            )
    return out


SAMPLE_FOLDER = "iostat"


def sample_files() -> dict[str, str | bytes]:
    """A day of `iostat -xt 300` on the sample fio disk (/dev/vda of kneepoint-dev-vm, sample_data/fio): 4 KiB I/O
    at 80 % reads swelling over a working day, served at ~0.08 ms where the fio sweep (which the host's cache
    answered) measured 0.013 ms at one I/O in flight, so the page shows a disk slower than when it was
    benchmarked."""
    from dataclasses import replace

    from kneepoint.ingest.synth.disk_model import DiskModel
    from kneepoint.ingest.synth.perfmon_csv import observe

    # the same virtio disk with the host's cache shared with other guests: ~80 µs per I/O instead of ~13 µs
    busy_vda = DiskModel("vda in production", service_time_ms=0.08, sigma=0.02, kappa=0.0001, max_bytes_per_s=2e9)
    start = datetime(2026, 11, 23, 0, 0, 0)
    records = [
        replace(
            r,
            device="vda",
            device_kind="block_device",
            host="kneepoint-dev-vm",
            tool="iostat",
            tool_version=None,
            # iostat prints two decimals
            reads_per_s=round(r.reads_per_s, 2),
            writes_per_s=round(r.writes_per_s, 2),
            read_latency_ms=round(r.read_latency_ms, 2),
            write_latency_ms=round(r.write_latency_ms, 2),
        )
        for r in observe(
            busy_vda,
            devices=("vda",),
            start=start,
            interval_s=300.0,
            samples=288,
            block_size_bytes=4096,
            read_share=0.8,
            peak_outstanding=4.0,
            seed=22,
        )
    ]
    text = write(records, host="kneepoint-dev-vm", kernel="6.18.0-1-amd64", start=start + timedelta(seconds=300))
    return {"synthetic-vda-day-iostat.txt": text}
