"""Plotly figures for the app and the exported report: one function per chart, data in, figure out.

Figures take polars frames as app/queries.py returns them (marts, already filtered) and never query or compute
analytics themselves: saturation points, fits and throughput come from the marts. What happens here is
drawing: lines, markers, the wording of annotations.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
import polars as pl

from kneepoint.ingest.analytics import usl_iops

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"]
# Thread counts on the per-thread view: light (few threads) to dark (many).
THREAD_SCALE = ["#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b", "#41ab5d", "#238b45", "#005a32"]
LOG2_DTICK = math.log10(2)

# Throughput display units: the marts carry both, and every axis says which one it shows.
THROUGHPUT_UNITS: dict[str, tuple[str, str, float]] = {
    # key -> (column, label, bytes per unit)
    "MB": ("throughput_mb_per_s", "MB/s (10^6 bytes)", 1e6),
    "MiB": ("throughput_mib_per_s", "MiB/s (2^20 bytes)", 2.0**20),
}

METRICS: dict[str, tuple[str, str, str]] = {
    # key -> (column, axis title, unit in hover text)
    "iops": ("iops", "IOPS", "IOPS"),
    "throughput_mb": ("throughput_mb_per_s", "Throughput (MB/s, 10^6 bytes)", "MB/s"),
    "throughput_mib": ("throughput_mib_per_s", "Throughput (MiB/s, 2^20 bytes)", "MiB/s"),
    "latency_avg": ("latency_avg_ms", "Mean latency (ms)", "ms mean"),
    "latency_p99": ("latency_p99_ms", "p99 latency (ms)", "ms p99"),
}
# Where each metric's saturation value sits in mart_saturation_points, and the factor to the axis unit.
_SATURATION_VALUE: dict[str, tuple[str, float]] = {
    "iops": ("iops_at_saturation", 1.0),
    "throughput_mb": ("throughput_bytes_per_s_at_saturation", 1e-6),
    "throughput_mib": ("throughput_bytes_per_s_at_saturation", 2.0**-20),
    "latency_avg": ("latency_avg_ms_at_saturation", 1.0),
    "latency_p99": ("latency_p99_ms_at_saturation", 1.0),
}
TEMPLATE = "plotly_white"
LAYOUT: dict[str, Any] = {
    "height": 430,
    "margin": {"l": 70, "r": 20, "t": 56, "b": 60},
    "legend": {"orientation": "h", "y": -0.2, "x": 0, "yanchor": "top"},
    "hoverlabel": {"align": "left"},
    "font": {"size": 12},
}


def load_axis(loads: Sequence[float], title: str = "Outstanding I/O (threads × queue depth), log2") -> dict:
    """A log2 axis with a tick at every power of two, or every fourth one over a range too wide to label."""
    loads = [v for v in loads if v and v > 0]
    if not loads:
        return {"title": title, "type": "log", "dtick": LOG2_DTICK}
    lo, hi = min(loads), max(loads)
    wide = hi / lo > 2**10
    # A fixed range: plotly would otherwise widen the axis to fit the saturation labels.
    pad = 0.1 * max(math.log10(hi / lo), 0.6)
    return {
        "title": title,
        "type": "log",
        "dtick": LOG2_DTICK * (2 if wide else 1),
        "range": [math.log10(lo) - pad, math.log10(hi) + pad],
        "tickangle": 0,
    }


# -- wording --------------------------------------------------------------------------------------------------


def fmt_iops(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}"


def fmt_ms(value: float | None) -> str:
    """Latency to a precision a storage engineer reads: 0.381, 4.25, 12.3, 1,234."""
    if value is None:
        return "–"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}"


def fmt_throughput(bytes_per_s: float | None, unit: str = "MB") -> str:
    if bytes_per_s is None:
        return "–"
    _, label, factor = THROUGHPUT_UNITS[unit]
    value = bytes_per_s / factor
    return f"{value:,.0f} {label.split()[0]}" if value >= 100 else f"{value:,.1f} {label.split()[0]}"


def fmt_bytes(size_bytes: float | None, unit: str = "MB") -> str:
    """A byte count in the page's unit: '1,331 MB' (10^6) or '1,270 MiB' (2^20)."""
    if size_bytes is None:
        return "–"
    _, label, factor = THROUGHPUT_UNITS[unit]
    return f"{size_bytes / factor:,.0f} {label.split('/')[0]}"


def fmt_load(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}"


def fmt_block_size(block_size_bytes: int) -> str:
    if block_size_bytes % (1024 * 1024) == 0:
        return f"{block_size_bytes // (1024 * 1024)} MiB"
    if block_size_bytes % 1024 == 0:
        return f"{block_size_bytes // 1024} KiB"
    return f"{block_size_bytes} B"


def series_title(pattern: str, operation: str, read_pct: float, block_size_bytes: int, direction: str) -> str:
    """'random read 4 KiB', 'random 70% read mix 8 KiB (write I/Os)'."""
    op = f"{read_pct:g}% read mix" if operation == "mixed" else operation
    counted = "" if direction == operation else f" ({direction} I/Os)"
    return f"{pattern} {op} {fmt_block_size(block_size_bytes)}{counted}"


def saturation_sentence(row: Mapping[str, Any]) -> str:
    """One mart_saturation_points row in words: 'saturates at 32 outstanding: 84,398 IOPS, 0.38 ms mean'."""
    if not row.get("saturated"):
        return (
            f"not saturated within the tested range ({fmt_load(row.get('min_outstanding_io'))}–"
            f"{fmt_load(row.get('max_outstanding_io'))} outstanding; best {fmt_iops(row.get('max_iops'))} IOPS "
            f"at {fmt_load(row.get('max_iops_outstanding_io'))})"
        )
    latency = row.get("latency_avg_ms_at_saturation")
    latency_text = (
        f"{fmt_ms(latency)} ms mean"
        if latency is not None
        else f"{fmt_ms(row.get('latency_p99_ms_at_saturation'))} ms p99"
        if row.get("latency_p99_ms_at_saturation") is not None
        else "no latency reported"
    )
    return (
        f"saturates at {fmt_load(row.get('saturation_outstanding_io'))} outstanding: "
        f"{fmt_iops(row.get('iops_at_saturation'))} IOPS, {latency_text}"
    )


def cpu_sentence(cpu_to_elapsed: float | None) -> str:
    """A statement's CPU / elapsed ratio in words: 'I/O-bound: 3% CPU'."""
    if cpu_to_elapsed is None:
        return "CPU / elapsed not reported"
    pct = cpu_to_elapsed * 100
    # CPU time summed over parallel workers can exceed the elapsed time.
    if cpu_to_elapsed < 0.5:
        return f"I/O-bound: {pct:.0f}% CPU"
    if cpu_to_elapsed <= 1.0:
        return f"CPU-bound: {pct:.0f}% CPU"
    return f"CPU-bound (parallel): {pct:.0f}% CPU"


# -- helpers --------------------------------------------------------------------------------------------------


def disk_colors(disk_keys: Sequence[str]) -> dict[str, str]:
    """One colour per disk, stable for the page's order of disks, so every chart of a page agrees."""
    return {d: PALETTE[i % len(PALETTE)] for i, d in enumerate(dict.fromkeys(disk_keys))}


def _colors(points: pl.DataFrame, colors: Mapping[str, str] | None) -> dict[str, str]:
    keys = points["disk_key"].unique(maintain_order=True).to_list() if not points.is_empty() else []
    out = dict(colors or {})
    for k in keys:
        out.setdefault(k, PALETTE[len(out) % len(PALETTE)])
    return out


def _hover(df: pl.DataFrame) -> tuple[list, str]:
    """Hover lines naming the run: its threads × QD and the source file, run and line."""
    custom = df.select(
        pl.col("threads"),
        pl.col("queue_depth"),
        pl.col("file_name"),
        (pl.col("run_index") + 1).alias("run"),
        pl.col("source_line"),
        pl.col("tool"),
    ).rows()
    template = (
        "%{customdata[0]} threads × QD %{customdata[1]}<br>"
        "%{customdata[2]}, run %{customdata[3]} (line %{customdata[4]}, %{customdata[5]})"
        "<extra>%{fullData.name}</extra>"
    )
    return custom, template


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


def _layout(fig: go.Figure, title: str, xaxis: dict, yaxis: dict, **extra: Any) -> go.Figure:
    if xaxis.get("type") == "log":
        xaxis = {**xaxis, "tickformat": "d"}  # log2 ticks as plain numbers: 1, 2, 4, ...
    _apply_template(fig)
    # One layout update: plotly's per-call bookkeeping, not the data, is what a redraw waits on.
    fig.update_layout(
        {**LAYOUT, **extra, "title": {"text": title, "x": 0, "xanchor": "left"}, "xaxis": xaxis, "yaxis": yaxis}
    )
    return fig


def _saturation_rows(saturation: pl.DataFrame | None) -> dict[str, dict]:
    if saturation is None or saturation.is_empty():
        return {}
    return {r["disk_key"]: r for r in saturation.iter_rows(named=True)}


def _not_saturated_note(fig: go.Figure, rows: Mapping[str, dict], colors: Mapping[str, str], shown: set[str]) -> None:
    """Disks whose series never saturated: said in words in the chart's top-left corner."""
    # Two lines per disk: the chart is half a page wide, and a disk label alone can fill a line.
    lines = [
        f"<span style='color:{colors.get(k, '#444')}'>{k}:<br>"
        + saturation_sentence(r).replace(" (", "<br>(", 1)
        + "</span>"
        for k, r in rows.items()
        if k in shown and not r.get("saturated")
    ]
    if lines:
        fig.add_annotation(
            text="<br>".join(lines),
            xref="paper",
            yref="paper",
            x=0.01,
            y=0.99,
            xanchor="left",
            yanchor="top",
            showarrow=False,
            align="left",
            bgcolor="rgba(255,255,255,0.85)",
            font={"size": 11},
        )


def _mark_saturation(
    fig: go.Figure,
    x: float,
    y: float,
    color: str,
    name: str,
    text: str,
    slot: int,
    x_share: float,
    below: bool,
    log_x: bool = True,
    y_share: float = 0.5,
    log_y: bool = False,
) -> None:
    """A marked, annotated saturation point.

    The label goes where the curve leaves room: below the point for IOPS and throughput (under the plateau),
    above it for latency (before the hockey stick rises), towards the wider side so it is
    never cut off (`x_share`, `y_share`: the point's position across the x and y ranges, 0..1); `slot`
    staggers several disks' labels."""
    fig.add_trace(
        go.Scatter(
            x=[x],
            y=[y],
            mode="markers",
            marker={"symbol": "diamond", "size": 14, "color": color, "line": {"color": "black", "width": 1.5}},
            name=f"{name}: saturation",
            legendgroup=name,
            showlegend=False,
            hovertemplate=f"{text}<extra>{name}</extra>",
        )
    )
    if log_x:
        fig.add_vline(x=x, line={"color": color, "width": 1, "dash": "dot"})
    # A point near the bottom (another disk's curve sets the scale) is labelled above, near the top below.
    if below and y_share < 0.3:
        below = False
    elif not below and y_share > 0.75:
        below = True
    # The label goes to the side with more room: a fixed x range (load_axis) keeps it from stretching the axis.
    to_left = x_share > 0.5
    fig.add_annotation(
        # plotly places annotations on log axes in log10 units
        x=math.log10(x) if log_x else x,
        y=math.log10(y) if log_y and y > 0 else y,
        text=text,
        showarrow=True,
        arrowhead=2,
        arrowcolor=color,
        ax=-24 if to_left else 24,
        ay=(40 + 30 * slot) * (1 if below else -1),
        xanchor="right" if to_left else "left",
        font={"color": color, "size": 11},
        bgcolor="rgba(255,255,255,0.92)",
        bordercolor=color,
        borderwidth=1,
    )


def _share(value: float, values: Sequence[float], log: bool) -> float:
    """Where `value` sits across the range of `values`, 0..1 (on a log scale, over the positive values)."""
    if log:
        values = [v for v in values if v > 0]
    if not values or (log and value <= 0):
        return 0.5
    lo, hi = min(values), max(values)
    if hi <= lo:
        return 0.5
    if log:
        return (math.log(value) - math.log(lo)) / (math.log(hi) - math.log(lo))
    return (value - lo) / (hi - lo)


# -- curves against load --------------------------------------------------------------------------------------


def curve_figure(
    points: pl.DataFrame,
    metric: str,
    saturation: pl.DataFrame | None = None,
    colors: Mapping[str, str] | None = None,
    usl: bool = False,
    title: str | None = None,
    log_y: bool = False,
) -> go.Figure:
    """One metric against outstanding I/O (log2 axis), one line per disk through the best run at each load.

    Other runs at the same load show as faint markers; the saturation point (mart_saturation_points) is
    marked and annotated; with `usl`, the USL fit of the mart is overlaid on the IOPS chart."""
    column, axis_title, unit = METRICS[metric]
    colors = _colors(points, colors)
    sat_rows = _saturation_rows(saturation)
    fig = go.Figure()
    shown: set[str] = set()
    slot = 0
    for disk_key, color in colors.items():
        df = points.filter(pl.col("disk_key") == disk_key).drop_nulls(column)
        if df.is_empty():
            continue
        shown.add(disk_key)
        best = df.filter(pl.col("best_at_load"))
        others = df.filter(~pl.col("best_at_load"))
        custom, template = _hover(best)
        fig.add_trace(
            go.Scatter(
                x=best["outstanding_io"].to_list(),
                y=best[column].to_list(),
                mode="lines+markers",
                name=disk_key,
                legendgroup=disk_key,
                line={"color": color, "width": 2},
                customdata=custom,
                hovertemplate=f"%{{x}} outstanding: %{{y:,.4~g}} {unit}<br>" + template,
            )
        )
        if not others.is_empty():
            custom, template = _hover(others)
            fig.add_trace(
                go.Scatter(
                    x=others["outstanding_io"].to_list(),
                    y=others[column].to_list(),
                    mode="markers",
                    name=f"{disk_key}: other runs",
                    legendgroup=disk_key,
                    showlegend=False,
                    marker={"color": color, "size": 6, "opacity": 0.45, "symbol": "circle-open"},
                    customdata=custom,
                    hovertemplate="other run at %{x} outstanding: %{y:,.4~g}<br>" + template,
                )
            )
        row = sat_rows.get(disk_key)
        if usl and metric == "iops" and row is not None and row.get("usl_fitted"):
            _add_usl(fig, row, color, disk_key)
        if row is not None and row.get("saturated"):
            sat_column, factor = _SATURATION_VALUE[metric]
            value = row.get(sat_column)
            if value is not None:
                text = (
                    saturation_sentence(row).replace(": ", ":<br>", 1)
                    if metric == "iops"
                    else f"saturates at {fmt_load(row['saturation_outstanding_io'])}: "
                    f"{_fmt_metric(metric, value * factor)}"
                )
                x = row["saturation_outstanding_io"]
                share = _share(x, points["outstanding_io"].to_list(), log=True)
                values = points[column].drop_nulls().to_list()
                y_share = _share(value * factor, values if log_y else [0.0, *values], log=log_y)
                below = not metric.startswith("latency")
                _mark_saturation(
                    fig, x, value * factor, color, disk_key, text, slot, share, below, y_share=y_share, log_y=log_y
                )
                slot += 1
    _not_saturated_note(fig, sat_rows, colors, shown)
    return _layout(
        fig,
        title or f"{axis_title} vs outstanding I/O",
        load_axis(points["outstanding_io"].to_list() if not points.is_empty() else []),
        {"title": axis_title + (", log" if log_y else ""), "type": "log"}
        if log_y
        else {"title": axis_title, "rangemode": "tozero"},
    )


def _fmt_metric(metric: str, value: float) -> str:
    unit = METRICS[metric][2]
    if metric == "iops":
        return f"{fmt_iops(value)} {unit}"
    if metric.startswith("throughput"):
        return f"{value:,.1f} {unit}"
    return f"{fmt_ms(value)} {unit}"


def _add_usl(fig: go.Figure, row: Mapping[str, Any], color: str, disk_key: str) -> None:
    """The mart's USL fit drawn over the tested range (evaluating the fitted formula, not fitting)."""
    lo, hi = float(row["min_outstanding_io"]), float(row["max_outstanding_io"])
    steps = 96
    xs = [lo * (hi / lo) ** (i / steps) for i in range(steps + 1)] if hi > lo else [lo]
    ys = [usl_iops(x, row["usl_lambda_iops"], row["usl_sigma"], row["usl_kappa"]) for x in xs]
    r2 = row.get("usl_r_squared")
    peak = row.get("usl_peak_outstanding_io")
    label = f"{disk_key}: USL fit" + (f" (R² {r2:.3f})" if r2 is not None else "")
    detail = (
        f"λ {row['usl_lambda_iops']:,.0f} IOPS, σ {row['usl_sigma']:.4f}, κ {row['usl_kappa']:.2e}"
        + (f"<br>USL peak at {peak:,.0f} outstanding: {fmt_iops(row.get('usl_peak_iops'))} IOPS" if peak else "")
        + (f"<br>{row['usl_note']}" if row.get("usl_note") else "")
    )
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="lines",
            name=label,
            legendgroup=disk_key,
            line={"color": color, "width": 1.5, "dash": "dash"},
            hovertemplate=f"USL at %{{x:,.1f}} outstanding: %{{y:,.0f}} IOPS<br>{detail}<extra></extra>",
        )
    )


def latency_vs_iops_figure(
    points: pl.DataFrame,
    saturation: pl.DataFrame | None = None,
    latency: str = "latency_avg",
    colors: Mapping[str, str] | None = None,
    log_y: bool = False,
) -> go.Figure:
    """The hockey stick: latency against IOPS through the best run at each load, saturation marked."""
    column, axis_title, _ = METRICS[latency]
    colors = _colors(points, colors)
    sat_rows = _saturation_rows(saturation)
    fig = go.Figure()
    shown: set[str] = set()
    slot = 0
    for disk_key, color in colors.items():
        df = points.filter((pl.col("disk_key") == disk_key) & pl.col("best_at_load")).drop_nulls(column)
        if df.is_empty():
            continue
        shown.add(disk_key)
        custom, template = _hover(df)
        fig.add_trace(
            go.Scatter(
                x=df["iops"].to_list(),
                y=df[column].to_list(),
                mode="lines+markers+text",
                text=[f"{v:g}" for v in df["outstanding_io"].to_list()],
                textposition="top left",
                textfont={"size": 9, "color": color},
                name=disk_key,
                legendgroup=disk_key,
                line={"color": color, "width": 2},
                customdata=custom,
                hovertemplate="%{x:,.0f} IOPS, %{y:,.4~g} ms at %{text} outstanding<br>" + template,
            )
        )
        row = sat_rows.get(disk_key)
        sat_column, _ = _SATURATION_VALUE[latency]
        if row is not None and row.get("saturated") and row.get(sat_column) is not None:
            share = _share(row["iops_at_saturation"], points["iops"].drop_nulls().to_list(), log=False)
            values = points[column].drop_nulls().to_list()
            y_share = _share(row[sat_column], values if log_y else [0.0, *values], log=log_y)
            _mark_saturation(
                fig,
                row["iops_at_saturation"],
                row[sat_column],
                color,
                disk_key,
                saturation_sentence(row).replace(": ", ":<br>", 1),
                slot,
                share,
                below=False,
                log_x=False,
                y_share=y_share,
                log_y=log_y,
            )
            slot += 1
    _not_saturated_note(fig, sat_rows, colors, shown)
    return _layout(
        fig,
        f"{axis_title} vs IOPS (labels: outstanding I/O)",
        {"title": "IOPS", "rangemode": "tozero"},
        {"title": axis_title + ", log", "type": "log"} if log_y else {"title": axis_title, "rangemode": "tozero"},
    )


# -- per thread count -----------------------------------------------------------------------------------------


def threads_figure(
    points: pl.DataFrame,
    metric: str,
    by_threads: pl.DataFrame | None = None,
    colors: Mapping[str, str] | None = None,
    log_y: bool = False,
) -> go.Figure:
    """One line per disk and thread count, x = queue depth (log2): does adding threads or queue depth help?

    Each thread count's saturation (mart_saturation_by_threads) is marked with a diamond."""
    column, axis_title, unit = METRICS[metric]
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
            name = f"{threads} thread{'s' if threads != 1 else ''}" + ("" if single else f" · {disk_key}")
            custom, template = _hover(df)
            fig.add_trace(
                go.Scatter(
                    x=df["queue_depth"].to_list(),
                    y=df[column].to_list(),
                    mode="lines+markers",
                    name=name,
                    line={"color": color, "width": 2, "dash": "solid" if single else dashes[t % len(dashes)]},
                    customdata=custom,
                    hovertemplate=f"QD %{{x}}: %{{y:,.4~g}} {unit}<br>" + template,
                )
            )
            row = sat.get((disk_key, threads))
            if row is not None and row.get("saturated") and row.get(sat_column) is not None:
                fig.add_trace(
                    go.Scatter(
                        x=[row["saturation_queue_depth"]],
                        y=[row[sat_column] * factor],
                        mode="markers",
                        marker={
                            "symbol": "diamond",
                            "size": 12,
                            "color": color,
                            "line": {"color": "black", "width": 1},
                        },
                        showlegend=False,
                        name=f"{name}: saturation",
                        hovertemplate=(
                            f"{name} saturates at QD {row['saturation_queue_depth']} "
                            f"({fmt_load(row['saturation_outstanding_io'])} outstanding): "
                            f"{fmt_iops(row['iops_at_saturation'])} IOPS<extra></extra>"
                        ),
                    )
                )
    same = (
        by_threads.filter(pl.col("saturates_at_same_outstanding_io"))
        if by_threads is not None and not by_threads.is_empty() and "saturates_at_same_outstanding_io" in by_threads
        else None
    )
    if same is not None and not same.is_empty():
        notes = [
            (f"{k}:<br>" if len(colors) > 1 else "")
            + f"saturates at {fmt_load(n)} outstanding, whatever the thread count"
            for k, n in same.select("disk_key", "saturation_outstanding_io").unique(maintain_order=True).rows()
        ]
        fig.add_annotation(
            text="<br>".join(notes),
            xref="paper",
            yref="paper",
            x=0.01,
            y=0.99,
            xanchor="left",
            yanchor="top",
            showarrow=False,
            align="left",
            bgcolor="rgba(255,255,255,0.85)",
            font={"size": 11},
        )
    return _layout(
        fig,
        f"{axis_title} vs queue depth per thread count",
        load_axis(points["queue_depth"].to_list() if not points.is_empty() else [], "Queue depth per thread, log2"),
        {"title": axis_title + ", log", "type": "log"} if log_y else {"title": axis_title, "rangemode": "tozero"},
    )


def iops_heatmap(points: pl.DataFrame, disk_key: str) -> go.Figure:
    """IOPS over threads × queue depth for one disk: where in the grid the disk delivers."""
    df = points.filter((pl.col("disk_key") == disk_key) & pl.col("best_at_threads_qd")).drop_nulls("iops")
    threads = sorted(df["threads"].unique().to_list()) if not df.is_empty() else []
    depths = sorted(df["queue_depth"].unique().to_list()) if not df.is_empty() else []
    cell = {(r["threads"], r["queue_depth"]): r for r in df.iter_rows(named=True)}
    z = [[cell[(t, q)]["iops"] if (t, q) in cell else None for q in depths] for t in threads]
    text = [[fmt_iops(v) if v is not None else "" for v in row] for row in z]
    files = [
        [f"{cell[(t, q)]['file_name']}, run {cell[(t, q)]['run_index'] + 1}" if (t, q) in cell else "" for q in depths]
        for t in threads
    ]
    fig = go.Figure(
        go.Heatmap(
            x=[str(q) for q in depths],
            y=[str(t) for t in threads],
            z=z,
            text=text,
            texttemplate="%{text}",
            customdata=files,
            colorscale="Blues",
            colorbar={"title": "IOPS"},
            hovertemplate="%{y} threads × QD %{x}: %{z:,.0f} IOPS<br>%{customdata}<extra></extra>",
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


# -- compare --------------------------------------------------------------------------------------------------


def _ratio(value: float | None) -> str:
    return "" if value is None else f" ({value:.2f}×)"


def compare_table(compared: pl.DataFrame, unit: str = "MB") -> pl.DataFrame:
    """The saturation points side by side: one column per disk, one row per figure, ratios to the baseline.

    `compared` is queries.compare_saturation's frame."""
    figures = [
        "Saturation",
        "Saturates at (outstanding I/O)",
        "threads × queue depth",
        "IOPS at saturation",
        "Throughput at saturation",
        "Mean latency at saturation",
        "p99 latency at saturation",
        "Latency growth, lowest load → saturation",
        "Best IOPS measured",
        "Tested range (outstanding I/O)",
        "USL peak (outstanding I/O, R²)",
        "Tools",
    ]
    rows: dict[str, list[str]] = {"": figures}
    for r in compared.iter_rows(named=True):
        sat = bool(r["saturated"])
        usl = (
            f"{r['usl_peak_outstanding_io']:,.0f} (R² {r['usl_r_squared']:.2f})"
            if r.get("usl_peak_outstanding_io") and r.get("usl_r_squared") is not None
            else r.get("usl_note") or "–"
        )
        rows[r["disk_key"]] = [
            "saturated" if sat else "not saturated within the tested range",
            (fmt_load(r["saturation_outstanding_io"]) + _ratio(r.get("outstanding_io_ratio"))) if sat else "–",
            f"{r['saturation_threads']} × {r['saturation_queue_depth']}" if sat else "–",
            (fmt_iops(r["iops_at_saturation"]) + _ratio(r.get("iops_ratio"))) if sat else "–",
            (fmt_throughput(r["throughput_bytes_per_s_at_saturation"], unit) + _ratio(r.get("throughput_ratio")))
            if sat
            else "–",
            (f"{fmt_ms(r['latency_avg_ms_at_saturation'])} ms" + _ratio(r.get("latency_avg_ratio")))
            if sat and r["latency_avg_ms_at_saturation"] is not None
            else "–",
            (f"{fmt_ms(r['latency_p99_ms_at_saturation'])} ms" + _ratio(r.get("latency_p99_ratio")))
            if sat and r["latency_p99_ms_at_saturation"] is not None
            else "–",
            f"{r['latency_growth_to_saturation']:.2f}×" if r.get("latency_growth_to_saturation") else "–",
            f"{fmt_iops(r['max_iops'])} at {fmt_load(r['max_iops_outstanding_io'])}" + _ratio(r.get("max_iops_ratio")),
            f"{fmt_load(r['min_outstanding_io'])}–{fmt_load(r['max_outstanding_io'])} ({r['points']} loads)",
            usl,
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
                f"{fmt_load(r['saturation_outstanding_io'])} outstanding: {fmt_iops(r['iops_at_saturation'])} IOPS"
                + (f", {fmt_ms(latency)} ms" if latency is not None else "")
            )
        else:
            text = f"not saturated (≤ {fmt_load(r['max_outstanding_io'])}): {fmt_iops(r['max_iops'])} IOPS"
        cells.setdefault(key, {})[r["disk_key"]] = text
    keys = [d for d in disk_keys if d in set(overview["disk_key"].to_list())]
    return pl.DataFrame(
        [{"workload": series_title(*k), **{d: v.get(d, "not measured") for d in keys}} for k, v in cells.items()]
    )


def _wrap(text: str, width: int = 26) -> str:
    """Break a long disk label onto lines for an axis (plotly does not wrap tick labels)."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "<br>".join(lines)


def compare_figure(compared: pl.DataFrame, baseline: str, colors: Mapping[str, str] | None = None) -> go.Figure:
    """IOPS at saturation (or, unsaturated, the best measured) per disk, labelled with the ratio to the baseline.

    Horizontal bars, so long disk labels stay readable. `compared` is queries.compare_saturation's frame: one
    row per disk with `iops_compared` and `iops_ratio`."""
    colors = _colors(compared, colors)
    fig = go.Figure()
    top = 0.0
    for r in compared.iter_rows(named=True):
        value = r["iops_compared"]
        top = max(top, value or 0)
        ratio = r.get("iops_ratio")
        label = f"{fmt_iops(value)} IOPS"
        if ratio is not None:
            label += " (baseline)" if r["disk_key"] == baseline else f", {ratio:.2f}× baseline"
        fig.add_trace(
            go.Bar(
                y=[_wrap(r["disk_key"])],
                x=[value],
                orientation="h",
                name=r["disk_key"],
                marker={
                    "color": colors.get(r["disk_key"], PALETTE[0]),
                    "pattern": {"shape": "" if r["saturated"] else "/"},
                },
                text=[label],
                textposition="auto",  # inside a long bar, beside a short one
                hovertemplate=f"{r['disk_key']}<br>{saturation_sentence(r)}<extra></extra>",
            )
        )
    return _layout(
        fig,
        "IOPS at saturation (hatched: not saturated, best measured)",
        {"title": "IOPS", "rangemode": "tozero", "range": [0, 1.15 * (top or 1)]},
        {"title": "", "autorange": "reversed", "automargin": True},
        showlegend=False,
        height=max(260, 140 + 80 * compared.height),
    )


# -- SQL workloads --------------------------------------------------------------------------------------------


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
    for disk_key, df in statements.group_by("disk_key", maintain_order=True):
        color = colors.get(disk_key[0], PALETTE[0])
        on_curve = df.drop_nulls("curve_outstanding_io")
        if on_curve.is_empty():
            continue
        fig.add_trace(
            go.Scatter(
                x=on_curve["curve_outstanding_io"].to_list(),
                y=(on_curve["effective_read_bytes_per_s"] / factor).to_list(),
                mode="markers+text",
                text=on_curve["label"].to_list(),
                # alternate sides, so statements that read at about the same rate stay legible
                textposition=[
                    ("bottom right", "top left", "top right", "bottom left")[i % 4] for i in range(on_curve.height)
                ],
                textfont={"size": 10},
                marker={"symbol": "x", "size": 12, "color": "black", "line": {"color": color, "width": 1}},
                name=f"{disk_key[0]}: statements",
                customdata=[[cpu_sentence(v)] for v in on_curve["cpu_to_elapsed"].to_list()],
                hovertemplate=(
                    f"%{{text}}: %{{y:,.1f}} {unit}/s effective read<br>%{{customdata[0]}}<br>"
                    "the disk's curve gives that at %{x:,.1f} outstanding I/O<extra></extra>"
                ),
            )
        )
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
            fig.add_trace(
                go.Scatter(
                    x=[_nines(p) for p in d["percentile"].to_list()],
                    y=d["latency_ms"].to_list(),
                    mode="lines+markers",
                    name=f"{disk_key} · {load:g} outstanding" if len(colors) > 1 else f"{load:g} outstanding",
                    legendgroup=disk_key,
                    opacity=0.35 + 0.65 * (i + 1) / len(loads),
                    line={
                        "color": color,
                        "width": 1.5,
                        "shape": "hv" if first["curve_source"] == "histogram" else "linear",
                    },
                    marker={"size": 3},
                    customdata=[[p, first["file_name"], first["run_index"] + 1] for p in d["percentile"].to_list()],
                    hovertemplate=(
                        "p%{customdata[0]:.4~f}: %{y:,.4~g} ms<br>%{customdata[1]}, run %{customdata[2]}"
                        "<extra>%{fullData.name}</extra>"
                    ),
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
        {"title": "Latency (ms), log", "type": "log"},
    )
