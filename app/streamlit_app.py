"""kneepoint's Streamlit entry point: navigation only; each page is a thin module in app/pages/."""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

# `streamlit run app/streamlit_app.py` puts app/ on sys.path, not the project root.
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

st.set_page_config(page_title="kneepoint", page_icon=":material/show_chart:", layout="wide")

PAGES = Path(__file__).resolve().parent / "views"
nav = st.navigation(
    [
        st.Page(PAGES / "curves.py", title="Curves", icon=":material/show_chart:", url_path="curves", default=True),
        st.Page(PAGES / "upload.py", title="Upload", icon=":material/upload:", url_path="upload"),
    ]
)
nav.run()
