"""Workloads: an application's throughput and response time against its load (N sessions running the same SQL at
once, HammerDB virtual users, databases on one server), where more load stops adding throughput, by the disks'
saturation rule (mart_load_saturation), with the USL fit over concurrency; several configurations (disk labels)
compared on one chart."""

from __future__ import annotations

import streamlit as st

from kneepoint.app import charts, queries
from kneepoint.app import wording as w
from kneepoint.app.web import state, ui

st.title("Workloads")
st.markdown(
    "Where does the **application** stop scaling? The same SQL run from 1, 2, 4… sessions at once, HammerDB "
    "virtual users, or databases on one server: throughput and response time against the load, and the load past "
    "which more of it only adds response time."
)
UPLOAD_HINT = (
    "Upload a table of a concurrency sweep (CSV, Markdown or a pasted table with the load, the throughput and the "
    "response time) or a HammerDB log on the **Upload** page, under the label of the configuration it ran on."
)
if not queries.has_marts() and "mart_load_saturation" not in queries.tables():
    st.info("The warehouse is empty. " + UPLOAD_HINT)
    st.page_link("views/upload.py", label="Upload a load series")
    st.stop()
if not ui.need_marts("mart_load_saturation", "int_load_points"):
    st.stop()

version = queries.data_version()
configurations = state.cached(queries.load_disks, version)
if not configurations:
    st.info("No load series stored yet. " + UPLOAD_HINT)
    st.page_link("views/upload.py", label="Upload a load series")
    st.stop()

chosen = state.multiselect_param(
    "Configurations",
    "config",
    configurations,
    configurations,
    placeholder="Choose configurations",
    help="A configuration is the disk label the load series was stored under (`label @ host` with a host).",
)
if not chosen:
    st.info("Choose one or more configurations.")
    st.stop()

everything = state.cached(queries.load_saturation, version, tuple(chosen))
# One workload at a time (its label, what the load counts, what the throughput counts), compared across the
# configurations; chosen by its title, which the URL keeps.
kinds = {
    w.load_series_title(r): (r["workload"], r["load_kind"], r["throughput_what"])
    for r in everything.iter_rows(named=True)
}
row = st.container(horizontal=True, gap="medium", vertical_alignment="bottom")
picked = state.select_param("Workload", "workload", list(kinds), container=row, width=420)
workload, load_kind, what = kinds[picked]
usl = state.toggle(
    "USL model",
    "usl",
    default=True,
    container=row,
    help="The Universal Scalability Law fitted to each series' throughput.",
)
target_ms = row.number_input(
    "Response-time target (ms; 0: none)",
    min_value=0.0,
    value=0.0,
    step=100.0,
    key="target_ms",
    help="0: none. Otherwise the most throughput each configuration delivers with its response time under it.",
)

saturation = everything.filter(
    (everything["workload"] == workload)
    & (everything["load_kind"] == load_kind)
    & (everything["throughput_what"] == what)
)
points = state.cached(queries.load_points, version, tuple(chosen))
points = points.filter(points["series_id"].is_in(saturation["series_id"].to_list()))
colors = state.colors(version) | {
    k: c for k, c in charts.disk_colors(configurations).items() if k not in state.colors(version)
}

tolerance = saturation["tolerance"][0]
st.caption(w.load_rule_sentence(tolerance))
targets = (
    queries.load_response_target(
        points, dict(zip(saturation["series_id"], saturation["throughput_unit"], strict=True)), target_ms
    )
    if target_ms > 0
    else {}
)
for r in saturation.iter_rows(named=True):
    notes = [f"USL: {w.load_usl_sentence(r)}."]
    if r["littles_law_flagged_steps"]:
        notes.append(
            f"Little's law off (load ≠ throughput × response time, outside {w.littles_law_bounds()}) in "
            f"{r['littles_law_flagged_steps']} of {w.plural(r['littles_law_checked_steps'], 'step')} checked."
        )
    if r["series_id"] in targets:
        notes.append(
            f"Response-time target: {w.response_target_sentence({**r, **targets[r['series_id']]}, target_ms)}."
        )
    ui.swatch(r["disk_key"], colors.get(r["disk_key"], "#444"), w.load_saturation_sentence(r), notes)

title = picked
left, right = st.columns(2)
ui.chart(
    charts.load_curve_figure(points, saturation, "throughput", colors, usl=usl),
    points,
    f"throughput {title}",
    "load_throughput",
    container=left,
)
ui.chart(
    charts.load_curve_figure(points, saturation, "response", colors),
    points,
    f"response time {title}",
    "load_response",
    container=right,
)

with st.expander("Data: each series' saturation and USL fit (mart_load_saturation)"):
    ui.table(saturation)
