"""Compare: the chosen disks' saturation points side by side, ratios to a baseline disk, curves overlaid."""

from __future__ import annotations

import streamlit as st

from kneepoint.app import charts, queries
from kneepoint.app.web import state, ui

st.title("Compare disks")
if not queries.has_marts():
    st.info("The warehouse is empty. Upload result files on the **Upload** page.")
    st.stop()
if not ui.need_marts("mart_saturation_points"):
    st.stop()

version = queries.data_version()
all_disks = state.cached(queries.disks, version)["disk_key"].to_list()
chosen = state.disks_picker(all_disks, default=all_disks[:2])
if len(chosen) < 2:
    st.info("Choose two disks or more to compare." if len(all_disks) > 1 else "Only one disk is stored so far.")
    if not chosen:
        st.stop()

options = state.cached(queries.series_options, version, tuple(chosen))
if options.is_empty():
    st.info("No benchmark results for these disks.")
    st.stop()
series = state.series_picker(options)
colors = charts.disk_colors(chosen)
measured = state.cached(queries.saturation, version, tuple(chosen), series)["disk_key"].to_list()
if not measured:
    st.info("No saturation points for this workload yet.")
    st.stop()
left, right = st.columns([2, 1])
baseline = state.select_param("Baseline disk (ratios are to this one)", "base", measured, container=left)
unit = "MiB" if state.toggle("MiB/s (2^20) instead of MB/s (10^6)", "mib", container=right) else "MB"

title = charts.series_title(*series)
st.subheader(title)
not_measured = [d for d in chosen if d not in measured]
if not_measured:
    st.caption("Not measured with this workload: " + ", ".join(not_measured))

compared = state.cached(queries.compare_saturation, version, tuple(chosen), series, baseline)
st.table(charts.compare_table(compared, unit), border="horizontal")

points = state.cached(queries.curve_points, version, tuple(chosen), series)
left, right = st.columns(2)
ui.chart(charts.compare_figure(compared, baseline, colors), compared, f"{title} compare saturation", "bars", left)
ui.chart(charts.curve_figure(points, "iops", compared, colors), points, f"{title} compare iops", "iops", right)
left, right = st.columns(2)
ui.chart(charts.curve_figure(points, "latency_avg", compared, colors), points, f"{title} compare latency", "lat", left)
ui.chart(
    charts.latency_vs_iops_figure(points, compared, "latency_avg", colors),
    points,
    f"{title} compare latency vs iops",
    "hockey",
    right,
)
metric_t = "throughput_mb" if unit == "MB" else "throughput_mib"
left, _ = st.columns(2)
ui.chart(charts.curve_figure(points, metric_t, compared, colors), points, f"{title} compare throughput", "tp", left)

st.subheader("Every workload")
overview = state.cached(queries.saturation_overview, version, tuple(chosen))
st.caption("Where each disk saturates in every workload measured on any of them.")
st.dataframe(charts.saturation_matrix(overview, chosen), hide_index=True)
