"""SQL workloads: SET STATISTICS IO, TIME output per statement and per table, with the totals users of
statistics parsers expect, and each statement's effective read throughput placed on its disk's curve."""

from __future__ import annotations

import polars as pl
import streamlit as st

from kneepoint.app import charts, queries
from kneepoint.app import wording as w
from kneepoint.app.web import state, ui

st.title("SQL workloads")
if not queries.has_marts():
    st.info("The warehouse is empty. Upload result files on the **Upload** page.")
    st.stop()
if not ui.need_marts("fct_query_time", "fct_query_io"):
    st.stop()


# StatisticsParser's column names: 'logical reads', not logical_reads.
NAMES = {
    "table_row": "row",
    "table_name": "table",
    "logical_reads_pct": "% of logical reads",
    "logical_reads_pct_of_statement": "% of logical reads",
    "compile_cpu_ms": "compile CPU ms",
    "compile_elapsed_ms": "compile elapsed ms",
    "execution_cpu_ms": "CPU ms",
    "execution_elapsed_ms": "elapsed ms",
}


version = queries.data_version()
sql_disks = state.cached(queries.sql_disks, version)
if not sql_disks:
    st.info(
        "No SQL Server statistics stored yet. Run your query with `SET STATISTICS IO, TIME ON`, copy the "
        "**Messages** tab to a text file and upload it on the **Upload** page, labelled with the disk the database "
        "is on."
    )
    st.stop()

chosen = state.disks_picker(sql_disks, default=sql_disks[:1], label="Disks the databases were on")
if not chosen:
    st.info("Choose at least one disk.")
    st.stop()
files = state.cached(queries.sql_files, version, tuple(chosen))
file_labels = {"": f"All files ({files.height})"} | {
    r["file_id"]: f"{r['file_name']} · {r['disk_key']} · {w.plural(r['statements'], 'statement')}"
    for r in files.iter_rows(named=True)
}
file_id = state.select_param("File", "file", list(file_labels), fmt=file_labels.get) or None

totals = state.cached(queries.time_totals, version, tuple(chosen), file_id)
statements = state.cached(queries.statements, version, tuple(chosen), file_id)
tables = state.cached(queries.statement_tables, version, tuple(chosen), file_id)
unit = "MiB" if state.toggle("MiB/s (2²⁰ bytes) instead of MB/s (10⁶)", "mib") else "MB"

# The totals StatisticsParser prints under its grids: compile and execution time, and the I/O of every table.
cols = st.columns(3) + st.columns(3)  # two rows: the figures are wide (317,531 ms)
untimed = totals["statements"] - totals["timed"]
cols[0].metric(
    "Statements",
    f"{totals['statements']:,}",
    help=f"{w.plural(untimed, 'statement')} without an execution time (failed, or not timed)" if untimed else None,
)
cols[1].metric(
    "CPU time", f"{(totals['total_cpu_ms'] or 0):,.0f} ms", help=f"compile {totals['compile_cpu_ms'] or 0:,.0f} ms"
)
cols[2].metric(
    "Elapsed time",
    f"{(totals['total_elapsed_ms'] or 0):,.0f} ms",
    help=f"compile {totals['compile_elapsed_ms'] or 0:,.0f} ms",
)
cols[3].metric("Logical reads", f"{(totals['logical_reads'] or 0):,}", help="8 KiB pages from the buffer pool")
cols[4].metric(
    "Disk reads",
    f"{(totals['pages_read'] or 0):,}",
    help=f"8 KiB pages, physical + read-ahead: {w.fmt_bytes(totals['read_bytes'], unit)}",
)
cols[5].metric(
    "Read throughput",
    w.fmt_throughput(totals["effective_read_bytes_per_s"], unit),
    help="Effective: pages read × 8 KiB over the execution time of the statements that read.",
)

st.subheader("Statements")
statements = statements.with_columns(
    pl.Series("status", [w.statement_status(r) for r in statements.iter_rows(named=True)], dtype=pl.String)
)
view = statements.select(
    pl.col("file_name").alias("file"),
    (pl.col("statement_index") + 1).alias("statement"),
    pl.col("source_line").alias("line"),
    "status",
    "compile_cpu_ms",
    "compile_elapsed_ms",
    "execution_cpu_ms",
    "execution_elapsed_ms",
    "tables",
    "scan_count",
    "logical_reads",
    "physical_reads",
    "read_ahead_reads",
    "pages_read",
    (pl.col("effective_read_bytes_per_s") / w.THROUGHPUT_UNITS[unit][2]).alias(f"effective read {unit}/s"),
    pl.Series("CPU / elapsed", [w.cpu_sentence(v) for v in statements["cpu_to_elapsed"].to_list()], pl.String),
    pl.col("disk_key").alias("disk"),
)
# A statement that failed or was not timed shows no times (a dash), never 0 ms.
timed = view["status"] == "timed"
view = view.with_columns(
    pl.when(pl.lit(timed)).then(pl.col(c)).otherwise(None).alias(c)
    for c in ("compile_cpu_ms", "compile_elapsed_ms", "execution_cpu_ms", "execution_elapsed_ms")
)
ui.table(view, NAMES)

# Each statement on its disk's throughput curve: which benchmark workload to compare with is the user's call
# (SQL Server reads 8 KiB pages at random and read-ahead runs of up to 512 KiB).
on_disks = sorted(set(statements.drop_nulls("effective_read_bytes_per_s")["disk_key"].to_list()))
curve_disks = [d for d in on_disks if d in set(state.cached(queries.disks, version)["disk_key"].to_list())]
st.subheader("On the disk's throughput curve")
if not curve_disks:
    st.info(
        "No benchmark results for these disks: upload a DiskSpd, SQLIO, fio or CrystalDiskMark run of the same "
        "disk (same label) to see where these statements sit on its curve."
    )
else:
    options = state.cached(queries.series_options, version, tuple(curve_disks))
    reads = options.filter(pl.col("direction") == "read")
    series = state.series_picker(reads if not reads.is_empty() else options)
    points = state.cached(queries.curve_points, version, tuple(curve_disks), series)
    saturation = state.cached(queries.saturation, version, tuple(curve_disks), series)
    placed = state.cached(queries.statements_on_curve, version, tuple(curve_disks), series, file_id)
    placed = placed.with_columns(
        pl.Series(
            "label",
            [
                f"#{i + 1}: {w.fmt_throughput(b, unit)}, {w.cpu_sentence(c)}"
                for i, b, c in placed.select("statement_index", "effective_read_bytes_per_s", "cpu_to_elapsed").rows()
            ],
            dtype=pl.String,
        )
    )
    colors = state.colors(version)
    ui.chart(
        charts.statements_on_curve_figure(points, placed, unit, saturation, colors),
        placed,
        f"statements on {w.workload_title(*series)}",
        "statements_curve",
    )
    beyond = placed.filter(pl.col("curve_outstanding_io").is_null())
    for r in beyond.iter_rows(named=True):
        st.caption(
            f"Statement #{r['statement_index'] + 1} ({ui.md(r['file_name'])}) read at "
            f"{w.fmt_throughput(r['effective_read_bytes_per_s'], unit)}, more than this curve ever reached "
            f"({w.fmt_throughput(r['curve_best_bytes_per_s'], unit)}): compare with a larger block size."
        )

st.subheader("Tables")
st.caption("I/O per table over all the statements shown (8 KiB pages), with the Total row.")
table_totals = state.cached(queries.table_totals, version, tuple(chosen), file_id)
ui.table(table_totals.with_columns(pl.col("logical_reads_pct").round(1)), NAMES)
# the counters StatisticsParser prints per table line (the totals' pages read and bytes are not printed there)
io_columns = ["table_row", "table_name", *queries.IO_COUNTERS[:-2], "logical_reads_pct_of_statement"]
for _, lines in tables.group_by("statement_id", maintain_order=True):
    first = lines.row(0, named=True)
    total = {c: None for c in io_columns} | {
        "table_name": "Total",
        "scan_count": first["statement_scan_count"],
        "logical_reads": first["statement_logical_reads"],
        "physical_reads": first["statement_physical_reads"],
        "read_ahead_reads": first["statement_read_ahead_reads"],
        "lob_logical_reads": first["statement_lob_logical_reads"],
        "logical_reads_pct_of_statement": 100.0 if first["statement_logical_reads"] else None,
    }
    grid = pl.concat([lines.select(io_columns), pl.DataFrame([total], schema=lines.select(io_columns).schema)])
    with st.expander(
        f"Statement #{first['statement_index'] + 1}: {w.plural(first['statement_tables'], 'table')}, "
        f"{w.fmt_int(first['statement_logical_reads'])} logical reads ({ui.md(first['file_name'])}, STATISTICS IO "
        f"from line {first['source_line']})"
    ):
        ui.table(grid, NAMES)
