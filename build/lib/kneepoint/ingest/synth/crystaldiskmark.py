"""Writer for CrystalDiskMark 8.x-9.x / 7.x and KDiskMark 3.x text results, and the sample files.

The layouts follow the tools' own text export code: CrystalDiskMark `CDiskMarkDlg::SaveText` (8.x:
`"  SEQ %4dMiB (Q=%3d, T=%2d): %9.3f MB/s [%9.1f IOPS] <%9.2f us>"`, CRLF, saved as UTF-8) and
`ResultText` (7.x: `Sequential %dMiB` / right-aligned `Random %dKiB`, CRLF, saved as UTF-16LE with a BOM),
KDiskMark `MainWindow::getTextBenchmarkResult` (3.x: lines right-justified to 80 columns, LF, and its "MB/s"
is fio's KiB/s / 1000, so it prints bytes/s / 1,024,000).

A result holds up to 4 tests (2 for the Peak and Real profiles, 1 for Demo), each printed in every section:
[Read], [Write] and, when any record is mixed, [Mix]. Consecutive records fill one result until a test repeats
in a section, a fifth test comes, or the run metadata changes; then the next result is appended, as a batch
that saves several results into one file would. A test with no record in a section prints as zeros, as the
tools print tests that were not run. Mixed records given as a read and a write record (as `disk_model.sweep`
makes them) are combined the way the tool does: CrystalDiskMark sums them, KDiskMark prints
read% x read + write% x write. A record without latency gets Little's law (outstanding I/O / IOPS).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from kneepoint.ingest import units
from kneepoint.ingest.records import IoRecord
from kneepoint.ingest.synth.disk_model import DiskModel, sweep

SAMPLE_FOLDER = "crystaldiskmark"
LAYOUTS = ("cdm8", "cdm7", "kdiskmark")

KIB = 1024
MIB = 1024 * 1024
KDISKMARK_MB = 1000 * KIB  # KDiskMark's "MB": fio KiB/s divided by 1000

_DEFAULT_VERSION = {"cdm8": "8.0.4 x64", "cdm7": "7.0.0 x64", "kdiskmark": "3.0.0"}
_COPYRIGHT = {"cdm8": "2007-2021", "cdm7": "2007-2019"}
_DEFAULT_OS = {
    "cdm8": "Windows 11 Professional [10.0 Build 22631] (x64)",
    "cdm7": "Windows 10 Professional [10.0 Build 18363] (x64)",
    "kdiskmark": "ubuntu 24.04 [linux 6.8.0-45-generic]",
}
_MAX_TESTS = {"Default": 4, "Peak": 2, "Real": 2, "Demo": 1}
_SECTIONS = ("read", "write", "mixed")
_SEPARATOR = {"cdm8": "-" * 78, "cdm7": "-" * 78, "kdiskmark": "-" * 80}
_UNITS_LINES = ["* MB/s = 1,000,000 bytes/s [SATA/600 = 600,000,000 bytes/s]", "* KB = 1000 bytes, KiB = 1024 bytes"]
_DEFAULT_DATE = datetime(2025, 3, 14, 9, 30, 0)


@dataclass(slots=True)
class _Cell:
    bytes_per_s: float
    iops: float
    latency_us: float


@dataclass(slots=True)
class _Block:
    profile: str
    record: IoRecord  # the first record: run metadata of the result
    tests: list[tuple[str, int, int, int]] = field(default_factory=list)
    cells: dict[tuple[str, tuple[str, int, int, int]], _Cell] = field(default_factory=dict)
    mix_read_pct: float | None = None


def write(
    records: Iterable[IoRecord],
    *,
    layout: str = "cdm8",
    tool_version: str | None = None,
    fio_version: str = "fio-3.36",
    profile: str | None = None,
    test_size: str = "1 GiB",
    test_count: int = 5,
    volume: str | None = "38% (354/931GiB)",
    mode: str = "[Admin]",
    measure_s: int = 5,
    interval_s: int = 5,
    date: datetime | None = None,
    date_step: timedelta = timedelta(minutes=4),
    os_name: str | None = None,
    comment: str | None = None,
    newline: str = "\n",
) -> str:
    """Render `records` as one or more results of `layout` ("cdm8", "cdm7" or "kdiskmark").

    Run metadata (Profile, Test, Mode, Time, Date, OS, Comment) comes from the records' metadata when they were
    parsed from the same layout, else from the options and the records' own fields (target, duration_s,
    started_at). Raises ValueError for a block size the layout cannot print (CDM 7 prints sequential sizes in
    whole MiB only).
    """
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; known: {', '.join(LAYOUTS)}")
    version = tool_version or _DEFAULT_VERSION[layout]
    blocks = _blocks(_cells(records, layout), layout, profile)
    out: list[str] = []
    for index, block in enumerate(blocks):
        meta = _block_metadata(block, layout, index, date or _DEFAULT_DATE, date_step)
        opts = {
            "profile": block.profile,
            "test_size": test_size,
            "test_count": test_count,
            "volume": volume,
            "mode": mode,
            "measure_s": measure_s,
            "interval_s": interval_s,
            "os_name": os_name or _DEFAULT_OS[layout],
            "comment": comment,
        }
        out.extend(_render(block, layout, version, fio_version, meta, opts))
    return newline.join(out) + newline


def to_saved_bytes(text: str, layout: str) -> bytes:
    """The bytes the tool saves: CDM 7 writes UTF-16LE with a BOM and CRLF, CDM 8 UTF-8 with CRLF,
    KDiskMark UTF-8 with LF."""
    if layout == "cdm7":
        return b"\xff\xfe" + text.replace("\r\n", "\n").replace("\n", "\r\n").encode("utf-16-le")
    if layout == "cdm8":
        return text.replace("\r\n", "\n").replace("\n", "\r\n").encode("utf-8")
    return text.encode("utf-8")


def _cells(records: Iterable[IoRecord], layout: str) -> list[tuple[str, tuple[str, int, int, int], _Cell, IoRecord]]:
    """(section, test, figures, record) per printed line, mixed read/write pairs combined."""
    out: list[tuple[str, tuple[str, int, int, int], _Cell, IoRecord]] = []
    pending: IoRecord | None = None
    for rec in records:
        if rec.operation == "mixed" and rec.direction in ("read", "write"):
            if pending is not None and _pair_key(pending) == _pair_key(rec) and pending.direction != rec.direction:
                out.append(("mixed", _test(pending), _combine(pending, rec, layout), pending))
                pending = None
                continue
            if pending is not None:
                out.append(("mixed", _test(pending), _cell(pending), pending))
            pending = rec
            continue
        if pending is not None:
            out.append(("mixed", _test(pending), _cell(pending), pending))
            pending = None
        section = "mixed" if rec.operation == "mixed" else rec.direction
        if section == "total":
            section = rec.operation
        out.append((section, _test(rec), _cell(rec), rec))
    if pending is not None:
        out.append(("mixed", _test(pending), _cell(pending), pending))
    return out


def _pair_key(rec: IoRecord) -> tuple[object, ...]:
    return (rec.run_index, rec.pattern, rec.block_size_bytes, rec.queue_depth, rec.threads, rec.read_pct)


def _test(rec: IoRecord) -> tuple[str, int, int, int]:
    if not rec.block_size_bytes or rec.block_size_bytes <= 0:
        raise ValueError(f"run {rec.run_index}: CrystalDiskMark prints a block size for every test")
    return (rec.pattern, rec.block_size_bytes, rec.queue_depth or 1, rec.threads or 1)


def _cell(rec: IoRecord) -> _Cell:
    bytes_per_s = units.to_bytes_per_s(rec.throughput, rec.throughput_unit)
    block = rec.block_size_bytes or 1
    if bytes_per_s is None:
        bytes_per_s = (rec.iops or 0.0) * block
    iops = rec.iops if rec.iops is not None else bytes_per_s / block
    latency_ms = units.to_ms(rec.latency_avg, rec.latency_unit)
    if latency_ms is None:
        outstanding = (rec.queue_depth or 1) * (rec.threads or 1)
        latency_ms = outstanding / iops * 1000 if iops else 0.0
    return _Cell(bytes_per_s, iops, latency_ms * 1000)


def _combine(a: IoRecord, b: IoRecord, layout: str) -> _Cell:
    ca, cb = _cell(a), _cell(b)
    if layout == "kdiskmark":
        # KDiskMark: (read x p + write x (100 - p)) / 100 for every figure (src/benchmark.cpp).
        read, other = (ca, cb) if a.direction == "read" else (cb, ca)
        p = a.read_pct / 100
        return _Cell(
            read.bytes_per_s * p + other.bytes_per_s * (1 - p),
            read.iops * p + other.iops * (1 - p),
            read.latency_us * p + other.latency_us * (1 - p),
        )
    iops = ca.iops + cb.iops
    latency = (ca.latency_us * ca.iops + cb.latency_us * cb.iops) / iops if iops else 0.0
    return _Cell(ca.bytes_per_s + cb.bytes_per_s, iops, latency)


def _profile_name(rec: IoRecord, layout: str, profile: str | None) -> str:
    name = profile or (rec.metadata.get("Profile") if _same_layout(rec, layout) else None) or "Default"
    return name.replace("[+Mix]", "").strip() or "Default"


def _blocks(
    cells: list[tuple[str, tuple[str, int, int, int], _Cell, IoRecord]], layout: str, profile: str | None
) -> list[_Block]:
    blocks: list[_Block] = []
    for section, test, cell, rec in cells:
        block = blocks[-1] if blocks else None
        name = _profile_name(rec, layout, profile)
        max_tests = _MAX_TESTS.get(name.split()[0], 4)
        mix_pct = rec.read_pct if section == "mixed" else None
        if (
            block is None
            or (section, test) in block.cells
            or (test not in block.tests and len(block.tests) >= max_tests)
            or block.profile != name
            or _run_metadata(block.record) != _run_metadata(rec)
            or (mix_pct is not None and block.mix_read_pct not in (None, mix_pct))
        ):
            block = _Block(profile=name, record=rec)
            blocks.append(block)
        if test not in block.tests:
            block.tests.append(test)
        block.cells[(section, test)] = cell
        if mix_pct is not None:
            block.mix_read_pct = mix_pct
    return blocks


def _run_metadata(rec: IoRecord) -> tuple[str | None, ...]:
    return tuple(rec.metadata.get(k) for k in ("Profile", "Test", "Date", "Mode", "Time", "OS", "Comment"))


def _same_layout(rec: IoRecord, layout: str) -> bool:
    version = rec.tool_version or ""
    if layout == "kdiskmark":
        return rec.tool == "kdiskmark"
    major = "7" if layout == "cdm7" else ("8", "9")
    return rec.tool == "crystaldiskmark" and version.startswith(major)


def _block_metadata(
    block: _Block, layout: str, index: int, base: datetime, step: timedelta
) -> dict[str, str | float | None]:
    rec = block.record
    meta: dict[str, str | float | None] = {}
    if _same_layout(rec, layout):
        meta.update(
            {k: rec.metadata[k] for k in ("Test", "Mode", "Time", "Date", "OS", "Comment") if k in rec.metadata}
        )
    when = base + step * index
    if rec.started_at:
        with contextlib.suppress(ValueError):  # an unreadable start time keeps the synthetic one
            when = datetime.fromisoformat(rec.started_at).replace(tzinfo=None)
    meta["when"] = when.isoformat()
    meta["target"] = rec.target
    meta["duration_s"] = rec.duration_s
    return meta


def _size(bs: int, mib_only: bool = False) -> tuple[int, str]:
    if bs >= MIB or mib_only:
        if bs % MIB:
            raise ValueError(f"block size {bs} bytes is not a whole number of MiB, which this layout prints")
        return bs // MIB, "MiB"
    if bs % KIB:
        raise ValueError(f"block size {bs} bytes is not a whole number of KiB, which this layout prints")
    return bs // KIB, "KiB"


def _row(layout: str, test: tuple[str, int, int, int], cell: _Cell | None) -> str:
    pattern, bs, q, t = test
    seq = pattern == "sequential"
    mbps = iops = latency = 0.0
    if cell is not None:
        mbps = cell.bytes_per_s / (KDISKMARK_MB if layout == "kdiskmark" else 1e6)
        iops, latency = cell.iops, cell.latency_us
    if layout == "cdm8":
        n, unit = _size(bs)
        return (
            f"  {'SEQ' if seq else 'RND'} {n:4d}{unit} (Q={q:3d}, T={t:2d}): "
            f"{mbps:9.3f} MB/s [{iops:9.1f} IOPS] <{latency:9.2f} us>"
        )
    if layout == "cdm7":
        figures = f"(Q={q:3d}, T={t:2d}): {mbps:9.3f} MB/s [{iops:9.1f} IOPS] <{latency:9.2f} us>"
        if seq:
            n, _ = _size(bs, mib_only=True)
            return f"Sequential {n}MiB {figures}"
        if bs % KIB:
            raise ValueError(f"block size {bs} bytes is not a whole number of KiB, which CDM 7 prints")
        kib = bs // KIB
        pad = "  " if kib > 100 else ("   " if kib > 10 else "    ")
        return f"{pad}Random {kib}KiB {figures}"
    n, unit = _size(bs)
    line = (
        f"{'Sequential' if seq else 'Random'} {n:>3} {unit} (Q={q:>3}, T={t:>2}): "
        f"{mbps:9.3f} MB/s [ {iops:8.1f} IOPS] < {latency:8.2f} us>"
    )
    return line.rjust(80)


def _date_text(when: datetime, layout: str) -> str:
    if layout == "kdiskmark":
        return when.strftime("%Y-%m-%d %H:%M:%S")
    return f"{when.year:04d}/{when.month:02d}/{when.day:02d} {when.hour}:{when.minute:02d}:{when.second:02d}"


def _render(
    block: _Block,
    layout: str,
    version: str,
    fio_version: str,
    meta: dict[str, str | float | None],
    opts: dict[str, object],
) -> list[str]:
    lines: list[str] = []
    if layout == "kdiskmark":
        lines += [
            f"KDiskMark ({version}): https://github.com/JonMagon/KDiskMark".rjust(80),
            f"Flexible I/O Tester ({fio_version}): https://github.com/axboe/fio".rjust(80),
            _SEPARATOR[layout],
        ]
    else:
        lines += [
            _SEPARATOR[layout],
            f"CrystalDiskMark {version} (C) {_COPYRIGHT[layout]} hiyohiyo",
            "                                  Crystal Dew World: https://crystalmark.info/",
            _SEPARATOR[layout],
        ]
    lines += _UNITS_LINES
    has_mix = any(section == "mixed" for section, _ in block.cells)
    for section in _SECTIONS:
        if section == "mixed" and not has_mix:
            continue
        if section == "mixed":
            read = round(block.mix_read_pct if block.mix_read_pct is not None else 70.0)
            title = f"[Mix] Read {read}%/Write {100 - read}%"
        else:
            title = f"[{section.capitalize()}]"
        lines += ["", title]
        lines += [_row(layout, test, block.cells.get((section, test))) for test in block.tests]
    lines += [""]

    when = datetime.fromisoformat(str(meta["when"]))
    measure = int(meta["duration_s"]) if isinstance(meta["duration_s"], float) else opts["measure_s"]
    target = meta["target"] or "D:"
    volume = f" [{target} {opts['volume']}]" if opts["volume"] else ""
    size_count = f"{opts['test_size']} (x{opts['test_count']})"
    comment = meta.get("Comment") or opts["comment"]
    profile = str(opts["profile"])
    if layout == "cdm8":
        mode = meta.get("Mode", opts["mode"])
        time = meta.get("Time") or f"Measure {measure} sec / Interval {opts['interval_s']} sec"
        lines += [
            f"Profile: {profile}",
            f"   Test: {meta.get('Test') or size_count + volume}",
            f"   Mode:{' ' + str(mode) if mode else ''}",
            f"   Time: {time} ",
            f"   Date: {meta.get('Date') or _date_text(when, layout)}",
            f"     OS: {meta.get('OS') or opts['os_name']}",
        ]
        lines += [f"Comment: {comment}"] if comment else []
        lines += [""]
    elif layout == "cdm7":
        test = meta.get("Test") or f"{size_count} [Interval: {opts['interval_s']} sec] <DefaultAffinity=DISABLED>"
        lines += [
            f"Profile: {profile}",
            f"   Test: {test}",
            f"   Date: {meta.get('Date') or _date_text(when, layout)}",
            f"     OS: {meta.get('OS') or opts['os_name']}",
        ]
        lines += [f"Comment: {comment}"] if comment else []
        lines += [""]
    else:
        test = meta.get("Test") or f"{size_count} [Measure: {measure} sec / Interval: {opts['interval_s']} sec]"
        lines += [
            f"Profile: {profile}{' [+Mix]' if has_mix else ''}",
            f"   Test: {test}",
            f"   Date: {meta.get('Date') or _date_text(when, layout)}",
            f"     OS: {meta.get('OS') or opts['os_name']}",
            "",
        ]
    return lines


# --- sample data ------------------------------------------------------------------------------------------

# A PCIe 3.0 x4 NVMe SSD: ~55 us for a 4 KiB read at QD1, ~3.4 GB/s link; writes land in its SLC cache
# (faster than reads at low depth); random 4 KiB reads stop scaling between 64 and 128 outstanding I/Os.
DISK = DiskModel(
    "synthetic NVMe (modelled)",
    service_time_ms=0.055,
    sigma=0.03,
    kappa=0.00005,
    max_bytes_per_s=3.4e9,
    write_penalty=0.35,
    sequential_speedup=3.0,
    noise=0.02,
)
NOTE = "synthetic NVMe (modelled), written by kneepoint ingest/synth from a disk model, not measured"

# (pattern, block size, queues, threads) of the tests each sample result runs.
CDM8_DEFAULT = [
    ("sequential", MIB, 8, 1),
    ("sequential", MIB, 1, 1),
    ("random", 4 * KIB, 32, 1),
    ("random", 4 * KIB, 1, 1),
]
CDM8_NVME = [
    ("sequential", MIB, 8, 1),
    ("sequential", 128 * KIB, 32, 1),
    ("random", 4 * KIB, 32, 16),
    ("random", 4 * KIB, 1, 1),
]
CDM7_DEFAULT = [
    ("sequential", MIB, 8, 1),
    ("sequential", MIB, 1, 1),
    ("random", 4 * KIB, 32, 16),
    ("random", 4 * KIB, 1, 1),
]
QD_SWEEP = [("random", 4 * KIB, q, 1) for q in (1, 2, 4, 8, 16, 32, 64, 128)]


def _modelled(
    tests: list[tuple[str, int, int, int]], operations: tuple[str, ...], seed: int, tool: str, version: str
) -> list[IoRecord]:
    records: list[IoRecord] = []
    for i, (pattern, bs, q, t) in enumerate(tests):
        for j, operation in enumerate(operations):
            records += sweep(
                DISK,
                tool,
                pattern=pattern,
                operation=operation,
                block_size_bytes=bs,
                threads=(t,),
                queue_depths=(q,),
                duration_s=5.0,
                read_pct=70.0 if operation == "mixed" else None,
                seed=seed + 10 * i + j,
                tool_version=version,
                throughput_unit="MB/s",
                latency_unit="us",
            )
    return records


def sample_files() -> dict[str, str | bytes]:
    rw = ("read", "write")
    start = datetime(2025, 3, 14, 9, 30, 0)
    cdm8 = "".join(
        write(
            _modelled(tests, ops, seed, "crystaldiskmark", "8.0.4 x64"),
            date=start + timedelta(minutes=6 * n),
            comment=NOTE,
        )
        for n, (tests, ops, seed) in enumerate(
            [(CDM8_DEFAULT, rw, 100), (CDM8_NVME, (*rw, "mixed"), 200), (QD_SWEEP, rw, 300)]
        )
    )
    cdm7 = write(
        _modelled(CDM7_DEFAULT, rw, 400, "crystaldiskmark", "7.0.0 x64"),
        layout="cdm7",
        date=datetime(2025, 3, 14, 11, 5, 12),
        comment=NOTE,
    )
    kdm = write(
        _modelled(CDM8_DEFAULT, rw, 500, "kdiskmark", "3.0.0"),
        layout="kdiskmark",
        date=datetime(2025, 3, 15, 20, 12, 40),
    )
    return {
        "synthetic-nvme-cdm8.txt": to_saved_bytes(cdm8, "cdm8"),
        "synthetic-nvme-cdm7-utf16le.txt": to_saved_bytes(cdm7, "cdm7"),
        "synthetic-nvme-kdiskmark3.txt": to_saved_bytes(kdm, "kdiskmark"),
    }
