"""Upload: result files or .zip archives by drag and drop; each file previewed (format, tool version, runs,
warnings, errors) before it is stored under a disk label; the models rebuild in-process afterwards.

File names, labels and messages quoting them are shown through `uploads.md_literal`: as text, never as Markdown.
When another process (a `kneepoint ingest`) holds the warehouse, the page still shows the files and labels and
says so; a store then waits for it (KNEEPOINT_LOCK_WAIT_S) or says "warehouse busy" and can be pressed again."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import polars as pl
import streamlit as st
from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx

from kneepoint.app import queries
from kneepoint.app import wording as w
from kneepoint.app.web import state, uploads
from kneepoint.app.web.uploads import md_literal
from kneepoint.ingest import formats, units
from kneepoint.ingest.errors import ReadOnlyWarehouse, WarehouseBusy
from kneepoint.ingest.labels import LabelError
from kneepoint.ingest.sources import Limits, MiB

LIMITS = Limits()
# The Workloads page (load series): linked after a store of load tables or HammerDB logs once it exists.
WORKLOADS_PAGE = Path(__file__).with_name("workloads.py")

LABEL_KEYS = ("upload_disk", "upload_host", "upload_tags", "upload_notes")

st.title("Upload results")
st.write(
    "Reads "
    + ", ".join(formats.titles().values())
    + " output. Drop several files or a .zip at once: the format of each file is detected from its content, and a "
    "file that cannot be read never blocks the others."
)
# An account that may only read (a PostgreSQL role granted SELECT): said before anything is chosen, Store disabled.
writable = uploads.serialized(queries.can_write)
if not writable:
    st.warning(md_literal(w.capital(w.read_only(queries.warehouse_label()))) + ".", icon=":material/lock:")
if st.session_state.pop("upload_clear_labels", False):
    # The last batch was stored: the next one starts with empty labels instead of inheriting them.
    for key in LABEL_KEYS:
        st.session_state[key] = ""
st.caption(
    f"Limits: {LIMITS.max_file_bytes // MiB} MB per file (`KNEEPOINT_MAX_FILE_MB`); a .zip may expand to "
    f"{LIMITS.max_zip_total_bytes // MiB} MB (`KNEEPOINT_MAX_ZIP_MB`) and {LIMITS.max_zip_entries:,} files."
)


def _show_result(result: dict) -> None:
    """The last store's outcome, at the top of the page where the eye lands after the rerun."""
    for reason in result["errors"]:
        st.error(md_literal(reason))
    for name, file_id in result["duplicates"]:
        st.info(
            f"{md_literal(name)}: the same bytes are already stored as file {file_id}; nothing added. To change its "
            "disk, relabel it on **Stored files**."
        )
    if result["build_failures"]:
        st.error("The model build failed:\n\n" + "\n\n".join(md_literal(f) for f in result["build_failures"]))
    if result["added"]:
        # a counter log's "runs" are its samples: said as observed intervals, not as benchmark runs
        observed = set(result.get("observed_files", ()))
        runs = sum(r for name, r in result["added"] if name not in observed)
        intervals = result.get("observed_records", 0)
        said = ([w.plural(runs, "run")] if runs or not observed else []) + (
            [w.plural(intervals, "observed interval")] if intervals else []
        )
        added = " and ".join(said)
        key = md_literal(result["key"])
        st.success(f"Added {added} for disk **{key}** from {w.plural(len(result['added']), 'file')}.")
        if result["benchmarks"]:
            st.page_link(
                "views/curves.py",
                label=f"See the curves of {key}",
                icon=":material/show_chart:",
                query_params={"disk": result["key"]},
            )
        if result.get("production"):
            st.page_link(
                "views/production.py",
                label=f"See the production load of {key} against its benchmark",
                icon=":material/monitor_heart:",
                query_params={"disk": result["key"]},
            )
        if result.get("workloads") and WORKLOADS_PAGE.is_file():
            st.page_link(
                "views/workloads.py",
                label=f"See the load series of {key}",
                icon=":material/groups:",
                query_params={"disk": result["key"]},
            )
        if result["statistics"]:
            st.page_link(
                "views/sql.py",
                label=f"See the SQL workloads of {key}",
                icon=":material/database:",
                query_params={"disk": result["key"]},
            )


result_slot = st.container()  # the last store's outcome goes above the uploader
# A new key empties the uploader after a successful store.
generation = st.session_state.setdefault("upload_generation", 0)
files = st.file_uploader(
    "Result files or .zip archives",
    accept_multiple_files=True,
    key=f"files_{generation}",
    max_upload_size=max(1, LIMITS.max_file_bytes // MiB),
    help="Drag and drop files here, or browse.",
)
if files:
    st.session_state.pop("upload_result", None)  # a new batch: the last outcome no longer applies
elif st.session_state.get("upload_result"):
    with result_slot:
        _show_result(st.session_state["upload_result"])

# Previews are kept per uploaded file, so a rerun (typing a label) does not parse again.
cache: dict[str, list[uploads.Preview]] = st.session_state.setdefault("upload_previews", {})
previews: list[uploads.Preview] = []
current = set()
for f in files or []:
    key = f"{f.file_id}:{f.name}:{f.size}"
    current.add(key)
    if key not in cache:
        with st.spinner(f"Reading {md_literal(f.name)}…"):
            cache[key] = uploads.preview_upload(f.name, f.getvalue(), LIMITS)
    previews.extend(cache[key])
for key in set(cache) - current:
    del cache[key]

# The warehouse reads below wait for another process's write lock; the first that gives up says so, and the
# page goes on without what it would have read (no "already stored" marks, no label suggestions).
busy: WarehouseBusy | None = None
try:
    stored = uploads.serialized(queries.stored_by_sha256, [p.item.sha256 for p in previews if p.item])
    uploads.mark_stored(previews, stored)
except WarehouseBusy as exc:
    busy = exc

LOAD_KINDS = ("concurrent sessions", "concurrent users", "virtual users", "threads", "databases", "instances", "load")


def _mapping_forms(previews: list[uploads.Preview], cache: dict[str, list[uploads.Preview]]) -> None:
    """For each file that holds a table of figures but did not read (or was read with a mapping): which column is
    the load, the throughput and the response time. The mapping is stored with the file."""
    mappable = [p for p in previews if p.columns and p.item is not None and (p.error is not None or p.options)]
    if not mappable:
        return
    st.subheader("Column mapping")
    st.caption(
        "These files hold a table whose header does not say which column is the load, the throughput and the "
        "response time (or in which unit): say it here, and the file is read again. The mapping is stored with the "
        "file, so a rebuild, a shared bundle or a re-read gives the same figures."
    )
    for number, p in enumerate(mappable):
        _mapping_form(number, p, cache)


def _as_header_says(value: str | None) -> str:
    return value or "as its header says"


def _mapping_form(number: int, p: uploads.Preview, cache: dict[str, list[uploads.Preview]]) -> None:
    given = p.options or {}
    columns = list(range(1, len(p.columns) + 1))

    def column_name(k: int | None) -> str:
        return "—" if k is None else md_literal(f"{k}: {p.columns[k - 1]}")

    def chosen(key: str) -> int | None:
        spec = given.get(key, "")
        return int(spec) if spec.isdigit() and int(spec) in columns else None

    def index(options: list, value: Any) -> int:
        return options.index(value) if value in options else 0

    with st.form(f"upload_mapping_{number}"):
        st.markdown(f"**{md_literal(p.name)}**")
        left, middle, right = st.columns(3)
        load = left.selectbox(
            "Load column", columns, index=index(columns, chosen("load_column")), format_func=column_name
        )
        kinds: list[str | None] = [None, *LOAD_KINDS]
        kind = left.selectbox(
            "The load counts", kinds, index=index(kinds, given.get("load_kind")), format_func=_as_header_says
        )
        optional: list[int | None] = [None, *columns]
        throughput = middle.selectbox(
            "Throughput column", optional, index=index(optional, chosen("throughput_column")), format_func=column_name
        )
        rate_units: list[str | None] = [None, *units.load_throughput_units()]
        rate_unit = middle.selectbox(
            "Throughput unit",
            rate_units,
            index=index(rate_units, given.get("throughput_unit")),
            format_func=_as_header_says,
        )
        response = right.selectbox(
            "Mean response time column",
            optional,
            index=index(optional, chosen("response_column")),
            format_func=column_name,
        )
        time_units: list[str | None] = [None, "ms", "s", "min"]
        time_unit = right.selectbox(
            "Response time unit",
            time_units,
            index=index(time_units, given.get("response_unit")),
            format_func=lambda u: u or "as its header or cells say (mm:ss.ss, h:mm:ss)",
        )
        if not st.form_submit_button("Read with this mapping"):
            return
    if throughput is None and response is None:
        st.error("Choose a throughput column or a response time column (or both).")
        return
    options = {
        "load_column": str(load),
        "throughput_column": str(throughput) if throughput is not None else "",
        "response_column": str(response) if response is not None else "",
        "throughput_unit": rate_unit or "",
        "response_unit": time_unit or "",
        "load_kind": kind or "",
    }
    again = uploads.remap(p, options)
    for previews in cache.values():
        for i, old in enumerate(previews):
            if old is p:
                previews[i] = again
    st.rerun()


if previews:
    table = pl.DataFrame(
        {
            "file": [p.name for p in previews],
            "format": [w.format_name(p.format) if p.format else "" for p in previews],
            "tool version": [p.tool_version or "" for p in previews],
            "runs": [p.runs for p in previews],
            "records": [p.records for p in previews],
            "warnings": [len(p.warnings) for p in previews],
            "status": [p.status if p.error is None else "error" for p in previews],
        }
    )
    st.dataframe(table, hide_index=True)
    found: dict[str, int] = {}
    for p in previews:
        if p.ok:
            found[p.format] = found.get(p.format, 0) + 1
    errors = sum(p.error is not None for p in previews)
    st.caption(
        f"{w.plural(len(previews), 'file')}: "
        + (
            ", ".join(f"{w.format_name(fmt)} ×{n}" if n > 1 else w.format_name(fmt) for fmt, n in sorted(found.items()))
            or "none readable"
        )
        + f"; {w.plural(errors, 'error')}"
    )
    for p in previews:
        if p.error is not None:
            st.error(md_literal(p.error))
    _mapping_forms(previews, cache)
    warned = [p for p in previews if p.warnings]
    if warned:
        with st.expander(f"Warnings ({sum(len(p.warnings) for p in warned)})"):
            for p in warned:
                for warning in p.warnings:
                    st.warning(md_literal(f"{p.name}: {warning}"))

readable = [p for p in previews if p.ok]
version = queries.data_version()
used_disks: list[str] = []
used_hosts: list[str] = []
if busy is None:
    try:
        used_disks = uploads.serialized(state.cached, queries.disk_labels, version)
        used_hosts = uploads.serialized(state.cached, queries.host_labels, version)
    except WarehouseBusy as exc:
        busy = exc
if busy is not None:
    st.warning(
        md_literal(str(busy))
        + "\n\nThe files and labels stay here; storing waits for the warehouse, or says it is still busy."
    )


def _take(pick_key: str, field_key: str) -> None:
    """A clicked suggestion fills the text field (and the pill lets go, so it can be clicked again)."""
    if st.session_state.get(pick_key):
        st.session_state[field_key] = st.session_state[pick_key]
        st.session_state[pick_key] = None


def _offer(container: Any, title: str, options: list[str], pick_key: str, field_key: str) -> None:
    """Suggestions as pills; a click fills the text field."""
    if options:
        container.pills(
            title,
            options[:12],
            format_func=md_literal,
            key=pick_key,
            on_change=_take,
            args=(pick_key, field_key),
            wrap=True,
        )


st.subheader("Labels")
left, right = st.columns(2)
disk = left.text_input(
    "Disk label (required)",
    key="upload_disk",
    placeholder="e.g. Premium P10, 4-disk Storage Spaces stripe",
    help="How the curves name this disk. Files measured on the same disk should share one label.",
)


targets = uploads.label_suggestions(readable, [])
_offer(left, "Targets named in the files", targets, "upload_target_pick", "upload_disk")
_offer(left, "Disk labels in use", [d for d in used_disks if d not in targets], "upload_disk_pick", "upload_disk")
host = right.text_input("Host (optional)", key="upload_host", placeholder="e.g. sql01")
_offer(right, "Hosts in use", used_hosts, "upload_host_pick", "upload_host")
tags = left.text_input("Tags (optional, comma-separated)", key="upload_tags", placeholder="e.g. azure, before-tuning")
notes = right.text_area("Notes (optional)", key="upload_notes", height=68)

n = len(readable)
clicked = st.button(
    f"Store {n} file{'s' if n != 1 else ''} and rebuild" if n else "Store and rebuild",
    type="primary",
    disabled=not files or not writable,
)

if clicked:
    if not disk.strip():
        st.error("A disk label is required: it is how the curves name this disk.")
    elif not readable:
        st.error("None of these files can be read; nothing to store.")
    else:
        with st.status(f"Storing {w.plural(n, 'file')}…", expanded=True) as status:
            bar = st.progress(0.0, text="Storing")
            done: list[int] = [0]

            def on_file(outcome) -> None:
                done[0] += 1
                bar.progress(done[0] / n, text=md_literal(f"{done[0]} / {n}: {outcome.describe()}"))

            def on_build() -> None:
                status.update(label="Files stored; building the models…")
                bar.progress(1.0, text="Files stored; building the models")

            run_context = get_script_run_ctx()

            def on_build_step(step: str) -> None:
                # dbt reports its steps from threads of its own: they draw on this page's run
                add_script_run_ctx(threading.current_thread(), run_context)
                bar.progress(1.0, text=md_literal(step))

            try:
                outcome = uploads.store_previews(
                    queries.current_db(),
                    readable,
                    disk=disk.strip(),
                    host=host.strip() or None,
                    tags=uploads.parse_tags(tags),
                    notes=notes.strip() or None,
                    on_file=on_file,
                    on_build=on_build,
                    on_build_step=on_build_step,
                )
            except LabelError as exc:
                status.update(label="Not stored: a label is too long", state="error")
                bar.empty()
                st.error(md_literal(str(exc)) + "\n\nNothing was stored. Shorten it and press **Store** again.")
                st.stop()
            except ReadOnlyWarehouse:
                status.update(label="Not stored: this account may only read the warehouse", state="error")
                bar.empty()
                st.error(md_literal(w.capital(w.read_only(queries.warehouse_label()))) + ". Nothing was stored.")
                st.stop()
            except WarehouseBusy as exc:
                status.update(label="Not stored: the warehouse is busy", state="error")
                bar.empty()
                st.error(
                    md_literal(str(exc))
                    + "\n\nNothing was stored. The files and labels stay here: press **Store** again to retry."
                )
                st.stop()  # the message stays on the page; the widgets above keep the files and labels
            if outcome.build is not None and not outcome.build.success:
                status.update(label="Stored, but the model build failed", state="error")
            elif not outcome.added:
                status.update(label="Nothing new stored", state="error" if outcome.errors else "complete")
            else:
                status.update(
                    label=f"{w.plural(len(outcome.added), 'file')} stored; models up to date", state="complete"
                )
        stored_names = {o.name for o in outcome.added}
        st.session_state["upload_result"] = {
            "key": queries.disk_key(disk, host),
            "benchmarks": any(p.benchmark_records for p in readable if p.name in stored_names),
            "statistics": any(
                p.records > p.benchmark_records + p.observed_records + p.load_records
                for p in readable
                if p.name in stored_names
            ),
            "workloads": any(p.load_records for p in readable if p.name in stored_names),
            "production": any(p.observed_records for p in readable if p.name in stored_names),
            "observed_files": [p.name for p in readable if p.name in stored_names and p.observed_records],
            "observed_records": sum(p.observed_records for p in readable if p.name in stored_names),
            "added": [(o.name, o.runs) for o in outcome.added],
            "duplicates": [(o.name, o.file_id) for o in outcome.duplicates],
            "errors": [o.reason or o.name for o in outcome.errors],
            "build_failures": outcome.build.failures if outcome.build and not outcome.build.success else [],
        }
        if outcome.added:
            # Empty the uploader and the labels for the next batch; the result stays on the page.
            st.session_state["upload_generation"] = generation + 1
            st.session_state["upload_clear_labels"] = True
            st.session_state["upload_previews"] = {}
            st.rerun()
        # Nothing stored (duplicates, errors): the files stay for another try, the outcome shows here.
        _show_result(st.session_state.pop("upload_result"))
