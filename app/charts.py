"""Plotly figures for the app and the exported report: one function per chart, data in, figure out.

Figures take polars frames as the queries return them and never query or compute analytics themselves.
"""

from __future__ import annotations

import plotly.graph_objects as go
import polars as pl

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"]

METRICS: dict[str, tuple[str, str]] = {
    # key -> (column, axis title)
    "iops": ("iops", "IOPS"),
    "throughput_mb": ("throughput_mb_per_s", "Throughput (MB/s, 10^6 bytes)"),
    "throughput_mib": ("throughput_mib_per_s", "Throughput (MiB/s, 2^20 bytes)"),
    "latency_avg": ("latency_avg_ms", "Mean latency (ms)"),
    "latency_p99": ("latency_p99_ms", "p99 latency (ms)"),
}


def best_per_load(points: pl.DataFrame) -> pl.DataFrame:
    """Where several runs share one outstanding-I/O value (2x16 and 4x8), the series keeps the highest IOPS."""
    if points.is_empty():
        return points
    return (
        points.sort(["disk_key", "outstanding_io", "iops"], descending=[False, False, True])
        .unique(subset=["disk_key", "outstanding_io"], keep="first", maintain_order=True)
        .sort(["disk_key", "outstanding_io"])
    )


def _hover(df: pl.DataFrame) -> tuple[list, str]:
    custom = df.select(["threads", "queue_depth", "file_name", "run_index", "source_line"]).rows()
    template = (
        "threads %{customdata[0]} × QD %{customdata[1]}<br>"
        "%{customdata[2]} (run %{customdata[3]}, line %{customdata[4]})<extra>%{fullData.name}</extra>"
    )
    return custom, template


def curve_figure(points: pl.DataFrame, metric: str, title: str | None = None) -> go.Figure:
    """One metric against outstanding I/O (log2 axis), one line per disk."""
    column, axis_title = METRICS[metric]
    fig = go.Figure()
    series = best_per_load(points)
    for i, (disk_key,) in enumerate(series.select("disk_key").unique(maintain_order=True).rows()):
        df = series.filter(pl.col("disk_key") == disk_key).drop_nulls(column)
        if df.is_empty():
            continue
        custom, template = _hover(df)
        fig.add_trace(
            go.Scatter(
                x=df["outstanding_io"].to_list(),
                y=df[column].to_list(),
                mode="lines+markers",
                name=disk_key,
                line={"color": PALETTE[i % len(PALETTE)], "width": 2},
                customdata=custom,
                hovertemplate=f"outstanding %{{x}}<br>{axis_title}: %{{y:,.4g}}<br>" + template,
            )
        )
    fig.update_layout(
        title=title or f"{axis_title} vs outstanding I/O",
        xaxis={"title": "Outstanding I/O (threads × queue depth)", "type": "log", "dtick": 0.30102999566},
        yaxis={"title": axis_title, "rangemode": "tozero"},
        showlegend=True,
        legend={"orientation": "h", "y": -0.25},
        margin={"l": 60, "r": 20, "t": 60, "b": 60},
        height=420,
        template="plotly_white",
    )
    # log2 ticks: 1, 2, 4, ... shown as plain numbers.
    fig.update_xaxes(tickformat="d")
    return fig


def latency_vs_iops_figure(points: pl.DataFrame, latency: str = "latency_avg") -> go.Figure:
    """The hockey stick: latency against IOPS, one line per disk, ordered by load."""
    column, axis_title = METRICS[latency]
    fig = go.Figure()
    series = best_per_load(points)
    for i, (disk_key,) in enumerate(series.select("disk_key").unique(maintain_order=True).rows()):
        df = series.filter(pl.col("disk_key") == disk_key).drop_nulls(column)
        if df.is_empty():
            continue
        custom, template = _hover(df)
        fig.add_trace(
            go.Scatter(
                x=df["iops"].to_list(),
                y=df[column].to_list(),
                mode="lines+markers",
                name=disk_key,
                line={"color": PALETTE[i % len(PALETTE)], "width": 2},
                customdata=custom,
                hovertemplate=f"%{{x:,.0f}} IOPS<br>{axis_title}: %{{y:,.4g}}<br>" + template,
            )
        )
    fig.update_layout(
        title=f"{axis_title} vs IOPS",
        xaxis={"title": "IOPS", "rangemode": "tozero"},
        yaxis={"title": axis_title, "rangemode": "tozero"},
        showlegend=True,
        legend={"orientation": "h", "y": -0.25},
        margin={"l": 60, "r": 20, "t": 60, "b": 60},
        height=420,
        template="plotly_white",
    )
    return fig
