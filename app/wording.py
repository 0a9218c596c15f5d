"""How kneepoint says things: one place for the command line, the pages and the report.

Numbers are plain (thousands separators, never scientific notation), units are named once, a workload has one
name, and a saturation point, a USL fit or a Kneedle knee is said in one sentence wherever it is shown.

Labels are the users' own text and may hold anything: what reaches a terminal goes through `printable`, what
reaches a plotly text field (trace names, titles, annotations, hover text) through `esc`.
"""

from __future__ import annotations

import html
import math
import re
import textwrap
from collections.abc import Mapping
from datetime import datetime, time, timedelta
from typing import Any

DASH = "–"  # what an empty cell shows
MINUS = "−"  # U+2212: a negative percentage lines up with its plus

# Throughput display units: the marts carry both, and every axis says which one it shows.
THROUGHPUT_UNITS: dict[str, tuple[str, str, float]] = {
    # key -> (mart column, unit, bytes per unit)
    "MB": ("throughput_mb_per_s", "MB/s", 1e6),
    "MiB": ("throughput_mib_per_s", "MiB/s", 2.0**20),
}
UNIT_BASES = {"MB": "10⁶ bytes", "MiB": "2²⁰ bytes"}


# -- terminal ---------------------------------------------------------------------------------------------------

# Characters that change what a terminal shows rather than being shown: C0 and C1 controls (escape sequences,
# carriage returns, the bell), and the bidirectional overrides and isolates that reorder the rest of a line.
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_UNPRINTABLE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")


# What a parsing pool is stated to cost per process, each worker and the server they fork from (README, "Memory";
# measured 2026-12-07: two workers and their server took 25,400 files from 271 to 332 MB, 10,000 fio files from
# 242 to 262 MB): `--workers`' help says it and the bench checks it.
POOL_PROCESS_MB = 40


def printable(text: object) -> str:
    """`text` safe to print on a terminal: control and bidi characters shown as escapes (`\\x1b`, `\\u202e`),
    the rest as it is, so a label holding `ESC]0;...` can neither retitle the window nor recolour the output."""
    return _UNPRINTABLE.sub(_escape, str(text))


def printable_wrap(text: object, width: int, **options: Any) -> list[str]:
    """`text` made printable, then wrapped (textwrap.wrap's options): escaped first, so that a label's CR or LF
    reads as `\\r`/`\\n` rather than vanishing into the wrap as a space."""
    return textwrap.wrap(printable(text), width, **options)


_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    code = ord(c)
    return _NAMED.get(c) or (f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}")


# -- plotly text ------------------------------------------------------------------------------------------------


def esc(text: object) -> str:
    """`text` for a plotly text field. Plotly draws a subset of HTML there (links, bold, line breaks): a label
    `<a href=...>x</a>` must read as itself, not as a link named x."""
    return html.escape(str(text), quote=False)


# -- numbers ----------------------------------------------------------------------------------------------------


def plain(value: float | None, significant: int = 3) -> str:
    """A number to `significant` digits, never in scientific notation: 0.381, 4.25, 12.3, 1,534, 282,734."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return DASH
    if value == 0:
        return "0"
    decimals = significant - 1 - math.floor(math.log10(abs(value)))
    if decimals <= 0:
        return f"{value:,.0f}"
    text = f"{value:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def fmt_int(value: float | None) -> str:
    """17,853,887."""
    return DASH if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:,.0f}"


def fmt_iops(value: float | None) -> str:
    """282,734; below 100 to three digits (12.5)."""
    if value is None:
        return DASH
    return fmt_int(value) if abs(value) >= 100 else plain(value)


def fmt_ms(value: float | None) -> str:
    """Latency to a precision a storage engineer reads: 0.381, 4.25, 12.3, 1,234 (the unit said beside it)."""
    if value is None:
        return DASH
    return fmt_int(value) if abs(value) >= 1000 else plain(value)


def fmt_throughput(bytes_per_s: float | None, unit: str = "MB") -> str:
    """'1,534 MB/s', '4.3 MB/s' (unit 'MB': 10⁶ bytes) or '1,463 MiB/s' ('MiB': 2²⁰)."""
    if bytes_per_s is None:
        return DASH
    _, label, factor = THROUGHPUT_UNITS[unit]
    value = bytes_per_s / factor
    return f"{fmt_int(value) if value >= 100 else plain(value, 2 if value < 1 else 3)} {label}"


def fmt_bytes(size_bytes: float | None, unit: str = "MB") -> str:
    """A byte count in the page's unit: '1,331 MB' (10⁶) or '1,270 MiB' (2²⁰)."""
    if size_bytes is None:
        return DASH
    _, label, factor = THROUGHPUT_UNITS[unit]
    return f"{fmt_int(size_bytes / factor)} {label.split('/')[0]}"


def fmt_load(value: float | None) -> str:
    """Outstanding I/O: 32; a statement placed between loads, 0.5 or 12.3."""
    if value is None:
        return DASH
    return fmt_int(value) if float(value).is_integer() or value >= 100 else plain(value, 2)


def fmt_ratio(value: float | None) -> str:
    return DASH if value is None or math.isnan(value) else f"{value:.2f}"


def fmt_pct_diff(ratio: float | None) -> str:
    """A ratio to a baseline as a difference: 1.32 -> '+32 %', 0.88 -> '−12 %', 1.0 -> '±0 %'."""
    if ratio is None or math.isnan(ratio):
        return DASH
    pct = (ratio - 1) * 100
    if round(pct) == 0:
        return "±0 %" if abs(pct) < 0.5 else f"{'+' if pct > 0 else MINUS}{abs(pct):.1f} %"
    return f"{'+' if pct > 0 else MINUS}{abs(pct):,.0f} %"


def fmt_block_size(block_size_bytes: int) -> str:
    if block_size_bytes >= 1 << 20 and block_size_bytes % (1 << 20) == 0:
        return f"{block_size_bytes >> 20} MiB"
    if block_size_bytes >= 1 << 10 and block_size_bytes % (1 << 10) == 0:
        return f"{block_size_bytes >> 10} KiB"
    return f"{block_size_bytes} B"


def fmt_io_size(size_bytes: float | None) -> str:
    """An observed size per I/O (an average, rarely a whole block): '8 KiB' where it is one, else '10.4 KiB',
    '1.5 MiB', '512 B'."""
    if size_bytes is None:
        return DASH
    whole = round(size_bytes)  # an average within half a byte of a block is that block
    if whole < 1 << 10 or not fmt_block_size(whole).endswith(" B"):
        return fmt_block_size(whole)
    if size_bytes >= 1 << 20:
        return f"{plain(size_bytes / (1 << 20))} MiB"
    return f"{plain(size_bytes / (1 << 10))} KiB"


def plural(n: int, word: str, many: str | None = None) -> str:
    """'1 load', '10 loads', '1 run', '2 statements'."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def intervals_drawn(drawn: int, logged: int) -> str:
    """A device's observed intervals on a chart: all of them, or of a long log how many are drawn (each stretch of
    the log by its extremes: queries.observed_intervals)."""
    if drawn >= logged:
        return plural(drawn, "observed interval")
    return f"{plural(logged, 'observed interval')} ({drawn:,} drawn)"


def threads_qd(threads: int | None, queue_depth: int | None) -> str:
    """'1 thread × QD 32'."""
    if threads is None or queue_depth is None:
        return ""
    return f"{plural(threads, 'thread')} × QD {queue_depth}"


# -- workloads --------------------------------------------------------------------------------------------------


def operation_text(operation: str, read_pct: float) -> str:
    """'read', '70% read mix'."""
    return f"{read_pct:g}% read mix" if operation == "mixed" else operation


def workload_title(pattern: str, operation: str, read_pct: float, block_size_bytes: int, direction: str) -> str:
    """'random read 4 KiB', 'random 70% read mix 8 KiB (write I/Os)'."""
    op = operation_text(operation, read_pct)
    counted = "" if direction == operation else f" ({direction} I/Os)"
    return f"{pattern} {op} {fmt_block_size(block_size_bytes)}{counted}"


def workload_of(row: Mapping[str, Any]) -> str:
    """workload_title of a mart row."""
    return workload_title(row["pattern"], row["operation"], row["read_pct"], row["block_size_bytes"], row["direction"])


def grid_row_title(pattern: str, block_size_bytes: int) -> str:
    """CrystalDiskMark's row names: 'SEQ 1 MiB', 'RND 4 KiB'."""
    return f"{'SEQ' if pattern == 'sequential' else 'RND'} {fmt_block_size(block_size_bytes)}"


def is_sequential(pattern: str) -> bool:
    """Sequential workloads are read in MB/s, random ones in IOPS."""
    return pattern == "sequential"


def tested_range(lo: float | None, hi: float | None, points: int | None = None, runs: int | None = None) -> str:
    """'1–512 outstanding (10 loads, 24 runs)', 'only at 16 outstanding (1 run)'."""
    counts = ", ".join(
        plural(n, w) for n, w in ((points, "load"), (runs, "run")) if n is not None and not (w == "load" and lo == hi)
    )
    where = f"only at {fmt_load(lo)} outstanding" if lo == hi else f"{fmt_load(lo)}–{fmt_load(hi)} outstanding"
    return where + (f" ({counts})" if counts else "")


def format_name(fmt: str | None) -> str:
    """A format module id in the user's words: 'fio_json' -> 'fio JSON' (the registry's titles)."""
    from kneepoint.ingest import formats

    return formats.titles().get(fmt or "", fmt or DASH)


# -- saturation -------------------------------------------------------------------------------------------------


def rule_sentence(tolerance: float, by_threads: bool = False) -> str:
    """The saturation rule in one sentence, with its tolerance."""
    load = "queue depth" if by_threads else "load (outstanding I/O = threads × queue depth)"
    return (
        f"The saturation point is the smallest {load} past which no larger measured load delivers more than "
        f"{tolerance:.0%} more IOPS: beyond it, more outstanding I/O only adds latency."
    )


def latency_text(avg_ms: float | None, p99_ms: float | None) -> str:
    """'0.18 ms mean (p99 0.25 ms)', 'p99 4.2 ms', 'no latency reported'."""
    if avg_ms is not None and p99_ms is not None:
        return f"{fmt_ms(avg_ms)} ms mean (p99 {fmt_ms(p99_ms)} ms)"
    if avg_ms is not None:
        return f"{fmt_ms(avg_ms)} ms mean"
    if p99_ms is not None:
        return f"p99 {fmt_ms(p99_ms)} ms"
    return "no latency reported"


def saturation_sentence(row: Mapping[str, Any], by_threads: bool = False) -> str:
    """A mart_saturation_points (or mart_saturation_by_threads) row in words:
    'saturates at 32 outstanding: 177,525 IOPS, 0.18 ms mean (p99 0.25 ms)', or
    'not saturated within the tested range (1–512 outstanding): best 1,234 IOPS at 512'."""
    qd = "QD " if by_threads else ""
    lo, hi = (
        (row.get("min_queue_depth"), row.get("max_queue_depth"))
        if by_threads
        else (row.get("min_outstanding_io"), row.get("max_outstanding_io"))
    )
    if not row.get("saturated"):
        best = fmt_iops(row.get("max_iops"))
        if lo == hi:
            where = f"QD {fmt_load(lo)}" if by_threads else f"{fmt_load(lo)} outstanding"
            return f"not saturated: only measured at {where} ({best} IOPS)"
        at = row.get("max_iops_queue_depth") if by_threads else row.get("max_iops_outstanding_io")
        unit = "" if by_threads else " outstanding"
        return (
            f"not saturated within the tested range ({qd}{fmt_load(lo)}–{qd}{fmt_load(hi)}{unit}): "
            f"best {best} IOPS at {qd}{fmt_load(at)}"
        )
    where = (
        f"saturates at QD {row['saturation_queue_depth']} ({fmt_load(row['saturation_outstanding_io'])} outstanding)"
        if by_threads
        else f"saturates at {fmt_load(row.get('saturation_outstanding_io'))} outstanding"
    )
    return f"{where}: {fmt_iops(row.get('iops_at_saturation'))} IOPS, " + latency_text(
        row.get("latency_avg_ms_at_saturation"), row.get("latency_p99_ms_at_saturation")
    )


def usl_sentence(row: Mapping[str, Any]) -> str:
    """The USL fit in a storage engineer's words: 'the fitted USL model peaks at 61 outstanding (186,000 IOPS;
    fit R² 0.92)'. Its caveats (usl_note) are said apart."""
    if not row.get("usl_fitted"):
        note = row.get("usl_note") or ""
        return "no USL model fitted" + (f": {note.removeprefix('USL not fitted: ')}" if note else "")
    r2 = row.get("usl_r_squared")
    fit = f"fit R² {r2:.2f}" if r2 is not None else "flat IOPS"
    peak = row.get("usl_peak_outstanding_io")
    if peak is None:
        return f"the fitted USL model predicts no peak: IOPS level off ({fit})"
    peak_iops = fmt_iops(row.get("usl_peak_iops"))
    return f"the fitted USL model peaks at {fmt_load(round(peak))} outstanding ({peak_iops} IOPS; {fit})"


def kneedle_sentence(row: Mapping[str, Any]) -> str:
    """Kneedle, the curve-bend detector, beside the rule: 'the curve bends most at 32 outstanding, where the rule
    puts saturation too'."""
    knee = row.get("kneedle_outstanding_io")
    if knee is None:
        return "no bend found in the IOPS curve (Kneedle)"
    if row.get("kneedle_agrees"):
        return f"the IOPS curve bends most at {fmt_load(knee)} outstanding (Kneedle), where the rule puts saturation"
    rule = row.get("saturation_outstanding_io")
    beside = f"the rule says {fmt_load(rule)}" if rule is not None else "the rule finds no saturation"
    return f"the IOPS curve bends most at {fmt_load(knee)} outstanding (Kneedle); {beside}"


def latency_target_sentence(found: Mapping[str, Any] | None, target_ms: float) -> str:
    """The largest measured load under a latency target (ingest/analytics.latency_target_point): 'the largest load
    under 5 ms is 64 outstanding: 45,000 IOPS (p99 4.2 ms)'."""
    if found is None or found.get("iops_at_latency_target") is None:
        return f"no measured load stays under {target_ms:g} ms"
    return (
        f"the largest load under {target_ms:g} ms is {fmt_load(found['latency_target_outstanding_io'])} outstanding: "
        f"{fmt_iops(found['iops_at_latency_target'])} IOPS ({found['latency_target_metric']} "
        f"{fmt_ms(found['latency_ms_at_latency_target'])} ms)"
    )


# -- production against the baseline ----------------------------------------------------------------------------


def fmt_times(value: float | None) -> str:
    """A ratio said as a multiple: 4.1×, 12×, 0.62×."""
    return DASH if value is None or not math.isfinite(value) else f"{plain(value, 2)}×"


def headroom_sentence(row: Mapping[str, Any]) -> str:
    """A host/device's observed busy-hour load against its disk's benchmark (a mart_headroom row) in one sentence:
    'p95 load is 1,240 IOPS at 7.8 ms in the busiest hour, 2026-11-23 14:00–15:00: 4.1× below saturation; latency at
    that load is 3.2× the baseline's — the disk is slower than when it was benchmarked'. The command line, the page
    and the report say it this way."""
    iops, latency = row.get("iops_p95"), row.get("latency_avg_ms_p95")
    load = f"p95 load is {fmt_iops(iops)} IOPS" + (f" at {fmt_ms(latency)} ms" if latency is not None else "")
    if hour := busy_hour_text(row):
        load += f" {hour}"
    if row.get("series_id") is None:
        return f"{load}; no benchmark of this disk to compare it with (ingest one under the same disk label)"
    if not iops:
        return f"{load}: the device was idle"
    if row.get("beyond_baseline"):
        where = f"beyond every load the benchmark measured (at most {fmt_iops(row.get('baseline_max_iops'))} IOPS)"
    elif row.get("baseline_saturated") and row.get("headroom") is not None:
        headroom = row["headroom"]
        where = (
            f"{fmt_times(headroom)} below saturation"
            if headroom >= 1
            else f"past saturation ({fmt_iops(row.get('baseline_saturation_iops'))} IOPS in the benchmark)"
        )
    else:
        where = (
            f"at least {fmt_times(row.get('headroom_at_least'))} below saturation (the benchmark did not saturate "
            f"up to {fmt_iops(row.get('baseline_max_iops'))} IOPS)"
        )
    ratio, factor = row.get("latency_ratio"), row.get("degradation_factor")
    if ratio is None:
        return f"{load}: {where}; the baseline has no latency to compare at that load"
    said = f"latency at that load is {fmt_times(ratio)} the baseline's"
    if row.get("degraded"):
        said += " — the disk is slower than when it was benchmarked"
    elif factor is not None:
        said += f", within the {fmt_times(factor)} that would mean it degraded"
    return f"{load}: {where}; {said}"


def wait_sentence(row: Mapping[str, Any]) -> str:
    """A server's I/O wait against its disk's benchmark (a mart_waits_vs_baseline row) in one sentence, as a DBA
    compares them: 'PAGEIOLATCH_SH waits 6.17 ms per waiting task (612 tasks/s) at 748 reads/s: 1.2× the
    baseline's read latency at that load (5.11 ms), within the 2× that would mean it degraded'. The command line,
    the page and the report say it this way."""
    direction = "read" if row.get("wait_kind") == "data page read" else "write"
    tasks = row.get("waiting_tasks_per_s")
    said = f"{row['wait_type']} waits {fmt_ms(row.get('avg_wait_ms'))} ms per waiting task" + (
        f" ({fmt_iops(tasks)} tasks/s)" if tasks is not None else ""
    )
    iops = row.get("iops")
    if iops is None:
        return (
            f"{said}; no file statistics captured with these waits to place them on the benchmark (paste "
            "sys.dm_io_virtual_file_stats snapshots with them)"
        )
    said += f" at {fmt_iops(iops)} {direction}s/s"
    if not iops:
        return f"{said}: the server's files saw no {direction}s in those snapshots to place it by"
    if row.get("series_id") is None:
        return f"{said}; no benchmark of this disk to compare it with (ingest one under the same disk label)"
    if row.get("beyond_baseline"):
        return (
            f"{said}: beyond every load the benchmark measured (at most {fmt_iops(row.get('baseline_max_iops'))} IOPS)"
        )
    ratio, factor = row.get("latency_ratio"), row.get("degradation_factor")
    if ratio is None:
        return f"{said}; the baseline has no latency to compare at that load"
    said += (
        f": {fmt_times(ratio)} the baseline's {direction} latency at that load "
        f"({fmt_ms(row.get('baseline_latency_at_iops_ms'))} ms)"
    )
    if row.get("degraded"):
        return f"{said} — the disk is slower than when it was benchmarked"
    return f"{said}, within the {fmt_times(factor)} that would mean it degraded" if factor is not None else said


def busy_hour_text(row: Mapping[str, Any]) -> str:
    """Which intervals a mart_headroom row's percentiles are over: 'in the busiest hour, 2026-11-23 14:00–15:00',
    'over the whole log, 2026-11-02 09:00–09:05 (under an hour)', 'over the whole log (no times logged)'; '' for a
    row without a busy hour."""
    start, end = row.get("busy_hour_start"), row.get("busy_hour_end")
    if row.get("busy_hour_whole_log"):
        if start is None or end is None:
            return "over the whole log (no times logged)"
        return f"over the whole log, {time_span(start, end)} (under an hour)"
    if start is None or end is None:
        return ""
    return f"in the busiest hour, {time_span(start, end)}"


def busy_hour_count(row: Mapping[str, Any]) -> str:
    """How many intervals the busy hour holds of how many: '12 of 288 intervals in the busy hour', '21 intervals'
    where the whole log is it."""
    counted, total = row.get("busy_hour_intervals"), row.get("intervals") or 0
    if counted is None or counted == total:
        return plural(total, "interval")
    return f"{counted:,} of {plural(total, 'interval')} in the busy hour"


def time_span(start: datetime, end: datetime) -> str:
    """'2026-11-23 14:00–15:00'; seconds where either has some ('09:00:00–09:05:15', a short log's); the end's
    date too where it is another day's (but not at its midnight)."""
    clock = "%H:%M:%S" if start.second or end.second else "%H:%M"
    same_day = end.date() == start.date() or (end - start <= timedelta(days=1) and end.time() == time())
    return f"{start:%Y-%m-%d {clock}}–{end:{clock}}" if same_day else f"{start:%Y-%m-%d {clock}}–{end:%Y-%m-%d {clock}}"


def device_label(row: Mapping[str, Any]) -> str:
    """An observed device with the computer that logged it: 'SQL01 · PhysicalDisk(1 E:)', 'vda' without one."""
    host = (row.get("host") or "").strip()
    return f"{host} · {row['device']}" if host else str(row["device"])


def wait_label(row: Mapping[str, Any]) -> str:
    """The server a wait (a mart_waits_vs_baseline row) was logged on, its computer and named instance:
    'SQLPROD01 · INST1', 'SQL01' for a default instance (its sentence names the wait type)."""
    host, instance = (row.get("host") or "").strip(), (row.get("instance") or "").strip()
    return " · ".join(part for part in (host, instance) if part) or "SQL Server"


def observed_span(row: Mapping[str, Any]) -> str:
    """A mart_headroom row's intervals in words: '288 intervals, 2026-11-23 00:00 to 23:55, 12 in the busy hour'
    (the busy hour's share where it is not the whole log)."""
    first, last = row.get("first_interval_start"), row.get("last_interval_start")
    counted = plural(row.get("intervals") or 0, "interval")
    busy, total = row.get("busy_hour_intervals"), row.get("intervals") or 0
    in_busy_hour = f", {busy:,} in the busy hour" if busy is not None and busy != total else ""
    if first is None or last is None:
        return counted + in_busy_hour
    end = f"{last:%H:%M}" if last.date() == first.date() else f"{last:%Y-%m-%d %H:%M}"
    return f"{counted}, {first:%Y-%m-%d %H:%M} to {end}{in_busy_hour}"


def baseline_text(row: Mapping[str, Any]) -> str:
    """Which benchmark an observed load was placed on: 'random read 4 KiB (the nearest to 4 KiB, 100% read)'."""
    if row.get("series_id") is None:
        return "no baseline"
    block = row.get("bytes_per_io")
    mix = row.get("read_pct")
    observed = ", ".join(
        part
        for part in (
            f"{fmt_io_size(block)} per I/O" if block else "",
            f"{mix:.0f}% reads" if mix is not None else "",
        )
        if part
    )
    pattern, read_pct = row.get("baseline_pattern"), row.get("baseline_read_pct")
    operation = "read" if read_pct == 100 else "write" if read_pct == 0 else "mixed"
    return (
        f"{workload_title(pattern, operation, read_pct, row['baseline_block_size_bytes'], row['baseline_direction'])}"
        + (f", the nearest to {observed}" if observed else "")
    )


def read_only(warehouse: object) -> str:
    """What an account that may only read a PostgreSQL warehouse is told when it tries to change it (the command
    line, Upload and Stored files alike)."""
    return (
        f"the warehouse {warehouse} may only be read with this account: storing, relabelling and deleting files "
        "need an account that may write to it"
    )


def littles_law_bounds() -> str:
    """'0.8–1.25': the dbt vars a run's IOPS × latency / outstanding I/O must stay within."""
    from kneepoint.ingest import units

    return f"{units.var('littles_law_ratio_min'):g}–{units.var('littles_law_ratio_max'):g}"


def cpu_sentence(cpu_to_elapsed: float | None) -> str:
    """A statement's CPU / elapsed ratio in words: 'I/O-bound: 3% CPU'; a dash without an elapsed time (its
    status says why: statement_status)."""
    if cpu_to_elapsed is None:
        return DASH
    pct = cpu_to_elapsed * 100
    # CPU time summed over parallel workers can exceed the elapsed time.
    if cpu_to_elapsed < 0.5:
        return f"I/O-bound: {pct:.0f}% CPU"
    if cpu_to_elapsed <= 1.0:
        return f"CPU-bound: {pct:.0f}% CPU"
    return f"CPU-bound (parallel): {pct:.0f}% CPU"


def capital(text: str) -> str:
    """The first letter capitalized, the rest as it is ('the fitted USL model' -> 'The fitted USL model'); a
    percentile's name stays as it is written everywhere ('p95 load is ...', never 'P95')."""
    if re.match(r"p\d", text):
        return text
    return text[:1].upper() + text[1:]


def statement_status(row: Mapping[str, Any]) -> str:
    """A SQL statement's status: 'failed (Msg 207)' where the parser marks a failed statement (the `failed` and
    `error_number` columns of fct_query_time, when the warehouse has them), 'not timed' without an execution
    time, else 'timed'. A failed or untimed statement shows no times, never 0 ms."""
    if row.get("failed"):
        return "failed" + (f" (Msg {row['error_number']})" if row.get("error_number") is not None else "")
    return "not timed" if row.get("execution_elapsed_ms") is None else "timed"


# -- names for files --------------------------------------------------------------------------------------------


def slug(text: str, limit: int = 60) -> str:
    """A file-name stem: 'Random read 4 KiB' -> 'random-read-4-kib'."""
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:limit].strip("-") or "chart"


# -- load series (an application's throughput against sessions, virtual users, databases) ------------------------


def load_series_title(row: Mapping[str, Any]) -> str:
    """'oltp: transactions against virtual users', 'queries against concurrent sessions'."""
    workload = row.get("workload") or ""
    return f"{workload + ': ' if workload else ''}{row['throughput_what']} against {row['load_kind']}"


def fmt_load_throughput(value: float | None, unit: str | None) -> str:
    """'1,234 transactions/min', '4.52 queries/s'."""
    if value is None:
        return DASH
    return f"{fmt_iops(value)} {unit}" if unit else fmt_iops(value)


def per_s_in_unit(per_s: float | None, unit: str) -> float | None:
    """A throughput per second in a load series' unit ('transactions/min': × 60)."""
    from kneepoint.ingest import units

    return None if per_s is None else per_s / units.load_throughput_units()[unit]


def load_rule_sentence(tolerance: float) -> str:
    """The disks' saturation rule said for a load series."""
    return (
        f"The saturation load is the smallest load (sessions, virtual users, databases) past which no larger measured "
        f"load delivers more than {tolerance:.0%} more throughput: beyond it, more load only adds response time."
    )


def response_text(avg_ms: float | None, p95_ms: float | None = None, p99_ms: float | None = None) -> str:
    """'820 ms mean response (p95 1,230 ms)', 'no response time reported'."""
    tail = next((f"{name} {fmt_ms(v)} ms" for name, v in (("p99", p99_ms), ("p95", p95_ms)) if v is not None), None)
    if avg_ms is not None:
        return f"{fmt_ms(avg_ms)} ms mean response" + (f" ({tail})" if tail else "")
    return f"{tail} response" if tail else "no response time reported"


def load_saturation_sentence(row: Mapping[str, Any]) -> str:
    """A mart_load_saturation row in words: 'saturates at 4 concurrent sessions: 300 queries/min, 800 ms mean
    response', or 'not saturated within the tested range (1–12 concurrent sessions): best 320 queries/min at 12'."""
    kind, unit = row["load_kind"], row.get("throughput_unit")
    lo, hi = row.get("min_load"), row.get("max_load")
    if not row.get("saturated"):
        best = fmt_load_throughput(row.get("max_throughput"), unit)
        if lo == hi:
            return f"not saturated: only measured at {fmt_load(lo)} {kind} ({best})"
        return (
            f"not saturated within the tested range ({fmt_load(lo)}–{fmt_load(hi)} {kind}): best {best} at "
            f"{fmt_load(row.get('max_throughput_load'))}"
        )
    return (
        f"saturates at {fmt_load(row['saturation_load'])} {kind}: "
        f"{fmt_load_throughput(row.get('throughput_at_saturation'), unit)}, "
        + response_text(
            row.get("response_avg_ms_at_saturation"),
            row.get("response_p95_ms_at_saturation"),
            row.get("response_p99_ms_at_saturation"),
        )
    )


def load_usl_sentence(row: Mapping[str, Any]) -> str:
    """The USL fit of a load series: 'the fitted USL model peaks at 7 concurrent sessions (340 queries/min; fit R²
    0.99)'. Its caveats (usl_note) are said apart."""
    if not row.get("usl_fitted"):
        note = row.get("usl_note") or ""
        return "no USL model fitted" + (f": {note.removeprefix('USL not fitted: ')}" if note else "")
    r2 = row.get("usl_r_squared")
    fit = f"fit R² {r2:.2f}" if r2 is not None else "flat throughput"
    peak = row.get("usl_peak_load")
    if peak is None:
        return f"the fitted USL model predicts no peak: throughput levels off ({fit})"
    unit = row.get("throughput_unit") or f"{row['throughput_what']}/s"
    peak_x = per_s_in_unit(row.get("usl_peak_throughput_per_s"), unit)
    return (
        f"the fitted USL model peaks at {fmt_load(round(peak))} {row['load_kind']} "
        f"({fmt_load_throughput(peak_x, unit)}; {fit})"
    )


def response_target_sentence(row: Mapping[str, Any], target_ms: float) -> str:
    """The most throughput under a response-time target: 'the most under 500 ms is 310 queries/min at 5
    concurrent sessions (p95 480 ms)'."""
    if row.get("throughput_at_latency_target") is None:
        if row.get("latency_target_timed_loads") == 0:
            return "no response time reported to hold to it"
        return f"no measured load answers under {target_ms:g} ms"
    return (
        f"the most under {target_ms:g} ms is "
        f"{fmt_load_throughput(row['throughput_at_latency_target'], row.get('throughput_unit'))} at "
        f"{fmt_load(row['latency_target_load'])} {row['load_kind']} ({row['latency_target_metric']} "
        f"{fmt_ms(row['latency_ms_at_latency_target'])} ms)"
    )
