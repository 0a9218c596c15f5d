"""The report for a storage vendor: one self-contained HTML file that opens offline in any browser.

Order of the page: a summary (each disk's saturation point in one sentence), the charts per workload
(interactive plotly, plotly.js embedded once), the saturation tables, the test conditions per disk (tools,
block sizes, threads, queue depths, durations and the tools' own lines), the Little's-law and unit checks, a
data appendix with every run, and the provenance of every source file.

Charts come from app/charts.py and mart reads from app/queries.py; the SQL here is only what the report alone
shows (conditions, checks, appendix, provenance). Every user-given string (labels, tags, notes, file names,
run metadata) goes through Jinja2's autoescape in the page and through `_script_json` inside the figures.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2
import plotly.graph_objects as go
import polars as pl
from plotly.offline import get_plotlyjs

from kneepoint.app import charts, queries
from kneepoint.app.queries import Series
from kneepoint.app.sharing.anonymize import Share, shared_warehouse
from kneepoint.ingest import __version__, units
from kneepoint.ingest.warehouse import connect

TEMPLATES = Path(__file__).resolve().parent / "templates"
SERIES_COLUMNS = ("pattern", "operation", "read_pct", "block_size_bytes", "direction")
# Run metadata that are results rather than conditions (the tables already give them): DiskSpd's per-direction
# and CPU figures, latency tables, printed throughput. Everything else a tool printed about the run is shown.
RESULT_KEY_PREFIXES = ("read.", "write.", "total.", "latency.", "cpu.", "results.")
RESULT_KEYS = ("printed_throughput", "timespan")
LIST_SHOWN = 8  # values listed inline before the rest folds away


@dataclass
class ReportChart:
    """One chart of the report: `name` is a file-name stem for images ('03-random-read-4-kib-iops')."""

    workload: str
    name: str
    title: str
    figure: go.Figure


@dataclass
class Table:
    columns: list[str]
    rows: list[list[str]]
    numeric: set[int] = field(default_factory=set)  # right-aligned column positions
    caption: str | None = None


@dataclass
class Report:
    html: str
    charts: list[ReportChart]
    summary: list[tuple[str, str]]  # (disk, sentence)
    disk_keys: list[str]
    anonymized: bool


# -- entry points -------------------------------------------------------------------------------------------


def build_report(
    db: str | os.PathLike[str],
    disks: Iterable[str] | None = None,
    anonymize: bool = False,
    marked: Sequence[str] = (),
) -> Report:
    """The report of the chosen disks (every disk when none), anonymized on request."""
    with shared_warehouse(db, disks, anonymize, marked) as share:
        return render(share)


def render(share: Share, generated_at: datetime | None = None) -> Report:
    """Render the report of a prepared warehouse (app.anonymize.shared_warehouse)."""
    data = collect(share.db, share.disk_keys)
    figures = report_charts(share.db, data)
    html = render_html(data, figures, share.anonymized, generated_at or datetime.now(UTC))
    return Report(html, figures, data["summary"], share.disk_keys, share.anonymized)


# -- data ---------------------------------------------------------------------------------------------------


def _read(db: Path, sql: str, params: Sequence[Any] = ()) -> pl.DataFrame:
    con = connect(db)
    try:
        return pl.from_arrow(con.sql(sql, params=list(params)).to_arrow_table())
    finally:
        con.close()


_IN_KEYS = "disk_key IN (SELECT unnest(?::VARCHAR[]))"


def collect(db: Path, disk_keys: Sequence[str]) -> dict[str, Any]:
    """Everything the report shows, read from the marts (and the raw layer for the tools' own lines)."""
    keys = list(disk_keys)
    tables = queries.tables(db)
    if "dim_disks" not in tables:
        raise RuntimeError(f"no models in {db}: run `kneepoint build`")
    order = {k: i for i, k in enumerate(keys)}
    disks = _read(db, f"SELECT * FROM dim_disks WHERE {_IN_KEYS}", [keys]).sort(
        pl.col("disk_key").replace_strict(order, default=len(order))
    )
    overview = queries.saturation_overview(keys, db) if keys else pl.DataFrame()
    options = queries.series_options(keys, db) if keys else pl.DataFrame()
    data: dict[str, Any] = {
        "db": db,
        "disk_keys": keys,
        "disks": disks,
        "overview": overview,
        "workloads": _workloads(options, overview),
        "tolerance": overview["tolerance"][0] if not overview.is_empty() else _tolerance(),
    }
    data["summary"] = _summary(disks, overview)
    data["conditions"] = _read(
        db,
        f"""
        SELECT disk_key, tool, coalesce(tool_version, '') AS tool_version,
               count(DISTINCT file_id || ':' || run_index) AS runs,
               list(DISTINCT pattern || ' ' || CASE WHEN operation = 'mixed'
                    THEN printf('%g', read_pct) || '% read mix' ELSE operation END) AS workloads,
               list(DISTINCT block_size_bytes ORDER BY block_size_bytes) FILTER (block_size_bytes IS NOT NULL)
                   AS block_sizes,
               list(DISTINCT threads ORDER BY threads) FILTER (threads IS NOT NULL) AS threads,
               list(DISTINCT queue_depth ORDER BY queue_depth) FILTER (queue_depth IS NOT NULL) AS queue_depths,
               list(DISTINCT outstanding_io ORDER BY outstanding_io) FILTER (outstanding_io IS NOT NULL)
                   AS loads,
               list(DISTINCT duration_s ORDER BY duration_s) FILTER (duration_s IS NOT NULL) AS durations_s,
               list(DISTINCT target ORDER BY target) FILTER (target IS NOT NULL) AS targets,
               min(started_at) AS first_started, max(started_at) AS last_started,
               list(DISTINCT file_name ORDER BY file_name) AS files
        FROM fct_io_results WHERE {_IN_KEYS}
        GROUP BY ALL ORDER BY disk_key, tool, tool_version
        """,
        [keys],
    )
    data["inferred"] = _read(
        db,
        f"""
        SELECT disk_key, tool, key, count(*) AS records FROM (
            SELECT disk_key, tool, unnest(inferred) AS key FROM fct_io_results WHERE {_IN_KEYS}
        ) GROUP BY ALL ORDER BY disk_key, tool, key
        """,
        [keys],
    )
    data["tool_lines"] = _tool_lines(db, keys)
    data["littles_law"] = _read(
        db,
        f"""
        SELECT disk_key, {", ".join(SERIES_COLUMNS)}, count(*) AS runs,
               count(littles_law_ratio) AS checked, count(*) FILTER (littles_law_flag) AS flagged,
               min(littles_law_ratio) AS ratio_min, median(littles_law_ratio) AS ratio_median,
               max(littles_law_ratio) AS ratio_max
        FROM fct_io_results WHERE {_IN_KEYS}
        GROUP BY ALL ORDER BY disk_key, pattern, operation, read_pct DESC, block_size_bytes, direction
        """,
        [keys],
    )
    # The ratio belongs to a whole run (a mixed run's read and write rows carry the same one): runs are
    # counted and listed once, with the run's IOPS and mean latency.
    data["littles_law_runs"] = _read(
        db,
        f"""
        SELECT count(DISTINCT (file_id, run_index)) FILTER (littles_law_ratio IS NOT NULL) AS checked,
               count(DISTINCT (file_id, run_index)) FILTER (littles_law_flag) AS flagged
        FROM fct_io_results WHERE {_IN_KEYS}
        """,
        [keys],
    )
    data["littles_law_flagged"] = _read(
        db,
        f"SELECT * FROM fct_io_results WHERE {_IN_KEYS} AND littles_law_flag "
        "QUALIFY row_number() OVER (PARTITION BY file_id, run_index ORDER BY record_index) = 1 "
        "ORDER BY disk_key, pattern, operation, read_pct DESC, block_size_bytes, outstanding_io, file_name, run_index",
        [keys],
    )
    # The dbt test assert_throughput_matches_iops_x_block_size, per tool and printed unit.
    printed = (
        "iops > 0 AND throughput_bytes_per_s > 0 AND block_size_bytes > 0 AND NOT list_has_any(inferred, "
        "['iops', 'throughput_bytes_per_s', 'block_size_bytes'])"
    )
    deviation = "abs(iops * block_size_bytes - throughput_bytes_per_s) / throughput_bytes_per_s"
    data["units"] = _read(
        db,
        f"""
        SELECT tool, reported_throughput_unit, count(*) AS records,
               count(*) FILTER ({printed}) AS checked,
               count(*) FILTER ({printed} AND {deviation} > 0.02) AS mismatched,
               max({deviation}) FILTER ({printed}) AS max_deviation
        FROM fct_io_results WHERE {_IN_KEYS}
        GROUP BY ALL ORDER BY tool, reported_throughput_unit
        """,
        [keys],
    )
    data["unit_mismatches"] = _read(
        db,
        f"SELECT *, {deviation} AS deviation FROM fct_io_results WHERE {_IN_KEYS} AND {printed} "
        f"AND {deviation} > 0.02 ORDER BY disk_key, file_name, record_index",
        [keys],
    )
    data["latency_units"] = _read(
        db,
        f"""
        SELECT r.tool, r.latency_unit, count(*) AS records
        FROM raw_io_records r JOIN (SELECT DISTINCT file_id FROM fct_io_results WHERE {_IN_KEYS}) USING (file_id)
        GROUP BY ALL ORDER BY r.tool, r.latency_unit
        """,
        [keys],
    )
    data["runs"] = _read(
        db,
        f"SELECT * FROM fct_io_results WHERE {_IN_KEYS} "
        "ORDER BY disk_key, pattern, operation, read_pct DESC, block_size_bytes, direction, outstanding_io, threads, "
        "file_name, record_index",
        [keys],
    )
    data["statements"] = (
        _read(
            db,
            f"SELECT * FROM fct_query_time WHERE {_IN_KEYS} ORDER BY disk_key, file_name, statement_index",
            [keys],
        )
        if "fct_query_time" in tables
        else pl.DataFrame()
    )
    files = _read(db, "SELECT * FROM dim_files ORDER BY ingested_at, file_name")
    data["files"] = files.filter(
        pl.Series([queries.disk_key(d, h) in order for d, h in files.select("disk", "host").rows()], dtype=pl.Boolean)
    )
    return data


def _tolerance() -> float:
    import yaml

    with open(units.PROJECT_ROOT / "dbt_project.yml", encoding="utf-8") as fh:
        return float(yaml.safe_load(fh)["vars"]["saturation_tolerance"])


def _workloads(options: pl.DataFrame, overview: pl.DataFrame) -> list[tuple[Series, list[str], int]]:
    """Workloads to chart, most disks and loads first: (series, disks measured, most loads on one disk)."""
    if options.is_empty() or overview.is_empty():
        return []
    out = []
    for row in options.iter_rows(named=True):
        series = Series(*(row[c] for c in SERIES_COLUMNS))
        rows = overview.filter(*(pl.col(c) == v for c, v in zip(SERIES_COLUMNS, series, strict=True)))
        if rows.is_empty():
            continue
        out.append((series, rows["disk_key"].to_list(), int(rows["points"].max())))
    return out


def _headline(rows: list[dict]) -> dict:
    """A disk's headline workload: the one measured at the most loads; random before sequential, reads first."""
    return min(
        rows,
        key=lambda r: (-r["points"], r["pattern"] != "random", r["operation"] != "read", r["block_size_bytes"]),
    )


def _summary(disks: pl.DataFrame, overview: pl.DataFrame) -> list[tuple[str, str]]:
    out = []
    for d in disks.iter_rows(named=True):
        key = d["disk_key"]
        rows = [] if overview.is_empty() else overview.filter(pl.col("disk_key") == key).to_dicts()
        if not rows:
            what = f"{d['statements']} SQL Server statement(s)" if d["statements"] else "no benchmark curve"
            out.append((key, f"no benchmark results, only {what}."))
            continue
        h = _headline(rows)
        curves = [r for r in rows if r["points"] >= 2]
        saturated = sum(bool(r["saturated"]) for r in curves)
        tools = ", ".join(h["tools"] or [])
        sentence = f"{charts.series_title(*(h[c] for c in SERIES_COLUMNS))} ({tools}) {charts.saturation_sentence(h)}."
        if len(curves) > 1:
            sentence += f" Saturated in {saturated} of the {len(curves)} workloads measured at two loads or more."
        out.append((key, sentence))
    return out


def _tool_lines(db: Path, keys: list[str]) -> pl.DataFrame:
    """The tools' own lines per file (Test/OS/Profile, command lines, job options), values per key in the order
    the tool printed them."""
    excluded = " AND ".join(f"NOT starts_with(m.key, '{p}')" for p in RESULT_KEY_PREFIXES)
    return _read(
        db,
        f"""
        WITH f AS (
            SELECT DISTINCT file_id, disk_key FROM fct_io_results WHERE {_IN_KEYS}
        )
        SELECT f.disk_key, d.file_name, d.format, d.tool_version, d.io_runs, m.key,
               count(DISTINCT m.run_index) AS runs, list(DISTINCT m.value ORDER BY m.value) AS "values",
               min(m.rowid) AS first_row
        FROM raw_run_metadata m JOIN f USING (file_id) JOIN dim_files d USING (file_id)
        WHERE {excluded} AND m.key NOT IN (SELECT unnest(?::VARCHAR[])) AND m.value IS NOT NULL
        GROUP BY ALL
        ORDER BY f.disk_key, d.file_name, first_row
        """,
        [keys, list(RESULT_KEYS)],
    )


# -- charts -------------------------------------------------------------------------------------------------


def report_charts(db: Path, data: dict[str, Any]) -> list[ReportChart]:
    """The report's charts, workload by workload: IOPS, throughput and latency against outstanding I/O, the
    hockey stick, and latency percentiles at the lowest load, the saturation point and the highest load."""
    colors = charts.disk_colors(data["disk_keys"])
    out: list[ReportChart] = []
    for series, disk_keys, most_loads in data["workloads"]:
        if most_loads < 2:
            continue  # one load per disk: a point, not a curve; the tables give it
        title = charts.series_title(*series)
        points = queries.curve_points(disk_keys, series, db)
        if points.is_empty():
            continue
        saturation = queries.saturation(disk_keys, series, db)
        figs: list[tuple[str, str, go.Figure]] = [
            ("iops", "IOPS", charts.curve_figure(points, "iops", saturation, colors)),
            ("throughput", "throughput", charts.curve_figure(points, "throughput_mb", saturation, colors)),
        ]
        has_avg = points["latency_avg_ms"].drop_nulls().len() > 0
        has_p99 = points["latency_p99_ms"].drop_nulls().len() > 0
        if has_avg:
            figs.append(("latency", "mean latency", charts.curve_figure(points, "latency_avg", saturation, colors)))
        if has_p99:
            figs.append(("p99", "p99 latency", charts.curve_figure(points, "latency_p99", saturation, colors)))
        if has_avg or has_p99:
            latency = "latency_avg" if has_avg else "latency_p99"
            figs.append(
                ("hockey", "latency vs IOPS", charts.latency_vs_iops_figure(points, saturation, latency, colors))
            )
        dist = _percentile_loads(queries.latency_percentiles(disk_keys, series, db), saturation)
        if not dist.is_empty():
            figs.append(("percentiles", "latency percentiles", charts.percentile_figure(dist, colors)))
        for slug, what, fig in figs:
            chart_title = f"{title}: {fig.layout.title.text or what}"
            # Aligned with the plot area, not the image edge, so slides do not cut the first letter.
            fig.update_layout(title={"text": chart_title, "xref": "paper", "x": 0})
            name = f"{len(out) + 1:02d}-{_slug(title)}-{slug}"
            out.append(ReportChart(title, name, chart_title, fig))
    return out


def _percentile_loads(dist: pl.DataFrame, saturation: pl.DataFrame) -> pl.DataFrame:
    """The percentile curves worth a slide: each disk's lowest load, saturation point and highest load."""
    if dist.is_empty():
        return dist
    sat = {} if saturation.is_empty() else dict(saturation.select("disk_key", "saturation_outstanding_io").rows())
    ends = dist.group_by("disk_key").agg(pl.col("outstanding_io").min().alias("lo"), pl.col("outstanding_io").max())
    keep = {(k, v) for k, lo, hi in ends.rows() for v in (lo, hi, sat.get(k)) if v is not None}
    return dist.filter(
        pl.Series([(k, v) in keep for k, v in dist.select("disk_key", "outstanding_io").rows()], dtype=pl.Boolean)
    )


def _slug(text: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:60] or "chart"


# -- formatting ---------------------------------------------------------------------------------------------


def _num(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:,.{digits}g}" if abs(value) < 1000 else f"{value:,.0f}"


def _ratio(value: float | None) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:.2f}"


def _values(values: Sequence[Any] | None, fmt=str) -> str:
    """A list of figures in words: '1, 2, 4, 8' or, when long, '1 – 256 (9 values)'."""
    values = [v for v in values or [] if v is not None]
    if not values:
        return "–"
    if len(values) > LIST_SHOWN and all(isinstance(v, int | float) for v in values):
        return f"{fmt(min(values))} – {fmt(max(values))} ({len(values)} values)"
    return ", ".join(fmt(v) for v in values)


def _when(value: Any) -> str:
    """A run's start as the tool gave it: local time when no zone was printed, else UTC."""
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
        return value.strftime("%Y-%m-%d %H:%M")
    return str(value)


def _seconds(value: float) -> str:
    return f"{value:g} s"


def _workload(row: dict) -> str:
    return charts.series_title(*(row[c] for c in SERIES_COLUMNS))


def _run_workload(row: dict) -> str:
    """The workload of a whole run: a mixed run's directions together, so no '(read I/Os)'."""
    return charts.series_title(
        row["pattern"], row["operation"], row["read_pct"], row["block_size_bytes"], row["operation"]
    )


def _saturation_table(overview: pl.DataFrame) -> Table:
    rows = []
    for r in overview.iter_rows(named=True):
        sat = bool(r["saturated"])
        usl = (
            f"{r['usl_peak_outstanding_io']:,.0f} (R² {r['usl_r_squared']:.2f})"
            if r.get("usl_peak_outstanding_io") and r.get("usl_r_squared") is not None
            else (r.get("usl_note") or "–")
        )
        rows.append(
            [
                r["disk_key"],
                _workload(r),
                ", ".join(r["tools"] or []),
                f"{charts.fmt_load(r['min_outstanding_io'])}–{charts.fmt_load(r['max_outstanding_io'])} "
                f"({r['points']} loads, {r['runs']} runs)",
                charts.fmt_load(r["saturation_outstanding_io"]) if sat else "not saturated",
                f"{r['saturation_threads']} × {r['saturation_queue_depth']}" if sat else "–",
                charts.fmt_iops(r["iops_at_saturation"]) if sat else "–",
                charts.fmt_throughput(r["throughput_bytes_per_s_at_saturation"]) if sat else "–",
                charts.fmt_ms(r["latency_avg_ms_at_saturation"]) if sat else "–",
                charts.fmt_ms(r["latency_p99_ms_at_saturation"]) if sat else "–",
                f"{r['latency_growth_to_saturation']:.2f}×" if r.get("latency_growth_to_saturation") else "–",
                f"{charts.fmt_iops(r['max_iops'])} at {charts.fmt_load(r['max_iops_outstanding_io'])}",
                usl,
                charts.fmt_load(r["kneedle_outstanding_io"]) if r.get("kneedle_outstanding_io") else "–",
                str(r["littles_law_flagged_runs"]),
            ]
        )
    return Table(
        [
            "Disk",
            "Workload",
            "Tools",
            "Tested (outstanding I/O)",
            "Saturates at (outstanding I/O)",
            "threads × QD",
            "IOPS",
            "Throughput",
            "Mean latency (ms)",
            "p99 latency (ms)",
            "Latency growth",
            "Best IOPS at load",
            "USL peak",
            "Kneedle knee",
            "Little's-law flags",
        ],
        rows,
        numeric={3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14},
    )


def _matrix_table(overview: pl.DataFrame, disk_keys: Sequence[str]) -> Table | None:
    matrix = charts.saturation_matrix(overview, disk_keys)
    if matrix.is_empty():
        return None
    return Table(list(matrix.columns), [[str(v) for v in row] for row in matrix.rows()])


def _conditions(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Per disk: one table row per tool and version, the tools' own lines per file, the inferred values."""
    out = []
    inferred = data["inferred"]
    lines = data["tool_lines"]
    for disk in data["disk_keys"]:
        cond = data["conditions"].filter(pl.col("disk_key") == disk)
        rows = [
            [
                f"{r['tool']} {r['tool_version']}".strip(),
                str(r["runs"]),
                ", ".join(r["workloads"] or []),
                _values(r["block_sizes"], charts.fmt_block_size),
                _values(r["threads"]),
                _values(r["queue_depths"]),
                _values(r["loads"]),
                _values(r["durations_s"], _seconds),
                _values(r["targets"]),
                " – ".join(dict.fromkeys(_when(v) for v in (r["first_started"], r["last_started"]) if v)) or "–",
            ]
            for r in cond.iter_rows(named=True)
        ]
        table = Table(
            [
                "Tool",
                "Runs",
                "Workloads",
                "Block sizes",
                "Threads",
                "Queue depths",
                "Outstanding I/O",
                "Duration",
                "Targets",
                "Started",
            ],
            rows,
            numeric={1},
        )
        inf = inferred.filter(pl.col("disk_key") == disk)
        inferred_text = [f"{r['tool']}: {r['key']} in {r['records']} record(s)" for r in inf.iter_rows(named=True)]
        files = []
        per_disk = lines.filter(pl.col("disk_key") == disk)
        for (file_name,), group in per_disk.group_by("file_name", maintain_order=True):
            first = group.row(0, named=True)
            entries = []
            for r in group.iter_rows(named=True):
                values = [v for v in r["values"] if v is not None]
                entries.append(
                    {
                        "key": r["key"],
                        "all_values": values,
                        "shown": values[:LIST_SHOWN],
                        "more": values[LIST_SHOWN:],
                        "runs": r["runs"],
                        "all_runs": r["runs"] == first["io_runs"],
                    }
                )
            files.append(
                {
                    "file_name": file_name,
                    "format": first["format"],
                    "tool_version": first["tool_version"],
                    "runs": first["io_runs"],
                    "entries": entries,
                }
            )
        out.append({"disk": disk, "table": table, "inferred": inferred_text, "files": files})
    return out


def _checks(data: dict[str, Any]) -> dict[str, Any]:
    ll = data["littles_law"]
    littles = Table(
        ["Disk", "Workload", "Runs", "Checked", "Flagged", "Ratio min", "Ratio median", "Ratio max"],
        [
            [
                r["disk_key"],
                _workload(r),
                str(r["runs"]),
                str(r["checked"]),
                str(r["flagged"]),
                _ratio(r["ratio_min"]),
                _ratio(r["ratio_median"]),
                _ratio(r["ratio_max"]),
            ]
            for r in ll.iter_rows(named=True)
        ],
        numeric={2, 3, 4, 5, 6, 7},
        caption=(
            "Little's law holds for a run as a whole: a mixed run's read and write I/Os are summed (IOPS × mean "
            "latency per direction) before dividing by its outstanding I/O, so its read and write rows show the "
            "same ratio."
        ),
    )
    flagged = Table(
        ["Disk", "Workload", "threads × QD", "Run IOPS", "Run mean latency (ms)", "Ratio", "Source"],
        [
            [
                r["disk_key"],
                _run_workload(r),
                f"{r['threads']} × {r['queue_depth']}",
                charts.fmt_iops(r["run_iops"]),
                charts.fmt_ms(r["run_latency_avg_ms"]),
                _ratio(r["littles_law_ratio"]),
                _source(r),
            ]
            for r in data["littles_law_flagged"].iter_rows(named=True)
        ],
        numeric={3, 4, 5},
    )
    factors = units.throughput_units()
    unit_rows = []
    for r in data["units"].iter_rows(named=True):
        unit = r["reported_throughput_unit"]
        factor = factors.get(unit) if unit else None
        unit_rows.append(
            [
                r["tool"],
                unit or "–",
                f"1 {unit} = {factor:,.0f} bytes/s" if factor else "–",
                str(r["records"]),
                str(r["checked"]),
                str(r["mismatched"]),
                f"{100 * r['max_deviation']:.2f} %" if r["max_deviation"] is not None else "–",
            ]
        )
    unit_table = Table(
        [
            "Tool",
            "Throughput unit printed",
            "Read as",
            "Records",
            "IOPS × block size checked",
            "Off by more than 2 %",
            "Largest deviation",
        ],
        unit_rows,
        numeric={3, 4, 5, 6},
    )
    latency_factors = units.latency_units()
    latency_table = Table(
        ["Tool", "Latency unit printed", "Read as", "Records"],
        [
            [
                r["tool"],
                r["latency_unit"],
                f"1 {r['latency_unit']} = {latency_factors[r['latency_unit']]:g} ms"
                if r["latency_unit"] in latency_factors
                else "unknown unit",
                str(r["records"]),
            ]
            for r in data["latency_units"].iter_rows(named=True)
        ],
        numeric={3},
    )
    mismatches = Table(
        ["Disk", "Workload", "IOPS", "Block size", "Throughput (bytes/s)", "Deviation", "Source"],
        [
            [
                r["disk_key"],
                _workload(r),
                charts.fmt_iops(r["iops"]),
                charts.fmt_block_size(r["block_size_bytes"]),
                f"{r['throughput_bytes_per_s']:,.0f}",
                f"{100 * r['deviation']:.2f} %",
                _source(r),
            ]
            for r in data["unit_mismatches"].iter_rows(named=True)
        ],
        numeric={2, 4, 5},
    )
    return {
        "littles": littles,
        "flagged": flagged,
        "units": unit_table,
        "latency_units": latency_table,
        "mismatches": mismatches,
        "flagged_count": int(data["littles_law_runs"]["flagged"][0]),
        "checked_count": int(data["littles_law_runs"]["checked"][0]),
    }


def _source(r: dict) -> str:
    line = f", line {r['source_line']}" if r.get("source_line") is not None else ""
    return f"{r['file_name']}, run {r['run_index'] + 1}{line}"


def _appendix(data: dict[str, Any]) -> dict[str, Any]:
    runs = Table(
        [
            "Disk",
            "Workload",
            "Threads",
            "QD",
            "Outstanding I/O",
            "IOPS",
            "MB/s",
            "MiB/s",
            "Mean latency (ms)",
            "p99 latency (ms)",
            "Little's law",
            "Tool",
            "Source",
        ],
        [
            [
                r["disk_key"],
                _workload(r),
                str(r["threads"]),
                str(r["queue_depth"]),
                str(r["outstanding_io"]),
                charts.fmt_iops(r["iops"]),
                _num(r["throughput_mb_per_s"], 4),
                _num(r["throughput_mib_per_s"], 4),
                charts.fmt_ms(r["latency_avg_ms"]),
                charts.fmt_ms(r["latency_p99_ms"]),
                _ratio(r["littles_law_ratio"]),
                r["tool"],
                _source(r),
            ]
            for r in data["runs"].iter_rows(named=True)
        ],
        numeric={2, 3, 4, 5, 6, 7, 8, 9, 10},
    )
    st = data["statements"]
    statements = Table(
        [
            "Disk",
            "Statement",
            "CPU (ms)",
            "Elapsed (ms)",
            "Logical reads",
            "Pages read",
            "Effective read MB/s",
            "CPU / elapsed",
            "Source",
        ],
        [
            [
                r["disk_key"],
                str(r["statement_index"] + 1),
                _num(r["execution_cpu_ms"], 6),
                _num(r["execution_elapsed_ms"], 6),
                _num(r["logical_reads"], 12),
                _num(r["pages_read"], 12),
                _num(r["effective_read_bytes_per_s"] / 1e6, 4) if r["effective_read_bytes_per_s"] else "–",
                charts.cpu_sentence(r["cpu_to_elapsed"]),
                f"{r['file_name']}, line {r['source_line']}",
            ]
            for r in st.iter_rows(named=True)
        ],
        numeric={1, 2, 3, 4, 5, 6},
    )
    return {"runs": runs, "statements": statements if st.height else None}


def _provenance(files: pl.DataFrame) -> Table:
    return Table(
        [
            "File",
            "Disk",
            "Format",
            "Tool version",
            "Encoding",
            "Size (bytes)",
            "Runs",
            "Statements",
            "Ingested (UTC)",
            "kneepoint",
            "Tags",
            "Notes",
            "sha256",
        ],
        [
            [
                r["file_name"],
                queries.disk_key(r["disk"], r["host"]),
                r["format"],
                r["tool_version"] or "–",
                r["encoding"] or "–",
                f"{r['size_bytes']:,}",
                str(r["io_runs"]),
                str(r["statements"]),
                r["ingested_at"].astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S") if r["ingested_at"] else "–",
                r["kneepoint_version"] or "–",
                ", ".join(r["tags"] or []),
                r["notes"] or "",
                r["sha256"],
            ]
            for r in files.iter_rows(named=True)
        ],
        numeric={5, 6, 7},
    )


# -- HTML ---------------------------------------------------------------------------------------------------


def _script_json(value: Any) -> str:
    """JSON safe inside a <script> element: '<', '>' and '&' escaped, so a label such as '</script>' stays text."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def chart_config(name: str) -> dict[str, Any]:
    return {
        "displaylogo": False,
        "responsive": True,
        "toImageButtonOptions": {"format": "png", "filename": f"kneepoint-{name}", "scale": 2},
        "modeBarButtonsToRemove": ["lasso2d", "select2d"],
    }


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["script_json"] = lambda v: jinja2.utils.markupsafe.Markup(_script_json(v))
    return env


def render_html(data: dict[str, Any], figures: Sequence[ReportChart], anonymized: bool, generated_at: datetime) -> str:
    sections: list[dict[str, Any]] = []
    for chart in figures:
        if not sections or sections[-1]["title"] != chart.workload:
            sections.append({"title": chart.workload, "anchor": f"w{len(sections) + 1}", "charts": []})
        sections[-1]["charts"].append(
            {
                "id": chart.name,
                "title": chart.title,
                "spec": chart.figure.to_json(),
                "config": chart_config(chart.name),
            }
        )
    overview = data["overview"]
    uncharted = [
        series_title
        for series_title in dict.fromkeys(charts.series_title(*s) for s, _, loads in data["workloads"] if loads < 2)
    ]
    return (
        _environment()
        .get_template("report.html.j2")
        .render(
            title="Disk saturation report",
            generated_at=generated_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            version=__version__,
            anonymized=anonymized,
            tolerance=data["tolerance"],
            summary=data["summary"],
            disk_count=len(data["disk_keys"]),
            file_count=data["files"].height,
            run_count=data["runs"].height,
            sections=sections,
            uncharted=uncharted,
            chart_count=len(figures),
            matrix=_matrix_table(overview, data["disk_keys"]) if not overview.is_empty() else None,
            saturation=_saturation_table(overview) if not overview.is_empty() else None,
            conditions=_conditions(data),
            checks=_checks(data),
            appendix=_appendix(data),
            provenance=_provenance(data["files"]),
            plotly_js=jinja2.utils.markupsafe.Markup(get_plotlyjs()),
        )
    )


def write_report(report: Report, out: str | os.PathLike[str]) -> Path:
    """Write the HTML next to its final name first, so a reader never opens half a file."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    tmp.write_text(report.html, encoding="utf-8")
    tmp.replace(out)
    return out
