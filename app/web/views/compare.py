"""Compare: the chosen disks side by side, like with like. Per workload, the disks ranked by their best measured
IOPS (sequential: MB/s) with their difference to a baseline disk ('+32 %') and a one-line verdict; the saturation
points side by side; the curves overlaid."""

from __future__ import annotations

import polars as pl
import streamlit as st

from kneepoint.app import charts, queries
from kneepoint.app import wording as w
from kneepoint.app.queries import Series
from kneepoint.app.web import state, ui

st.title("Compare disks")
if not queries.has_marts():
    st.info("The warehouse is empty. Upload result files on the **Upload** page.")
    st.stop()
if not ui.need_marts("mart_saturation_points"):
    st.stop()

version = queries.data_version()
all_disks = state.cached(queries.disks, version)["disk_key"].to_list()
uploaded = state.uploaded_disks(all_disks)
# Open on disks that share a workload (the user's own first), so the first view compares like with like.
default = state.cached(queries.shared_workload_disks, version, tuple(uploaded))
if len(default) < 2:
    default = state.cached(queries.shared_workload_disks, version, tuple(all_disks))
chosen = state.disks_picker(all_disks, default=default)
if len(chosen) < 2:
    st.info("Choose two disks or more to compare." if len(all_disks) > 1 else "Only one disk is stored so far.")
    if not chosen:
        st.stop()

options = state.cached(queries.series_options, version, tuple(chosen))
if options.is_empty():
    st.info("No benchmark results for these disks.")
    st.stop()
series = state.series_picker(options)
colors = state.colors(version)
saturation = state.cached(queries.saturation, version, tuple(chosen), series)
measured = [d for d in chosen if d in set(saturation["disk_key"].to_list())] if not saturation.is_empty() else []
if not measured:
    st.info("No saturation points for this workload yet.")
    st.stop()
left, right = st.columns([2, 1])
baseline = state.select_param("Baseline disk (differences are to this one)", "base", measured, container=left)
unit = "MiB" if state.toggle("MiB/s (2²⁰ bytes) instead of MB/s (10⁶)", "mib", container=right) else "MB"

title = w.workload_title(*series)
st.subheader(title)
not_measured = [d for d in chosen if d not in measured]
if not_measured:
    st.caption("Not measured with this workload: " + ui.md("; ".join(not_measured)))
if len(measured) < 2:
    st.warning(
        "Only one of the chosen disks was measured with this workload: there is nothing to compare it with. "
        "Choose another workload or disk."
    )

compared = saturation.sort(pl.col("disk_key").replace_strict({d: i for i, d in enumerate(measured)}))
rows = charts.compare_rows(compared, baseline, unit)
st.markdown(ui.md(charts.verdict(rows, baseline)))
ui.chart(
    charts.compare_figure(rows, baseline, f"{title}: best measured, difference to {baseline}", colors),
    compared,
    f"{title} compare",
    "bars",
)
st.caption(
    "Differences compare like with like: best measured IOPS with best measured IOPS; a saturation figure only "
    "where both disks saturate."
)
st.table(charts.compare_table(compared, baseline, unit), border="horizontal")

points = state.cached(queries.curve_points, version, tuple(chosen), series)
left, right = st.columns(2)
ui.chart(charts.curve_figure(points, "iops", compared, colors), points, f"{title} compare iops", "iops", left)
metric_t = "throughput_mb" if unit == "MB" else "throughput_mib"
ui.chart(charts.curve_figure(points, metric_t, compared, colors), points, f"{title} compare throughput", "tp", right)
left, right = st.columns(2)
ui.chart(
    charts.curve_figure(points, "latency_avg", compared, colors, log_y=None),
    points,
    f"{title} compare latency",
    "lat",
    left,
)
ui.chart(
    charts.latency_vs_iops_figure(points, compared, "latency_avg", colors, log_y=None),
    points,
    f"{title} compare latency vs iops",
    "hockey",
    right,
)

st.subheader("Every workload")
overview = state.cached(queries.saturation_overview, version, tuple(chosen))
shared = []
for key, group in overview.group_by(list(Series._fields), maintain_order=True):
    if group.height > 1 and baseline in group["disk_key"].to_list():
        shared.append((Series(*key), group))
if shared:
    st.caption(f"Each workload measured on {ui.md(baseline)} and another chosen disk, ranked by best measured IOPS.")
    cols = st.columns(2)
    for i, (s, group) in enumerate(shared):
        rows = charts.compare_rows(group, baseline, unit)
        with cols[i % 2]:
            name = w.workload_title(*s)
            st.markdown(f"**{ui.md(name)}**: " + ui.md(charts.verdict(rows, baseline)))
            ui.chart(charts.compare_figure(rows, baseline, name, colors), group, f"{name} compare", f"bars_{i}")
else:
    st.caption(f"No other workload was measured on {ui.md(baseline)} and another chosen disk.")
st.caption("Where each disk saturates in every workload measured on any of them.")
ui.table(charts.saturation_matrix(overview, chosen))
