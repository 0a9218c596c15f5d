"""`kneepoint saturation`: reads the saturation marts (or the same rule at another tolerance) and words them.

The rule is not computed here: `saturation_points(tol)` / `saturation_by_threads(tol)` are the DuckDB table
macros the marts are built from (macros/saturation.sql), so any tolerance is answered from a read-only
connection without a rebuild. Only the latency target, a user-given figure, is applied here (ingest/analytics.py).

Load series (an application's throughput against sessions, virtual users, databases; mart_load_saturation, the
same rule through `load_saturation_points(tol)`) follow the disks' series, each row marked `series_kind` "disk" or
"load"; for them the latency target is a response-time target: the most throughput with the response time under it.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kneepoint.app import wording as w
from kneepoint.app.queries import LOAD_SERIES_ORDER, load_target_columns, target_columns
from kneepoint.ingest.analytics import LatencyPoint, ResponsePoint, latency_target_point, response_target_point

SERIES_ORDER = "disk_key, pattern, operation, read_pct, block_size_bytes, direction"


def parse_tolerance(text: str) -> float:
    """--tolerance: a fraction, 0.1 = 10%; 0 allowed (saturated where nothing larger adds any IOPS)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"tolerance must be a number >= 0 (0.1 = 10%), not {text!r}")
    return value


def parse_latency_target_ms(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"latency target must be a positive number of ms, not {text!r}")
    return value


if TYPE_CHECKING:
    from kneepoint.ingest.warehouse import Location


class MissingModels(Exception):
    """The warehouse has no saturation models yet (built before they existed, or never built)."""


def saturation_rows(
    db: Location,
    tolerance: float | None = None,
    by_threads: bool = False,
    latency_target_ms: float | None = None,
) -> list[dict[str, Any]]:
    """The mart's rows (per series, or per series and thread count), at `tolerance` when given, else as built;
    with the latency-target columns when a target is given. Per series, the load series follow the disks'."""
    from kneepoint.ingest.warehouse import connect

    macro = "saturation_by_threads" if by_threads else "saturation_points"
    mart = "mart_saturation_by_threads" if by_threads else "mart_saturation_points"
    order = SERIES_ORDER + (", threads" if by_threads else "")
    con = connect(db, read_only=True)
    try:
        # The mart's post-hook stores the rule as `macro` (a DuckDB table macro, a PostgreSQL function) with it.
        found = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?",
            [mart],
        ).fetchone()[0]
        if not found:
            raise MissingModels(f"no saturation models in {db}: run `kneepoint build`")
        if tolerance is None:
            cur = con.execute(f"SELECT * FROM {mart} ORDER BY {order}")
        else:
            cur = con.execute(f"SELECT * FROM {macro}(?) ORDER BY {order}", [tolerance])
        columns = [d[0] for d in cur.description]
        rows = [{"series_kind": "disk", **dict(zip(columns, r, strict=True))} for r in cur.fetchall()]
        if latency_target_ms is not None:
            points = _latency_points(con, by_threads)
            rows = [_with_latency_target(r, points, latency_target_ms, by_threads) for r in rows]
        if not by_threads:
            rows += _load_rows(con, tolerance, latency_target_ms)
    finally:
        con.close()
    return rows


def _load_rows(con, tolerance: float | None, latency_target_ms: float | None) -> list[dict[str, Any]]:
    """mart_load_saturation's rows (at `tolerance` through load_saturation_points), marked series_kind "load",
    with the response-time-target columns when a target is given."""
    found = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() "
        "AND table_name = 'mart_load_saturation'"
    ).fetchone()[0]
    if not found:  # a warehouse built before load series existed
        return []
    if tolerance is None:
        cur = con.execute(f"SELECT * FROM mart_load_saturation ORDER BY {LOAD_SERIES_ORDER}")
    else:
        cur = con.execute(f"SELECT * FROM load_saturation_points(?) ORDER BY {LOAD_SERIES_ORDER}", [tolerance])
    columns = [d[0] for d in cur.description]
    rows = [{"series_kind": "load", **dict(zip(columns, r, strict=True))} for r in cur.fetchall()]
    if latency_target_ms is not None:
        points: dict[str, list[ResponsePoint]] = {}
        sql = """SELECT series_id, load, throughput_per_s, response_p99_ms, response_p95_ms, response_avg_ms
                 FROM int_load_points ORDER BY series_id, load"""
        for series_id, *point in con.execute(sql).fetchall():
            points.setdefault(series_id, []).append(ResponsePoint(*point))
        rows = [
            {
                **r,
                **load_target_columns(
                    response_target_point(points.get(r["series_id"], []), latency_target_ms),
                    latency_target_ms,
                    r["throughput_unit"],
                    points.get(r["series_id"], []),
                ),
            }
            for r in rows
        ]
    return rows


def _latency_points(con, by_threads: bool) -> dict[tuple, list[LatencyPoint]]:
    if by_threads:
        sql = """SELECT series_id, threads, queue_depth, iops, latency_p99_ms, latency_avg_ms
                 FROM int_saturation_thread_points ORDER BY series_id, threads, queue_depth"""
    else:
        sql = """SELECT series_id, NULL, outstanding_io, iops, latency_p99_ms, latency_avg_ms
                 FROM int_saturation_points ORDER BY series_id, outstanding_io"""
    points: dict[tuple, list[LatencyPoint]] = {}
    for series_id, threads, load, iops, p99, avg in con.execute(sql).fetchall():
        points.setdefault((series_id, threads), []).append(LatencyPoint(load, iops, p99, avg))
    return points


def _with_latency_target(
    row: dict[str, Any], points: dict[tuple, list[LatencyPoint]], target_ms: float, by_threads: bool
) -> dict[str, Any]:
    threads = row.get("threads") if by_threads else None
    found = latency_target_point(points.get((row["series_id"], threads), []), target_ms)
    return {**row, **target_columns(found, target_ms, threads)}


def to_json(rows: Sequence[dict[str, Any]]) -> str:
    """A JSON array of objects keyed by the mart's column names (`saturated` a JSON boolean)."""
    return json.dumps([{k: _json_value(v) for k, v in r.items()} for r in rows], indent=2, ensure_ascii=False)


def _json_value(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


# --- human output ---------------------------------------------------------------------------------------

WIDTH = 100  # the lines fit a 100-column terminal
INDENT = "    "


def _wrapped(text: str, width: int = WIDTH) -> list[str]:
    return w.printable_wrap(text, width, initial_indent=INDENT, subsequent_indent=INDENT + "  ", break_on_hyphens=False)


def _header(row: dict[str, Any], by_threads: bool) -> str:
    head = f"{row['disk_key']} · {w.workload_of(row)}"
    return head + (f" · {w.plural(row['threads'], 'thread')}" if by_threads else "")


def series_lines(row: dict[str, Any], by_threads: bool = False, latency_target_ms: float | None = None) -> list[str]:
    """One series in the app's words: a header (disk · workload), then its saturation sentence, the second
    opinions, the Little's-law flags and the latency target, each wrapped within WIDTH columns."""
    sentence = w.saturation_sentence(row, by_threads)
    if row["saturated"] and not by_threads:
        sentence += f"; {w.threads_qd(row['saturation_threads'], row['saturation_queue_depth'])}"
    lines = w.printable_wrap(_header(row, by_threads), WIDTH, subsequent_indent="  ") + _wrapped(sentence)
    if not by_threads:
        lines += _wrapped(f"USL: {w.usl_sentence(row)}")
        if row["usl_fitted"] and row["usl_note"]:
            lines += _wrapped(f"USL caveat: {row['usl_note']}")
        lines += _wrapped(f"Kneedle: {w.kneedle_sentence(row)}")
    flagged = row["littles_law_flagged_runs"]
    if flagged:
        lines += _wrapped(
            f"Little's law off (outside {w.littles_law_bounds()}) in {flagged} of {w.plural(row['runs'], 'run')}"
        )
    if latency_target_ms is not None:
        found = row if row.get("latency_target_metric") is not None else None
        text = w.latency_target_sentence(found, latency_target_ms)
        if found and by_threads:
            text += f" (QD {row['latency_target_queue_depth']})"
        lines += _wrapped(f"Latency target: {text}")
    return lines


def load_series_lines(row: dict[str, Any], latency_target_ms: float | None = None) -> list[str]:
    """One load series in the app's words: a header (configuration · workload), its saturation sentence, the USL
    fit, the Little's-law flags and the response-time target, each wrapped within WIDTH columns."""
    head = f"{row['disk_key']} · {w.load_series_title(row)}"
    lines = w.printable_wrap(head, WIDTH, subsequent_indent="  ") + _wrapped(w.load_saturation_sentence(row))
    lines += _wrapped(f"USL: {w.load_usl_sentence(row)}")
    if row["usl_fitted"] and row["usl_note"]:
        lines += _wrapped(f"USL caveat: {row['usl_note']}")
    if flagged := row["littles_law_flagged_steps"]:
        lines += _wrapped(
            f"Little's law off (load ≠ throughput × response time, outside {w.littles_law_bounds()}) in {flagged} "
            f"of {w.plural(row['littles_law_checked_steps'], 'step')} checked"
        )
    if latency_target_ms is not None:
        lines += _wrapped(f"Response-time target: {w.response_target_sentence(row, latency_target_ms)}")
    return lines


def report_lines(
    rows: Sequence[dict[str, Any]], by_threads: bool = False, latency_target_ms: float | None = None
) -> list[str]:
    """The whole answer: the rule with its tolerance, then each series (series_lines), blank lines between; then
    the load series the same way (load_series_lines)."""
    if not rows:
        return ["no benchmark series in the warehouse (kneepoint ingest FILE --disk LABEL)"]
    disks = [r for r in rows if r.get("series_kind", "disk") == "disk"]
    loads = [r for r in rows if r.get("series_kind") == "load"]
    lines: list[str] = []
    if loads:
        tolerance = loads[0]["tolerance"]
        lines += [
            "",
            *w.printable_wrap(f"Load series (tolerance {tolerance:.0%}): {w.load_rule_sentence(tolerance)}", WIDTH),
        ]
        for r in loads:
            lines += ["", *load_series_lines(r, latency_target_ms)]
    if not disks:
        return lines[1:]
    lines = _disk_lines(disks, by_threads, latency_target_ms) + lines
    return lines


def _disk_lines(rows: Sequence[dict[str, Any]], by_threads: bool, latency_target_ms: float | None) -> list[str]:
    tolerance = rows[0]["tolerance"]
    lines = w.printable_wrap(
        f"Saturation points (tolerance {tolerance:.0%}): {w.rule_sentence(tolerance, by_threads)}", WIDTH
    )
    for r in rows:
        lines += ["", *series_lines(r, by_threads, latency_target_ms)]
    if by_threads:
        same = {}
        for r in rows:
            if r["saturates_at_same_outstanding_io"]:
                same[f"{r['disk_key']} · {w.workload_of(r)}"] = r["saturation_outstanding_io"]
        if same:
            lines += ["", "Whatever the thread count:"]
            for head, n in same.items():
                lines += w.printable_wrap(
                    f"{head}: saturates at {w.fmt_load(n)} outstanding", WIDTH, subsequent_indent="  "
                )
    return lines
