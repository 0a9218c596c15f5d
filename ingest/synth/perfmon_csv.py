"""Performance Monitor counter-log writer: IntervalRecords back into the CSV that `typeperf -f CSV` and `relog -f csv`
write (the `(PDH-CSV 4.0) (zone)(bias)` header, one column per `\\\\HOST\\PhysicalDisk(instance)\\counter`, a blank
first sample, `MM/DD/YYYY HH:MM:SS.mmm` timestamps, values with six decimals), the layout
ingest/formats/perfmon_csv.py reads; and `observe`, a production load on a modelled disk over time, to write.
"""

from __future__ import annotations

import csv
import io
import math
import random
from collections.abc import Iterable
from datetime import datetime, timedelta

from kneepoint.ingest.records import IntervalRecord
from kneepoint.ingest.synth.disk_model import DiskModel

# Counter -> (record field, factor from the record's unit to the counter's); the order typeperf lists them in.
COUNTERS: tuple[tuple[str, str, float], ...] = (
    ("Avg. Disk Queue Length", "queue_length", 1.0),
    ("Avg. Disk sec/Read", "read_latency_ms", 0.001),
    ("Avg. Disk sec/Write", "write_latency_ms", 0.001),
    ("Disk Reads/sec", "reads_per_s", 1.0),
    ("Disk Writes/sec", "writes_per_s", 1.0),
    ("Disk Read Bytes/sec", "read_bytes_per_s", 1.0),
    ("Disk Write Bytes/sec", "write_bytes_per_s", 1.0),
    ("% Idle Time", "utilization_pct", 1.0),  # 100 - utilization
)
# What a `\PhysicalDisk(*)\*` log holds beside them, and another object's counter: columns the reader ignores.
EXTRA_DISK_COUNTERS = ("Split IO/Sec", "Avg. Disk Bytes/Read")
OTHER_COUNTER = "Processor(_Total)\\% Processor Time"
OBJECTS = {"physical_disk": "PhysicalDisk", "logical_disk": "LogicalDisk"}


def write(
    records: Iterable[IntervalRecord],
    *,
    time_zone: str = "GMT Standard Time",
    bias_minutes: int = 0,
    separator: str = ",",
    decimal_comma: bool = False,
    extra_counters: bool = False,
) -> str:
    """The counter log of `records` (devices as `observe` makes them: `PhysicalDisk(0 C:)`, one host or several),
    one row per interval_index, the first row blank as typeperf writes it. Each record's interval must follow the
    one before (interval_start = the previous row's timestamp)."""
    rows: dict[int, list[IntervalRecord]] = {}
    devices: dict[tuple[str | None, str], None] = {}
    for rec in records:
        rows.setdefault(rec.interval_index, []).append(rec)
        devices.setdefault((rec.host, rec.device), None)
    header = [f"(PDH-CSV 4.0) ({time_zone})({bias_minutes})"]
    columns: list[tuple[tuple[str | None, str], str, float] | None] = []
    for host, device in devices:
        prefix = f"\\\\{host}\\" if host else "\\"
        for counter, field, factor in COUNTERS:
            header.append(f"{prefix}{device}\\{counter}")
            columns.append(((host, device), field, factor))
        if extra_counters:
            for counter in EXTRA_DISK_COUNTERS:
                header.append(f"{prefix}{device}\\{counter}")
                columns.append(None)
    if extra_counters and devices:
        host = next(iter(devices))[0]
        header.append(f"\\\\{host}\\{OTHER_COUNTER}" if host else f"\\{OTHER_COUNTER}")
        columns.append(None)
    buf = io.StringIO()
    out = csv.writer(buf, delimiter=separator, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    out.writerow(header)
    first = True
    for index in sorted(rows):
        recs = rows[index]
        start = recs[0].interval_start
        if first and start:
            out.writerow([_stamp(datetime.fromisoformat(start))] + [" "] * (len(header) - 1))
        first = False
        by_device = {(r.host, r.device): r for r in recs}
        end = datetime.fromisoformat(start or "2026-01-01T00:00:00") + timedelta(seconds=recs[0].interval_s or 0)
        cells = [_stamp(end)]
        for column in columns:
            if column is None:
                cells.append(_value(3.5, decimal_comma))
                continue
            key, field, factor = column
            rec = by_device.get(key)
            value = getattr(rec, field) if rec is not None else None
            if value is not None and field == "utilization_pct":
                value = 100.0 - value
            cells.append(" " if value is None else _value(value * factor, decimal_comma))
        out.writerow(cells)
    return buf.getvalue()


def _stamp(t: datetime) -> str:
    return f"{t:%m/%d/%Y %H:%M:%S}.{t.microsecond // 1000:03d}"


def _value(value: float, decimal_comma: bool) -> str:
    text = f"{value:.6f}"
    return text.replace(".", ",") if decimal_comma else text


def observe(
    disk: DiskModel,
    *,
    host: str = "SQL01",
    devices: Iterable[str] = ("PhysicalDisk(0 C:)",),
    start: datetime = datetime(2026, 11, 23, 0, 0, 0, 117000),
    interval_s: float = 15.0,
    samples: int = 240,
    block_size_bytes: int = 8192,
    read_share: float = 0.7,
    peak_outstanding: float = 6.0,
    slowdown: float = 1.0,
    seed: int = 0,
) -> list[IntervalRecord]:
    """A production load on `disk` sampled every `interval_s`: I/Os in flight follow a working day (busy 9-17 h,
    quiet at night) with noise; IOPS is what the disk delivers at that many in flight (its saturation curve), latency
    follows by Little's law, times `slowdown` (a disk slower than when it was benchmarked). Values are rounded as a
    counter log prints them (six decimals of the counter's unit), so write() and the reader give them back."""
    rng = random.Random(seed)
    names = list(devices)
    records: list[IntervalRecord] = []
    for i in range(samples):
        t = start + timedelta(seconds=i * interval_s)
        hour = t.hour + t.minute / 60
        busy = 0.15 + 0.85 * max(0.0, math.sin(math.pi * (hour - 7) / 12)) ** 2  # peaks about 13 h
        for n, device in enumerate(names):
            outstanding = max(0.05, peak_outstanding * busy * (1 + n * 0.3) * rng.uniform(0.7, 1.3))
            in_flight = max(1, round(outstanding))
            full = disk.iops(block_size_bytes, in_flight, rng=rng)
            # Below one I/O in flight the disk idles part of the time: fewer I/Os at the one-in-flight latency.
            iops = full * min(1.0, outstanding) / slowdown
            latency_ms = in_flight / full * 1000 * slowdown
            reads = iops * read_share
            writes = iops - reads
            read_ms = latency_ms * 0.9
            write_ms = latency_ms * disk.write_penalty
            records.append(
                IntervalRecord(
                    interval_index=i,
                    source_line=1,
                    device=device,
                    device_kind="logical_disk" if device.startswith("LogicalDisk") else "physical_disk",
                    interval_start=f"{t:%Y-%m-%dT%H:%M:%S}.{t.microsecond // 1000:03d}",
                    interval_s=interval_s,
                    reads_per_s=round(reads, 6),
                    writes_per_s=round(writes, 6),
                    read_bytes_per_s=round(reads * block_size_bytes, 6),
                    write_bytes_per_s=round(writes * block_size_bytes, 6),
                    read_latency_ms=round(read_ms, 3),
                    write_latency_ms=round(write_ms, 3),
                    queue_length=round(iops * latency_ms / 1000, 6),
                    utilization_pct=round(min(100.0, 100 * outstanding / (1 + outstanding)), 6),
                    host=host,
                    tool="perfmon",
                    tool_version="PDH-CSV 4.0",
                )
            )
    return records


SAMPLE_FOLDER = "perfmon"


def sample_files() -> dict[str, str | bytes]:
    """A day of production on the sample's modelled P10 disk (ingest/synth/sqlio.py's sweep is its benchmark): the
    E: data disk of a SQL Server logged every 5 minutes, 8 KiB I/O at 70 % reads, a working day's swell; as fast
    as when it was benchmarked, so the page shows headroom without degradation."""
    from kneepoint.ingest.synth.sqlio import P10

    records = observe(
        P10,
        host="SYNTHETIC-SQL01",
        devices=("PhysicalDisk(1 E:)",),
        start=datetime(2026, 11, 23, 0, 0, 0, 117000),
        interval_s=300.0,
        samples=288,
        block_size_bytes=8192,
        read_share=0.7,
        peak_outstanding=6.0,
        seed=21,
    )
    return {"synthetic-sql01-e-drive-day.csv": write(records, extra_counters=True)}
