"""The report for a storage vendor: one self-contained HTML file that opens offline in any browser.

Order of the page: the summary first (per disk: its CrystalDiskMark-style grid, its saturation point, the most
IOPS under the latency target and one sentence), then the details: the charts per workload (interactive plotly,
plotly.js embedded once), the saturation tables, the production load against the baseline and the SQL workloads
when such files are in scope, the test
conditions per disk (tools, block sizes, threads, queue depths, durations and the tools' own lines), the
Little's-law and unit checks, a data appendix with every run, and the provenance of every source file.

Charts and summary grids come from app/charts.py, words from app/wording.py and mart reads from app/queries.py;
the SQL here is only what the report alone shows (conditions, checks, appendix, provenance), plain selects whose
rows are grouped here for the page. Every user-given string (labels, tags, notes, file names, run metadata) goes
through Jinja2's autoescape in the page and through `_script_json` inside the figures (and `wording.esc` inside
their text fields).
"""

from __future__ import annotations

import html
import json
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
from kneepoint.app import wording as w
from kneepoint.app.queries import Series
from kneepoint.app.sharing.anonymize import Share, shared_warehouse
from kneepoint.ingest import __version__, formats, units
from kneepoint.ingest.warehouse import Location, connect, locate

TEMPLATES = Path(__file__).resolve().parent / "templates"
SERIES_COLUMNS = Series._fields
LIST_SHOWN = 8  # values listed inline before the rest folds away
# The latency target of the summary's "most IOPS under" line (kneepoint report --latency-target-ms).
LATENCY_TARGET_MS = 5.0
PRODUCTION_TITLE = "Production vs baseline on "  # the production charts' workload, followed by the disk
LOAD_TITLE = "Workload: "  # the load-series charts' workload, followed by the series' title


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
    latency_target_ms: float = LATENCY_TARGET_MS
    colors: dict[str, str] = field(default_factory=dict)  # each disk's colour on the report's charts


# -- entry points -------------------------------------------------------------------------------------------


def build_report(
    db: str | os.PathLike[str] | Location,
    disks: Iterable[str] | None = None,
    anonymize: bool = False,
    marked: Sequence[str] = (),
    latency_target_ms: float = LATENCY_TARGET_MS,
) -> Report:
    """The report of the chosen disks (every disk when none), anonymized on request; `db` a DuckDB file or a
    PostgreSQL warehouse."""
    db = locate(db)
    with shared_warehouse(db, disks, anonymize, marked) as share:
        return render(share, latency_target_ms=latency_target_ms, colors=app_colors(db, share))


def app_colors(db: str | os.PathLike[str] | Location, share: Share) -> dict[str, str] | None:
    """The colours the app gives the shared disks (from every disk of the user's warehouse), so a disk looks the
    same in the report as on the pages. None for an anonymized share: its pseudonyms get colours of their own."""
    if share.anonymized:
        return None
    colors = charts.disk_colors(queries.all_disk_keys(locate(db)))
    return {k: colors[k] for k in share.disk_keys if k in colors}


def render(
    share: Share,
    generated_at: datetime | None = None,
    latency_target_ms: float = LATENCY_TARGET_MS,
    colors: dict[str, str] | None = None,
) -> Report:
    """Render the report of a prepared warehouse (app.anonymize.shared_warehouse); `colors`, the disks' colours
    (default: in the report's order of disks)."""
    data = collect(share.db, share.disk_keys, latency_target_ms)
    data["colors"] = charts.disk_colors(share.disk_keys) | (colors or {})
    figures = report_charts(share.db, data)
    html = render_html(data, figures, share.anonymized, generated_at or datetime.now(UTC))
    return Report(html, figures, data["summary"], share.disk_keys, share.anonymized, latency_target_ms, data["colors"])


# -- data ---------------------------------------------------------------------------------------------------


def _read(db: Location, sql: str, params: Sequence[Any] = ()) -> pl.DataFrame:
    con = connect(db)
    try:
        return pl.from_arrow(con.sql(sql, params=list(params)).to_arrow_table())
    finally:
        con.close()


def _in_keys(keys: Sequence[str], column: str = "disk_key") -> str:
    return f"{column} IN ({', '.join('?' * len(keys))})" if keys else "1 = 0"


def _sorted_unique(col: str) -> pl.Expr:
    return pl.col(col).drop_nulls().unique().sort()


def collect(db: Location, disk_keys: Sequence[str], latency_target_ms: float = LATENCY_TARGET_MS) -> dict[str, Any]:
    """Everything the report shows, read from the marts (and the raw layer for the tools' own lines)."""
    keys = list(disk_keys)
    tables = queries.tables(db)
    if "dim_disks" not in tables:
        raise RuntimeError(f"no models in {db}: run `kneepoint build`")
    order = {k: i for i, k in enumerate(keys)}
    disks = _read(db, f"SELECT * FROM dim_disks WHERE {_in_keys(keys)}", keys).sort(
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
        "tolerance": overview["tolerance"][0] if not overview.is_empty() else units.var("saturation_tolerance"),
        "latency_target_ms": latency_target_ms,
        "targets": queries.latency_target(keys, None, latency_target_ms, db)
        if keys and not overview.is_empty()
        else {},
        "grid": queries.disk_grid(keys, db) if keys else pl.DataFrame(),
    }
    # load series (an application's throughput against sessions, virtual users, databases), in scope when a chosen
    # configuration has some
    loads = "mart_load_saturation" in tables and keys
    data["load_saturation"] = queries.load_saturation(keys, db) if loads else pl.DataFrame()
    data["load_points"] = queries.load_points(keys, db) if loads else pl.DataFrame()
    data["summary"] = _summary(disks, overview, data["targets"], latency_target_ms, data["load_saturation"])
    runs = _read(
        db,
        f"SELECT * FROM fct_io_results WHERE {_in_keys(keys)} ORDER BY disk_key, {queries.SERIES_ORDER}, "
        "outstanding_io, threads, file_name, record_index",
        keys,
    )
    data["runs"] = runs
    data["conditions"] = (
        runs.with_columns(
            pl.col("tool_version").fill_null(""),
            pl.concat_str(pl.col("file_id"), pl.lit(":"), pl.col("run_index").cast(pl.String)).alias("run"),
            pl.struct("pattern", "operation", "read_pct")
            .map_elements(
                lambda r: f"{r['pattern']} {w.operation_text(r['operation'], r['read_pct'])}", return_dtype=pl.String
            )
            .alias("workload"),
        )
        .group_by("disk_key", "tool", "tool_version", maintain_order=True)
        .agg(
            pl.col("run").n_unique().alias("runs"),
            pl.col("workload").unique(maintain_order=True).alias("workloads"),
            _sorted_unique("block_size_bytes").alias("block_sizes"),
            _sorted_unique("threads").alias("threads"),
            _sorted_unique("queue_depth").alias("queue_depths"),
            _sorted_unique("outstanding_io").alias("loads"),
            _sorted_unique("duration_s").alias("durations_s"),
            _sorted_unique("target").alias("targets"),
            pl.col("started_at").min().alias("first_started"),
            pl.col("started_at").max().alias("last_started"),
        )
        .sort("disk_key", "tool", "tool_version")
    )
    data["inferred"] = (
        runs.select("disk_key", "tool", pl.col("inferred").alias("key"))
        .explode("key")
        .drop_nulls("key")
        .group_by("disk_key", "tool", "key")
        .agg(pl.len().alias("records"))
        .sort("disk_key", "tool", "key")
    )
    data["tool_lines"] = _tool_lines(db, keys)
    data["littles_law"] = runs.group_by("disk_key", *SERIES_COLUMNS, maintain_order=True).agg(
        pl.len().alias("runs"),
        pl.col("littles_law_ratio").count().alias("checked"),
        pl.col("littles_law_flag").sum().alias("flagged"),
        pl.col("littles_law_ratio").min().alias("ratio_min"),
        pl.col("littles_law_ratio").median().alias("ratio_median"),
        pl.col("littles_law_ratio").max().alias("ratio_max"),
    )
    # The ratio belongs to a whole run (a mixed run's read and write rows carry the same one): runs are
    # counted and listed once, with the run's IOPS and mean latency.
    per_run = runs.sort("record_index").unique(subset=["file_id", "run_index"], keep="first", maintain_order=True)
    data["littles_law_runs"] = {
        "checked": per_run["littles_law_ratio"].count(),
        "flagged": int(per_run["littles_law_flag"].sum() or 0),
    }
    data["littles_law_flagged"] = per_run.filter(pl.col("littles_law_flag")).sort(
        "disk_key", "pattern", "operation", "block_size_bytes", "outstanding_io", "file_name", "run_index"
    )
    # mart_unit_checks (the dbt test assert_throughput_matches_iops_x_block_size reads it too), per tool and
    # printed unit, beside the records of each.
    records = runs.group_by("tool", "reported_throughput_unit").agg(pl.len().alias("records"))
    checked = queries.unit_checks(keys, db) if "mart_unit_checks" in tables else pl.DataFrame()
    data["units"] = (
        records.join(checked, on=["tool", "reported_throughput_unit"], how="left", nulls_equal=True)
        .with_columns(pl.col("checked").fill_null(0), pl.col("mismatched").fill_null(0))
        .sort("tool", "reported_throughput_unit", nulls_last=False)
        if not checked.is_empty()
        else records.with_columns(
            pl.lit(0).alias("checked"), pl.lit(0).alias("mismatched"), pl.lit(None, pl.Float64).alias("max_deviation")
        )
    )
    data["unit_mismatches"] = queries.unit_mismatches(keys, db) if "mart_unit_checks" in tables else pl.DataFrame()
    data["latency_units"] = _read(
        db,
        f"""
        SELECT r.tool, r.latency_unit, count(*) AS records
        FROM raw_io_records r
        WHERE r.file_id IN (SELECT file_id FROM fct_io_results WHERE {_in_keys(keys)})
        GROUP BY r.tool, r.latency_unit ORDER BY r.tool, r.latency_unit
        """,
        keys,
    )
    data["statements"] = queries.statements(keys, db=db) if "fct_query_time" in tables and keys else pl.DataFrame()
    # observed production load, in scope when a chosen disk has some (mart_headroom: one row per host and device)
    data["headroom"] = queries.headroom(keys, db) if "mart_headroom" in tables and keys else pl.DataFrame()
    # and its servers' SQL Server I/O waits against the same baseline (mart_waits_vs_baseline)
    data["waits"] = queries.waits(keys, db) if "mart_waits_vs_baseline" in tables and keys else pl.DataFrame()
    # Files stored in one batch share their commit time: the labels and bytes then order them, the same on any engine.
    files = _read(db, "SELECT * FROM dim_files ORDER BY ingested_at, file_name, disk, host, sha256")
    data["files"] = files.filter(
        pl.Series([queries.disk_key(d, h) in order for d, h in files.select("disk", "host").rows()], dtype=pl.Boolean)
    )
    return data


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


def _headline_target(targets: dict, disk: str, row: dict) -> dict | None:
    return targets.get((disk, row["series_id"]))


def _summary(
    disks: pl.DataFrame,
    overview: pl.DataFrame,
    targets: dict,
    latency_target_ms: float,
    loads: pl.DataFrame | None = None,
) -> list[tuple[str, str]]:
    """Each disk in one sentence: its headline workload's saturation point and the most IOPS it gave under the
    latency target; a configuration with load series (`loads`, mart_load_saturation) and no benchmark, its first
    load series' saturation."""
    out = []
    for d in disks.iter_rows(named=True):
        key = d["disk_key"]
        rows = [] if overview.is_empty() else overview.filter(pl.col("disk_key") == key).to_dicts()
        series = [] if loads is None or loads.is_empty() else loads.filter(pl.col("disk_key") == key).to_dicts()
        if not rows and series:
            # a configuration known by its load series alone: the first in one sentence, as the Workloads section
            first = series[0]
            more = f" ({w.plural(len(series), 'load series', 'load series')})" if len(series) > 1 else ""
            out.append(
                (key, f"no disk benchmark; {w.load_series_title(first)}{more}: {w.load_saturation_sentence(first)}.")
            )
            continue
        if not rows:
            only = f", only {w.plural(d['statements'], 'SQL Server statement')}" if d["statements"] else ""
            out.append((key, f"no benchmark results{only}."))
            continue
        h = _headline(rows)
        curves = [r for r in rows if r["points"] >= 2]
        saturated = sum(bool(r["saturated"]) for r in curves)
        tools = ", ".join(h["tools"] or [])
        sentence = f"{w.workload_of(h)} ({tools}) {w.saturation_sentence(h)}"
        sentence += "; " + w.latency_target_sentence(_headline_target(targets, key, h), latency_target_ms) + "."
        if len(curves) > 1:
            sentence += f" Saturated in {saturated} of the {len(curves)} workloads measured at two loads or more."
        out.append((key, sentence))
    return out


def _tool_lines(db: Location, keys: list[str]) -> pl.DataFrame:
    """The tools' own lines per file (Test/OS/Profile, command lines, job options), keys in alphabetical order,
    values sorted. Keys that are results rather than conditions (the registry's result keys: DiskSpd's
    per-direction and CPU figures, latency tables, printed throughput) are left out: the tables give them.

    Not in the order the tool printed them: raw_run_metadata has no ordinal column, and only DuckDB keeps the
    insertion order (rowid); PostgreSQL's row addresses do not follow it (COPY fills free space in earlier pages),
    so the same warehouse on either engine would list a file's lines differently."""
    meta = _read(
        db,
        f"""
        SELECT f.disk_key, d.file_name, d.format, d.tool_version, d.io_runs, m.key, m.run_index, m.value
        FROM raw_run_metadata m
        JOIN (SELECT DISTINCT file_id, disk_key FROM fct_io_results WHERE {_in_keys(keys)}) f ON f.file_id = m.file_id
        JOIN dim_files d ON d.file_id = m.file_id
        WHERE m.value IS NOT NULL
        """,
        keys,
    )
    if meta.is_empty():
        return meta
    prefixes, result_keys = formats.result_key_prefixes(), set(formats.result_keys())
    meta = meta.filter(
        ~pl.col("key").is_in(list(result_keys)) & ~pl.any_horizontal(pl.col("key").str.starts_with(p) for p in prefixes)
    )
    return (
        meta.group_by("disk_key", "file_name", "format", "tool_version", "io_runs", "key")
        .agg(
            pl.col("run_index").n_unique().alias("runs"),
            pl.col("value").unique().sort().alias("values"),
        )
        .sort("disk_key", "file_name", "key")
    )


# -- charts -------------------------------------------------------------------------------------------------


def report_charts(db: Location, data: dict[str, Any]) -> list[ReportChart]:
    """The report's charts, workload by workload: IOPS (random workloads) or throughput (sequential ones; within
    one workload the other is the same curve times the block size), mean and p99 latency against outstanding I/O,
    the hockey stick, and latency percentiles at the loads mart_percentile_loads picks (the lowest, the
    saturation point, the highest); the statements of SQL workloads on their disk's curve; the observed production
    load of a disk on its baseline's curve and over time."""
    colors = data["colors"]
    out: list[ReportChart] = []

    def add(title: str, slug: str, what: str, fig: go.Figure) -> None:
        # The figure's own title is plotly text (escaped: wording.esc); `title` may name a disk, a label as typed.
        chart_title = f"{title}: {html.unescape(fig.layout.title.text or '') or what}"
        # Aligned with the plot area, not the image edge, so slides do not cut the first letter.
        fig.update_layout(title={"text": w.esc(chart_title), "xref": "paper", "x": 0})
        out.append(ReportChart(title, f"{len(out) + 1:02d}-{w.slug(title)}-{slug}", chart_title, fig))

    for series, disk_keys, most_loads in data["workloads"]:
        if most_loads < 2:
            continue  # one load per disk: a point, not a curve; the tables give it
        title = w.workload_title(*series)
        points = queries.curve_points(disk_keys, series, db)
        if points.is_empty():
            continue
        saturation = queries.saturation(disk_keys, series, db)
        if w.is_sequential(series.pattern):
            add(title, "throughput", "throughput", charts.curve_figure(points, "throughput_mb", saturation, colors))
        else:
            add(title, "iops", "IOPS", charts.curve_figure(points, "iops", saturation, colors))
        has_avg = points["latency_avg_ms"].drop_nulls().len() > 0
        has_p99 = points["latency_p99_ms"].drop_nulls().len() > 0
        if has_avg:
            add(
                title,
                "latency",
                "mean latency",
                charts.curve_figure(points, "latency_avg", saturation, colors, log_y=None),
            )
        if has_p99:
            add(title, "p99", "p99 latency", charts.curve_figure(points, "latency_p99", saturation, colors, log_y=None))
        if has_avg or has_p99:
            latency = "latency_avg" if has_avg else "latency_p99"
            add(
                title,
                "hockey",
                "latency vs IOPS",
                charts.latency_vs_iops_figure(points, saturation, latency, colors, log_y=None),
            )
        dist = queries.latency_percentiles(disk_keys, series, db=db)
        if not dist.is_empty():
            add(title, "percentiles", "latency percentiles", charts.percentile_figure(dist, colors))
    for disk, series in _statement_curves(db, data):
        title = f"SQL workloads on {disk}"
        placed = queries.statements_on_curve([disk], series, db=db)
        if placed.is_empty():
            continue
        placed = placed.with_columns(
            pl.Series(
                "label",
                [
                    f"#{i + 1}: {w.fmt_throughput(b)}, {w.cpu_sentence(c)}"
                    for i, b, c in placed.select(
                        "statement_index", "effective_read_bytes_per_s", "cpu_to_elapsed"
                    ).rows()
                ],
                dtype=pl.String,
            )
        )
        fig = charts.statements_on_curve_figure(
            queries.curve_points([disk], series, db), placed, "MB", queries.saturation([disk], series, db), colors
        )
        fig.update_layout(title={"text": f"{fig.layout.title.text}, {w.esc(w.workload_title(*series))}"})
        add(title, "statements", "statements on the curve", fig)
    for disk in _production_disks(data):
        title = f"{PRODUCTION_TITLE}{disk}"
        rows = data["headroom"].filter(pl.col("disk_key") == disk)
        intervals = queries.observed_intervals([disk], db)
        color = colors.get(disk, charts.PALETTE[0])
        devices = charts.device_colors(rows, color)
        for series in queries.baseline_series(rows):
            placed = rows.filter(
                (pl.col("baseline_pattern") == series.pattern)
                & (pl.col("baseline_read_pct") == series.read_pct)
                & (pl.col("baseline_block_size_bytes") == series.block_size_bytes)
                & (pl.col("baseline_direction") == series.direction)
            )
            fig = charts.production_curve_figure(
                queries.curve_points([disk], series, db),
                queries.saturation([disk], series, db),
                intervals,
                placed,
                colors,
                devices,
                title=f"observed load on {w.workload_title(*series)}, mean latency vs IOPS",
            )
            add(title, f"production-curve-{w.slug(w.workload_title(*series))}", "observed load on the curve", fig)
        fig = charts.production_time_figure(intervals, rows, color, devices)
        fig.update_layout(title={"text": "observed IOPS and latency over time, against the baseline's saturation"})
        add(title, "production-time", "observed load over time", fig)
    for name, saturation in _load_workloads(data):
        points = data["load_points"].filter(pl.col("series_id").is_in(saturation["series_id"].to_list()))
        title = f"{LOAD_TITLE}{name}"
        add(title, "throughput", "throughput", charts.load_curve_figure(points, saturation, "throughput", colors, True))
        if points["response_avg_ms"].drop_nulls().len() or points["response_p95_ms"].drop_nulls().len():
            add(title, "response", "response time", charts.load_curve_figure(points, saturation, "response", colors))
    return out


def _load_workloads(data: dict[str, Any]) -> list[tuple[str, pl.DataFrame]]:
    """The load series in scope, one group per workload (label, load kind, what the throughput counts) compared
    across the configurations: (its title, its mart_load_saturation rows)."""
    saturation = data.get("load_saturation")
    if saturation is None or saturation.is_empty():
        return []
    out = []
    for key in dict.fromkeys(saturation.select("workload", "load_kind", "throughput_what").rows()):
        workload, kind, what = key
        rows = saturation.filter(
            (pl.col("workload") == workload) & (pl.col("load_kind") == kind) & (pl.col("throughput_what") == what)
        )
        out.append((w.load_series_title(rows.row(0, named=True)), rows))
    return out


def _production_disks(data: dict[str, Any]) -> list[str]:
    """The report's disks with observed production load, in the report's order."""
    headroom = data.get("headroom")
    if headroom is None or headroom.is_empty():
        return []
    observed = set(headroom["disk_key"].to_list())
    return [d for d in data["disk_keys"] if d in observed]


def _statement_curves(db: Location, data: dict[str, Any]) -> list[tuple[str, Series]]:
    """Per disk with SQL statements and benchmark results: the read workload its statements are placed on (the
    read series measured at the most loads; SQL Server reads 8 KiB pages and read-ahead runs)."""
    statements = data["statements"]
    if statements.is_empty():
        return []
    out = []
    for disk in data["disk_keys"]:
        if disk not in set(statements["disk_key"].to_list()):
            continue
        options = queries.series_options([disk], db).filter(pl.col("direction") == "read")
        if not options.is_empty():
            top = options.row(0, named=True)
            out.append((disk, Series(*(top[c] for c in SERIES_COLUMNS))))
    return out


# -- formatting ---------------------------------------------------------------------------------------------


def _num(value: float | None, digits: int = 3) -> str:
    return w.plain(value, digits)


_ratio = w.fmt_ratio


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


_workload = w.workload_of


def _run_workload(row: dict) -> str:
    """The workload of a whole run: a mixed run's directions together, so no '(read I/Os)'."""
    return w.workload_title(
        row["pattern"], row["operation"], row["read_pct"], row["block_size_bytes"], row["operation"]
    )


def _saturation_table(overview: pl.DataFrame) -> Table:
    rows = []
    for r in overview.iter_rows(named=True):
        sat = bool(r["saturated"])
        usl = w.usl_sentence(r)
        rows.append(
            [
                r["disk_key"],
                _workload(r),
                ", ".join(r["tools"] or []),
                w.tested_range(r["min_outstanding_io"], r["max_outstanding_io"], r["points"], r["runs"]),
                w.fmt_load(r["saturation_outstanding_io"]) if sat else "not saturated",
                w.threads_qd(r["saturation_threads"], r["saturation_queue_depth"]) if sat else "–",
                w.fmt_iops(r["iops_at_saturation"]) if sat else "–",
                w.fmt_throughput(r["throughput_bytes_per_s_at_saturation"]) if sat else "–",
                w.fmt_ms(r["latency_avg_ms_at_saturation"]) if sat else "–",
                w.fmt_ms(r["latency_p99_ms_at_saturation"]) if sat else "–",
                f"{r['latency_growth_to_saturation']:.2f}×" if r.get("latency_growth_to_saturation") else "–",
                f"{w.fmt_iops(r['max_iops'])} at {w.fmt_load(r['max_iops_outstanding_io'])}",
                usl,
                w.kneedle_sentence(r),
                w.fmt_int(r["littles_law_flagged_runs"]),
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
            "USL model",
            "Kneedle",
            "Little's-law flags",
        ],
        rows,
        numeric={4, 6, 7, 8, 9, 10, 11, 14},
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
                w.fmt_int(r["runs"]),
                ", ".join(r["workloads"] or []),
                _values(r["block_sizes"], w.fmt_block_size),
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
        inferred_text = [
            f"{r['tool']}: {r['key']} in {w.plural(r['records'], 'record')}" for r in inf.iter_rows(named=True)
        ]
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
                w.fmt_int(r["runs"]),
                w.fmt_int(r["checked"]),
                w.fmt_int(r["flagged"]),
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
                w.threads_qd(r["threads"], r["queue_depth"]),
                w.fmt_iops(r["run_iops"]),
                w.fmt_ms(r["run_latency_avg_ms"]),
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
                w.fmt_int(r["records"]),
                w.fmt_int(r["checked"]),
                w.fmt_int(r["mismatched"]),
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
            f"Off by more than {units.var('unit_check_tolerance'):.0%}",
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
                w.fmt_int(r["records"]),
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
                w.fmt_iops(r["iops"]),
                w.fmt_block_size(r["block_size_bytes"]),
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
        "flagged_count": data["littles_law_runs"]["flagged"],
        "checked_count": data["littles_law_runs"]["checked"],
        "littles_law_bounds": w.littles_law_bounds(),
        "unit_tolerance": f"{units.var('unit_check_tolerance'):.0%}",
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
                w.fmt_int(r["threads"]),
                w.fmt_int(r["queue_depth"]),
                w.fmt_int(r["outstanding_io"]),
                w.fmt_iops(r["iops"]),
                _num(r["throughput_mb_per_s"], 4),
                _num(r["throughput_mib_per_s"], 4),
                w.fmt_ms(r["latency_avg_ms"]),
                w.fmt_ms(r["latency_p99_ms"]),
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
            "Status",
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
                w.statement_status(r),
                w.fmt_int(r["execution_cpu_ms"]) if w.statement_status(r) == "timed" else "–",
                w.fmt_int(r["execution_elapsed_ms"]) if w.statement_status(r) == "timed" else "–",
                w.fmt_int(r["logical_reads"]),
                w.fmt_int(r["pages_read"]),
                w.plain(r["effective_read_bytes_per_s"] / 1e6) if r["effective_read_bytes_per_s"] else "–",
                w.cpu_sentence(r["cpu_to_elapsed"]),
                f"{r['file_name']}, line {r['source_line']}",
            ]
            for r in st.iter_rows(named=True)
        ],
        numeric={1, 3, 4, 5, 6, 7},
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
                w.format_name(r["format"]),
                r["tool_version"] or "–",
                r["encoding"] or "–",
                w.fmt_int(r["size_bytes"]),
                w.fmt_int(r["io_runs"]),
                w.fmt_int(r["statements"]),
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
    env.filters["plural"] = w.plural  # {{ n|plural("run") }}: '1 run', '2 runs'
    env.filters["script_json"] = lambda v: jinja2.utils.markupsafe.Markup(_script_json(v))
    return env


def _disk_summaries(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The summary's card per disk: its colour (the one its lines have on every chart), one sentence and its
    CrystalDiskMark-style grid."""
    sentences = dict(data["summary"])
    out = []
    for disk in data["disk_keys"]:
        grid = charts.summary_grid(data["grid"], disk) if not data["grid"].is_empty() else pl.DataFrame()
        out.append(
            {
                "disk": disk,
                "color": data["colors"].get(disk, "#444"),
                "sentence": sentences.get(disk, ""),
                "grid": Table(list(grid.columns), [list(r) for r in grid.rows()]) if not grid.is_empty() else None,
            }
        )
    return out


def _sql(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The SQL workloads per disk: their totals in words and each statement, timed or not."""
    statements = data["statements"]
    out = []
    if statements.is_empty():
        return out
    for disk in data["disk_keys"]:
        st = statements.filter(pl.col("disk_key") == disk)
        if st.is_empty():
            continue
        t = queries.time_totals([disk], db=data["db"])
        untimed = t["statements"] - t["timed"]
        text = (
            f"{w.plural(t['statements'], 'statement')}"
            + (f" ({w.plural(untimed, 'statement')} not timed)" if untimed else "")
            + f": {w.fmt_int(t['pages_read'])} pages read from disk in {w.fmt_int(t['execution_elapsed_ms'])} ms "
            f"of execution; effective read throughput {w.fmt_throughput(t['effective_read_bytes_per_s'])}."
        )
        out.append({"disk": disk, "color": data["colors"].get(disk, "#444"), "text": text})
    return out


def _production(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Per disk with observed production load: each host and device in one sentence (headroom, degradation), the
    baseline it was placed on and the intervals counted."""
    out = []
    waits = data.get("waits")
    waits = (
        waits if waits is not None and not waits.is_empty() else pl.DataFrame({"disk_key": []}, {"disk_key": pl.Utf8})
    )
    for disk in _production_disks(data):
        rows = data["headroom"].filter(pl.col("disk_key") == disk)
        devices = charts.device_colors(rows, data["colors"].get(disk, charts.PALETTE[0]))
        out.append(
            {
                "disk": disk,
                "color": data["colors"].get(disk, "#444"),
                "devices": [
                    {
                        "name": w.device_label(r),
                        "color": devices.get(w.device_label(r), "#444"),
                        "sentence": w.headroom_sentence(r),
                        "baseline": w.baseline_text(r),
                        "span": f"{r['tool']}: {w.observed_span(r)}",
                    }
                    for r in rows.iter_rows(named=True)
                ],
                "waits": [
                    {
                        "name": w.wait_label(r),
                        "sentence": w.wait_sentence(r),
                        "baseline": w.baseline_text(r) if r["series_id"] is not None else None,
                    }
                    for r in waits.filter(pl.col("disk_key") == disk).iter_rows(named=True)
                ],
            }
        )
    return out


def _loads(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Per workload of the load series: each configuration's saturation in one sentence, its USL fit and its
    Little's-law check."""
    out = []
    for name, saturation in _load_workloads(data):
        series = []
        for r in saturation.iter_rows(named=True):
            notes = [f"USL: {w.load_usl_sentence(r)}."]
            if r["littles_law_flagged_steps"]:
                notes.append(
                    f"Little's law off (load ≠ throughput × response time, outside {w.littles_law_bounds()}) in "
                    f"{r['littles_law_flagged_steps']} of {w.plural(r['littles_law_checked_steps'], 'step')} checked."
                )
            series.append(
                {
                    "disk": r["disk_key"],
                    "color": data["colors"].get(r["disk_key"], "#444"),
                    "sentence": w.load_saturation_sentence(r),
                    "notes": " ".join(notes),
                }
            )
        out.append({"title": name, "series": series})
    return out


def render_html(data: dict[str, Any], figures: Sequence[ReportChart], anonymized: bool, generated_at: datetime) -> str:
    sections: list[dict[str, Any]] = []
    sql_charts: list[dict[str, Any]] = []
    production_charts: list[dict[str, Any]] = []
    load_charts: list[dict[str, Any]] = []
    for chart in figures:
        entry = {
            "id": chart.name,
            "title": chart.title,
            "spec": chart.figure.to_json(),
            "config": chart_config(chart.name),
        }
        if chart.name.endswith("-statements"):
            sql_charts.append(entry)
            continue
        if chart.workload.startswith(PRODUCTION_TITLE):
            production_charts.append(entry)
            continue
        if chart.workload.startswith(LOAD_TITLE):
            load_charts.append(entry)
            continue
        if not sections or sections[-1]["title"] != chart.workload:
            sections.append({"title": chart.workload, "anchor": f"w{len(sections) + 1}", "charts": []})
        sections[-1]["charts"].append(entry)
    overview = data["overview"]
    uncharted = list(dict.fromkeys(w.workload_title(*s) for s, _, loads in data["workloads"] if loads < 2))
    return (
        _environment()
        .get_template("report.html.j2")
        .render(
            title="Disk saturation report",
            generated_at=generated_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            version=__version__,
            anonymized=anonymized,
            tolerance=data["tolerance"],
            rule=w.rule_sentence(data["tolerance"]),
            latency_target_ms=data["latency_target_ms"],
            disk_summaries=_disk_summaries(data),
            disk_count=len(data["disk_keys"]),
            file_count=data["files"].height,
            run_count=data["runs"].height,
            sections=sections,
            uncharted=uncharted,
            chart_count=len(figures),
            matrix=_matrix_table(overview, data["disk_keys"]) if not overview.is_empty() else None,
            saturation=_saturation_table(overview) if not overview.is_empty() else None,
            sql=_sql(data),
            sql_charts=sql_charts,
            production=_production(data),
            production_charts=production_charts,
            loads=_loads(data),
            load_charts=load_charts,
            load_rule=w.load_rule_sentence(data["tolerance"]),
            degradation_factor=w.fmt_times(data["headroom"]["degradation_factor"][0])
            if not data["headroom"].is_empty()
            else None,
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
