"""The benchmark corpus: files in every format from modelled disks, laid out as users collect them.

Every file is rendered by its format's writer in ingest/synth (`write(records, **opts)`) from records that
`ingest.synth.disk_model.sweep` makes for a disk of a realistic kind (HDD, SATA SSD, NVMe, cloud disks), each
disk with its own service time, contention, coherency and bandwidth cap, so every sweep saturates somewhere.
Generation is deterministic (seeded), parallel over the work items, and cached: the corpus is rebuilt only
when the requested counts or GENERATOR_VERSION change.

Layout under the corpus root (one folder per disk = one `kneepoint ingest --disk LABEL` each):

    fio_json/<disk>/<bs>/<rw>-<iodepth>-<numjobs>.json   fio-plot bench_fio's layout, json or json+
    sqlio/<disk>/<host>-sqlio-batch-NNN.txt              192-run batch logs (CRLF, echoed commands)
    crystaldiskmark/<disk>/CrystalDiskMark_<date>.txt    CDM 7 (UTF-16LE), 8, 9 and KDiskMark 2-3 results
    diskspd/<disk>/diskspd-sweep-NNN.txt                 -Rtext sweeps, DiskSpd 2.0.17 / 2.0.21a / 2.2 layouts
    diskspd_xml/<disk>/diskspd-NNN.xml                   -Rxml sweeps
    <format>/...                                         any other format with a BenchSpec in SPECS (and a writer)
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import random
import shutil
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from kneepoint.ingest import formats
from kneepoint.ingest.records import IoRecord
from kneepoint.ingest.synth.disk_model import DiskModel, sweep

GENERATOR_VERSION = 1
MANIFEST = "manifest.json"

KIB, MIB = 1024, 1024 * 1024


# --------------------------------------------------------------------------------------------- disks


@dataclass(frozen=True, slots=True)
class Disk:
    """A modelled disk with the labels its files are ingested under."""

    slug: str
    label: str
    host: str
    kind: str
    device: str  # what fio names it (Linux) ...
    drive: str  # ... and what Windows tools name it
    model: DiskModel


# kind: (service_time_ms, sigma, kappa, max_bytes_per_s, write_penalty, sequential_speedup, linux device)
_KINDS: dict[str, tuple[float, float, float, float, float, float, str]] = {
    "HDD 7.2k": (8.0, 0.08, 0.0015, 190e6, 1.1, 40.0, "sdb"),
    "SATA SSD": (0.11, 0.03, 0.0003, 540e6, 0.8, 2.5, "sdc"),
    "NVMe": (0.06, 0.02, 0.00005, 3.3e9, 0.35, 3.0, "nvme0n1"),
    "cloud P10": (5.0, 0.05, 0.0006, 100e6, 0.6, 2.5, "sdd"),
    "cloud P30": (2.5, 0.04, 0.0004, 200e6, 0.6, 2.5, "sde"),
    "cloud ultra": (0.5, 0.03, 0.0002, 1.2e9, 0.7, 2.0, "sdf"),
}


def disks(n: int, salt: str) -> list[Disk]:
    """`n` disks of every kind in turn, each with its own figures (±25 % around its kind's)."""
    rng = random.Random(f"disks:{salt}")
    kinds = list(_KINDS)
    out = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        svc, sigma, kappa, bw, wp, seq, dev = _KINDS[kind]

        def j(x: float) -> float:
            return x * rng.uniform(0.75, 1.25)

        slug = f"{salt}-{i:03d}-{kind.lower().replace(' ', '-').replace('.', '')}"
        model = DiskModel(slug, j(svc), j(sigma), j(kappa), j(bw), j(wp), j(seq), noise=0.02)
        host = f"bench-host-{i % 11:02d}"
        out.append(Disk(slug, f"bench {kind} #{i:03d} ({salt})", host, kind, dev, "E:", model))
    return out


# --------------------------------------------------------------------------------------------- manifest


@dataclass(slots=True)
class Group:
    """A folder of one disk's files: one ingest with these labels."""

    path: str  # relative to the corpus root
    disk: str
    host: str


@dataclass(slots=True)
class FormatSet:
    format: str
    files: int = 0
    bytes: int = 0
    records_written: int = 0
    groups: list[Group] = field(default_factory=list)
    skipped: str | None = None  # why the format has no files (its writer has not landed)


@dataclass(slots=True)
class Corpus:
    root: Path
    counts: dict[str, int]
    formats: dict[str, FormatSet]

    def paths(self, fmt: str) -> list[Path]:
        """The format's files in ingest order (folders sorted, as `iter_paths` walks them)."""
        return sorted(p for g in self.formats[fmt].groups for p in (self.root / g.path).rglob("*") if p.is_file())

    def ready(self) -> list[str]:
        return [f for f, s in self.formats.items() if s.files]


def load_corpus(root: Path) -> Corpus | None:
    try:
        raw = json.loads((root / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    if raw.get("generator_version") != GENERATOR_VERSION:
        return None
    formats = {k: FormatSet(**{**v, "groups": [Group(**g) for g in v["groups"]]}) for k, v in raw["formats"].items()}
    return Corpus(root, raw["counts"], formats)


def _save(corpus: Corpus) -> None:
    raw = {
        "generator_version": GENERATOR_VERSION,
        "counts": corpus.counts,
        "formats": {k: asdict(v) for k, v in corpus.formats.items()},
    }
    (corpus.root / MANIFEST).write_text(json.dumps(raw, indent=1) + "\n")


# --------------------------------------------------------------------------------------------- writers

# A work item: (format, relative path, seed, parameters); its function returns (bytes, records written).
Item = tuple[str, str, int, dict]


def _writer(fmt: str) -> Callable[..., str] | None:
    if importlib.util.find_spec(f"kneepoint.ingest.synth.{fmt}") is None:
        return None
    return getattr(importlib.import_module(f"kneepoint.ingest.synth.{fmt}"), "write", None)


def _renumber(records: list[IoRecord], offset: int) -> int:
    for r in records:
        r.run_index += offset
    return (records[-1].run_index + 1) if records else offset


# fio: fio-plot bench_fio's default sweep, one file per rw mode x iodepth x numjobs.
FIO_RW = (
    ("randread", "random", "read"),
    ("randwrite", "random", "write"),
    ("read", "sequential", "read"),
    ("write", "sequential", "write"),
)
FIO_DEPTHS = (1, 2, 4, 8, 16, 32, 64)
FIO_JOBS = (1, 2, 4, 8, 16, 32, 64)
FIO_BLOCKS = (4 * KIB, 64 * KIB, 128 * KIB, MIB)
FIO_VERSIONS = ("3.16", "3.28", "3.33", "3.36", "3.38")


def _fio_items(count: int) -> tuple[list[Item], list[Group], list[Disk]]:
    """Folders (disk x block size) of equal size; in each, the sweep from the lightest load up, every rw mode
    at each load, so a folder cut short lacks only its heaviest loads (and even a tiny corpus has them all).
    Every other folder is json+."""
    combos = [(qd, jobs, rw) for qd in FIO_DEPTHS for jobs in FIO_JOBS for rw in FIO_RW]
    n_dirs = max(2, -(-count // len(combos)))
    pool = disks(-(-n_dirs // len(FIO_BLOCKS)), "fio")
    items: list[Item] = []
    groups: dict[str, Group] = {}
    for d in range(n_dirs):
        disk = pool[d // len(FIO_BLOCKS)]
        bs = FIO_BLOCKS[d % len(FIO_BLOCKS)]
        groups.setdefault(disk.slug, Group(f"fio_json/{disk.slug}", disk.label, disk.host))
        in_dir = count // n_dirs + (1 if d < count % n_dirs else 0)
        for qd, jobs, (rw, pattern, operation) in combos[:in_dir]:
            name = f"fio_json/{disk.slug}/{_bs_dir(bs)}/{rw}-{qd}-{jobs}.json"
            params = {"disk": d // len(FIO_BLOCKS), "bs": bs, "pattern": pattern, "operation": operation}
            params.update({"qd": qd, "jobs": jobs, "plus": d % 2 == 1, "version": FIO_VERSIONS[d % 5]})
            items.append(("fio_json", name, len(items), params))
    return items, list(groups.values()), pool


def _bs_dir(bs: int) -> str:
    return f"{bs // MIB}m" if bs % MIB == 0 else f"{bs // KIB}k"


def _fio_file(seed: int, p: dict, pool: list[Disk]) -> tuple[bytes, int]:
    from kneepoint.ingest.synth import fio_json

    disk = pool[p["disk"]]
    recs = sweep(
        disk.model,
        "fio",
        pattern=p["pattern"],
        operation=p["operation"],
        block_size_bytes=p["bs"],
        threads=(p["jobs"],),
        queue_depths=(p["qd"],),
        duration_s=60.0,
        seed=seed,
        tool_version=p["version"],
        target=f"/dev/{disk.device}",
        throughput_unit="B/s",
        latency_unit="ns",
    )
    text = fio_json.write(
        recs, json_plus=p["plus"], version=p["version"], timestamp=1_767_225_600 + seed * 70, disk=disk.device
    )
    return text.encode(), len(recs)


# SQLIO: the batch, 192 runs at 64 KiB.
SQLIO_THREADS = (2, 4, 8, 16, 32, 64)
SQLIO_OUTSTANDING = (1, 2, 4, 8, 16, 32, 64, 128)


def _sqlio_file(seed: int, p: dict, pool: list[Disk]) -> tuple[bytes, int]:
    from kneepoint.ingest.synth import sqlio

    disk = pool[p["disk"]]
    records: list[IoRecord] = []
    run = 0
    for k, (pattern, operation) in enumerate(
        (("random", "read"), ("random", "write"), ("sequential", "read"), ("sequential", "write"))
    ):
        recs = sweep(
            disk.model,
            "sqlio",
            pattern=pattern,
            operation=operation,
            block_size_bytes=64 * KIB,
            threads=SQLIO_THREADS,
            queue_depths=SQLIO_OUTSTANDING,
            duration_s=60.0,
            seed=seed * 10 + k,
            tool_version=sqlio.VERSION,
            target=f"{disk.drive}\\testfile.dat",
            throughput_unit="MiB/s",
            latency_unit="ms",
        )
        run = _renumber(recs, run)
        records += recs
    notes = [
        "",
        f"C:\\SQLIO>REM kneepoint benchmark corpus: {disk.label}, batch {p['n']}",
        "",
        "C:\\SQLIO>REM random/sequential x read/write x threads 2..64 x outstanding 1..128, 64 KB, 60 s per run",
    ]
    text = sqlio.write(records, notes=notes, target=f"{disk.drive}\\testfile.dat", newline="\r\n")
    return text.encode(), len(records)


# CrystalDiskMark / KDiskMark: a mix of the versions users paste.
CDM_VERSIONS = (
    ("cdm8", "8.0.4 x64"),
    ("cdm8", "8.0.1 x64"),
    ("kdiskmark", "3.0.0"),
    ("cdm7", "7.0.0 x64"),
    ("cdm8", "9.0.1 x64"),
    ("kdiskmark", "2.3.0"),
    ("cdm8", "8.0.5 x64"),
)


def _cdm_file(seed: int, p: dict, pool: list[Disk]) -> tuple[bytes, int]:
    from kneepoint.ingest.synth import crystaldiskmark as cdm

    disk = pool[p["disk"]]
    layout, version = CDM_VERSIONS[seed % len(CDM_VERSIONS)]
    if layout == "cdm7":
        tests = cdm.CDM7_DEFAULT
    elif layout == "cdm8" and disk.kind == "NVMe":
        tests = cdm.CDM8_NVME
    else:
        tests = cdm.CDM8_DEFAULT
    operations: tuple[str, ...] = ("read", "write")
    if layout != "cdm7" and seed % 4 == 0:
        operations += ("mixed",)  # the [Mix] section of the "+Mix" profiles
    tool = "kdiskmark" if layout == "kdiskmark" else "crystaldiskmark"
    records: list[IoRecord] = []
    run = 0
    for i, (pattern, bs, q, t) in enumerate(tests):
        for j, operation in enumerate(operations):
            recs = sweep(
                disk.model,
                tool,
                pattern=pattern,
                operation=operation,
                block_size_bytes=bs,
                threads=(t,),
                queue_depths=(q,),
                duration_s=5.0,
                read_pct=70.0 if operation == "mixed" else None,
                seed=seed * 100 + 10 * i + j,
                tool_version=version,
                throughput_unit="MB/s",
                latency_unit="us",
            )
            run = _renumber(recs, run)
            records += recs
    when = datetime(2024, 1, 1, 8, 0, 0) + timedelta(hours=7 * seed)
    text = cdm.write(records, layout=layout, tool_version=version, date=when, comment=disk.label)
    return cdm.to_saved_bytes(text, layout), len(records)


# DiskSpd: threads x outstanding sweeps, one workload per batch log.
DISKSPD_WORKLOADS = (
    ("random", "read", 8 * KIB, None),
    ("random", "write", 8 * KIB, None),
    ("sequential", "read", 64 * KIB, None),
    ("random", "mixed", 8 * KIB, 70.0),
)


def _diskspd_file(seed: int, p: dict, pool: list[Disk]) -> tuple[bytes, int]:
    from kneepoint.ingest.synth import diskspd

    disk = pool[p["disk"]]
    pattern, operation, bs, read_pct = DISKSPD_WORKLOADS[seed % len(DISKSPD_WORKLOADS)]
    xml = p["xml"]
    recs = sweep(
        disk.model,
        "diskspd",
        pattern=pattern,
        operation=operation,
        block_size_bytes=bs,
        threads=(4,) if xml else (1, 2, 4, 8),
        queue_depths=(1, 2, 4, 8, 16, 32),
        duration_s=60.0,
        read_pct=read_pct,
        seed=seed,
        target=f"{disk.drive}\\diskspd\\testfile.dat",
    )
    start = (datetime(2026, 1, 5, 9, 0, 0) + timedelta(hours=5 * seed)).strftime("%Y/%m/%d %H:%M:%S")
    common = {"computer_name": disk.host.upper(), "start": start, "seed": seed}
    if xml:
        text = diskspd.write_xml(recs, comment=f"kneepoint benchmark corpus: {disk.label}", **common)
    else:
        layout = diskspd.LAYOUTS[seed % len(diskspd.LAYOUTS)]
        text = diskspd.write(recs, layout=layout, notes=(f"kneepoint benchmark corpus: {disk.label}",), **common)
    return text.replace("\n", "\r\n").encode(), len(recs)


# fio text: the way run_text_sweep.sh collects it: one workload per file, a stonewalled job per queue depth,
# numjobs 1 and 4 appended to one file (two fio invocations, as batch scripts do).
FIO_TEXT_WORKLOADS = (
    ("random", "read", 4 * KIB),
    ("random", "write", 4 * KIB),
    ("sequential", "read", 128 * KIB),
    ("sequential", "write", 1 * MIB),
)


def _fio_text_file(seed: int, p: dict, pool: list[Disk]) -> tuple[bytes, int]:
    from kneepoint.ingest.synth import fio_text

    disk = pool[p["disk"]]
    pattern, operation, bs = FIO_TEXT_WORKLOADS[seed % len(FIO_TEXT_WORKLOADS)]
    version = FIO_VERSIONS[seed % len(FIO_VERSIONS)]
    parts = []
    n_records = 0
    for k, jobs in enumerate((1, 4)):
        recs = sweep(
            disk.model,
            "fio",
            pattern=pattern,
            operation=operation,
            block_size_bytes=bs,
            threads=(jobs,),
            queue_depths=(1, 2, 4, 8, 16, 32, 64, 128),
            duration_s=30.0,
            seed=seed * 10 + k,
            tool_version=version,
            target=f"/dev/{disk.device}",
            throughput_unit="B/s",
            latency_unit="ns",
        )
        n_records += len(recs)
        parts.append(
            fio_text.write(
                recs,
                group_reporting=seed % 3 != 0,  # every third file: one block per clone
                version=version,
                disk=disk.device,
                timestamp=1_767_225_600 + seed * 600 + k * 300,
                pid=2000 + seed % 30000,
            )
        )
    return "".join(parts).encode(), n_records


def _fio_terse_file(seed: int, p: dict, pool: list[Disk]) -> tuple[bytes, int]:
    """fio terse v3 (`--minimal`): a queue-depth sweep at 1 and 4 jobs, one line per run."""
    from kneepoint.ingest.synth import fio_terse

    disk = pool[p["disk"]]
    pattern, operation, bs = FIO_TEXT_WORKLOADS[seed % len(FIO_TEXT_WORKLOADS)]
    recs = [
        rec
        for k, jobs in enumerate((1, 4))
        for rec in sweep(
            disk.model,
            "fio",
            pattern=pattern,
            operation=operation,
            block_size_bytes=bs,
            threads=(jobs,),
            queue_depths=(1, 2, 4, 8, 16, 32, 64, 128),
            duration_s=30.0,
            seed=seed * 10 + k,
            tool_version=FIO_VERSIONS[seed % len(FIO_VERSIONS)],
            target=f"/dev/{disk.device}",
            throughput_unit="B/s",
            latency_unit="ns",
        )
    ]
    for index, rec in enumerate(recs):
        rec.run_index = index
    return fio_terse.write(recs, disk=disk.device).encode(), len(recs)


# STATISTICS IO/TIME: a session's Messages tab, 10-40 statements of a query mix over one server's disk, in the
# languages and layouts users paste (SSMS English mostly, CRLF; some as T-SQL comments in a script).
SQL_TABLES = (
    "Orders",
    "OrderLines",
    "Customers",
    "Invoices",
    "InvoiceLines",
    "StockItems",
    "StockItemHoldings",
    "Suppliers",
    "PurchaseOrders",
    "Transactions",
    "People",
    "Cities",
    "Worktable",
    "Workfile",
    "AuditLog",
)
SQL_LANGUAGES = ("en", "en", "en", "en", "de", "es", "it", "fr", "pt", "ja")


def _sqlstats_file(seed: int, p: dict, pool: list[Disk]) -> tuple[bytes, int]:
    from kneepoint.ingest.records import QueryIoRecord, QueryTimeRecord
    from kneepoint.ingest.synth import sqlstats

    disk = pool[p["disk"]]
    rng = random.Random(f"sqlstats:{seed}")
    one, ahead = sweep(
        disk.model,
        "sqlserver",
        pattern="random",
        operation="read",
        block_size_bytes=8 * KIB,
        queue_depths=(1, 8),
        seed=seed,
    )
    language = SQL_LANGUAGES[seed % len(SQL_LANGUAGES)]
    records: list[QueryIoRecord | QueryTimeRecord] = []
    rows: dict[int, int] = {}
    version = (sqlstats.VERSION_2019, sqlstats.VERSION_2008, None)[seed % 3]  # None: the SQL 2000 line
    for index in range(rng.randint(10, 40)):
        rows[index] = int(10 ** rng.uniform(0, 6))
        records.append(_sql_time(index, "compile", rng.randint(0, 60), rng.randint(0, 80), language))
        io_ms = 0.0
        for name in rng.sample(SQL_TABLES, rng.randint(1, 4)):
            logical = int(10 ** rng.uniform(1, 6.5))
            miss = rng.choice((0.0, 0.0, 0.01, 0.2, 1.0))  # cached, warm, or a cold scan
            physical = int(logical * miss * rng.uniform(0.0, 0.05))
            read_ahead = int(logical * miss * rng.uniform(0.5, 1.0))
            io_ms += 1000 * (physical / (one.iops or 1) + read_ahead / 8 / (ahead.iops or 1))
            records.append(
                QueryIoRecord(
                    statement_index=index,
                    source_line=1,
                    table_name=name,
                    scan_count=rng.randint(0, 9),
                    logical_reads=logical,
                    physical_reads=physical,
                    read_ahead_reads=read_ahead,
                    lob_logical_reads=0,
                    lob_physical_reads=0,
                    lob_read_ahead_reads=0,
                    tool_version=version,
                    language=language,
                )
            )
        cpu_ms = rng.randint(0, 5000)
        elapsed = max(io_ms, cpu_ms) + 0.1 * min(io_ms, cpu_ms)
        records.append(_sql_time(index, "execution", cpu_ms, round(elapsed), language))
    text = sqlstats.write(
        records,
        language=language,
        tool_version=version,
        rows_affected=rows,
        comment=seed % 7 == 0,
        completion_time=f"2026-01-{1 + seed % 28:02d}T10:42:17.5310442+01:00" if language == "en" else None,
        newline="\r\n",
    )
    return text.encode("utf-8"), len(records)


def _sql_time(index: int, phase: str, cpu_ms: float, elapsed_ms: float, language: str) -> object:
    from kneepoint.ingest.records import QueryTimeRecord

    return QueryTimeRecord(
        statement_index=index,
        source_line=1,
        phase=phase,
        cpu_ms=float(cpu_ms),
        elapsed_ms=float(elapsed_ms),
        tool="sqlserver",
        language=language,
    )


# --------------------------------------------------------------------------------------------- specs


@dataclass(frozen=True)
class BenchSpec:
    """How the bench corpus holds one format: files at each size, how they are laid out, what writes one.

    `render(seed, params, disks)` returns a file's bytes and the records it was written from. Files go one folder
    per disk, `per_disk` to a folder, named by `file_name(disk, n)`, unless `layout(count)` lays them out itself
    (work items, folders, disks)."""

    full: int  # files at full size
    tiny: int  # files at tiny size (CI): each kind of file at least once
    render: Callable[[int, dict, list[Disk]], tuple[bytes, int]]
    per_disk: int = 1
    file_name: Callable[[Disk, int], str] | None = None
    layout: Callable[[int], tuple[list[Item], list[Group], list[Disk]]] | None = None


# The four workloads the newer tools' files sweep, in turn by seed: (pattern, operation, block size, read %).
NEW_TOOL_WORKLOADS = (
    ("random", "read", 4 * KIB, 100.0),
    ("random", "mixed", 8 * KIB, 70.0),
    ("sequential", "write", 128 * KIB, 0.0),
    ("sequential", "read", MIB, 100.0),
)


def _new_tool_sweep(seed: int, disk: Disk, tool: str, threads: tuple[int, ...], depths: tuple[int, ...], **kw):
    pattern, operation, bs, read_pct = NEW_TOOL_WORKLOADS[seed % len(NEW_TOOL_WORKLOADS)]
    return sweep(disk.model, tool, pattern=pattern, operation=operation, block_size_bytes=bs, read_pct=read_pct,
                 threads=threads, queue_depths=depths, duration_s=60.0, seed=seed, **kw)  # fmt: skip


def _vdbench_file(seed: int, p: dict, pool: list[Disk]) -> tuple[bytes, int]:
    from kneepoint.ingest.synth import vdbench

    disk = pool[p["disk"]]
    # vdbench's threads are its outstanding I/Os (one each): a threads sweep, the console or the flatfile.
    recs = _new_tool_sweep(seed, disk, "vdbench", (1, 2, 4, 8, 16, 32, 64, 128), (1,), throughput_unit="MiB/s")
    layout = "flatfile" if seed % 2 else "console"
    text = vdbench.write(recs, layout=layout, lun=f"/dev/{disk.device}", rd=f"rd{seed}")
    return text.encode(), len({r.run_index for r in recs})


def _elbencho_file(seed: int, p: dict, pool: list[Disk]) -> tuple[bytes, int]:
    from kneepoint.ingest.synth import elbencho

    disk = pool[p["disk"]]
    recs = _new_tool_sweep(seed, disk, "elbencho", (1, 4, 16), (1, 4, 16, 64), throughput_unit="MiB/s",
                           latency_unit="us")  # fmt: skip
    text = elbencho.write(recs, path=f"/dev/{disk.device}", csv_file=seed % 2 == 1)
    return text.encode(), len([r for r in recs if r.direction != "total"])


def _iometer_file(seed: int, p: dict, pool: list[Disk]) -> tuple[bytes, int]:
    from kneepoint.ingest.synth import iometer

    disk = pool[p["disk"]]
    recs = _new_tool_sweep(seed, disk, "iometer", (1, 4), (1, 2, 4, 8, 16, 32, 64), throughput_unit="MiB/s")
    text = iometer.write(recs, manager=disk.host.upper(), target=f"{disk.drive}")
    return text.encode(), len(recs) + sum(1 for r in recs if r.direction == "write" and r.operation == "mixed")


def _perfmon_file(seed: int, p: dict, pool: list[Disk]) -> tuple[bytes, int]:
    from kneepoint.ingest.synth import perfmon_csv

    # A day of production on the disk at 60 s (the week at 15 s of issue 21 is timed in tests/parsers).
    disk = pool[p["disk"]]
    recs = perfmon_csv.observe(disk.model, host=disk.host.upper(), devices=(f"PhysicalDisk(1 {disk.drive})",),
                               samples=1440, interval_s=60.0, seed=seed)  # fmt: skip
    return perfmon_csv.write(recs, separator=";" if seed % 2 else ",", decimal_comma=seed % 2 == 1).encode(), len(recs)


def _iostat_file(seed: int, p: dict, pool: list[Disk]) -> tuple[bytes, int]:
    from kneepoint.ingest.synth import iostat

    # An hour of `iostat -xt 10` on the disk's host, its Linux device and a second one.
    disk = pool[p["disk"]]
    recs = iostat.observed((disk.device, "sdb"), reports=360, interval_s=10.0, seed=seed, host=disk.host)
    layout = ("sysstat9", "sysstat10", "sysstat11", "sysstat12")[seed % 4]
    return iostat.write(recs, layout=layout, host=disk.host).encode(), len(recs)


def _dmv_file(seed: int, p: dict, pool: list[Disk]) -> tuple[bytes, int]:
    from kneepoint.ingest.synth import sqlserver_dmv

    # Two snapshots of one server's file and wait statistics, five minutes apart.
    disk = pool[p["disk"]]
    recs = sqlserver_dmv.production_records(disk.model, outstanding=1 + seed % 16, host=disk.host.upper())
    layout = ("text", "sqlcmd", "sqlcmd_csv", "grid", "csv")[seed % 5]
    return sqlserver_dmv.write(recs, layout=layout, seed=seed).encode(), len(recs)


def _amorphous_file(seed: int, p: dict, pool: list[Disk]) -> tuple[bytes, int]:
    from kneepoint.ingest.synth import amorphousdiskmark

    disk = pool[p["disk"]]
    recs = []
    for k, (pattern, bs, depths) in enumerate((("sequential", MIB, (8, 1)), ("random", 4 * KIB, (64, 1)))):
        for operation in ("read", "write"):
            recs += sweep(disk.model, "amorphousdiskmark", pattern=pattern, operation=operation, block_size_bytes=bs,
                          queue_depths=depths, seed=seed * 4 + k, throughput_unit="MB/s")  # fmt: skip
    text = amorphousdiskmark.write(recs, volume=f"{disk.label}", device=disk.kind)
    return text.encode(), len(recs)


# Load series: the same SQL from N sessions on the disk's server (the source documents' table), and a HammerDB
# autopilot; an application model per seed (its own service time and contention), not the disk's.
def _load_table_file(seed: int, p: dict, pool: list[Disk]) -> tuple[bytes, int]:
    from kneepoint.ingest.synth import load_model, load_table

    disk = pool[p["disk"]]
    app = load_model.AppModel(f"query {seed}", service_time_s=5.0 + seed % 40, sigma=0.02 + seed % 5 / 50, kappa=0.01)
    recs = load_model.sweep(app, "table", (1, 2, 3, 4, 5, 6, 9, 12), load_kind="concurrent sessions",
                            unit="queries/min", per_s=1 / 60, seed=seed)  # fmt: skip
    return load_table.write(recs, title=f"{disk.label}: query {seed}", seed=seed).encode(), len(recs)


def _hammerdb_file(seed: int, p: dict, pool: list[Disk]) -> tuple[bytes, int]:
    from kneepoint.ingest.synth import hammerdb, load_model

    app = load_model.AppModel(f"tprocc {seed}", service_time_s=0.01 + seed % 10 / 500, sigma=0.03, kappa=0.002)
    recs = load_model.sweep(app, "hammerdb", (1, 2, 4, 8, 16, 32), load_kind="virtual users",
                            unit="new orders/min", per_s=1 / 60, seed=seed)  # fmt: skip
    database = ("SQL Server", "PostgreSQL", "Oracle", "MySQL")[seed % 4]
    return hammerdb.write(recs, database=database).encode(), len(recs)


# One entry per format of the registry. The issue fixes the counts of fio, SQLIO, CrystalDiskMark and STATISTICS
# IO/TIME; the other formats get counts of the same order, so every parser is measured on a corpus of its own.
SPECS: dict[str, BenchSpec] = {
    "fio_json": BenchSpec(10_000, 16, _fio_file, layout=_fio_items),
    "sqlio": BenchSpec(500, 2, _sqlio_file, 10, lambda d, n: f"{d.host}-sqlio-batch-{n:03d}.txt"),
    "crystaldiskmark": BenchSpec(
        5_000, 8, _cdm_file, 50, lambda d, n: f"CrystalDiskMark_{20240101 + n:08d}{n % 24:02d}0000.txt"
    ),
    "sqlstats": BenchSpec(1_000, 4, _sqlstats_file, 20, lambda d, n: f"statistics-io-time-{n:03d}.txt"),
    "diskspd": BenchSpec(500, 3, _diskspd_file, 10, lambda d, n: f"diskspd-sweep-{n:03d}.txt"),
    "diskspd_xml": BenchSpec(500, 2, _diskspd_file, 10, lambda d, n: f"diskspd-{n:03d}.xml"),
    "fio_text": BenchSpec(1_000, 4, _fio_text_file, 20, lambda d, n: f"fio-sweep-{n:03d}.txt"),
    "fio_terse": BenchSpec(1_000, 2, _fio_terse_file, 20, lambda d, n: f"fio-minimal-{n:03d}.txt"),
    "vdbench": BenchSpec(500, 2, _vdbench_file, 10, lambda d, n: f"vdbench-{n:03d}.{'html' if n % 2 else 'txt'}"),
    "elbencho": BenchSpec(1_000, 2, _elbencho_file, 20, lambda d, n: f"elbencho-{n:03d}.{'csv' if n % 2 else 'txt'}"),
    "iometer": BenchSpec(500, 2, _iometer_file, 10, lambda d, n: f"iometer-results-{n:03d}.csv"),
    "amorphousdiskmark": BenchSpec(2_000, 2, _amorphous_file, 50, lambda d, n: f"AmorphousDiskMark-{n:03d}.txt"),
    "perfmon_csv": BenchSpec(200, 2, _perfmon_file, 10, lambda d, n: f"{d.host}-perfmon-{n:03d}.csv"),
    "iostat": BenchSpec(200, 2, _iostat_file, 10, lambda d, n: f"{d.host}-iostat-xt-{n:03d}.txt"),
    "sqlserver_dmv": BenchSpec(500, 4, _dmv_file, 20, lambda d, n: f"{d.host}-file-stats-{n:03d}.txt"),
    "load_table": BenchSpec(500, 2, _load_table_file, 10, lambda d, n: f"sessions-{n:03d}.md"),
    "hammerdb": BenchSpec(500, 2, _hammerdb_file, 10, lambda d, n: f"hammerdb-autopilot-{n:03d}.log"),
}


def counts(size: str) -> dict[str, int]:
    """Files per format of the registry at `size` ("full" or "tiny"); 0 for a format without a spec (reported as
    not generated)."""
    return {fmt: getattr(SPECS[fmt], size) if fmt in SPECS else 0 for fmt in formats.names()}


SIZES = {"full": counts("full"), "tiny": counts("tiny")}
FULL_COUNTS, TINY_COUNTS = SIZES["full"], SIZES["tiny"]


def _items(fmt: str, count: int) -> tuple[list[Item], list[Group], list[Disk]]:
    spec = SPECS[fmt]
    if spec.layout is not None:
        return spec.layout(count)
    assert spec.file_name is not None, f"{fmt}: a bench spec names its files or lays them out"
    pool = disks(max(1, -(-count // spec.per_disk)), fmt)
    items: list[Item] = []
    groups: list[Group] = []
    for i in range(count):
        disk = pool[i // spec.per_disk]
        if i % spec.per_disk == 0:
            groups.append(Group(f"{fmt}/{disk.slug}", disk.label, disk.host))
        n = i % spec.per_disk
        params = {"disk": i // spec.per_disk, "n": n, "xml": fmt == "diskspd_xml"}
        items.append((fmt, f"{fmt}/{disk.slug}/{spec.file_name(disk, n)}", i, params))
    return items, groups, pool


def _pools(fmt: str, count: int) -> list[Disk]:
    return _items(fmt, count)[2]


_POOL_CACHE: dict[tuple[str, int], list[Disk]] = {}


def _render(root: str, counts: dict[str, int], batch: list[Item]) -> list[tuple[str, int, int]]:
    """Write a batch of files (in a worker process); (format, bytes, records written) per file."""
    out = []
    for fmt, rel, seed, params in batch:
        key = (fmt, counts[fmt])
        if key not in _POOL_CACHE:
            _POOL_CACHE[key] = _pools(fmt, counts[fmt])
        data, n_records = SPECS[fmt].render(seed, params, _POOL_CACHE[key])
        path = Path(root) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        out.append((fmt, len(data), n_records))
    return out


def _batches(items: list[Item], size: int) -> Iterator[list[Item]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def generate(root: Path, counts: dict[str, int], workers: int = 2, log: Callable[[str], None] = print) -> Corpus:
    """The corpus at `root` for `counts` (files per format): reused when already there, else written anew."""
    root = root.resolve()
    existing = load_corpus(root)
    if existing is not None and existing.counts == counts and _same_writers(existing):
        return existing
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    corpus = Corpus(root, dict(counts), {})
    items: list[Item] = []
    for fmt, count in counts.items():
        fs = FormatSet(fmt)
        corpus.formats[fmt] = fs
        if fmt not in SPECS:
            fs.skipped = f"no bench spec for {fmt} in bench/generate.py SPECS"
        elif _writer(fmt) is None:
            fs.skipped = f"no writer ingest/synth/{fmt}.py yet"
        if fs.skipped:
            log(f"generate: {fmt}: skipped ({fs.skipped})")
            continue
        fmt_items, fs.groups, _ = _items(fmt, count)
        items += fmt_items
    log(f"generate: {len(items)} files into {root}")
    with ProcessPoolExecutor(workers) as pool:
        futures = [pool.submit(_render, str(root), counts, b) for b in _batches(items, 200)]
        for fut in futures:
            for fmt, size, n_records in fut.result():
                fs = corpus.formats[fmt]
                fs.files += 1
                fs.bytes += size
                fs.records_written += n_records
    for fs in corpus.formats.values():
        if fs.files:
            log(f"generate: {fs.format}: {fs.files} files, {fs.bytes / 1e6:.1f} MB, {fs.records_written} records")
    _save(corpus)
    return corpus


def _same_writers(corpus: Corpus) -> bool:
    """A format skipped for want of a writer is generated as soon as its writer lands."""
    return all(
        not (fs.skipped and fs.format in SPECS and _writer(fs.format) is not None) for fs in corpus.formats.values()
    )
