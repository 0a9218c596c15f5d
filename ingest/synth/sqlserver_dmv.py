"""SQL Server file and wait statistics writer: IntervalRecords (database files) and WaitRecords of one interval back
into the text of two snapshots of `sys.dm_io_virtual_file_stats` and `sys.dm_os_wait_stats` taken around a
`WAITFOR DELAY`, as ingest/formats/sqlserver_dmv.py reads them; since_boot records as one snapshot at the server's
uptime.

The query written (the one the parser's docstring names)::

    SELECT @@SERVERNAME;                                   -- when the records carry a host
    SELECT DB_NAME(vfs.database_id) AS database_name, vfs.file_id, mf.name, mf.physical_name, vfs.sample_ms,
           vfs.num_of_reads, vfs.num_of_bytes_read, vfs.io_stall_read_ms, vfs.num_of_writes,
           vfs.num_of_bytes_written, vfs.io_stall_write_ms, vfs.io_stall, vfs.size_on_disk_bytes
    FROM sys.dm_io_virtual_file_stats(NULL, NULL) AS vfs JOIN sys.master_files AS mf ON ...;
    SELECT wait_type, waiting_tasks_count, wait_time_ms, max_wait_time_ms, signal_wait_time_ms
    FROM sys.dm_os_wait_stats WHERE wait_type LIKE 'PAGEIOLATCH%' OR wait_type IN ('WRITELOG', ...);

Layouts: "text" (SSMS Results to text: columns as wide as their type, values left-aligned, `(N rows affected)`),
"sqlcmd" (the same widths, numbers right-aligned), "sqlcmd_csv" (`sqlcmd -W -s ","`), "grid" (Results to grid copied
with headers: tab-separated) and "csv" (saved from the grid). A record's device is `database logical_name
physical_name` (the parser's device for these columns). Counters are whole numbers: rates x seconds and latency x
I/Os are rounded, so the parsed rates come back within that rounding.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kneepoint.ingest.formats.sqlserver_dmv import TOOL
from kneepoint.ingest.records import IntervalRecord, WaitRecord
from kneepoint.ingest.synth.disk_model import DiskModel

LAYOUTS = ("text", "sqlcmd", "sqlcmd_csv", "grid", "csv")
# (column, display width in text mode: nvarchar(n) -> n, smallint 6, bigint 20)
FILE_COLUMNS: tuple[tuple[str, int], ...] = (
    ("database_name", 128),
    ("file_id", 7),
    ("name", 128),
    ("physical_name", 260),
    ("sample_ms", 20),
    ("num_of_reads", 20),
    ("num_of_bytes_read", 20),
    ("io_stall_read_ms", 20),
    ("num_of_writes", 20),
    ("num_of_bytes_written", 20),
    ("io_stall_write_ms", 20),
    ("io_stall", 20),
    ("size_on_disk_bytes", 20),
)
WAIT_COLUMNS: tuple[tuple[str, int], ...] = (
    ("wait_type", 60),
    ("waiting_tasks_count", 20),
    ("wait_time_ms", 20),
    ("max_wait_time_ms", 20),
    ("signal_wait_time_ms", 20),
)
_TEXT_COLUMNS = frozenset({"database_name", "name", "physical_name", "wait_type"})
VERSION_TEXT = (
    "Microsoft SQL Server 2019 (RTM-CU22) (KB5027702) - 15.0.4322.2 (X64) \n\tJul 27 2023 18:11:00 \n\t"
    "Copyright (C) 2019 Microsoft Corporation\n\tDeveloper Edition (64-bit) on Windows Server 2019 Standard 10.0 "
    "<X64> (Build 17763: ) (Hypervisor)\n"
)


@dataclass(frozen=True, slots=True)
class _File:
    database: str
    file_id: int
    name: str
    physical: str
    rec: IntervalRecord


def write(
    records: Iterable[IntervalRecord | WaitRecord],
    *,
    layout: str = "text",
    uptime_s: float = 864_000.0,
    version: bool = True,
    seed: int = 7,
    newline: str = "\n",
) -> str:
    """The pasted text of `records`: one interval (every record's interval_s the same), two snapshots `uptime_s`
    after the server started (its counters then hold a seeded load of their own), or a single snapshot when the
    records are since_boot (at their interval_s). `version` writes `SELECT @@VERSION`'s result first."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout is one of {', '.join(LAYOUTS)}, not {layout!r}")
    recs = list(records)
    seconds = {r.interval_s for r in recs}
    if len(seconds) != 1 or None in seconds:
        raise ValueError("the records of one write share one interval_s")
    interval_s = float(seconds.pop())  # type: ignore[arg-type]
    since_boot = {r.since_boot for r in recs} == {True}
    files = _files([r for r in recs if isinstance(r, IntervalRecord)])
    waits = [r for r in recs if isinstance(r, WaitRecord)]
    hosts = {r.host for r in recs}
    rng = random.Random(seed)

    blocks: list[list[str]] = []
    if len(hosts) == 1 and (host := hosts.pop()):
        blocks.append(_one_value(layout, host))
    if version:
        blocks.append(_one_value(layout, VERSION_TEXT))
    if since_boot:
        start_ms = 0.0
        base_files = [dict.fromkeys(_counter_names(), 0) for _ in files]
        base_waits = {w.wait_type: (0, 0) for w in waits}
        snapshots = [(interval_s * 1000, 1.0)]
    else:
        start_ms = uptime_s * 1000
        base_files = [_history(f.rec, uptime_s, rng) for f in files]
        base_waits = {w.wait_type: _wait_history(w, uptime_s, rng) for w in waits}
        snapshots = [(0.0, 0.0), (interval_s * 1000, 1.0)]
    for offset_ms, share in snapshots:
        sample_ms = round(start_ms + offset_ms)
        rows = []
        for f, base in zip(files, base_files, strict=True):
            c = _counters(f.rec, interval_s * share)
            counters = {k: base[k] + c[k] for k in c}
            rows.append(
                [f.database, f.file_id, f.name, f.physical, sample_ms]
                + [counters[k] for k in _counter_names()]
                + [counters["io_stall_read_ms"] + counters["io_stall_write_ms"], 1 << 30]
            )
        if files:
            blocks.append(_table(layout, FILE_COLUMNS, rows))
        rows = []
        for w in waits:
            tasks, wait_ms = _wait_counts(w, interval_s * share)
            base_tasks, base_ms = base_waits[w.wait_type]
            avg = w.avg_wait_ms or 0.0
            rows.append([w.wait_type, base_tasks + tasks, base_ms + wait_ms, round(avg * 20), round(wait_ms * 0.01)])
        if waits:
            blocks.append(_table(layout, WAIT_COLUMNS, rows))
    return newline.join(line for block in blocks for line in block + [""]).rstrip("\n") + newline


def _counter_names() -> tuple[str, ...]:
    return ("num_of_reads", "num_of_bytes_read", "io_stall_read_ms", "num_of_writes", "num_of_bytes_written",
            "io_stall_write_ms")  # fmt: skip


def _files(records: Sequence[IntervalRecord]) -> list[_File]:
    out: list[_File] = []
    ids: dict[str, int] = {}
    for rec in records:
        parts = rec.device.split(" ", 2)
        if len(parts) != 3 or rec.device_kind != "database_file":
            raise ValueError(f"a database file's device is 'database logical_name physical_name', not {rec.device!r}")
        ids[parts[0]] = ids.get(parts[0], 0) + 1
        out.append(_File(parts[0], ids[parts[0]], parts[1], parts[2], rec))
    return out


def _counters(rec: IntervalRecord, seconds: float) -> dict[str, int]:
    reads = round((rec.reads_per_s or 0.0) * seconds)
    writes = round((rec.writes_per_s or 0.0) * seconds)
    return {
        "num_of_reads": reads,
        "num_of_bytes_read": round((rec.read_bytes_per_s or 0.0) * seconds),
        "io_stall_read_ms": round((rec.read_latency_ms or 0.0) * reads),
        "num_of_writes": writes,
        "num_of_bytes_written": round((rec.write_bytes_per_s or 0.0) * seconds),
        "io_stall_write_ms": round((rec.write_latency_ms or 0.0) * writes),
    }


def _history(rec: IntervalRecord, uptime_s: float, rng: random.Random) -> dict[str, int]:
    """The counters at the first snapshot: the server's load before it, quieter than the interval's."""
    return _counters(rec, uptime_s * rng.uniform(0.3, 0.7))


def _wait_counts(rec: WaitRecord, seconds: float) -> tuple[int, int]:
    tasks = round((rec.waiting_tasks_per_s or 0.0) * seconds)
    return tasks, round((rec.avg_wait_ms or 0.0) * tasks)


def _wait_history(rec: WaitRecord, uptime_s: float, rng: random.Random) -> tuple[int, int]:
    return _wait_counts(rec, uptime_s * rng.uniform(0.3, 0.7))


def _one_value(layout: str, value: str) -> list[str]:
    """A one-column result without a column name (`SELECT @@SERVERNAME`), as each layout prints it."""
    if layout in ("grid", "csv"):
        return ["(No column name)", value.split("\n")[0].rstrip() if layout == "csv" else value.rstrip("\n")]
    if layout == "sqlcmd_csv":
        return ["", "-", value.rstrip("\n"), "", "(1 rows affected)"]
    width = 128 if "\n" not in value else 300
    return [" " * width, "-" * width, value.rstrip("\n"), "", "(1 row affected)"]


def _table(layout: str, columns: Sequence[tuple[str, int]], rows: list[list[object]]) -> list[str]:
    names = [name for name, _ in columns]
    cells = [[str(v) for v in row] for row in rows]
    if layout == "grid":
        return ["\t".join(names)] + ["\t".join(row) for row in cells]
    if layout == "csv":
        return [",".join(names)] + [",".join(_csv(c) for c in row) for row in cells]
    if layout == "sqlcmd_csv":
        affected = f"({len(rows)} rows affected)"
        return [",".join(names), ",".join("-" * len(n) for n in names)] + [",".join(r) for r in cells] + ["", affected]
    widths = [max(len(name), width) for name, width in columns]
    right = layout == "sqlcmd"

    def line(values: list[str], numeric: bool = True) -> str:
        out = []
        for (name, _), width, value in zip(columns, widths, values, strict=True):
            aligned = right and numeric and name not in _TEXT_COLUMNS
            out.append(value.rjust(width) if aligned else value.ljust(width))
        return " ".join(out)

    affected = f"({len(rows)} row{'s' if len(rows) != 1 else ''} affected)"
    return [line(names, numeric=False), " ".join("-" * w for w in widths)] + [line(r) for r in cells] + ["", affected]


def _csv(cell: str) -> str:
    return f'"{cell}"' if "," in cell or '"' in cell else cell


# ---------------------------------------------------------------------------------------------- a modelled server

# The disk under the files of every synthetic sample: a cloud P10-like volume (~5 ms per random read).
P10 = DiskModel("synthetic P10 (modelled)", service_time_ms=5.0, sigma=0.05, kappa=0.0006, max_bytes_per_s=100e6)
PAGE_BYTES = 8192


def production_records(
    disk: DiskModel = P10,
    *,
    outstanding: int = 4,
    interval_s: float = 300.0,
    host: str = "SYNTHETIC-SQL01",
    since_boot: bool = False,
) -> list[IntervalRecord | WaitRecord]:
    """An OLTP server's interval on `disk`: random 8 KiB page reads of a data file with `outstanding` reads in
    flight (IOPS from the disk model, latency by Little's law), its log's sequential 60 KiB writes, a tempdb data
    file; the waits that follow from them (PAGEIOLATCH_SH per read, WRITELOG per log write)."""
    read_iops = disk.iops(PAGE_BYTES, outstanding)
    read_ms = outstanding / read_iops * 1000
    log_iops = disk.iops(61_440, 1, write=True, sequential=True) * 0.25
    log_ms = 1000 / disk.iops(61_440, 1, write=True, sequential=True)
    temp_iops = read_iops * 0.1
    common = {"interval_s": interval_s, "interval_start": None, "host": host, "since_boot": since_boot, "tool": TOOL}
    files = [
        IntervalRecord(
            interval_index=0, source_line=1, device="SalesDB SalesDB D:\\Data\\SalesDB.mdf",
            device_kind="database_file", reads_per_s=read_iops, read_bytes_per_s=read_iops * PAGE_BYTES,
            read_latency_ms=read_ms, writes_per_s=read_iops * 0.05, write_bytes_per_s=read_iops * 0.05 * PAGE_BYTES,
            write_latency_ms=read_ms * 1.4, **common,  # type: ignore[arg-type]
        ),
        IntervalRecord(
            interval_index=0, source_line=1, device="SalesDB SalesDB_log L:\\Log\\SalesDB_log.ldf",
            device_kind="database_file", reads_per_s=0.0, read_bytes_per_s=0.0, read_latency_ms=None,
            writes_per_s=log_iops, write_bytes_per_s=log_iops * 61_440, write_latency_ms=log_ms,
            **common,  # type: ignore[arg-type]
        ),
        IntervalRecord(
            interval_index=0, source_line=1, device="tempdb tempdev T:\\TempDB\\tempdb.mdf",
            device_kind="database_file", reads_per_s=temp_iops, read_bytes_per_s=temp_iops * 65_536,
            read_latency_ms=read_ms * 0.8, writes_per_s=temp_iops, write_bytes_per_s=temp_iops * 65_536,
            write_latency_ms=read_ms * 0.9, **common,  # type: ignore[arg-type]
        ),
    ]  # fmt: skip
    waits = [
        WaitRecord(
            interval_index=0, source_line=1, wait_type="PAGEIOLATCH_SH", waiting_tasks_per_s=read_iops * 0.9,
            wait_ms_per_s=read_iops * 0.9 * read_ms * 1.05, avg_wait_ms=read_ms * 1.05, **common,  # type: ignore[arg-type]
        ),
        WaitRecord(
            interval_index=0, source_line=1, wait_type="WRITELOG", waiting_tasks_per_s=log_iops,
            wait_ms_per_s=log_iops * log_ms * 1.1, avg_wait_ms=log_ms * 1.1, **common,  # type: ignore[arg-type]
        ),
    ]  # fmt: skip
    return [*files, *waits]
