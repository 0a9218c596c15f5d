"""What more than one format module reads the same way: kept here so that each rule has one home.

Modules starting with `_` are not formats (the registry skips them).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
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


# -- text pasted by people (any text format): grouped numbers, cut lines, wrapped lines, comment marks
#
# Two readers of grouped numbers, for two needs, on one definition of the separators:
# - counts (`read_grouped_int`, `GROUPED_INT` to embed in a pattern): whole numbers, no decimals, so a lone `.` or
#   `,` is a thousands separator (SQL Server's `logical reads 1.026` is 1026 reads);
# - figures with decimals (`read_number` for a value alone, `ungroup_numbers` for the numbers inside a line): a lone
#   `.` is a decimal point, as every tool prints one (`1.026` is 1.026 ms), a decimal part may follow the groups
#   after the other mark (`1.026.872,5`), a lone `,` is a decimal comma unless three digits follow (`12,5`; `1,026` is
#   1026).

# Thousands separators seen in pasted outputs: comma, dot, space, no-break space U+00A0, narrow no-break space U+202F.
GROUP_MARKS = ",. \u00a0\u202f"
_MARK = "[" + GROUP_MARKS + "]"

# A whole number as printed, its digit groups apart or not: `1,026,872`, `1.026.872`, `1 026 872`. To embed in a
# pattern; `read_grouped_int` checks the grouping.
GROUPED_INT = r"[0-9]{1,3}(?:" + _MARK + r"[0-9]{3})+(?![0-9])|[0-9]+"
_GROUPED_INT = re.compile(r"[0-9]{1,3}(?:(" + _MARK + r")[0-9]{3})(?:\1[0-9]{3})*")


def read_grouped_int(text: str) -> int | None:
    """A count as people paste it: `1026872`, `1,026,872`, `1.026.872` or `1 026 872` -> 1026872; None when `text` is
    no whole number, or its groups are not three digits apart with one separator throughout (`1,02`, `1,026.872`).
    For counts, which have no decimals, a lone `.` or `,` separates thousands too (`1.026` is 1026)."""
    if text.isdigit() and text.isascii():
        return int(text)
    return int(re.sub(r"[^0-9]", "", text)) if _GROUPED_INT.fullmatch(text) else None


_PLAIN_NUMBER = re.compile(r"[+-]?[0-9]{1,20}(?:[.,][0-9]{1,15})?")
# Groups of three after a first group of 1-3 digits, one mark throughout, then a decimal part after the other mark
# (a space-grouped number may take either).
_GROUPED_NUMBER = re.compile(
    r"(?P<sign>[+-]?)(?P<int>[0-9]{1,3}(?P<mark>" + _MARK + r")[0-9]{3}(?:(?P=mark)[0-9]{3}){0,5})"
    r"(?:(?P<dec_mark>[.,])(?P<dec>[0-9]{1,15}))?"
)


def read_number(text: str) -> float | None:
    """A number as a tool printed it or a user pasted it, else None: `1026872`, `-1026.5`, with thousands separators
    (`1,026,872`, `1.026.872`, `1 026 872` with a space, no-break space or narrow no-break space; then a decimal part
    after the other of `.` and `,`: `1.026.872,5`) or with a decimal comma (`12,5`).

    Where one separator stands alone it is read as the tools print it: a single `.` is a decimal point (`1.026` is
    1.026), a single `,` before exactly three digits a thousands separator (`1,026` is 1026; `0,026` and `12,50` are
    decimal commas). A cut-short number (`12…`, `12..`), `1e309`, `NaN` or any other text is None."""
    text = text.strip()
    if _PLAIN_NUMBER.fullmatch(text):
        whole, comma, part = text.partition(",")
        if not comma:
            return float(text)
        digits = whole.lstrip("+-")
        return float(whole + part) if len(part) == 3 and digits != "0" else float(whole + "." + part)
    m = _GROUPED_NUMBER.fullmatch(text)
    if m is None or m["mark"] == m["dec_mark"]:
        return None  # (`1,026,872,5` has no reading)
    digits = re.sub(r"[^0-9]", "", m["int"])
    value = float(f"{digits}.{m['dec']}" if m["dec"] else digits)
    return -value if m["sign"] == "-" else value


def ungroup_numbers(line: str) -> str:
    """`line` with every grouped number (see read_number) written plainly, so a line pattern written for plain
    numbers reads it: `1,026,872 IOPS` -> `1026872 IOPS`. A line without a group mark between digits is returned
    as it is."""
    if not _HAS_GROUP.search(line):
        return line
    return _GROUPED_IN_LINE.sub(_plain, line)


_HAS_GROUP = re.compile(r"[0-9]" + _MARK + r"[0-9]{3}")
# A grouped number inside a line: not glued to other digits or marks on either side.
_GROUPED_IN_LINE = re.compile(
    r"(?<![0-9.,])[0-9]{1,3}(?P<mark>" + _MARK + r")[0-9]{3}(?:(?P=mark)[0-9]{3}){0,5}"
    r"(?P<dec>(?!(?P=mark))[.,][0-9]{1,12})?(?![0-9]|[,.][0-9])"
)


def _plain(m: re.Match[str]) -> str:
    text = m[0]
    # One dot group with no decimal part after it is a decimal number (1.026): as printed.
    if m["mark"] == "." and text.count(".") == 1 and m["dec"] is None:
        return text
    whole = text[: len(text) - len(m["dec"] or "")]
    digits = "".join(c for c in whole if c.isdigit())
    return f"{digits}.{m['dec'][1:]}" if m["dec"] else digits


TRUNCATION_MARKS = ("\u2026", "..")  # how a line cut short by hand, a paste or a terminal ends: `…`, `..`, `...`


def truncated(line: str) -> bool:
    """A line that ends in an ellipsis (`…`, `..` or `...`): cut where it was pasted or shown, its figures
    incomplete."""
    return line.rstrip().endswith(TRUNCATION_MARKS)


def how_damaged(line: str, short: bool = False) -> str:
    """How a line that did not read whole is named in its warning: `cut short` where it ends in an ellipsis (or the
    caller saw it end early: `short`), else `damaged`."""
    return "cut short" if short or truncated(line) else "damaged"


def reread_ungrouped(
    match: Callable[[str], re.Match[str] | None], line: str, m: re.Match[str] | None
) -> tuple[re.Match[str] | None, str]:
    """A line pattern's reading of a pasted line that `m` (what `match` made of `line`) did not read to its end: where
    the line holds grouped numbers (`1,026,872.5`), what `match` makes of it written plainly (ungroup_numbers) if that
    reads further towards its end, else `m`: (the match, the line it read)."""
    plain = ungroup_numbers(line)
    if plain != line:
        again = match(plain)
        if again is not None and (m is None or again.end() - len(plain) > m.end() - len(line)):
            return again, plain
    return m, line


def join_wrapped(head: str, tail: str) -> list[str]:
    """The ways a line that an editor, terminal or mail client wrapped may have read before: `head` and `tail` (the
    next line, both stripped) joined at a space; where a word was cut (`read-ahe` + `ad`, `read-` + `ahead`); where a
    hyphen was added to cut it (`phys-` + `ical`). The caller keeps the first that reads whole."""
    joined = [head + " " + tail]
    if tail[:1].isalnum():
        if head[-1:].isalnum() or head.endswith("-"):
            joined.append(head + tail)
        if head.endswith("-") and head[-2:-1].isalpha():
            joined.append(head[:-1] + tail)
    return joined


def uncomment_sql(line: str) -> str:
    """A stripped line without the T-SQL comment marks around it: leading `--` (any number of dashes), a `/*` that
    opens it, a `*/` that closes it; the text of output pasted into a script as comments. Other lines are unchanged."""
    if line.startswith("--"):
        line = line.lstrip("-").lstrip()
    if line.startswith("/*"):
        line = line[2:].lstrip()
    if line.endswith("*/"):
        line = line[:-2].rstrip()
    return line
