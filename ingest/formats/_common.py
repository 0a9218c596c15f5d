"""What more than one format module reads the same way: kept here so that each rule has one home.

Modules starting with `_` are not formats (the registry skips them).
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

# -- any text format


def first_content_line(text: str) -> int:
    """1-based number of the first line that is not blank (1 for a blank text): where an error about a whole
    text points."""
    for number, line in enumerate(text.split("\n"), 1):
        if line.strip():
            return number
    return 1


_GROUPED = re.compile(
    r"[0-9]{1,3}(?:(?P<sep>[,.\u00a0\u202f ])[0-9]{3})(?:(?P=sep)[0-9]{3})*(?:(?P<decimal>[.,])[0-9]{1,15})?"
)
_PLAIN = re.compile(r"[0-9]{1,20}(?:[.,][0-9]{1,15})?")
SHORTENED = ("\u2026", "..")  # how a line cut short by hand or by a terminal ends: `…`, `..`


def read_number(text: str) -> float | None:
    """A number as people paste it, else None: `1026872`, `1026872.5`, with thousands separators (`1,026,872`,
    `1.026.872`, `1 026 872` with a space, no-break space U+00A0 or narrow no-break space U+202F; then a decimal part
    after the other of `.` and `,`: `1.026.872,5`) or with a decimal comma (`12,5`).

    Where one separator stands alone it is read as the tools print it: a single `.` is a decimal point (`1.026` is
    1.026), a single `,` before exactly three digits a thousands separator (`1,026` is 1026; `0,026` and `12,50` are
    decimal commas). A cut-short number (`12…`, `12..`) or any other text is None."""
    text = text.strip()
    if _PLAIN.fullmatch(text):
        whole, comma, part = text.partition(",")
        if not comma:
            return float(text)
        return float(whole + part) if len(part) == 3 and whole != "0" else float(whole + "." + part)
    m = _GROUPED.fullmatch(text)
    if m is None or m["decimal"] == m["sep"]:
        return None  # (`1,026,872,5` has no reading)
    number = text.replace(m["sep"], "")
    return float(number.replace(",", ".") if m["decimal"] == "," else number)


# -- fio (JSON and text)

# rw option -> (pattern, operation)
FIO_RW = {
    "read": ("sequential", "read"),
    "write": ("sequential", "write"),
    "randread": ("random", "read"),
    "randwrite": ("random", "write"),
    "rw": ("sequential", "mixed"),
    "readwrite": ("sequential", "mixed"),
    "randrw": ("random", "mixed"),
}
# Engines fio flags FIO_SYNCIO: one I/O in flight per job whatever iodepth says.
SYNC_ENGINES = frozenset(
    {
        "sync",
        "psync",
        "vsync",
        "pvsync",
        "pvsync2",
        "mmap",
        "splice",
        "falloc",
        "ftruncate",
        "e4defrag",
        "filecreate",
        "filestat",
        "filedelete",
        "dircreate",
        "dirstat",
        "dirdelete",
    }
)
# fio's note (before its output) when iodepth > 1 meets a synchronous engine.
CAPPED_NOTE = "queue depth will be capped at 1"


# Little's law: I/Os in flight = IOPS x mean latency. A run's threads x queue depth bounds it; a measured count far
# above (a `group_reporting` group that merges several job sections counted as one section's numjobs) or far below
# it says the thread count or depth is wrong.
LITTLES_LAW_BOUNDS = (0.25, 1.5)


def littles_law_in_flight(records: list) -> tuple[float, int] | None:
    """(I/Os in flight by Little's law, threads x queue depth) of one run's IoRecords, summed over its directions;
    None when a figure is missing."""
    from kneepoint.ingest import units  # (a formats module imports no warehouse code at import time)

    first = records[0]
    if not first.threads or not first.queue_depth:
        return None
    in_flight = 0.0
    for rec in records:
        ms = units.to_ms(rec.latency_avg, rec.latency_unit)
        if rec.iops is None or ms is None:
            return None
        in_flight += rec.iops * ms / 1000
    return in_flight, first.threads * first.queue_depth


def littles_law_warning(records: list) -> str | None:
    """A warning when a run's IOPS x mean latency / (threads x queue depth) is far from 1, else None."""
    figures = littles_law_in_flight(records)
    if figures is None or figures[1] <= 0:
        return None
    in_flight, slots = figures
    low, high = LITTLES_LAW_BOUNDS
    if low <= in_flight / slots <= high:
        return None
    first = records[0]
    return (
        f"line {first.source_line}: job {first.metadata.get('jobname', '')!r}: IOPS x mean latency puts "
        f"{in_flight:.1f} I/Os in flight, threads x queue depth {first.threads} x {first.queue_depth} = {slots} "
        "(Little's law): the thread count or queue depth may be wrong"
    )


def snap_block_size(size: float) -> int | None:
    """A block size measured as bytes / I/Os: rounded IOPS and bandwidth leave some noise, so a power of two
    within 2 %, else a multiple of 512."""
    if not math.isfinite(size) or size < 1 or size > 1 << 40:
        return None
    power = 1 << max(0, round(math.log2(size)))
    if abs(size - power) <= 0.02 * power:
        return power
    return max(512, round(size / 512) * 512) if size >= 512 else round(size)


# -- DiskSpd (text and XML)

# %-ile table rows: label -> percentile.
PERCENTILE_LABELS: dict[str, float] = {
    "min": 0.0,
    "25th": 25.0,
    "50th": 50.0,
    "75th": 75.0,
    "90th": 90.0,
    "95th": 95.0,
    "99th": 99.0,
    "3-nines": 99.9,
    "4-nines": 99.99,
    "5-nines": 99.999,
    "6-nines": 99.9999,
    "7-nines": 99.99999,
    "8-nines": 99.999999,
    "9-nines": 99.9999999,
    "max": 100.0,
}
# Record latency fields and the %-ile row each one takes.
LATENCY_FIELD_ROWS = {
    "latency_min": "min",
    "latency_p50": "50th",
    "latency_p95": "95th",
    "latency_p99": "99th",
    "latency_p999": "3-nines",
    "latency_max": "max",
}


def share_histogram(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Sorted (percentile, latency) points -> (latency upper bound, percent of I/Os since the previous point).

    Equal latencies are merged into one bucket; shares that round to nothing are dropped."""
    out: list[tuple[float, float]] = []
    previous = 0.0
    for percentile, latency in points:
        share = percentile - previous
        previous = max(previous, percentile)
        if share <= 1e-12:
            continue
        if out and out[-1][0] >= latency:
            out[-1] = (out[-1][0], out[-1][1] + share)
        else:
            out.append((latency, share))
    return out


_START_TIME = re.compile(r"^([0-9]{4})/([0-9]{1,2})/([0-9]{1,2})\s+([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:\s*UTC)?$")


def diskspd_start_time(value: str | None) -> str | None:
    """DiskSpd's `2019/07/25 21:46:27 UTC` (text `start time:`, XML `<RunTime>`) in ISO 8601, else None."""
    if not value:
        return None
    m = _START_TIME.match(value.strip())
    if not m:
        return None
    try:
        return datetime(*(int(g) for g in m.groups()), tzinfo=UTC).isoformat()  # type: ignore[misc]
    except ValueError:
        return None
