"""kneepoint's Streamlit entry point: navigation only; each page is a thin module in app/views/."""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

# `streamlit run app/streamlit_app.py` puts app/ on sys.path, not the project root.
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.uploads import md_literal  # noqa: E402 - after the project root is on sys.path
from ingest.errors import WarehouseBusy  # noqa: E402

st.set_page_config(page_title="kneepoint", page_icon=":material/show_chart:", layout="wide")

PAGES = Path(__file__).resolve().parent / "views"
nav = st.navigation(
    {
        "Disks": [
            st.Page(PAGES / "curves.py", title="Curves", icon=":material/show_chart:", url_path="curves", default=True),
            st.Page(PAGES / "compare.py", title="Compare", icon=":material/compare_arrows:", url_path="compare"),
            st.Page(PAGES / "sql.py", title="SQL workloads", icon=":material/database:", url_path="sql"),
            st.Page(PAGES / "report.py", title="Share", icon=":material/ios_share:", url_path="share"),
        ],
        "Files": [
            st.Page(PAGES / "upload.py", title="Upload", icon=":material/upload:", url_path="upload"),
            st.Page(PAGES / "data.py", title="Stored files", icon=":material/folder_open:", url_path="data"),
        ],
    }
)
try:
    nav.run()
except WarehouseBusy as exc:
    # The command line (or another app) holds the warehouse longer than KNEEPOINT_LOCK_WAIT_S: say so, no traceback.
    st.error(md_literal(str(exc)) + "\n\nReload the page when it has finished.")
