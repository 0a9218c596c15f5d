"""Production vs baseline: the observed load of a benchmarked disk (Perfmon counter logs, iostat -x, SQL Server file
statistics) placed on its benchmark curve. Per host and device one sentence (headroom and degradation,
mart_headroom); the baseline's curve with the intervals as a cloud and their p50 / p95 / p99; IOPS and latency over
time under the baseline's saturation IOPS."""

from __future__ import annotations

import streamlit as st

from kneepoint.app import charts, queries
from kneepoint.app import wording as w
from kneepoint.app.web import state, ui

st.title("Production vs baseline")
st.markdown(
    "Is the disk the bottleneck now? The load a disk carries in production, from **Perfmon** counter logs "
    "(`typeperf` / `relog` CSV), **iostat -x** or SQL Server's **sys.dm_io_virtual_file_stats**, placed on the "
    "curve of the same disk's benchmark."
)
UPLOAD_HINT = (
    "Upload a counter log on the **Upload** page under the label the disk's benchmark has: a Perfmon CSV "
    "(PhysicalDisk or LogicalDisk counters: Disk Reads/sec, Disk Read Bytes/sec, Avg. Disk sec/Read and the same "
    "for writes), the text of `iostat -x` (with `-t` for timestamps), or two snapshots of "
    "`sys.dm_io_virtual_file_stats` pasted as text."
)
if not queries.has_marts():
    st.info("The warehouse is empty. " + UPLOAD_HINT)
    st.page_link("views/upload.py", label="Upload a counter log")
    st.stop()
if not ui.need_marts("mart_headroom", "mart_production_vs_baseline"):
    st.stop()

version = queries.data_version()
observed = state.cached(queries.observed_disks, version)
if not observed:
    st.info("No production load stored yet. " + UPLOAD_HINT)
    st.page_link("views/upload.py", label="Upload a counter log")
    st.stop()

benchmarked = state.cached(queries.disks, version)["disk_key"].to_list()
row = st.container(horizontal=True, gap="medium", vertical_alignment="bottom")
every_disk = state.toggle(
    "Every benchmarked disk",
    "alldisks",
    container=row,
    help="Off: only the disks with observed production load. On: every disk with benchmark results.",
)
options = list(dict.fromkeys([*observed, *benchmarked])) if every_disk else observed
disk = state.select_param("Baseline disk", "disk", options, container=row, width=420)
st.caption(
    f"Every disk with benchmark results ({len(options)}); {w.plural(len(observed), 'disk')} with observed load."
    if every_disk
    else f"The {w.plural(len(observed), 'disk')} with observed production load; turn on *Every benchmarked disk* "
    "to pick another."
)
if disk not in observed:
    st.info(f"No production load stored for {ui.md(disk)}. " + UPLOAD_HINT)
    st.page_link("views/upload.py", label="Upload a counter log")
    st.stop()

colors = state.colors(version)
disk_color = colors.get(disk, charts.PALETTE[0])
headroom = state.cached(queries.headroom, version, (disk,))
intervals = state.cached(queries.observed_intervals, version, (disk,))
devices = charts.device_colors(headroom, disk_color)

st.subheader("Headroom")
factor = headroom["degradation_factor"][0] if not headroom.is_empty() else None
st.caption(
    "Per host and device: the percentiles of its intervals in its busiest hour (the clock hour with the most I/O, "
    "shaded over time below; the whole log where it covers less than an hour; since-boot averages and Perfmon's "
    "_Total left out) on the nearest benchmark series of this disk (block size from the bytes per I/O, then the read "
    "share; random unless only sequential was measured). Headroom: the baseline's saturation IOPS over the p95 "
    f"IOPS. Degraded where latency at the observed load passes {w.fmt_times(factor)} the baseline's."
)
for r in headroom.iter_rows(named=True):
    label = w.device_label(r)
    ui.swatch(
        label,
        devices.get(label, "#444"),
        w.headroom_sentence(r),
        [f"Baseline: {w.baseline_text(r)}.", f"{r['tool']}: {w.observed_span(r)}."],
    )

for series in queries.baseline_series(headroom):
    placed = headroom.filter(
        (headroom["baseline_pattern"] == series.pattern)
        & (headroom["baseline_read_pct"] == series.read_pct)
        & (headroom["baseline_block_size_bytes"] == series.block_size_bytes)
        & (headroom["baseline_direction"] == series.direction)
    )
    title = w.workload_title(*series)
    points = state.cached(queries.curve_points, version, (disk,), series)
    saturation = state.cached(queries.saturation, version, (disk,), series)
    ui.chart(
        charts.production_curve_figure(
            points,
            saturation,
            intervals,
            placed,
            colors,
            devices,
            title=f"Observed load on the baseline, {title}: mean latency vs IOPS",
        ),
        intervals.filter(intervals["device"].is_in(placed["device"].to_list())),
        f"production on {title}",
        f"production_curve_{w.slug(title)}",
    )
if headroom["series_id"].null_count() == headroom.height:
    st.info(
        "No benchmark of this disk to place the load on: ingest a DiskSpd, SQLIO, fio or CrystalDiskMark run under "
        "the same disk label."
    )

waits = state.cached(queries.waits, version, (disk,))
if not waits.is_empty():
    st.subheader("SQL Server waits")
    st.caption(
        "Per server: the I/O waits of `sys.dm_os_wait_stats` (since-boot totals left out), each wait per waiting "
        "task against the benchmark's latency at the server's load in the same snapshots (its "
        "`sys.dm_io_virtual_file_stats`): PAGEIOLATCH_* against the read latency at its reads/s, WRITELOG against "
        f"the write latency at its writes/s. Degraded where the wait passes {w.fmt_times(factor)} the baseline's "
        "latency."
    )
    for r in waits.iter_rows(named=True):
        ui.swatch(
            w.wait_label(r),
            disk_color,
            w.wait_sentence(r),
            [f"Baseline: {w.baseline_text(r)}."] if r["series_id"] is not None else [],
        )

st.subheader("Over time")
ui.chart(
    charts.production_time_figure(intervals, headroom, disk_color, devices),
    intervals,
    f"production over time {disk}",
    "production_time",
)

with st.expander("Data: each device's percentiles and baseline (mart_headroom)"):
    ui.table(headroom)
if not waits.is_empty():
    with st.expander("Data: each server's I/O waits and baseline (mart_waits_vs_baseline)"):
        ui.table(waits)
