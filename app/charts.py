"""Plotly figures and summary tables for the app and the exported report: one function per chart, data in,
figure out.

Figures take polars frames as app/queries.py returns them (marts, already filtered) and never query or compute
analytics themselves: saturation points, fits, the run a curve goes through and throughput come from the marts.
What happens here is drawing, and the words come from app/wording.py. Every user-given string that reaches a
plotly text field (trace names, titles, notes, hover text) goes through `wording.esc`: plotly draws a subset of
HTML there, and a label must read as itself.

Readability rules every chart follows: points are drawn on top and inside the axes (never clipped); notes sit in
the top margin, never over the data; hover text is preformatted (thousands separators, no scientific notation)
and carries no side box that the chart's edge could cut; a line joins the points of one tool only.
"""

from __future__ import annotations

import functools
import math
import textwrap
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
import polars as pl

from kneepoint.app import wording as w
from kneepoint.app.wording import THROUGHPUT_UNITS, esc
from kneepoint.ingest.analytics import usl_iops

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"]
# Thread counts on the per-thread view: light (few threads) to dark (many).
THREAD_SCALE = ["#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b", "#41ab5d", "#238b45", "#005a32"]
# One marker shape per tool, the same on every chart (the diamond is the saturation point's).
# As many as there are tools (ingest/formats TOOLS, which also name the production and load tools, drawn elsewhere).
TOOL_SYMBOLS = [
    "circle",
    "square",
    "triangle-up",
    "x",
    "star",
    "pentagon",
    "hexagon",
    "triangle-down",
    "cross",
    "triangle-left",
    "triangle-right",
    "hexagram",
    "star-square",
    "bowtie",
    "star-triangle-up",
    "hourglass",
]
LOG2_DTICK = math.log10(2)
NOTE_WIDTH = 72  # characters per note line: a chart is half a page wide in the app (~560 px of 11 px text)
NOTE_LINE_PX = 16

METRICS: dict[str, tuple[str, str, str]] = {
    # key -> (column, axis title, unit in hover text)
    "iops": ("iops", "IOPS", "IOPS"),
    "throughput_mb": ("throughput_mb_per_s", f"Throughput, MB/s ({w.UNIT_BASES['MB']})", "MB/s"),
    "throughput_mib": ("throughput_mib_per_s", f"Throughput, MiB/s ({w.UNIT_BASES['MiB']})", "MiB/s"),
    "latency_avg": ("latency_avg_ms", "Mean latency (ms)", "ms mean"),
    "latency_p99": ("latency_p99_ms", "p99 latency (ms)", "ms p99"),
}
# A chart's title names the metric short; its axis says the unit's base (10⁶ or 2²⁰ bytes).
TITLES = {"throughput_mb": "Throughput (MB/s)", "throughput_mib": "Throughput (MiB/s)"}


def metric_title(metric: str) -> str:
    return TITLES.get(metric, METRICS[metric][1])


# Where each metric's saturation value sits in mart_saturation_points, and the factor to the axis unit.
_SATURATION_VALUE: dict[str, tuple[str, float]] = {
    "iops": ("iops_at_saturation", 1.0),
    "throughput_mb": ("throughput_bytes_per_s_at_saturation", 1e-6),
    "throughput_mib": ("throughput_bytes_per_s_at_saturation", 2.0**-20),
    "latency_avg": ("latency_avg_ms_at_saturation", 1.0),
    "latency_p99": ("latency_p99_ms_at_saturation", 1.0),
}
TEMPLATE = "plotly_white"
TOP_MARGIN = 56
LAYOUT: dict[str, Any] = {
    "height": 430,
    "margin": {"l": 70, "r": 24, "t": TOP_MARGIN, "b": 60},
    "legend": {"orientation": "h", "y": -0.2, "x": 0, "yanchor": "top"},
    # Hover text carries its own header: no name box beside it, which the chart's edge would cut.
    "hovermode": "closest",
    "hoverlabel": {"align": "left", "namelength": 0},
    "font": {"size": 12},
    "separators": ".,",
}


def fmt_value(metric: str, value: float | None) -> str:
    """A value of a metric with its unit: '282,734 IOPS', '1,534 MB/s', '0.381 ms mean'."""
    if value is None:
        return w.DASH
    unit = METRICS[metric][2]
    if metric == "iops":
        return f"{w.fmt_iops(value)} {unit}"
    if metric.startswith("throughput"):
        return f"{w.fmt_int(value) if value >= 100 else w.plain(value)} {unit}"
    return f"{w.fmt_ms(value)} {unit}"


# -- axes -------------------------------------------------------------------------------------------------------


def load_axis(loads: Sequence[float], title: str = "Outstanding I/O (threads × queue depth), log2") -> dict:
    """A log2 axis with a tick at every power of two, or every fourth one over a range too wide to label."""
    loads = [v for v in loads if v and v > 0]
    if not loads:
        return {"title": title, "type": "log", "dtick": LOG2_DTICK, "tickformat": "d"}
    lo, hi = min(loads), max(loads)
    wide = hi / lo > 2**10
    # A fixed range, padded so that a point at either end is drawn whole.
    pad = 0.1 * max(math.log10(hi / lo), 0.6)
    return {
        "title": title,
        "type": "log",
        "dtick": LOG2_DTICK * (2 if wide else 1),
        "range": [math.log10(lo) - pad, math.log10(hi) + pad],
        "tickangle": 0,
        "tickformat": "d" if lo >= 1 else "",
    }


def wants_log(values: Sequence[float]) -> bool:
    """Latency on a log axis by default when the values span more than 10×."""
    positive = [v for v in values if v is not None and v > 0]
    return bool(positive) and max(positive) / min(positive) > 10


def value_axis(title: str, values: Sequence[float], log: bool = False) -> dict:
    """A y axis that holds every point: from zero (linear, with headroom above the highest point) or over the
    decades of the values (log, ticks labelled in the axis' unit: 0.1, 1, 10, never '100μ')."""
    values = [v for v in values if v is not None and math.isfinite(v)]
    if not log:
        top = max(values, default=0.0)
        return {
            "title": title,
            "range": [0, top * 1.12 if top > 0 else 1],
            "exponentformat": "none",
            "separatethousands": True,
        }
    positive = [v for v in values if v > 0] or [1.0]
    lo, hi = min(positive), max(positive)
    lo_exp, hi_exp = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    # 1-2-5 steps over a decade or two; decades alone over a wider range, so the labels never crowd
    steps = (1, 2, 5) if hi_exp - lo_exp <= 2 else (1,)
    ticks = [m * 10.0**e for e in range(lo_exp, hi_exp + 1) for m in steps]
    ticks = [t for t in ticks if lo / 2.5 <= t <= hi * 2.5]
    pad = 0.08 * max(math.log10(hi / lo), 0.5)
    return {
        "title": title + ", log",
        "type": "log",
        "range": [math.log10(lo) - pad, math.log10(hi) + pad],
        "tickvals": ticks,
        "ticktext": [w.fmt_ms(t) if t < 1000 else w.fmt_int(t) for t in ticks],
    }


# -- helpers ----------------------------------------------------------------------------------------------------


def disk_colors(disk_keys: Sequence[str]) -> dict[str, str]:
    """One colour per disk in the order given. Pages pass every stored disk (queries.all_disk_keys), so a disk
    keeps its colour on every page; the report passes its own disks."""
    return {d: PALETTE[i % len(PALETTE)] for i, d in enumerate(dict.fromkeys(disk_keys))}


def tool_symbols(tools: Sequence[str]) -> dict[str, str]:
    """One marker shape per tool, by the tool's name (the same shape on every chart and page)."""
    from kneepoint.ingest import formats

    known = formats.tools()
    return {
        t: TOOL_SYMBOLS[(known.index(t) if t in known else len(known) + i) % len(TOOL_SYMBOLS)]
        for i, t in enumerate(tools)
    }


def _colors(points: pl.DataFrame, colors: Mapping[str, str] | None) -> dict[str, str]:
    keys = points["disk_key"].unique(maintain_order=True).to_list() if not points.is_empty() else []
    out = dict(colors or {})
    for k in keys:
        out.setdefault(k, PALETTE[len(out) % len(PALETTE)])
    return out


def _source_line(r: Mapping[str, Any]) -> str:
    """The run behind a point: 'randread-4k-jobs1.json, run 3 (line 2424), fio'."""
    line = f" (line {r['source_line']})" if r.get("source_line") is not None else ""
    return f"{esc(r['file_name'])}, run {r['run_index'] + 1}{line}, {esc(r['tool'])}"


def _hover(df: pl.DataFrame, metric: str, head: str) -> list[str]:
    """Preformatted hover text per point: which disk and tool, the load, the value, the run behind it."""
    column = METRICS[metric][0]
    return [
        f"<b>{head}</b><br>{w.fmt_load(r['outstanding_io'])} outstanding "
        f"({w.threads_qd(r['threads'], r['queue_depth'])}): {fmt_value(metric, r[column])}<br>{_source_line(r)}"
        for r in df.iter_rows(named=True)
    ]


@functools.cache
def _template() -> go.layout.Template:
    """TEMPLATE, resolved and validated once per process."""
    return go.layout.Template(pio.templates[TEMPLATE])


def _apply_template(fig: go.Figure) -> None:
    """Give `fig` its own copy of the cached template without validating it again.

    A template named in update_layout is deep-copied from plotly's registry and every one of its properties
    validated, figure after figure: ~10 ms of CPU per figure, ~1 s of a report's ~6 s. plotly assigns its default
    template the same way (BaseFigure._initialize_layout_template): an object validated once is stored as
    its JSON, a fresh deep copy per figure, so a change to one figure's template leaves the others alone."""
    layout = fig.layout
    validate = layout._validate
    layout._validate = False
    try:
        layout.template = _template()
    finally:
        layout._validate = validate


def _layout(fig: go.Figure, title: str, xaxis: dict, yaxis: dict, notes: Sequence[str] = (), **extra: Any) -> go.Figure:
    """Title, axes and the notes (already escaped HTML lines) in the top margin, under the title."""
    _apply_template(fig)
    top = TOP_MARGIN + NOTE_LINE_PX * len(notes)
    annotations = list(fig.layout.annotations or [])
    if notes:
        annotations.append(
            go.layout.Annotation(
                text="<br>".join(notes),
                xref="paper",
                yref="paper",
                x=0,
                y=1,
                yshift=8,
                xanchor="left",
                yanchor="bottom",
                showarrow=False,
                align="left",
                font={"size": 11},
            )
        )
    layout = {**LAYOUT, **extra}
    layout["margin"] = {**LAYOUT["margin"], "t": top}
    layout["height"] = extra.get("height", LAYOUT["height"]) + NOTE_LINE_PX * len(notes)
    # One layout update: plotly's per-call bookkeeping, not the data, is what a redraw waits on.
    fig.update_layout(
        {
            **layout,
            "title": {
                "text": esc(title),
                "x": 0,
                "xanchor": "left",
                "xref": "paper",
                "y": 1,
                "yref": "container",
                "yanchor": "top",
                "pad": {"t": 12},
            },
            "xaxis": xaxis,
            "yaxis": yaxis,
            "annotations": annotations,
        }
    )
    return fig


def _note_lines(color: str, text: str) -> list[str]:
    """A note in a disk's colour, wrapped to the chart's width (plotly does not wrap annotations)."""
    return [
        f"<span style='color:{color}'>{'■ ' if i == 0 else '&nbsp;&nbsp;&nbsp;'}{esc(line)}</span>"
        for i, line in enumerate(textwrap.wrap(text, NOTE_WIDTH) or [""])
    ]


def _saturation_rows(saturation: pl.DataFrame | None) -> dict[str, dict]:
    if saturation is None or saturation.is_empty():
        return {}
    return {r["disk_key"]: r for r in saturation.iter_rows(named=True)}


def _saturation_notes(rows: Mapping[str, dict], colors: Mapping[str, str], shown: Sequence[str]) -> list[str]:
    """One note per disk drawn: where it saturates, or that it did not, in the disk's colour."""
    notes: list[str] = []
    for k in shown:
        r = rows.get(k)
        if r is not None:
            prefix = f"{k}: " if len(shown) > 1 else ""
            notes += _note_lines(colors.get(k, "#444"), prefix + w.saturation_sentence(r))
    return notes


def _mark_saturation(fig: go.Figure, x: float, y: float, color: str, name: str, text: str, vline: bool) -> None:
    """The saturation point: a diamond on the curve (its sentence is in the notes and the hover)."""
    fig.add_trace(
        go.Scatter(
            x=[x],
            y=[y],
            mode="markers",
            marker={"symbol": "diamond", "size": 14, "color": color, "line": {"color": "black", "width": 1.5}},
            name="saturation point",
            legendgroup="saturation",
            showlegend=False,
            cliponaxis=False,
            hovertemplate=f"<b>{esc(name)}</b><br>{esc(text)}<extra></extra>",
        )
    )
    if vline:
        fig.add_vline(x=x, line={"color": color, "width": 1, "dash": "dot"}, layer="below")


def _saturation_legend(fig: go.Figure) -> None:
    """The diamond explained once in the legend."""
    marked = [t for t in fig.data if t.legendgroup == "saturation"]
    if marked:
        marked[0].showlegend = True


# -- curves against load ----------------------------------------------------------------------------------------


def curve_figure(
    points: pl.DataFrame,
    metric: str,
    saturation: pl.DataFrame | None = None,
    colors: Mapping[str, str] | None = None,
    usl: bool = False,
    title: str | None = None,
    log_y: bool | None = False,
) -> go.Figure:
    """One metric against outstanding I/O (log2 axis): per disk, one line per tool through that tool's best run
    at each load (mart_curve_points), each tool with its marker shape; the other runs at a load (other threads ×
    queue depth, repeats) as hollow circles; the saturation point (mart_saturation_points) as a diamond, said in
    the notes above the chart; with `usl`, the mart's USL fit over the IOPS chart. `log_y` None: log when the
    values span more than 10×."""
    column, axis_title, _ = METRICS[metric]
    colors = _colors(points, colors)
    sat_rows = _saturation_rows(saturation)
    values = points[column].drop_nulls().to_list() if column in points.columns else []
    log = wants_log(values) if log_y is None else log_y
    symbols = tool_symbols(sorted(set(points["tool"].to_list()))) if not points.is_empty() else {}
    fig = go.Figure()
    shown: list[str] = []
    others_shown = False
    for disk_key, color in colors.items():
        df = points.filter(pl.col("disk_key") == disk_key).drop_nulls(column)
        if df.is_empty():
            continue
        shown.append(disk_key)
        tools = df["tool"].unique(maintain_order=True).to_list()
        for tool in tools:
            line = df.filter((pl.col("tool") == tool) & pl.col("best_for_tool"))
            name = disk_key if len(tools) == 1 else f"{disk_key} · {tool}"
            fig.add_trace(
                go.Scatter(
                    x=line["outstanding_io"].to_list(),
                    y=line[column].to_list(),
                    mode="lines+markers" if line.height > 1 else "markers",
                    name=esc(name),
                    legendgroup=esc(disk_key),
                    line={"color": color, "width": 2},
                    marker={"symbol": symbols.get(tool, "circle"), "size": 8 if line.height > 1 else 11},
                    cliponaxis=False,
                    hovertext=_hover(line, metric, esc(name)),
                    hovertemplate="%{hovertext}<extra></extra>",
                )
            )
        others = df.filter(~pl.col("best_for_tool"))
        if not others.is_empty():
            fig.add_trace(
                go.Scatter(
                    x=others["outstanding_io"].to_list(),
                    y=others[column].to_list(),
                    mode="markers",
                    name="other runs at the same load (other threads × QD, repeats)",
                    legendgroup="others",
                    showlegend=not others_shown,
                    marker={"color": color, "size": 7, "opacity": 0.5, "symbol": "circle-open"},
                    cliponaxis=False,
                    hovertext=_hover(others, metric, "other run: " + esc(disk_key)),
                    hovertemplate="%{hovertext}<extra></extra>",
                )
            )
            others_shown = True
        row = sat_rows.get(disk_key)
        if usl and metric == "iops" and row is not None and row.get("usl_fitted"):
            _add_usl(fig, row, color, disk_key)
        if row is not None and row.get("saturated"):
            sat_column, factor = _SATURATION_VALUE[metric]
            value = row.get(sat_column)
            if value is not None:
                text = f"saturates at {w.fmt_load(row['saturation_outstanding_io'])} outstanding: " + fmt_value(
                    metric, value * factor
                )
                _mark_saturation(fig, row["saturation_outstanding_io"], value * factor, color, disk_key, text, True)
    _saturation_legend(fig)
    return _layout(
        fig,
        title or f"{metric_title(metric)} vs outstanding I/O",
        load_axis(points["outstanding_io"].to_list() if not points.is_empty() else []),
        value_axis(axis_title, values, log),
        notes=_saturation_notes(sat_rows, colors, shown),
    )


def _add_usl(fig: go.Figure, row: Mapping[str, Any], color: str, disk_key: str) -> None:
    """The mart's USL fit drawn over the tested range (evaluating the fitted formula, not fitting): outstanding I/O
    spaced on a log scale, as the IOPS chart's x axis usually is."""
    lo, hi = float(row["min_outstanding_io"]), float(row["max_outstanding_io"])
    xs = [lo * (hi / lo) ** (i / USL_STEPS) for i in range(USL_STEPS + 1)] if hi > lo else [lo]
    ys = [usl_iops(x, row["usl_lambda_iops"], row["usl_sigma"], row["usl_kappa"]) for x in xs]
    said = [f"{w.fmt_iops(y)} IOPS at {w.plain(x)} outstanding" for x, y in zip(xs, ys, strict=True)]
    fig.add_trace(_usl_trace(xs, ys, said, disk_key, color, w.usl_sentence(row)))


USL_STEPS = 96  # points of a drawn USL curve


def _usl_trace(
    xs: Sequence[float], ys: Sequence[float], said: Sequence[str], name: str, color: str, sentence: str
) -> go.Scatter:
    """A fitted USL curve as a dashed line in its series' colour; `said`: each point's figures in words (plain
    text), `sentence`: what the fit says (wording's USL sentences)."""
    head = f"<b>{esc(name)}: USL model</b><br>"
    return go.Scatter(
        x=list(xs),
        y=list(ys),
        mode="lines",
        name=esc(f"{name}: USL model"),
        legendgroup=esc(name),
        line={"color": color, "width": 1.5, "dash": "dash"},
        hovertext=[f"{head}{esc(text)}<br>{esc(sentence)}" for text in said],
        hovertemplate="%{hovertext}<extra></extra>",
    )


def latency_vs_iops_figure(
    points: pl.DataFrame,
    saturation: pl.DataFrame | None = None,
    latency: str = "latency_avg",
    colors: Mapping[str, str] | None = None,
    log_y: bool | None = False,
) -> go.Figure:
    """The hockey stick: latency against IOPS, one line per disk and tool through its best run at each load
    (labelled with the load), saturation marked."""
    column, axis_title, _ = METRICS[latency]
    colors = _colors(points, colors)
    sat_rows = _saturation_rows(saturation)
    values = points[column].drop_nulls().to_list() if column in points.columns else []
    log = wants_log(values) if log_y is None else log_y
    fig = go.Figure()
    shown = _hockey_traces(fig, points, sat_rows, latency, colors)
    iops = points["iops"].drop_nulls().to_list() if not points.is_empty() else []
    return _layout(
        fig,
        f"{axis_title} vs IOPS (labels: outstanding I/O)",
        value_axis("IOPS", iops) | {"range": [0, max(iops, default=1) * 1.15]},
        value_axis(axis_title, values, log),
        notes=_saturation_notes(sat_rows, colors, shown),
    )


def _hockey_traces(
    fig: go.Figure, points: pl.DataFrame, sat_rows: Mapping[str, dict], latency: str, colors: Mapping[str, str]
) -> list[str]:
    """The hockey stick's lines and saturation diamonds on `fig`; returns the disks drawn."""
    column, _, _ = METRICS[latency]
    symbols = tool_symbols(sorted(set(points["tool"].to_list()))) if not points.is_empty() else {}
    shown: list[str] = []
    for disk_key, color in colors.items():
        df = points.filter((pl.col("disk_key") == disk_key) & pl.col("best_for_tool")).drop_nulls(column)
        if df.is_empty():
            continue
        shown.append(disk_key)
        tools = df["tool"].unique(maintain_order=True).to_list()
        for tool in tools:
            line = df.filter(pl.col("tool") == tool)
            name = disk_key if len(tools) == 1 else f"{disk_key} · {tool}"
            fig.add_trace(
                go.Scatter(
                    x=line["iops"].to_list(),
                    y=line[column].to_list(),
                    mode=("lines+" if line.height > 1 else "") + "markers+text",
                    text=[w.fmt_load(v) for v in line["outstanding_io"].to_list()],
                    textposition="top left",
                    textfont={"size": 9, "color": color},
                    name=esc(name),
                    legendgroup=esc(disk_key),
                    line={"color": color, "width": 2},
                    marker={"symbol": symbols.get(tool, "circle"), "size": 8},
                    cliponaxis=False,
                    hovertext=_hover(line, latency, esc(name)),
                    hovertemplate="%{hovertext}<br>%{x:,.0f} IOPS<extra></extra>",
                )
            )
        row = sat_rows.get(disk_key)
        sat_column, _ = _SATURATION_VALUE[latency]
        if row is not None and row.get("saturated") and row.get(sat_column) is not None:
            _mark_saturation(
                fig, row["iops_at_saturation"], row[sat_column], color, disk_key, w.saturation_sentence(row), False
            )
    _saturation_legend(fig)
    return shown


# -- per thread count -------------------------------------------------------------------------------------------


def threads_figure(
    points: pl.DataFrame,
    metric: str,
    by_threads: pl.DataFrame | None = None,
    colors: Mapping[str, str] | None = None,
    log_y: bool | None = False,
) -> go.Figure:
    """One line per disk and thread count, x = queue depth (log2): does adding threads or queue depth help?

    Each thread count's saturation (mart_saturation_by_threads) is marked with a diamond."""
    column, axis_title, _ = METRICS[metric]
    colors = _colors(points, colors)
    sat_column, factor = _SATURATION_VALUE[metric]
    sat = (
        {}
        if by_threads is None or by_threads.is_empty()
        else {(r["disk_key"], r["threads"]): r for r in by_threads.iter_rows(named=True)}
    )
    dashes = ["solid", "dash", "dot", "dashdot", "longdash"]
    fig = go.Figure()
    df_all = points.filter(pl.col("best_at_threads_qd")).drop_nulls(column)
    values = df_all[column].to_list()
    log = wants_log(values) if log_y is None else log_y
    thread_counts = sorted(df_all["threads"].unique().to_list()) if not df_all.is_empty() else []
    shade = {t: THREAD_SCALE[min(i, len(THREAD_SCALE) - 1)] for i, t in enumerate(thread_counts)}
    measured = set(df_all["disk_key"].to_list()) if not df_all.is_empty() else set()
    disks = [k for k in colors if k in measured]
    # One disk: a shade per thread count. Several: a colour per disk, a dash per thread count.
    single = len(disks) == 1
    for disk_key in disks:
        for t, threads in enumerate(thread_counts):
            df = df_all.filter((pl.col("disk_key") == disk_key) & (pl.col("threads") == threads))
            if df.is_empty():
                continue
            color = shade[threads] if single else colors[disk_key]
            name = w.plural(threads, "thread") + ("" if single else f" · {disk_key}")
            fig.add_trace(
                go.Scatter(
                    x=df["queue_depth"].to_list(),
                    y=_interval_values(df, column),
                    mode="lines+markers",
                    name=esc(name),
                    line={"color": color, "width": 2, "dash": "solid" if single else dashes[t % len(dashes)]},
                    cliponaxis=False,
                    hovertext=_hover(df, metric, esc(name)),
                    hovertemplate="%{hovertext}<extra></extra>",
                )
            )
            row = sat.get((disk_key, threads))
            if row is not None and row.get("saturated") and row.get(sat_column) is not None:
                _mark_saturation(
                    fig,
                    row["saturation_queue_depth"],
                    row[sat_column] * factor,
                    color,
                    name,
                    w.saturation_sentence(row, by_threads=True),
                    False,
                )
    _saturation_legend(fig)
    notes: list[str] = []
    if by_threads is not None and not by_threads.is_empty() and "saturates_at_same_outstanding_io" in by_threads:
        same = by_threads.filter(pl.col("saturates_at_same_outstanding_io"))
        for k, n in same.select("disk_key", "saturation_outstanding_io").unique(maintain_order=True).rows():
            prefix = f"{k}: " if len(disks) > 1 else ""
            notes += _note_lines(
                colors.get(k, "#444"), f"{prefix}saturates at {w.fmt_load(n)} outstanding, whatever the thread count"
            )
    return _layout(
        fig,
        f"{metric_title(metric)} vs queue depth per thread count",
        load_axis(points["queue_depth"].to_list() if not points.is_empty() else [], "Queue depth per thread, log2"),
        value_axis(axis_title, values, log),
        notes=notes,
    )


def iops_heatmap(points: pl.DataFrame, disk_key: str) -> go.Figure:
    """IOPS over threads × queue depth for one disk: where in the grid the disk delivers."""
    df = points.filter((pl.col("disk_key") == disk_key) & pl.col("best_at_threads_qd")).drop_nulls("iops")
    threads = sorted(df["threads"].unique().to_list()) if not df.is_empty() else []
    depths = sorted(df["queue_depth"].unique().to_list()) if not df.is_empty() else []
    cell = {(r["threads"], r["queue_depth"]): r for r in df.iter_rows(named=True)}
    z = [[cell[(t, q)]["iops"] if (t, q) in cell else None for q in depths] for t in threads]
    text = [[w.fmt_iops(v) if v is not None else "" for v in row] for row in z]
    hover = [
        [
            f"{w.plural(t, 'thread')} × QD {q}: {w.fmt_iops(cell[(t, q)]['iops'])} IOPS<br>{_source_line(cell[(t, q)])}"
            if (t, q) in cell
            else ""
            for q in depths
        ]
        for t in threads
    ]
    fig = go.Figure(
        go.Heatmap(
            x=[str(q) for q in depths],
            y=[str(t) for t in threads],
            z=z,
            text=text,
            texttemplate="%{text}",
            customdata=hover,
            colorscale="Blues",
            colorbar={"title": "IOPS", "exponentformat": "none", "separatethousands": True},
            hovertemplate="%{customdata}<extra></extra>",
            hoverongaps=False,
        )
    )
    return _layout(
        fig,
        f"IOPS by threads × queue depth: {disk_key}",
        {"title": "Queue depth per thread", "type": "category"},
        {"title": "Threads", "type": "category"},
        height=max(260, 90 + 44 * len(threads)),
    )


# -- summaries --------------------------------------------------------------------------------------------------


def summary_grid(grid: pl.DataFrame, disk_key: str, unit: str = "MB") -> pl.DataFrame:
    """CrystalDiskMark's grid for one disk: SEQ / RND rows by block size, Read and Write columns; sequential
    workloads in MB/s, random ones in IOPS, each with its latency and the load it was measured at. A row for the
    best measured load, and one for the lowest load where that differs. `grid` is queries.disk_grid's frame."""
    df = grid.filter(pl.col("disk_key") == disk_key)
    rows: dict[tuple, dict[str, str]] = {}
    for r in df.iter_rows(named=True):
        which = "best" if r["grid_load"] == "best" else "lowest load"
        key = (
            r["pattern"] != "sequential",
            -r["block_size_bytes"],
            r["grid_load"] != "best",
            r["pattern"],
            r["block_size_bytes"],
            which,
        )
        if w.is_sequential(r["pattern"]):
            figure = w.fmt_throughput(r["throughput_bytes_per_s"], unit)
        else:
            figure = f"{w.fmt_iops(r['iops'])} IOPS"
        latency = w.latency_text(r["latency_avg_ms"], r["latency_p99_ms"])
        rows.setdefault(key, {})[r["operation"]] = (
            f"{figure} · {latency} · {w.fmt_load(r['outstanding_io'])} outstanding "
            f"({r['threads']}T × QD{r['queue_depth']})"
        )
    out = [
        {
            "workload": f"{w.grid_row_title(k[3], k[4])}, {k[5]}",
            "Read": v.get("read", "not measured"),
            "Write": v.get("write", "not measured"),
        }
        for k, v in sorted(rows.items())
    ]
    return pl.DataFrame(out, schema={"workload": pl.String, "Read": pl.String, "Write": pl.String})


# -- compare ----------------------------------------------------------------------------------------------------


def _compared_value(r: Mapping[str, Any], unit: str) -> tuple[float | None, str, float | None, str]:
    """What Compare ranks a disk by in a workload, like with like: the best measured IOPS; sequential workloads
    are shown as the throughput that makes (IOPS × block size). (rank value, words, value drawn, axis title)."""
    iops = r.get("max_iops")
    if iops is None:
        return None, w.DASH, None, ""
    if w.is_sequential(r["pattern"]):
        _, label, factor = THROUGHPUT_UNITS[unit]
        bytes_per_s = iops * r["block_size_bytes"]
        return iops, w.fmt_throughput(bytes_per_s, unit), bytes_per_s / factor, f"best measured {label}"
    return iops, f"{w.fmt_iops(iops)} IOPS", iops, "best measured IOPS"


def compare_rows(compared: pl.DataFrame, baseline: str, unit: str = "MB") -> list[dict[str, Any]]:
    """One workload's disks ranked by their best measured IOPS, each with its difference to the baseline."""
    base = next((r for r in compared.iter_rows(named=True) if r["disk_key"] == baseline), None)
    base_value = _compared_value(base, unit)[0] if base else None
    out = []
    for r in compared.iter_rows(named=True):
        value, text, shown, axis = _compared_value(r, unit)
        ratio = value / base_value if value is not None and base_value else None
        out.append(
            {
                **r,
                "compared": value,
                "compared_text": text,
                "shown": shown,
                "axis": axis,
                "ratio": ratio,
                "pct": w.fmt_pct_diff(ratio),
            }
        )
    return sorted(out, key=lambda r: -(r["compared"] or 0))


def verdict(rows: Sequence[Mapping[str, Any]], baseline: str) -> str:
    """A workload's comparison in one line: 'synthetic stripe: +32 % over synthetic P10 (best measured 12,345
    vs 9,350 IOPS); saturates at 64 vs 32 outstanding'."""
    base = next((r for r in rows if r["disk_key"] == baseline), None)
    others = [r for r in rows if r["disk_key"] != baseline]
    if base is None or not others:
        return "measured on one disk only: nothing to compare"
    parts = []
    for r in others:
        text = (
            f"{r['disk_key']}: {r['pct']} vs {baseline} (best measured {r['compared_text']} vs {base['compared_text']})"
        )
        if r["saturated"] and base["saturated"]:
            text += (
                f"; saturates at {w.fmt_load(r['saturation_outstanding_io'])} vs "
                f"{w.fmt_load(base['saturation_outstanding_io'])} outstanding"
            )
        elif r["saturated"] != base["saturated"]:
            sat, unsat = (r, base) if r["saturated"] else (base, r)
            text += (
                f"; {sat['disk_key']} saturates at {w.fmt_load(sat['saturation_outstanding_io'])} outstanding, "
                f"{unsat['disk_key']} not up to {w.fmt_load(unsat['max_outstanding_io'])}"
            )
        parts.append(text)
    return ". ".join(parts)


def compare_table(compared: pl.DataFrame, baseline: str, unit: str = "MB") -> pl.DataFrame:
    """The saturation points side by side: one column per disk, one row per figure. Differences to the baseline
    compare like with like: best measured with best measured, saturation points only where both disks saturate
    (the first column says what each row compares)."""
    base = next((r for r in compared.iter_rows(named=True) if r["disk_key"] == baseline), None)
    figures = [
        "Best IOPS measured (vs baseline's best)",
        "Saturation",
        "Saturates at, outstanding I/O (both saturated)",
        "threads × queue depth at saturation",
        "IOPS at saturation (both saturated)",
        "Throughput at saturation (both saturated)",
        "Mean latency at saturation (both saturated)",
        "p99 latency at saturation (both saturated)",
        "Latency growth, lowest load → saturation",
        "Tested range",
        "USL model",
        "Tools",
    ]
    rows: dict[str, list[str]] = {"": figures}

    def diff(r: Mapping[str, Any], column: str, both_saturated: bool = True) -> str:
        if base is None or r["disk_key"] == baseline or r.get(column) is None or not base.get(column):
            return ""
        if both_saturated and not (r["saturated"] and base["saturated"]):
            return ""
        return f" ({w.fmt_pct_diff(r[column] / base[column])})"

    for r in compared.iter_rows(named=True):
        sat = bool(r["saturated"])
        rows[r["disk_key"]] = [
            f"{w.fmt_iops(r['max_iops'])} at {w.fmt_load(r['max_iops_outstanding_io'])}"
            + diff(r, "max_iops", both_saturated=False),
            "saturated" if sat else "not saturated within the tested range",
            (w.fmt_load(r["saturation_outstanding_io"]) + diff(r, "saturation_outstanding_io")) if sat else w.DASH,
            w.threads_qd(r["saturation_threads"], r["saturation_queue_depth"]) if sat else w.DASH,
            (w.fmt_iops(r["iops_at_saturation"]) + diff(r, "iops_at_saturation")) if sat else w.DASH,
            (
                w.fmt_throughput(r["throughput_bytes_per_s_at_saturation"], unit)
                + diff(r, "throughput_bytes_per_s_at_saturation")
            )
            if sat
            else w.DASH,
            (f"{w.fmt_ms(r['latency_avg_ms_at_saturation'])} ms" + diff(r, "latency_avg_ms_at_saturation"))
            if sat and r["latency_avg_ms_at_saturation"] is not None
            else w.DASH,
            (f"{w.fmt_ms(r['latency_p99_ms_at_saturation'])} ms" + diff(r, "latency_p99_ms_at_saturation"))
            if sat and r["latency_p99_ms_at_saturation"] is not None
            else w.DASH,
            f"{r['latency_growth_to_saturation']:.2f}×" if r.get("latency_growth_to_saturation") else w.DASH,
            w.tested_range(r["min_outstanding_io"], r["max_outstanding_io"], r["points"], r["runs"]),
            w.usl_sentence(r),
            ", ".join(r["tools"] or []),
        ]
    return pl.DataFrame(rows)


def saturation_matrix(overview: pl.DataFrame, disk_keys: Sequence[str]) -> pl.DataFrame:
    """Every workload measured on the chosen disks, one column per disk: where each saturates, in short."""
    if overview.is_empty():
        return pl.DataFrame()
    cells: dict[tuple, dict[str, str]] = {}
    for r in overview.iter_rows(named=True):
        key = (r["pattern"], r["operation"], r["read_pct"], r["block_size_bytes"], r["direction"])
        if r["saturated"]:
            latency = r["latency_avg_ms_at_saturation"]
            text = (
                f"{w.fmt_load(r['saturation_outstanding_io'])} outstanding: {w.fmt_iops(r['iops_at_saturation'])} IOPS"
                + (f", {w.fmt_ms(latency)} ms" if latency is not None else "")
            )
        elif r["min_outstanding_io"] == r["max_outstanding_io"]:
            text = f"only at {w.fmt_load(r['max_outstanding_io'])} outstanding: {w.fmt_iops(r['max_iops'])} IOPS"
        else:
            text = f"not saturated (≤ {w.fmt_load(r['max_outstanding_io'])}): {w.fmt_iops(r['max_iops'])} IOPS"
        cells.setdefault(key, {})[r["disk_key"]] = text
    keys = [d for d in disk_keys if d in set(overview["disk_key"].to_list())]
    return pl.DataFrame(
        [{"workload": w.workload_title(*k), **{d: v.get(d, "not measured") for d in keys}} for k, v in cells.items()]
    )


def _wrap(text: str, width: int = 26) -> str:
    """Break a long disk label onto lines for an axis (plotly does not wrap tick labels); escaped."""
    return "<br>".join(esc(line) for line in textwrap.wrap(text, width) or [""])


def compare_figure(
    rows: Sequence[Mapping[str, Any]], baseline: str, title: str, colors: Mapping[str, str] | None = None
) -> go.Figure:
    """One workload's disks as ranked horizontal bars of their best measured IOPS (sequential: MB/s), each
    labelled with its difference to the baseline ('+32 %'). `rows` is compare_rows' list."""
    colors = dict(colors or {})
    fig = go.Figure()
    top = max((r["shown"] or 0 for r in rows), default=0.0)
    for r in rows:
        label = f"{r['compared_text']}  " + ("baseline" if r["disk_key"] == baseline else r["pct"])
        fig.add_trace(
            go.Bar(
                y=[_wrap(r["disk_key"])],
                x=[r["shown"]],
                orientation="h",
                name=esc(r["disk_key"]),
                marker={"color": colors.get(r["disk_key"], PALETTE[0])},
                text=[esc(label)],
                textposition="auto",  # inside a long bar, beside a short one
                cliponaxis=False,
                hovertemplate=f"<b>{esc(r['disk_key'])}</b><br>{esc(w.saturation_sentence(r))}<extra></extra>",
            )
        )
    return _layout(
        fig,
        title,
        {
            "title": next((r["axis"] for r in rows if r["axis"]), "best measured IOPS"),
            "range": [0, 1.6 * (top or 1)],
            "exponentformat": "none",
            "separatethousands": True,
        },
        {"title": "", "autorange": "reversed", "automargin": True},
        showlegend=False,
        height=max(170, 80 + 84 * len(rows)),
        margin={"l": 70, "r": 24, "t": TOP_MARGIN, "b": 40},
    )


# -- SQL workloads ----------------------------------------------------------------------------------------------


def statements_on_curve_figure(
    points: pl.DataFrame,
    statements: pl.DataFrame,
    unit: str = "MB",
    saturation: pl.DataFrame | None = None,
    colors: Mapping[str, str] | None = None,
) -> go.Figure:
    """The disk's throughput curve with each statement's effective read throughput as a point on it.

    `statements` rows carry `disk_key`, `effective_read_bytes_per_s`, `cpu_to_elapsed`, a `label`, and
    `curve_outstanding_io`: where on the curve that throughput is reached (queries.statements_on_curve)."""
    metric = "throughput_mb" if unit == "MB" else "throughput_mib"
    _, _, factor = THROUGHPUT_UNITS[unit]
    fig = curve_figure(points, metric, saturation=saturation, colors=colors)
    colors = _colors(points, colors)
    xs: list[float] = []
    for disk_key, df in statements.group_by("disk_key", maintain_order=True):
        color = colors.get(disk_key[0], PALETTE[0])
        on_curve = df.drop_nulls("curve_outstanding_io")
        if on_curve.is_empty():
            continue
        x = on_curve["curve_outstanding_io"].to_list()
        xs += x
        lo = min(x)
        fig.add_trace(
            go.Scatter(
                x=x,
                y=(on_curve["effective_read_bytes_per_s"] / factor).to_list(),
                mode="markers+text",
                text=[esc(t) for t in on_curve["label"].to_list()],
                # the leftmost label reads to the right of its marker, so the axis never cuts it; the others
                # alternate above and below, so statements reading at about the same rate stay legible
                textposition=[
                    ("top right" if i % 2 == 0 else "bottom right")
                    if v == lo
                    else ("top center", "bottom center")[i % 2]
                    for i, v in enumerate(x)
                ],
                textfont={"size": 10},
                marker={"symbol": "x", "size": 12, "color": "black", "line": {"color": color, "width": 1}},
                name=esc(f"{disk_key[0]}: statements"),
                cliponaxis=False,
                hovertext=[
                    f"<b>{esc(t)}</b><br>the disk's curve gives that at {w.fmt_load(v)} outstanding I/O"
                    for t, v in zip(on_curve["label"].to_list(), x, strict=True)
                ],
                hovertemplate="%{hovertext}<extra></extra>",
            )
        )
    if xs:
        loads = [*points["outstanding_io"].to_list(), *xs]
        fig.update_layout(xaxis=load_axis(loads))
    fig.update_layout(title={"text": f"Statements' effective read throughput on the disk's curve ({unit}/s)"})
    return fig


# Percentile axis in 'nines': p90 -> 1, p99 -> 2, p99.9 -> 3, so the tail gets the room it needs; the maximum
# (100 %, infinitely many nines) is drawn at MAX_NINES.
MAX_NINES = 6.0
_PERCENTILE_TICKS = [0, 50, 90, 99, 99.9, 99.99, 99.999]


def _nines(percentile: float) -> float:
    return MAX_NINES if percentile >= 100 else min(MAX_NINES, -math.log10(1 - percentile / 100))


def percentile_figure(dist: pl.DataFrame, colors: Mapping[str, str] | None = None) -> go.Figure:
    """Latency against percentile (log 'nines' axis, log latency), one line per disk and load, darker for
    higher loads. `dist` is queries.latency_percentiles' frame."""
    colors = _colors(dist, colors)
    fig = go.Figure()
    for disk_key, color in colors.items():
        df = dist.filter(pl.col("disk_key") == disk_key)
        loads = df["outstanding_io"].unique(maintain_order=True).to_list()
        for i, load in enumerate(loads):
            d = df.filter(pl.col("outstanding_io") == load).sort("percentile")
            first = d.row(0, named=True)
            name = (
                f"{disk_key} · {w.fmt_load(load)} outstanding" if len(colors) > 1 else f"{w.fmt_load(load)} outstanding"
            )
            fig.add_trace(
                go.Scatter(
                    x=[_nines(p) for p in d["percentile"].to_list()],
                    y=d["latency_ms"].to_list(),
                    mode="lines+markers",
                    name=esc(name),
                    legendgroup=esc(disk_key),
                    opacity=0.35 + 0.65 * (i + 1) / len(loads),
                    line={
                        "color": color,
                        "width": 1.5,
                        "shape": "hv" if first["curve_source"] == "histogram" else "linear",
                    },
                    marker={"size": 3},
                    hovertext=[
                        f"<b>{esc(name)}</b><br>p{p:.4g}: {w.fmt_ms(v)} ms<br>{esc(first['file_name'])}, "
                        f"run {first['run_index'] + 1}"
                        for p, v in zip(d["percentile"].to_list(), d["latency_ms"].to_list(), strict=True)
                    ],
                    hovertemplate="%{hovertext}<extra></extra>",
                )
            )
    return _layout(
        fig,
        "Latency percentiles per load",
        {
            "title": "Percentile (nines)",
            "tickvals": [_nines(p) for p in _PERCENTILE_TICKS] + [MAX_NINES],
            "ticktext": [f"p{p:g}" for p in _PERCENTILE_TICKS] + ["max"],
            "range": [-0.1, MAX_NINES + 0.2],
        },
        value_axis("Latency (ms)", dist["latency_ms"].to_list() if not dist.is_empty() else [], log=True),
    )


# -- production against the baseline ----------------------------------------------------------------------------

# Observed devices' colours: apart from the disk's own (its baseline curve keeps the colour it has on every page).
DEVICE_PALETTE = ["#ff7f0e", "#2ca02c", "#9467bd", "#17becf", "#8c564b", "#e377c2", "#bcbd22", "#7f7f7f"]
# Marker shapes of the p50 / p95 / p99 of a device's load (the diamond stays the saturation point's).
PERCENTILE_SYMBOLS = {"p50": "circle", "p95": "square", "p99": "triangle-up"}
PERCENTILE_TEXT = {"p50": "bottom left", "p95": "top center", "p99": "bottom right"}
BUSY_LABEL_APART = timedelta(hours=4)  # busy hours nearer than this share one label
FEW_DEVICES = 3  # up to this many devices on one chart, each says its headroom on it
LEGEND_ROW_PX = 22
WEBGL_POINTS = 5000  # a cloud larger than this is drawn with WebGL (a week of 15 s samples is 40,000 points)


def device_colors(headroom: pl.DataFrame, disk_color: str | None = None) -> dict[str, str]:
    """One colour per observed device (wording.device_label) of a disk's mart_headroom rows, never its disk's."""
    free = [c for c in DEVICE_PALETTE if c != disk_color]
    labels = list(dict.fromkeys(w.device_label(r) for r in headroom.iter_rows(named=True)))
    return {label: free[i % len(free)] for i, label in enumerate(labels)}


def _interval_hover(df: pl.DataFrame, label: str) -> list[str]:
    """An observed interval: which device, when, its load and latency, the file line it came from. The time and
    source texts are made by polars over whole columns (row by row, a week's drawn intervals took a second)."""
    texts = df.select(
        pl.when(pl.col("interval_start").is_not_null())
        .then(pl.col("interval_start").dt.strftime("%Y-%m-%d %H:%M:%S"))
        .otherwise(pl.format("interval {}", pl.col("interval_index") + 1))
        .alias("when"),
        pl.concat_str(
            pl.col("file_name")
            .str.replace_all("&", "&amp;", literal=True)
            .str.replace_all("<", "&lt;", literal=True)
            .str.replace_all(">", "&gt;", literal=True),
            pl.when(pl.col("source_line").is_not_null())
            .then(pl.format(", line {}", pl.col("source_line")))
            .otherwise(pl.lit("")),
        ).alias("source"),
    )
    head = f"<b>{esc(label)}</b><br>"
    return [
        f"{head}{when}: {w.fmt_iops(iops)} IOPS at {w.fmt_ms(latency)} ms mean<br>{source}"
        for when, iops, latency, source in zip(
            texts["when"], df["iops"], df["latency_avg_ms"], texts["source"], strict=True
        )
    ]


def _interval_hover_args(df: pl.DataFrame, label: str, figures: str, texts: list[str] | None = None) -> dict[str, Any]:
    """The hover of a device's intervals: each interval's own text (_interval_hover, or `texts` made by it already)
    up to WEBGL_POINTS of them; beyond, the label and the point's `figures` (a plotly template): a text per point
    of a week at 15 s for 8 disks made a 200 MB figure that took seconds to build and send."""
    if df.height > WEBGL_POINTS:
        return {"hovertemplate": f"<b>{esc(label)}</b><br>{figures}<extra></extra>"}
    texts = texts if texts is not None else _interval_hover(df, label)
    return {"hovertext": texts, "hovertemplate": "%{hovertext}<extra></extra>"}


def _interval_values(df: pl.DataFrame, column: str) -> list[Any] | Any:
    """A column of a device's intervals as a trace's data: a list up to WEBGL_POINTS, beyond a numpy array, which
    plotly neither validates value by value nor copies (a week's intervals as lists took seconds to build)."""
    return df[column].to_numpy() if df.height > WEBGL_POINTS else df[column].to_list()


def _device_intervals(intervals: pl.DataFrame, r: Mapping[str, Any]) -> pl.DataFrame:
    # the host without case, as mart_headroom groups it (SQLPROD01 and sqlprod01 are one computer)
    host = pl.col("host").fill_null("").str.to_lowercase() == (r["host"] or "").lower()
    return intervals.filter((pl.col("disk_key") == r["disk_key"]) & host & (pl.col("device") == r["device"]))


def _device_interval_count(df: pl.DataFrame) -> int:
    """How many intervals the device logged, where queries.observed_intervals drew a long log by its extremes."""
    if "device_intervals" in df.columns and not df.is_empty():
        return int(df["device_intervals"].max())
    return df.height


def production_curve_figure(
    points: pl.DataFrame,
    saturation: pl.DataFrame | None,
    intervals: pl.DataFrame,
    headroom: pl.DataFrame,
    colors: Mapping[str, str] | None = None,
    devices: Mapping[str, str] | None = None,
    title: str | None = None,
) -> go.Figure:
    """The baseline's hockey stick (mean latency against IOPS through the run kept at each load, the saturation
    point as a diamond) with each device's observed intervals as a cloud of points and the p50 / p95 / p99 of its
    load marked: IOPS and latency percentiles taken apart, as mart_headroom takes them. `headroom`: the devices
    placed on this series (queries.headroom rows); `intervals`: queries.observed_intervals; `devices`: their
    colours (device_colors). Axes on a log scale where the values span more than 10×: production often runs far
    below the benchmark's loads."""
    colors = _colors(points, colors)
    sat_rows = _saturation_rows(saturation)
    devices = dict(devices or {})
    fig = go.Figure()
    shown = _hockey_traces(fig, points, sat_rows, "latency_avg", colors)
    xs = points["iops"].drop_nulls().to_list() if not points.is_empty() else []
    ys = points["latency_avg_ms"].drop_nulls().to_list() if not points.is_empty() else []
    notes = _saturation_notes(sat_rows, colors, shown)
    # Past a few devices their sentences (said above the chart on the page and in the report) and the marks'
    # legend entries would leave the plot no room: the marks keep their p50 / p95 / p99 text on the chart.
    few = headroom.height <= FEW_DEVICES
    for i, r in enumerate(headroom.iter_rows(named=True)):
        label = w.device_label(r)
        color = devices.get(label, DEVICE_PALETTE[i % len(DEVICE_PALETTE)])
        # an interval without I/O or without a latency has no place on a latency-vs-IOPS chart
        cloud = _device_intervals(intervals, r).filter(pl.col("iops") > 0).drop_nulls("latency_avg_ms")
        xs += cloud["iops"].to_list()
        ys += cloud["latency_avg_ms"].to_list()
        scatter = go.Scattergl if cloud.height > WEBGL_POINTS else go.Scatter
        fig.add_trace(
            scatter(
                x=_interval_values(cloud, "iops"),
                y=_interval_values(cloud, "latency_avg_ms"),
                mode="markers",
                name=esc(f"{label}: {w.intervals_drawn(cloud.height, _device_interval_count(cloud))}"),
                legendgroup=esc(label),
                marker={"color": color, "size": 6, "opacity": 0.45},
                **_interval_hover_args(cloud, label, "%{x:,.0f} IOPS at %{y:.3~g} ms mean"),
            )
        )
        marks = [
            (p, r[f"iops_{p}"], r[f"latency_avg_ms_{p}"])
            for p in PERCENTILE_SYMBOLS
            if r.get(f"iops_{p}") and r.get(f"latency_avg_ms_{p}") is not None
        ]
        if marks:
            xs += [m[1] for m in marks]
            # room around the marks for their labels, inside the axes
            ys += [m[2] for m in marks] + [max(m[2] for m in marks) * 1.6, min(m[2] for m in marks) / 1.6]
            fig.add_trace(
                go.Scatter(
                    x=[m[1] for m in marks],
                    y=[m[2] for m in marks],
                    mode="markers+text",
                    text=[m[0] for m in marks],
                    # p95 and p99 of a steady load sit close together: their labels on opposite sides
                    textposition=[PERCENTILE_TEXT[m[0]] for m in marks],
                    textfont={"size": 12, "color": "black"},
                    name=esc(f"{label}: p50 / p95 / p99"),
                    legendgroup=esc(label),
                    showlegend=few,
                    marker={
                        "symbol": [PERCENTILE_SYMBOLS[m[0]] for m in marks],
                        "size": 12,
                        "color": color,
                        "line": {"color": "black", "width": 1.5},
                    },
                    cliponaxis=False,
                    hovertext=[
                        f"<b>{esc(label)}</b><br>{p} of the intervals' IOPS: {w.fmt_iops(x)}<br>"
                        f"{p} of their mean latency: {w.fmt_ms(y)} ms"
                        for p, x, y in marks
                    ],
                    hovertemplate="%{hovertext}<extra></extra>",
                )
            )
        if few:
            notes += _note_lines(color, f"{label}: {w.headroom_sentence(r)}")
    _lightest_load_lines(fig, points, colors, min(xs, default=None))
    log_x = wants_log(xs)
    x_axis = value_axis("IOPS", xs, log=log_x)
    if not log_x:
        x_axis["range"] = [0, max(xs, default=1) * 1.15]
    return _layout(
        fig,
        title or "Observed load on the benchmark curve: mean latency vs IOPS",
        x_axis,
        value_axis(METRICS["latency_avg"][1], ys, log=wants_log(ys)),
        notes=notes,
        # a legend row per device below the plot, which takes its room from the plot's height
        height=LAYOUT["height"] + LEGEND_ROW_PX * max(0, sum(t.showlegend is not False for t in fig.data) - 4),
    )


def _lightest_load_lines(
    fig: go.Figure, points: pl.DataFrame, colors: Mapping[str, str], lowest_iops: float | None
) -> None:
    """Where production runs below the benchmark's lightest load, the baseline's latency there is that load's (the
    rule of mart_production_vs_baseline): drawn as a dotted line to the left of the curve's first point, so the
    cloud has something to be compared with."""
    if lowest_iops is None or points.is_empty():
        return
    for disk_key, color in colors.items():
        kept = points.filter((pl.col("disk_key") == disk_key) & pl.col("best_at_load")).drop_nulls("latency_avg_ms")
        if kept.is_empty():
            continue
        first = kept.sort("outstanding_io").row(0, named=True)
        if lowest_iops >= first["iops"]:
            continue
        text = (
            f"below its lightest load ({w.fmt_load(first['outstanding_io'])} outstanding), the baseline's latency is "
            f"that load's: {w.fmt_ms(first['latency_avg_ms'])} ms"
        )
        fig.add_trace(
            go.Scatter(
                x=[lowest_iops, first["iops"]],
                y=[first["latency_avg_ms"], first["latency_avg_ms"]],
                mode="lines",
                name=esc(f"{disk_key}: {text}"),
                legendgroup=esc(disk_key),
                showlegend=False,
                line={"color": color, "width": 1.5, "dash": "dot"},
                hovertemplate=f"<b>{esc(disk_key)}</b><br>{esc(text)}<extra></extra>",
            )
        )


def _saturation_line(r: Mapping[str, Any]) -> tuple[float, str] | None:
    """The baseline's ceiling to draw over a time chart: its saturation IOPS, or where it did not saturate the
    most IOPS it measured (said so)."""
    if r.get("series_id") is None:
        return None
    workload = w.workload_title(
        r["baseline_pattern"],
        r.get("baseline_operation") or ("read" if r["baseline_read_pct"] == 100 else "mixed"),
        r["baseline_read_pct"],
        r["baseline_block_size_bytes"],
        r["baseline_direction"],
    )
    if r.get("baseline_saturated") and r.get("baseline_saturation_iops") is not None:
        return r["baseline_saturation_iops"], (
            f"saturation of the baseline ({workload}): {w.fmt_iops(r['baseline_saturation_iops'])} IOPS"
        )
    if r.get("baseline_max_iops") is not None:
        return r["baseline_max_iops"], (
            f"the baseline's best ({workload}, not saturated): {w.fmt_iops(r['baseline_max_iops'])} IOPS"
        )
    return None


def production_time_figure(
    intervals: pl.DataFrame,
    headroom: pl.DataFrame,
    disk_color: str | None = None,
    devices: Mapping[str, str] | None = None,
    title: str | None = None,
) -> go.Figure:
    """Observed IOPS (top) and mean latency (bottom) of each device over time, the baseline's saturation IOPS as a
    dashed line in the disk's colour (the best it measured where it did not saturate). The x axis is the tools'
    clock; a log without timestamps is drawn by interval."""
    from plotly.subplots import make_subplots

    devices = dict(devices or {})
    disk_color = disk_color or PALETTE[0]
    timed = not intervals.is_empty() and intervals["interval_start"].null_count() == 0
    x_column = "interval_start" if timed else "interval_index"
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.1)
    iops_values: list[float] = []
    latency_values: list[float] = []
    x_values: list[Any] = []
    for i, r in enumerate(headroom.iter_rows(named=True)):
        label = w.device_label(r)
        color = devices.get(label, DEVICE_PALETTE[i % len(DEVICE_PALETTE)])
        df = _device_intervals(intervals, r).sort(x_column)
        if df.is_empty():
            continue
        x = _interval_values(df, x_column)
        x_values += df[x_column].to_list()
        iops_values += df["iops"].drop_nulls().to_list()
        latency_values += df["latency_avg_ms"].drop_nulls().to_list()
        scatter = go.Scattergl if df.height > WEBGL_POINTS else go.Scatter
        # both panels say the same of an interval
        texts = _interval_hover(df, label) if df.height <= WEBGL_POINTS else None
        for row, column, figures in ((1, "iops", "%{x}: %{y:,.0f} IOPS"), (2, "latency_avg_ms", "%{x}: %{y:.3~g} ms")):
            fig.add_trace(
                scatter(
                    x=x,
                    y=_interval_values(df, column),
                    mode="lines",
                    name=esc(label),
                    legendgroup=esc(label),
                    showlegend=row == 1,
                    line={"color": color, "width": 1.5},
                    **_interval_hover_args(df, label, figures, texts),
                ),
                row=row,
                col=1,
            )
    lines = {line for r in headroom.iter_rows(named=True) if (line := _saturation_line(r)) is not None}
    if x_values:
        ends = [min(x_values), max(x_values)]
        for k, (value, text) in enumerate(sorted(lines)):
            iops_values += [value * 1.6, value / 1.6]  # room for its label above or below
            fig.add_trace(
                go.Scatter(
                    x=ends,
                    y=[value, value],
                    mode="lines+text",
                    # said on the line itself, at its right end, as well as in the legend
                    text=["", esc(text)],
                    # two baselines' lines lie close on a log axis: the highest's label above it, the next's below
                    textposition="top left" if (len(lines) - 1 - k) % 2 == 0 else "bottom left",
                    textfont={"size": 11, "color": disk_color},
                    name=esc(text),
                    line={"color": disk_color, "width": 2, "dash": ("dash", "dot", "dashdot")[k % 3]},
                    hovertemplate=f"{esc(text)}<extra></extra>",
                ),
                row=1,
                col=1,
            )
    if timed:
        _mark_busy_hours(fig, headroom, devices)
    x_title = "Time (the logging tool's clock)" if timed else "Interval in the log (no timestamps logged)"
    fig = _layout(
        fig,
        title or "Observed IOPS and latency over time, against the baseline's saturation",
        {"title": ""},
        value_axis("IOPS", iops_values, log=wants_log(iops_values)),
        height=560,
    )
    # the log's span, not plotly's padding around the saturation line's label
    x_range = [min(x_values), max(x_values)] if x_values else None
    fig.update_layout(
        xaxis={"range": x_range},
        xaxis2={"title": x_title, "range": x_range},
        yaxis2=value_axis(METRICS["latency_avg"][1], latency_values, log=wants_log(latency_values)),
    )
    return fig


def _mark_busy_hours(fig: go.Figure, headroom: pl.DataFrame, devices: Mapping[str, str]) -> None:
    """Each device's busy hour (mart_headroom: the hour its percentiles are over) shaded across both panels, in the
    device's colour; devices that share one hour share its band. A whole log that is its busy hour is not marked."""
    if "busy_hour_start" not in headroom.columns:
        return
    hours: dict[tuple[Any, Any], list[str]] = {}
    for r in headroom.iter_rows(named=True):
        if r["busy_hour_whole_log"] or r["busy_hour_start"] is None or r["busy_hour_end"] is None:
            continue
        hours.setdefault((r["busy_hour_start"], r["busy_hour_end"]), []).append(w.device_label(r))
    said: list[tuple[Any, list[str]]] = []  # the bands' labels: one per bands that touch or nearly do
    for (start, end), labels in sorted(hours.items()):
        fig.add_vrect(
            x0=start,
            x1=end,
            fillcolor=devices.get(labels[0], "#888"),
            opacity=0.12,
            line_width=0,
            layer="below",
            row="all",
            col=1,
        )
        # the next hours of other devices (12:00, 13:00) would write their labels over this one's
        if said and start - said[-1][0] < BUSY_LABEL_APART:
            said[-1][1].extend(labels)
        else:
            said.append((start + (end - start) / 2, list(labels)))
    for middle, labels in said:
        # said short over the IOPS panel; whose hour it is on hover, unless it is every device's
        fig.add_annotation(
            x=middle,
            y=1,
            xref="x",
            yref="y domain",
            text="busiest hour",
            showarrow=False,
            yanchor="bottom",
            font={"size": 11, "color": "#555"},
            hovertext=None if len(labels) == headroom.height else esc("busiest hour of " + ", ".join(labels)),
        )


# -- load series: an application's throughput and response time against its load ------------------------------

LOAD_METRICS: dict[str, str] = {"throughput": "Throughput", "response": "Response time (ms)"}


def _load_series_name(r: Mapping[str, Any], several_workloads: bool) -> str:
    return f"{r['disk_key']} · {r['workload']}" if several_workloads and r.get("workload") else r["disk_key"]


def load_curve_figure(
    points: pl.DataFrame,
    saturation: pl.DataFrame,
    metric: str,
    colors: Mapping[str, str] | None = None,
    usl: bool = False,
    title: str | None = None,
) -> go.Figure:
    """Throughput (in the first series' unit) or mean response time against the load (int_load_points), one line
    per load series in its configuration's colour (the p95 response dotted where given); the saturation point
    (mart_load_saturation) as a diamond, said in the notes above the chart; with `usl`, the mart's USL fit over
    the throughput chart. The series drawn together count the same thing against the same load (the page and
    the report pick one workload at a time)."""
    assert metric in LOAD_METRICS, metric
    colors = _colors(points, colors)
    rows = {r["series_id"]: r for r in saturation.iter_rows(named=True)} if not saturation.is_empty() else {}
    first = next(iter(rows.values()), None)
    unit = first["throughput_unit"] if first else None
    kind = first["load_kind"] if first else "load"
    several_workloads = len({r["workload"] for r in rows.values()}) > 1
    fig = go.Figure()
    values: list[float] = []
    notes: list[str] = []
    for series_id, r in rows.items():
        df = points.filter(pl.col("series_id") == series_id) if not points.is_empty() else points
        if df.is_empty():
            continue
        color, name = colors.get(r["disk_key"], "#444"), _load_series_name(r, several_workloads)
        loads = df["load"].to_list()
        throughput = [w.per_s_in_unit(v, unit) for v in df["throughput_per_s"].to_list()]
        lines = (
            [("mean", df["response_avg_ms"].to_list(), "solid"), ("p95", df["response_p95_ms"].to_list(), "dot")]
            if metric == "response"
            else [(unit, throughput, "solid")]
        )
        for label, ys, dash in lines:
            if all(v is None for v in ys):
                continue
            values += [v for v in ys if v is not None]
            fig.add_trace(
                go.Scatter(
                    x=loads,
                    y=ys,
                    mode="lines+markers",
                    name=esc(name if dash == "solid" else f"{name} · p95"),
                    legendgroup=esc(name),
                    line={"color": color, "width": 2, "dash": dash},
                    marker={"size": 8},
                    cliponaxis=False,
                    hovertext=[
                        f"<b>{esc(name)}</b><br>{w.fmt_load(x)} {esc(kind)}: "
                        + (
                            f"{w.fmt_ms(y)} ms {label} response"
                            if metric == "response"
                            else esc(w.fmt_load_throughput(y, unit))
                        )
                        + f"<br>{esc(p['file_name'])}, line {p['source_line']}, {esc(p['tool'])}"
                        for x, y, p in zip(loads, ys, df.iter_rows(named=True), strict=True)
                    ],
                    hovertemplate="%{hovertext}<extra></extra>",
                )
            )
        if usl and metric == "throughput" and r.get("usl_fitted"):
            _add_load_usl(fig, r, color, name, unit)
        if r.get("saturated"):
            y = (
                r["response_avg_ms_at_saturation"]
                if metric == "response"
                else w.per_s_in_unit(r["throughput_per_s_at_saturation"], unit)
            )
            if y is not None:
                _mark_saturation(fig, r["saturation_load"], y, color, name, w.load_saturation_sentence(r), vline=True)
        notes += _note_lines(color, (f"{name}: " if len(rows) > 1 else "") + w.load_saturation_sentence(r))
    _saturation_legend(fig)
    y_title = f"Throughput ({unit})" if metric == "throughput" and unit else LOAD_METRICS[metric]
    all_loads = points["load"].to_list() if not points.is_empty() else []
    return _layout(
        fig,
        title or f"{LOAD_METRICS[metric].split(' (')[0]} vs {kind}",
        {"title": kind.capitalize(), "range": [0, max(all_loads, default=1) * 1.05], "rangemode": "tozero"},
        value_axis(y_title, values),
        notes=notes,
    )


def _add_load_usl(fig: go.Figure, row: Mapping[str, Any], color: str, name: str, unit: str | None) -> None:
    """The mart's USL fit of a load series drawn over its tested range (evaluating the fitted formula): loads
    spaced evenly, as the load chart's x axis is linear."""
    lo, hi = float(row["min_load"]), float(row["max_load"])
    xs = [lo + (hi - lo) * i / USL_STEPS for i in range(USL_STEPS + 1)] if hi > lo else [lo]
    ys = [w.per_s_in_unit(usl_iops(x, row["usl_lambda_per_s"], row["usl_sigma"], row["usl_kappa"]), unit) for x in xs]
    said = [f"{w.fmt_load_throughput(y, unit)} at {w.plain(x)} {row['load_kind']}" for x, y in zip(xs, ys, strict=True)]
    fig.add_trace(_usl_trace(xs, ys, said, name, color, w.load_usl_sentence(row)))
