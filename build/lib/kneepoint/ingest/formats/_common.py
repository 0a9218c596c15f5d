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
