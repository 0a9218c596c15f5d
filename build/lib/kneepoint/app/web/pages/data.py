"""Stored files: what is in the warehouse, with relabel, delete (confirmed) and download of the original bytes.

A file imported from an anonymized bundle (`kneepoint import`) has no original bytes: the bundle leaves them
out, since they hold every name the anonymization replaced. The page says so instead of offering a download."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl
import streamlit as st

from kneepoint.app import queries
from kneepoint.app.web import state, uploads
from kneepoint.app.web.uploads import md_literal
from kneepoint.ingest.errors import WarehouseBusy
from kneepoint.ingest.warehouse import connect, delete_file, relabel_file

st.title("Stored files")


@st.cache_data(show_spinner=False, max_entries=16)
def _with_original_bytes(db: str, version: tuple) -> frozenset[str]:
    """Ids of the files whose original bytes are stored; `version` is the cache key (queries.data_version)."""
    con = connect(db)
    try:
        return frozenset(r[0] for r in con.execute("SELECT file_id FROM raw_file_contents").fetchall())
    finally:
        con.close()


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

notice = st.session_state.pop("data_notice", None)
if notice:
    (st.success if notice[0] == "ok" else st.error)(md_literal(notice[1]))

if files.is_empty():
    st.info("No files stored yet: add some on the **Upload** page.")
    st.stop()

with_bytes = _read(_with_original_bytes, str(queries.current_db()), version)
files = files.with_columns(pl.col("file_id").is_in(list(with_bytes)).alias("original_bytes"))
without_bytes = files.height - int(files["original_bytes"].sum())
st.caption(
    f"{files.height} file(s) in `{queries.current_db()}`. Original bytes are kept and can be downloaded"
    + (
        f", except for {without_bytes} file(s) imported from an anonymized bundle, which leaves them out."
        if without_bytes
        else "."
    )
)
st.dataframe(
    files.select(
        "name",
        "format",
        "tool_version",
        "disk",
        "host",
        "runs",
        "records",
        pl.col("size_bytes"),
        "ingested_at",
        "tags",
        "original_bytes",
        "file_id",
    ),
    hide_index=True,
    column_config={
        "original_bytes": st.column_config.CheckboxColumn(
            "original bytes", help="Unticked: imported from an anonymized bundle, nothing to download."
        ),
        "name": st.column_config.TextColumn("file", width="large"),
        "tool_version": "tool version",
        "size_bytes": st.column_config.NumberColumn("size (bytes)", format="localized"),
        "ingested_at": "ingested at (UTC)",
        "file_id": "file id",
    },
)

labels = {r["file_id"]: f"{r['name']} · {r['disk']} · {r['file_id']}" for r in files.iter_rows(named=True)}
file_id = state.select_param("File", "file", list(labels), fmt=labels.get)
row = files.filter(pl.col("file_id") == file_id).row(0, named=True)
has_bytes = bool(row["original_bytes"])


def _change(action: str, fn) -> None:
    """Run one change to the raw layer, then rebuild the models; the outcome is shown after the rerun. The
    warehouse is held from the change to the end of the build, so no other process takes it in between."""
    db = queries.current_db()
    try:
        with st.spinner(md_literal(f"{action} and rebuilding the models…")), uploads.holding_warehouse(db) as con:
            fn(con)
            result = uploads.rebuild(db)
    except (WarehouseBusy, ValueError, KeyError) as exc:
        st.session_state["data_notice"] = ("error", f"{action} failed: {exc}")
    else:
        if result.success:
            st.session_state["data_notice"] = ("ok", f"{action}: done; models up to date.")
        else:
            st.session_state["data_notice"] = (
                "error",
                f"{action}: done, but the model build failed: " + "; ".join(result.failures),
            )
    st.rerun()


# A control, not tabs: tabs fall back to the first one when a rerun changes the page above them.
action = st.segmented_control(
    "Action", ["Download", "Relabel", "Delete"], default="Download", key="action", bind="query-params"
)

if action == "Download":
    st.write(
        f"**{md_literal(row['name'])}**: {row['format']} {row['tool_version'] or ''}, {row['runs']} run(s), "
        f"{row['size_bytes']:,} bytes, stored {row['ingested_at']}."
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
        if not new_disk.strip():
            st.error("The disk label cannot be empty.")
        else:
            _change(
                f"Relabel {row['name']} as {queries.disk_key(new_disk, new_host)}",
                lambda con: relabel_file(con, file_id, disk=new_disk.strip(), host=new_host.strip()),
            )

elif action == "Delete":
    st.write(
        f"Deleting removes **{md_literal(row['name'])}** ({row['records']} record(s) on disk "
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
        _change(f"Delete {row['name']}", lambda con: delete_file(con, file_id))
