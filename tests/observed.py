"""Observed production load for the tests, made the way the readers will make it: IntervalRecord / WaitRecord
lists (rates per second over each interval), stored through the warehouse as a file of their own.

Values come from ingest/synth/disk_model.py: a production load at some outstanding I/O gets the IOPS the modelled
disk delivers there and, by Little's law, its latency; `slower` multiplies the latency (a disk that degraded)."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Sequence
from pathlib import Path

from kneepoint.ingest.records import IntervalRecord, ParsedFile, WaitRecord
from kneepoint.ingest.synth.disk_model import DiskModel
from kneepoint.ingest.warehouse import Connection, StoreResult, store_file


def interval(
    index: int,
    iops: float,
    latency_ms: float,
    *,
    device: str = "PhysicalDisk(1 E:)",
    host: str | None = "SQL01",
    read_share: float = 1.0,
    bytes_per_io: float = 4096.0,
    interval_s: float = 15.0,
    since_boot: bool = False,
    queue_length: float | None = None,
    tool: str = "perfmon",
    device_kind: str = "physical_disk",
    start: str = "2026-11-02T09:00:00",
) -> IntervalRecord:
    """One interval of `iops` I/Os per second (`read_share` of them reads) of `bytes_per_io` each, every I/O
    taking `latency_ms`. The start advances by `interval_s` per index from `start`'s minute."""
    from datetime import datetime, timedelta

    reads, writes = iops * read_share, iops * (1 - read_share)
    begins = datetime.fromisoformat(start) + timedelta(seconds=interval_s * index)
    return IntervalRecord(
        interval_index=index,
        source_line=index + 2,
        device=device,
        device_kind=device_kind,  # type: ignore[arg-type]
        interval_start=begins.isoformat(),
        interval_s=interval_s,
        reads_per_s=reads,
        writes_per_s=writes,
        read_bytes_per_s=reads * bytes_per_io,
        write_bytes_per_s=writes * bytes_per_io,
        read_latency_ms=latency_ms if reads > 0 else 0.0,
        write_latency_ms=latency_ms if writes > 0 else 0.0,
        queue_length=queue_length,
        utilization_pct=None,
        host=host,
        since_boot=since_boot,
        tool=tool,
        tool_version="10.0.20348" if tool == "perfmon" else None,
    )


def modelled_day(
    disk: DiskModel,
    loads: Sequence[int],
    *,
    slower: float = 1.0,
    block_size_bytes: int = 8192,
    read_share: float = 0.7,
    seed: int = 0,
    **kw: object,
) -> list[IntervalRecord]:
    """One interval per outstanding-I/O level in `loads`: the IOPS the modelled disk delivers at that load (mixed
    reads and writes weighed by `read_share`), latency by Little's law times `slower`."""
    rng = random.Random(seed)
    out = []
    for i, load in enumerate(loads):
        reads = disk.iops(block_size_bytes, load, rng=rng)
        writes = disk.iops(block_size_bytes, load, write=True, rng=rng)
        iops = read_share * reads + (1 - read_share) * writes
        out.append(
            interval(i, iops, load / iops * 1000 * slower, read_share=read_share, bytes_per_io=block_size_bytes, **kw)
        )
    return out


def waits(index: int, wait_type: str = "PAGEIOLATCH_SH", host: str | None = "SQL01") -> WaitRecord:
    return WaitRecord(
        interval_index=index,
        source_line=index + 3,
        wait_type=wait_type,
        interval_start=f"2026-11-02T09:{index:02d}:00",
        interval_s=60.0,
        waiting_tasks_per_s=120.0,
        wait_ms_per_s=840.0,
        avg_wait_ms=7.0,
        host=host,
    )


def store_observed(
    con: Connection,
    records: Iterable[IntervalRecord | WaitRecord],
    disk: str,
    host: str | None = None,
    name: str = "perfmon.csv",
    fmt: str = "perfmon_csv",
    variant: str = "",
) -> StoreResult:
    """Store the records as one file (its bytes: the records as JSON, so that other records are another file;
    `variant` makes the same records another file too)."""
    records = list(records)
    data = (json.dumps([r.to_normalized() for r in records]) + variant).encode()
    parsed = ParsedFile(fmt, records)
    return store_file(con, name, data, hashlib.sha256(data).hexdigest(), parsed, disk=disk, host=host)


def ingest_observed(db: Path, records: Iterable[IntervalRecord | WaitRecord], disk: str, **kw: object) -> str:
    """Store the records and bring the models up to date; the file's id."""
    from kneepoint.ingest.build import build_models
    from kneepoint.ingest.warehouse import connect

    con = connect(db)
    try:
        result = store_observed(con, records, disk, **kw)  # type: ignore[arg-type]
    finally:
        con.close()
    build_models(db).raise_for_failure()
    return result.file_id


def observed_logs() -> list[list]:
    """Counter logs of production load, stored as files of records (no reader needed): a mixed 8 KiB day with a
    since_boot average and a _Total instance, 64 KiB reads logged with a queue length, and SQL Server file and wait
    statistics. Each lands on whichever disk a sequence labels it with, placed on that disk's series if it has one."""
    disk = DiskModel("production", service_time_ms=0.5)
    day = modelled_day(disk, [1, 2, 4, 8, 16, 32, 8, 4], slower=2.5)
    day += [interval(8, 900.0, 1.2, since_boot=True), interval(0, 5000.0, 3.0, device="PhysicalDisk(_Total)")]
    reads = [
        interval(
            i,
            1200.0 + 100 * i,
            4.0,
            bytes_per_io=65536,
            queue_length=5.0,
            device="sdb",
            tool="iostat",
            device_kind="block_device",
        )
        for i in range(6)
    ]
    sql = [
        interval(
            i,
            400.0 + 50 * i,
            6.0,
            read_share=0.9,
            device="tempdb T:\\tempdb.mdf",
            tool="sqlserver",
            device_kind="database_file",
        )
        for i in range(4)
    ] + [waits(i) for i in range(4)]
    return [day, reads, sql]
