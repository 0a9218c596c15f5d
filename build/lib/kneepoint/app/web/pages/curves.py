"""Curves: IOPS, throughput and latency against outstanding I/O for the chosen disks and series, with each
disk's saturation point (mart_saturation_points) marked; per-thread lines, heatmap, USL fit and latency
percentiles on request."""

from __future__ import annotations

import html

import polars as pl
import streamlit as st

from kneepoint.app import charts, queries
from kneepoint.app.web import state, ui

st.title("Curves")
if not queries.has_marts():
    st.info(
        "The warehouse is empty. Upload result files on the **Upload** page, or start with `kneepoint app`, "
        "which loads the sample data."
    )
    st.stop()

version = queries.data_version()
all_disks = state.cached(queries.disks, version)["disk_key"].to_list()
chosen = state.disks_picker(all_disks, default=all_disks[:1])
if not chosen:
    st.info("Choose at least one disk.")
    st.stop()

options = state.cached(queries.series_options, version, tuple(chosen))
if options.is_empty():
    st.info("No benchmark results for these disks.")
    st.stop()
series = state.series_picker(options)
points = state.cached(queries.curve_points, version, tuple(chosen), series)
saturation = state.cached(queries.saturation, version, tuple(chosen), series)
colors = charts.disk_colors(chosen)

row = st.container(horizontal=True, gap="medium")
unit = (
    "MiB"
    if state.toggle("MiB/s", "mib", container=row, help="Throughput in MiB/s (2^20 bytes); off: MB/s (10^6).")
    else "MB"
)
show_usl = state.toggle(
    "USL fit", "usl", container=row, help="Universal Scalability Law fitted to IOPS (mart_usl_fits)."
)
per_thread = state.toggle("Per thread", "threads", container=row, help="One line per thread count, x = queue depth.")
log_latency = state.toggle("Log latency", "loglat", container=row, help="See low-load latency beside the tail.")
p99_hockey = state.toggle(
    "p99 hockey stick", "hs99", container=row, help="Latency vs IOPS with p99 latency; off: mean."
)

title = charts.series_title(*series)
st.subheader(title)
measured = set(points["disk_key"].to_list())
missing = [d for d in chosen if d not in measured]
if missing:
    st.caption("Not measured with this workload: " + ", ".join(missing))

# Saturation in words, one line per disk in the order chosen (the same wording as the chart annotations).
if saturation.is_empty() and measured:
    st.caption("No saturation points: the saturation mart is not built.")
sat_rows = {r["disk_key"]: r for r in saturation.iter_rows(named=True)}
for disk in chosen:
    r = sat_rows.get(disk)
    if r is None:
        continue
    notes = []
    if r.get("usl_fitted") and r.get("usl_peak_outstanding_io"):
        r2 = f" (R² {r['usl_r_squared']:.2f})" if r.get("usl_r_squared") is not None else ""
        notes.append(f"USL peak {r['usl_peak_outstanding_io']:,.0f} outstanding{r2}")
    elif r.get("usl_note"):
        notes.append(r["usl_note"])
    if r.get("kneedle_note"):
        notes.append(r["kneedle_note"])
    st.markdown(
        # HTML is allowed here for the colour swatch: the label and notes are escaped so that they stay text.
        f"<span style='color:{colors[disk]}'>■</span> **{html.escape(disk)}**: {charts.saturation_sentence(r)}"
        + (f"  \n<small>{html.escape('; '.join(notes))}</small>" if notes else ""),
        unsafe_allow_html=True,
    )

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
            st.dataframe(by_threads, hide_index=True)
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
        right.info("No p99 latency: the tool did not report percentiles for these runs.")

hockey = "latency_p99" if p99_hockey and has_p99 else "latency_avg"
ui.chart(
    charts.latency_vs_iops_figure(points, saturation, hockey, colors, log_y=log_latency),
    points,
    f"{title} latency vs iops",
    "hockey",
)

# The grid view needs at least two thread counts and two queue depths to say anything.
grid = (
    points.filter(pl.col("best_at_threads_qd"))
    .group_by("disk_key")
    .agg(pl.col("threads").n_unique().alias("t"), pl.col("queue_depth").n_unique().alias("q"))
)
grid_disks = [d for d in chosen if d in set(grid.filter((pl.col("t") > 1) & (pl.col("q") > 1))["disk_key"])]
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
    all_loads = state.toggle("Every load", "allp", help="Off: the lowest load, the saturation point and the highest.")
    if not all_loads:
        ends = dist.group_by("disk_key").agg(
            pl.col("outstanding_io").min().alias("lo"), pl.col("outstanding_io").max().alias("hi")
        )
        keep = {
            (k, v)
            for k, lo, hi in ends.rows()
            for v in (lo, hi, sat_rows.get(k, {}).get("saturation_outstanding_io"))
            if v is not None
        }
        keep_df = pl.DataFrame(sorted(keep), schema=["disk_key", "outstanding_io"], orient="row")
        dist = dist.join(
            keep_df.cast(dist.select("disk_key", "outstanding_io").schema),
            on=["disk_key", "outstanding_io"],
            how="semi",
        )
    ui.chart(charts.percentile_figure(dist, colors), dist, f"{title} latency percentiles", "percentiles")

with st.expander("Data: every run of this workload"):
    st.dataframe(points, hide_index=True)
    if not saturation.is_empty():
        st.dataframe(saturation, hide_index=True)
