"""Stored files: what is in the warehouse, with relabel, delete (confirmed) and download of the original bytes.

A file imported from an anonymized bundle (`kneepoint import`) has no original bytes: the bundle leaves them
out, since they hold every name the anonymization replaced. The page says so instead of offering a download."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl
import streamlit as st

from kneepoint.app import queries
from kneepoint.app import wording as w
from kneepoint.app.web import state, ui, uploads
from kneepoint.app.web.uploads import md_literal
from kneepoint.ingest.errors import ReadOnlyWarehouse, WarehouseBusy
from kneepoint.ingest.labels import LabelError, check_label
from kneepoint.ingest.warehouse import delete_file, relabel_file

st.title("Stored files")


def _read(fn: Callable[..., Any], *args: object) -> Any:
    """A warehouse read; it waits for another process's write lock (KNEEPOINT_LOCK_WAIT_S), then the page says
    so instead of showing a traceback."""
    try:
        return uploads.serialized(fn, *args)
    except WarehouseBusy as exc:
        st.error(md_literal(str(exc)) + "\n\nReload the page when it has finished.")
        st.stop()


version = queries.data_version()
files = _read(state.cached, queries.stored_files, version)

if st.session_state.pop("data_deleted", False):
    # The file is gone: nothing is chosen next, and the action is back on Download, never on Delete with the
    # next file preselected.
    st.query_params.pop("file", None)
    st.session_state["action"] = "Download"  # bound to the URL's `action`
notice = st.session_state.pop("data_notice", None)
if notice:
    (st.success if notice[0] == "ok" else st.error)(md_literal(notice[1]))

if files.is_empty():
    st.info("No files stored yet: add some on the **Upload** page.")
    st.stop()

without_bytes = files.height - int(files["original_bytes"].sum())
st.caption(
    f"{w.plural(files.height, 'file')} in `{queries.current_db()}`. Original bytes are kept and can be downloaded"
    + (
        f", except for {w.plural(without_bytes, 'file')} imported from an anonymized bundle, which leaves them out."
        if without_bytes
        else "."
    )
)
ui.table(
    files.select(
        "name",
        pl.col("format").map_elements(w.format_name, return_dtype=pl.String),
        "tool_version",
        "disk",
        "host",
        "runs",
        "records",
        "size_bytes",
        "ingested_at",
        "tags",
        "original_bytes",
        "file_id",
    ),
    names={
        "name": "file",
        "size_bytes": "size (bytes)",
        "ingested_at": "ingested at (UTC)",
        "original_bytes": "original bytes",
        "file_id": "file id",
    },
)

labels = {
    r["file_id"]: f"{r['name']} · {queries.disk_key(r['disk'], r['host'])} · {r['file_id']}"
    for r in files.iter_rows(named=True)
}
# The labels are part of the options: after a relabel the picker shows the new label at once.
by_label = {v: k for k, v in labels.items()}
current = labels.get(st.query_params.get("file", ""))
picked = st.selectbox(
    "File",
    list(by_label),
    index=list(by_label).index(current) if current else None,
    placeholder="Choose a file to download, relabel or delete",
    key=f"file_pick_{version}",
)
file_id = by_label.get(picked) if picked else None
if file_id:
    st.query_params["file"] = file_id
else:
    st.query_params.pop("file", None)
# A control, not tabs: tabs fall back to the first one when a rerun changes the page above them. Drawn with or
# without a file, so that its value (and the URL's `action`) follows a reset after a delete.
action = st.segmented_control(
    "Action",
    ["Download", "Relabel", "Delete"],
    # the default only when the session holds no value (a reset after a delete sets it)
    default=None if "action" in st.session_state else "Download",
    key="action",
    bind="query-params",
    disabled=not file_id,
)
if not file_id:
    st.stop()
if action in ("Relabel", "Delete") and not _read(queries.can_write):
    # An account that may only read (a PostgreSQL role granted SELECT): said here, not after a failed change.
    st.warning(md_literal(w.capital(w.read_only(queries.warehouse_label()))) + ".", icon=":material/lock:")
    st.stop()
row = files.filter(pl.col("file_id") == file_id).row(0, named=True)
has_bytes = bool(row["original_bytes"])


def _change(action: str, fn, deleted: bool = False) -> None:
    """Run one change to the raw layer, then rebuild the models; the outcome is shown after the rerun. The
    warehouse is held from the change to the end of the build, so no other process takes it in between."""
    db = queries.current_db()
    try:
        with st.spinner(md_literal(f"{action} and rebuilding the models…")), uploads.holding_warehouse(db) as con:
            fn(con)
            result = uploads.rebuild(db)
    except ReadOnlyWarehouse:
        st.session_state["data_notice"] = ("error", f"{action} failed: {w.read_only(queries.warehouse_label())}.")
    except (WarehouseBusy, ValueError, KeyError) as exc:
        st.session_state["data_notice"] = ("error", f"{action} failed: {exc}")
    else:
        if deleted:
            st.session_state["data_deleted"] = True
        if result.success:
            st.session_state["data_notice"] = ("ok", f"{action}: done; models up to date.")
        else:
            st.session_state["data_notice"] = (
                "error",
                f"{action}: done, but the model build failed: " + "; ".join(result.failures),
            )
    st.rerun()


if action == "Download":
    st.write(
        f"**{md_literal(row['name'])}**: {w.format_name(row['format'])} {md_literal(row['tool_version'] or '')}, "
        f"{w.plural(row['runs'], 'run')}, {w.plural(row['size_bytes'], 'byte')}, "
        f"stored {str(row['ingested_at'])[:16]} UTC."
    )
    if row.get("notes"):
        st.caption(md_literal(row["notes"]))
    if has_bytes:
        # The stored name may be `archive.zip!entry`: the download is named after the entry.
        download_name = row["name"].split("!")[-1].replace("/", "_") or f"{file_id}.txt"
        st.download_button(
            "Download the original file",
            data=lambda: uploads.serialized(queries.file_content, file_id)[1],
            file_name=download_name,
            mime="application/octet-stream",
            key="download_original",
            icon=":material/download:",
            on_click="ignore",
        )
    else:
        st.info(
            "No original file to download: this file was imported from an anonymized bundle, which leaves the "
            "original bytes out (they hold every name the anonymization replaced). Its runs, labels and "
            "provenance (name, size, sha256) are here; the original stays with whoever made the bundle.",
            icon=":material/visibility_off:",
        )

elif action == "Relabel":
    with st.form("relabel"):
        new_disk = st.text_input("Disk label", value=row["disk"])
        new_host = st.text_input("Host (empty: none)", value=row["host"] or "")
        submitted = st.form_submit_button("Relabel and rebuild", type="primary")
    if submitted:
        try:
            for kind, value in (("disk label", new_disk), ("host label", new_host)):
                check_label(kind, value)
            problem = None if new_disk.strip() else "The disk label cannot be empty."
        except LabelError as exc:
            # checked here, before the change: the change's own failure would quote the whole label back
            problem = md_literal(w.capital(str(exc))) + ". Nothing was changed."
        if problem:
            st.error(problem)
        else:
            _change(
                f"Relabel {row['name']} as {queries.disk_key(new_disk, new_host)}",
                lambda con: relabel_file(con, file_id, disk=new_disk.strip(), host=new_host.strip()),
            )

elif action == "Delete":
    st.write(
        f"Deleting removes **{md_literal(row['name'])}** ({w.plural(row['records'], 'record')} on disk "
        f"*{md_literal(row['disk'])}*) and every row that "
        "came from it; its curves and saturation points are rebuilt without it. "
        + (
            "This cannot be undone: download the file first if you may need it."
            if has_bytes
            else "This cannot be undone here, and there is no original file to download first (anonymized "
            "bundle); importing the bundle again brings its rows back."
        )
    )
    sure = st.checkbox(f"Yes, delete {md_literal(row['name'])}", key=f"confirm_delete_{file_id}")
    if st.button("Delete the file", type="primary", disabled=not sure, key="delete"):
        _change(f"Delete {row['name']}", lambda con: delete_file(con, file_id), deleted=True)
