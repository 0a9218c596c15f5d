"""`kneepoint saturation`: reads the saturation marts (or the same rule at another tolerance) and words them.

The rule is not computed here: `saturation_points(tol)` / `saturation_by_threads(tol)` are the DuckDB table
macros the marts are built from (macros/saturation.sql), so any tolerance is answered from a read-only
connection without a rebuild. Only the latency target, a user-given figure, is applied here (ingest/analytics.py).
"""

from __future__ import annotations

import argparse
import json
import math
import os
from collections.abc import Iterable, Sequence
from typing import Any

from kneepoint.ingest.analytics import LatencyPoint, latency_target_point

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


class MissingModels(Exception):
    """The warehouse has no saturation models yet (built before they existed, or never built)."""


def saturation_rows(
    db: str | os.PathLike[str],
    tolerance: float | None = None,
    by_threads: bool = False,
    latency_target_ms: float | None = None,
) -> list[dict[str, Any]]:
    """The mart's rows (per series, or per series and thread count), at `tolerance` when given, else as built;
    with the latency-target columns when a target is given."""
    from kneepoint.ingest.warehouse import connect

    macro = "saturation_by_threads" if by_threads else "saturation_points"
    mart = "mart_saturation_by_threads" if by_threads else "mart_saturation_points"
    order = SERIES_ORDER + (", threads" if by_threads else "")
    con = connect(db, read_only=True)
    try:
        found = con.execute(
            "SELECT count(*) FROM duckdb_functions() WHERE function_name = ? AND function_type = 'table_macro'",
            [macro],
        ).fetchone()[0]
        if not found:
            raise MissingModels(f"no saturation models in {db}: run `kneepoint build`")
        if tolerance is None:
            cur = con.execute(f"SELECT * FROM {mart} ORDER BY {order}")
        else:
            cur = con.execute(f"SELECT * FROM {macro}(?) ORDER BY {order}", [tolerance])
        columns = [d[0] for d in cur.description]
        rows = [dict(zip(columns, r, strict=True)) for r in cur.fetchall()]
        if latency_target_ms is not None:
            points = _latency_points(con, by_threads)
            rows = [_with_latency_target(r, points, latency_target_ms, by_threads) for r in rows]
    finally:
        con.close()
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
    found = latency_target_point(
        points.get((row["series_id"], row.get("threads") if by_threads else None), []), target_ms
    )
    out = dict(row)
    out["latency_target_ms"] = target_ms
    out["latency_target_metric"] = found.latency_metric if found else None
    if by_threads:
        out["latency_target_queue_depth"] = int(found.load) if found else None
        out["latency_target_outstanding_io"] = int(found.load) * row["threads"] if found else None
    else:
        out["latency_target_outstanding_io"] = int(found.load) if found else None
    out["iops_at_latency_target"] = found.iops if found else None
    out["latency_ms_at_latency_target"] = found.latency_ms if found else None
    return out


def to_json(rows: Sequence[dict[str, Any]]) -> str:
    """A JSON array of objects keyed by the mart's column names (`saturated` a JSON boolean)."""
    return json.dumps([{k: _json_value(v) for k, v in r.items()} for r in rows], indent=2, ensure_ascii=False)


def _json_value(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


# --- human output ---------------------------------------------------------------------------------------


def block_size_label(block_size_bytes: int) -> str:
    for unit, factor in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if block_size_bytes >= factor and block_size_bytes % factor == 0:
            return f"{block_size_bytes // factor} {unit}"
    return f"{block_size_bytes} B"


def workload_label(row: dict[str, Any]) -> str:
    """`random read 4 KiB`, `random mixed 70% read 8 KiB, write I/Os`."""
    label = f"{row['pattern']} {row['operation']}"
    if row["operation"] == "mixed":
        label += f" {row['read_pct']:g}% read"
    label += f" {block_size_label(row['block_size_bytes'])}"
    if row["direction"] != row["operation"]:
        label += f", {row['direction']} I/Os"
    return label


def fmt_iops(v: float | None) -> str:
    if v is None:
        return "?"
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def fmt_ms(v: float | None) -> str:
    if v is None:
        return "?"
    if v >= 100:
        return f"{v:,.0f}"
    return f"{v:.1f}" if v >= 1 else f"{v:.2g}"


def _latency_text(avg: float | None, p99: float | None) -> str:
    if avg is not None and p99 is not None:
        return f"{fmt_ms(avg)} ms mean (p99 {fmt_ms(p99)} ms)"
    if avg is not None:
        return f"{fmt_ms(avg)} ms mean"
    if p99 is not None:
        return f"p99 {fmt_ms(p99)} ms"
    return "no latency reported"


def _threads_text(threads: int | None, queue_depth: int | None) -> str:
    if threads is None or queue_depth is None:
        return ""
    return f", {threads} thread{'s' if threads != 1 else ''} × QD {queue_depth}"


def verdict(row: dict[str, Any], by_threads: bool = False) -> str:
    """`saturates at 32 outstanding: 177,525 IOPS, 0.18 ms mean (p99 0.21 ms)` or `not saturated within ...`."""
    if by_threads:
        lo, hi = row["min_queue_depth"], row["max_queue_depth"]
    else:
        lo, hi = row["min_outstanding_io"], row["max_outstanding_io"]
    if not row["saturated"]:
        qd = "QD " if by_threads else ""
        max_iops = fmt_iops(row["max_iops"])
        if lo == hi:
            return f"not saturated within the tested range (only {qd or 'load '}{lo}): max {max_iops} IOPS"
        at = row["max_iops_queue_depth"] if by_threads else row["max_iops_outstanding_io"]
        return f"not saturated within the tested range ({qd}{lo}..{hi}): max {max_iops} IOPS at {qd}{at}"
    if by_threads:
        where = f"saturates at QD {row['saturation_queue_depth']} ({row['saturation_outstanding_io']} outstanding)"
        how = ""
    else:
        where = f"saturates at {row['saturation_outstanding_io']} outstanding"
        how = _threads_text(row["saturation_threads"], row["saturation_queue_depth"])
    text = (
        f"{where}: {fmt_iops(row['iops_at_saturation'])} IOPS, "
        f"{_latency_text(row['latency_avg_ms_at_saturation'], row['latency_p99_ms_at_saturation'])}{how}"
    )
    return text


def _littles_law_text(row: dict[str, Any]) -> str:
    n = row["littles_law_flagged_runs"]
    if not n:
        return ""
    return f" [Little's law off (outside 0.8..1.25) in {n} of {row['runs']} runs]"


def _table(labels: Iterable[tuple[str, ...]], texts: Iterable[str]) -> list[str]:
    labels = list(labels)
    widths = [max((len(lab[i]) for lab in labels), default=0) for i in range(len(labels[0]))] if labels else []
    return [
        "  ".join(c.ljust(w) for c, w in zip(lab, widths, strict=True)) + "  " + text
        for lab, text in zip(labels, texts, strict=True)
    ]


def usl_text(row: dict[str, Any]) -> str:
    if not row.get("usl_fitted"):
        return row.get("usl_note") or "USL not fitted"
    r2 = f"R² {row['usl_r_squared']:.2f}" if row["usl_r_squared"] is not None else "R² n/a (flat)"
    text = f"USL σ {row['usl_sigma']:.3g}, κ {row['usl_kappa']:.3g}, {r2}: "
    if row["usl_peak_outstanding_io"] is None:
        return text + "no peak"
    return text + f"peak at {row['usl_peak_outstanding_io']:,.0f} outstanding, {fmt_iops(row['usl_peak_iops'])} IOPS"


def kneedle_text(row: dict[str, Any]) -> str:
    knee = row.get("kneedle_outstanding_io")
    text = f"Kneedle knee at {knee:g}" if knee is not None else "Kneedle: no knee"
    return text + (" (agrees with the rule)" if row["kneedle_agrees"] else " (differs from the rule)")


def second_opinion_lines(labels: Sequence[tuple[str, ...]], rows: Sequence[dict[str, Any]]) -> list[str]:
    """One line per series, then the caveats of each fit indented beneath it."""
    lines = []
    heads = _table(labels, [f"{usl_text(r)}; {kneedle_text(r)}" for r in rows])
    for head, r in zip(heads, rows, strict=True):
        lines.append(head)
        if r["usl_fitted"] and r["usl_note"]:
            lines.append(f"    USL: {r['usl_note']}")
        if r["kneedle_note"]:
            lines.append(f"    {r['kneedle_note']}")
    return lines


def report_lines(
    rows: Sequence[dict[str, Any]], by_threads: bool = False, latency_target_ms: float | None = None
) -> list[str]:
    if not rows:
        return ["no benchmark series in the warehouse (kneepoint ingest FILE --disk LABEL)"]
    tolerance = rows[0]["tolerance"]
    load = "queue depth" if by_threads else "load (outstanding I/O)"
    lines = [
        f"Saturation points (tolerance {tolerance:.0%}): the smallest {load} that no larger one beats by more "
        f"than {tolerance:.0%} IOPS.",
        "",
    ]
    if by_threads:
        labels = [
            (r["disk_key"], workload_label(r), f"{r['threads']} thread{'s' if r['threads'] != 1 else ''}") for r in rows
        ]
    else:
        labels = [(r["disk_key"], workload_label(r)) for r in rows]
    lines += _table(labels, [verdict(r, by_threads) + _littles_law_text(r) for r in rows])
    if by_threads:
        same = {}
        for r in rows:
            if r["saturates_at_same_outstanding_io"]:
                same[(r["disk_key"], workload_label(r))] = r["saturation_outstanding_io"]
        if same:
            lines += ["", "Whatever the thread count:"]
            lines += _table(same.keys(), [f"saturates at {x} outstanding" for x in same.values()])
    else:
        lines += ["", "Second opinions, beside the rule (USL fit of IOPS vs load; Kneedle knee):"]
        lines += second_opinion_lines(labels, rows)
    if latency_target_ms is not None:
        lines += ["", f"Largest {load} under {latency_target_ms:g} ms p99 (mean where the tool gave no p99):"]
        texts = []
        for r in rows:
            if r["latency_target_metric"] is None:
                texts.append(f"none: no measured load stays under {latency_target_ms:g} ms")
                continue
            if by_threads:
                at = f"QD {r['latency_target_queue_depth']} ({r['latency_target_outstanding_io']} outstanding)"
            else:
                at = f"{r['latency_target_outstanding_io']} outstanding"
            texts.append(
                f"{at}: {fmt_iops(r['iops_at_latency_target'])} IOPS "
                f"({r['latency_target_metric']} {fmt_ms(r['latency_ms_at_latency_target'])} ms)"
            )
        lines += _table(labels, texts)
    return lines
