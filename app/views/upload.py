"""Upload: result files (or a .zip) through the browser, labelled with a disk; models rebuild after."""

from __future__ import annotations

import streamlit as st

from app import queries, state
from ingest.load import ingest_inputs
from ingest.sources import iter_upload

st.title("Upload results")
st.write(
    "fio JSON or text, SQLIO, DiskSpd (text or XML), CrystalDiskMark / KDiskMark, or SQL Server "
    "`SET STATISTICS IO, TIME` output. Several files or a .zip at once; the format is detected from the content."
)

known = state.cached(queries.disk_labels, queries.data_version())
with st.form("upload", clear_on_submit=False):
    files = st.file_uploader("Result files", accept_multiple_files=True, key="files")
    disk = st.text_input(
        "Disk label (required)",
        placeholder="e.g. Premium P10, 4-disk Storage Spaces stripe",
        help=("Labels already used: " + ", ".join(known)) if known else None,
    )
    host = st.text_input("Host (optional)")
    submitted = st.form_submit_button("Ingest", type="primary")

if submitted:
    if not files:
        st.error("Choose at least one file.")
    elif not disk.strip():
        st.error("A disk label is required: it is how the curves name this disk.")
    else:
        items = [item for f in files for item in iter_upload(f.name, f.getvalue())]
        with st.status(f"Ingesting {len(items)} file(s)…", expanded=True) as status:
            report = ingest_inputs(
                queries.current_db(), items, disk=disk, host=host or None, progress=lambda o: st.write(o.describe())
            )
            if report.build is not None and not report.build.success:
                status.update(label="Stored, but the model build failed", state="error")
                st.error("\n".join(report.build.failures))
            elif report.errors and not report.added:
                status.update(label="Nothing added", state="error")
            else:
                status.update(label=f"{len(report.added)} file(s) added; models rebuilt", state="complete")
        for outcome in report.errors:
            st.error(outcome.reason)
        if report.added:
            key = disk.strip() + (f" @ {host.strip()}" if host.strip() else "")
            st.success(f"Added {sum(o.runs for o in report.added)} run(s) for disk **{key}**.")
            st.page_link(
                "views/curves.py",
                label=f"See the curves of {key}",
                icon=":material/show_chart:",
                query_params={"disk": key},
            )
