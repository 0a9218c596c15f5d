"""Curves: IOPS, throughput and latency against outstanding I/O for the chosen disks and series."""

from __future__ import annotations

import streamlit as st

from app import charts, queries, state

st.title("Curves")
if not queries.has_marts():
    st.info(
        "The warehouse is empty. Upload result files on the **Upload** page, or start with `kneepoint app`, "
        "which loads the sample data."
    )
    st.stop()

version = queries.data_version()
all_disks = state.cached(queries.disks, version)["disk_key"].to_list()
chosen = state.multiselect_param("Disks", "disk", all_disks, default=all_disks[:4])
if not chosen:
    st.info("Choose at least one disk.")
    st.stop()

options = state.cached(queries.series_options, version, tuple(chosen))
if options.is_empty():
    st.info("No benchmark results for these disks.")
    st.stop()
series = state.series_picker(options)
points = state.cached(queries.curve_points, version, tuple(chosen), *series)

left, right = st.columns(2)
left.plotly_chart(charts.curve_figure(points, "iops"), width="stretch", key="iops")
mb_unit = "throughput_mib" if state.toggle_param("MiB/s (2^20) instead of MB/s (10^6)", "mib") else "throughput_mb"
right.plotly_chart(charts.curve_figure(points, mb_unit), width="stretch", key="throughput")
left, right = st.columns(2)
left.plotly_chart(charts.curve_figure(points, "latency_avg"), width="stretch", key="latency_avg")
if points["latency_p99_ms"].drop_nulls().len():
    right.plotly_chart(charts.curve_figure(points, "latency_p99"), width="stretch", key="latency_p99")
st.plotly_chart(charts.latency_vs_iops_figure(points), width="stretch", key="hockey")

with st.expander("Data"):
    st.dataframe(points, width="stretch", hide_index=True)
