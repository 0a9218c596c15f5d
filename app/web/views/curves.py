"""Curves, the landing page: what kneepoint is in one line, each chosen disk's CrystalDiskMark-style grid, then
IOPS, throughput and latency against outstanding I/O for one workload, with each disk's saturation point
(mart_saturation_points, or the same rule at the tolerance chosen here) marked and said in words; the largest
load under a latency target; per-thread lines, heatmap, USL fit and latency percentiles on request."""

from __future__ import annotations

import html

import polars as pl
import streamlit as st

from kneepoint.app import charts, queries
from kneepoint.app import wording as w
from kneepoint.app.web import state, ui

st.title("Curves")
st.markdown(
    "**kneepoint** finds where each disk stops scaling: the load past which more outstanding I/O adds latency "
    "but no throughput."
)
if not queries.has_marts():
    st.info(
        "The warehouse is empty. Upload result files on the **Upload** page, or start with `kneepoint app`, "
        "which loads the sample data."
    )
    st.page_link("views/upload.py", label="Upload your benchmark results")
    st.stop()

version = queries.data_version()
all_disks = state.cached(queries.disks, version)["disk_key"].to_list()
uploaded = state.uploaded_disks(all_disks)
chosen = state.disks_picker(all_disks, default=(uploaded or all_disks)[:1])
if not uploaded:
    left, right = st.columns([3, 2])
    left.caption(
        "These are the sample disks (a real fio sweep and three modelled disks). Upload your own results (Upload "
        "lists every tool and format it reads) to see your disks here."
    )
    right.page_link("views/upload.py", label="Upload your results")
if not chosen:
    st.info("Choose at least one disk.")
    st.stop()
colors = state.colors(version)

grid = state.cached(queries.disk_grid, version, tuple(chosen))
row = st.container(horizontal=True, gap="medium")
unit = (
    "MiB"
    if state.toggle("MiB/s", "mib", container=row, help="Throughput in MiB/s (2²⁰ bytes); off: MB/s (10⁶ bytes).")
    else "MB"
)
if not grid.is_empty():
    st.subheader("At a glance")
    st.caption(
        "As CrystalDiskMark shows it: sequential workloads in MB/s, random ones in IOPS, at the best measured load "
        "and at the lowest one."
    )
    for disk in chosen:
        table = charts.summary_grid(grid, disk, unit)
        if table.is_empty():
            continue
        ui.swatch(disk, colors.get(disk, "#444"))
        st.table(table, border="horizontal")

options = state.cached(queries.series_options, version, tuple(chosen))
if options.is_empty():
    st.info("No benchmark results for these disks.")
    st.stop()
st.subheader("Curves of one workload")
series = state.series_picker(options)
row = st.container(horizontal=True, gap="medium", vertical_alignment="bottom")
tolerance_pct = row.number_input(
    "Saturation tolerance (%)",
    min_value=0.0,
    max_value=100.0,
    value=round(queries.built_tolerance() * 100, 1),
    step=1.0,
    key="tol",
    bind=state.QP,
    help="A load saturates the disk when no larger load delivers more than this much more IOPS.",
    width=200,
)
target_ms = row.number_input(
    "Latency target (ms p99; 0: none)",
    min_value=0.0,
    value=0.0,
    step=1.0,
    key="target",
    bind=state.QP,
    help="The largest measured load whose p99 latency (mean where the tool gave no p99) stays under the target.",
    width=220,
)
show_usl = state.toggle("USL fit", "usl", container=row, help="The Universal Scalability Law model fitted to IOPS.")
per_thread = state.toggle("Per thread", "threads", container=row, help="One line per thread count, x = queue depth.")
p99_hockey = state.toggle("p99 hockey stick", "hs99", container=row, help="Latency vs IOPS with p99; off: mean.")
log_latency = {"auto": None, "log": True, "linear": False}[
    row.segmented_control(
        "Latency axis",
        ["auto", "log", "linear"],
        default="auto",
        key="lataxis",
        bind=state.QP,
        help="auto: log when the latencies span more than 10×.",
    )
    or "auto"
]
tolerance = tolerance_pct / 100

points = state.cached(queries.curve_points, version, tuple(chosen), series)
saturation = state.cached(queries.saturation, version, tuple(chosen), series, None, tolerance)
title = w.workload_title(*series)
st.markdown(f"#### {html.escape(title)}")
st.caption(w.rule_sentence(tolerance))
measured = set(points["disk_key"].to_list())
missing = [d for d in chosen if d not in measured]
if missing:
    st.caption("Not measured with this workload: " + ui.md("; ".join(missing)))

targets = state.cached(queries.latency_target, version, tuple(chosen), series, target_ms) if target_ms > 0 else {}
# Saturation in words, one line per disk in the order chosen (the same sentences as the charts' notes).
sat_rows = {r["disk_key"]: r for r in saturation.iter_rows(named=True)}
for disk in chosen:
    r = sat_rows.get(disk)
    if r is None:
        continue
    found = next((v for (k, _), v in targets.items() if k == disk), None)
    lines = [
        "Tested " + w.tested_range(r["min_outstanding_io"], r["max_outstanding_io"], r["points"], r["runs"]) + ".",
        f"{w.capital(w.usl_sentence(r))}; {w.kneedle_sentence(r)}.",
    ]
    if target_ms > 0:
        lines.insert(1, f"{w.capital(w.latency_target_sentence(found, target_ms))}.")
    ui.swatch(disk, colors.get(disk, "#444"), w.saturation_sentence(r), lines)

metric_t = "throughput_mb" if unit == "MB" else "throughput_mib"
has_p99 = points["latency_p99_ms"].drop_nulls().len() > 0
if per_thread:
    by_threads = state.cached(queries.saturation_by_threads, version, tuple(chosen), series)
    figures = [
        ("iops", False, "iops per thread"),
        (metric_t, False, "throughput per thread"),
        ("latency_avg", log_latency, "mean latency per thread"),
    ] + ([("latency_p99", log_latency, "p99 latency per thread")] if has_p99 else [])
    for i in range(0, len(figures), 2):
        cols = st.columns(2)
        for col, (metric, log_y, name) in zip(cols, figures[i : i + 2], strict=False):
            fig = charts.threads_figure(points, metric, by_threads, colors, log_y=log_y)
            ui.chart(fig, points, f"{title} {name}", f"t_{metric}", col)
    if not by_threads.is_empty():
        with st.expander("Saturation per thread count"):
            for r in by_threads.iter_rows(named=True):
                st.markdown(
                    f"{ui.md(r['disk_key'])}, {w.plural(r['threads'], 'thread')}: "
                    + ui.md(w.saturation_sentence(r, by_threads=True))
                )
else:
    left, right = st.columns(2)
    ui.chart(
        charts.curve_figure(points, "iops", saturation, colors, usl=show_usl), points, f"{title} iops", "iops", left
    )
    ui.chart(
        charts.curve_figure(points, metric_t, saturation, colors), points, f"{title} throughput", "throughput", right
    )
    left, right = st.columns(2)
    ui.chart(
        charts.curve_figure(points, "latency_avg", saturation, colors, log_y=log_latency),
        points,
        f"{title} mean latency",
        "latency_avg",
        left,
    )
    if has_p99:
        ui.chart(
            charts.curve_figure(points, "latency_p99", saturation, colors, log_y=log_latency),
            points,
            f"{title} p99 latency",
            "latency_p99",
            right,
        )
    else:
        has_distribution = not state.cached(queries.latency_percentiles, version, tuple(chosen), series).is_empty()
        right.info(
            "No p99 in these runs' summary figures (fio prints percentiles per job, and they do not add up across "
            "jobs); the latency percentiles below are each run's own distribution."
            if has_distribution
            else "No p99 latency: the tools did not report percentiles for these runs."
        )

hockey = "latency_p99" if p99_hockey and has_p99 else "latency_avg"
ui.chart(
    charts.latency_vs_iops_figure(points, saturation, hockey, colors, log_y=log_latency),
    points,
    f"{title} latency vs iops",
    "hockey",
)

# The grid view needs at least two thread counts and two queue depths to say anything.
thread_grid = (
    points.filter(pl.col("best_at_threads_qd"))
    .group_by("disk_key")
    .agg(pl.col("threads").n_unique().alias("t"), pl.col("queue_depth").n_unique().alias("q"))
)
grid_disks = [d for d in chosen if d in set(thread_grid.filter((pl.col("t") > 1) & (pl.col("q") > 1))["disk_key"])]
if grid_disks:
    st.subheader("IOPS by threads × queue depth")
    tabs = st.tabs(grid_disks) if len(grid_disks) > 1 else [st.container()]
    for i, (tab, disk) in enumerate(zip(tabs, grid_disks, strict=True)):
        ui.chart(
            charts.iops_heatmap(points, disk),
            points.filter(pl.col("disk_key") == disk),
            f"{title} heatmap {disk}",
            f"heatmap_{i}",
            tab,
        )

dist = state.cached(queries.latency_percentiles, version, tuple(chosen), series)
if not dist.is_empty():
    st.subheader("Latency percentiles")
    if state.toggle("Every load", "allp", help="Off: the lowest load, the saturation point and the highest."):
        dist = state.cached(queries.latency_percentiles, version, tuple(chosen), series, True)
    ui.chart(charts.percentile_figure(dist, colors), dist, f"{title} latency percentiles", "percentiles")

with st.expander("Data: every run of this workload"):
    ui.table(points)
    if not saturation.is_empty():
        ui.table(saturation)
