"""kneepoint's Streamlit entry point: navigation, and the models caught up before a page reads them; each page is a
thin module in app/web/views/ (not pages/: Streamlit lists a pages/ folder beside the entry point as pages of their
own, run without the entry point, when the first request names one)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from kneepoint.app import queries
from kneepoint.app.web import uploads
from kneepoint.app.web.uploads import md_literal
from kneepoint.ingest.build import models_behind
from kneepoint.ingest.errors import ReadOnlyWarehouse, WarehouseBusy
from kneepoint.ingest.warehouse import Location, exists


@st.cache_resource
def _checked() -> dict[Location, tuple[float, float]]:
    """The version each warehouse (a DuckDB file, a PostgreSQL database) was last checked at (kept across reruns
    and sessions of this process): a page load checks again only after the warehouse changed."""
    return {}


def catch_up() -> None:
    """A build an earlier change left unfinished (a process killed during its build, `kneepoint ingest
    --no-build`) is completed before a page reads, so no page shows models behind the stored files."""
    db = queries.current_db()
    version = queries.data_version(db)
    if not exists(db) or _checked().get(db) == version:
        return
    try:
        with uploads.holding_warehouse(db, wait_s=0) as con:
            if models_behind(con):
                with st.spinner("Bringing the models up to date with the stored files…"):
                    result = uploads.rebuild(db)
                if not result.success:
                    st.error("The model build failed: " + md_literal("; ".join(result.failures)))
    except WarehouseBusy:
        return  # another process is changing the warehouse: it builds, and the page says busy if it must wait
    except ReadOnlyWarehouse:
        return  # an account that may only read: the pages show the models as they are; a writer's build updates them
    _checked()[db] = queries.data_version(db)


HERE = Path(__file__).resolve().parent
PAGES = HERE / "views"
# A local image: a material-symbol page icon makes the browser fetch its SVG from a font CDN.
st.set_page_config(page_title="kneepoint", page_icon=str(HERE / "favicon.png"), layout="wide")

nav = st.navigation(
    {
        "Disks": [
            st.Page(PAGES / "curves.py", title="Curves", icon=":material/show_chart:", url_path="curves", default=True),
            st.Page(PAGES / "compare.py", title="Compare", icon=":material/compare_arrows:", url_path="compare"),
            st.Page(PAGES / "sql.py", title="SQL workloads", icon=":material/database:", url_path="sql"),
            st.Page(PAGES / "workloads.py", title="Workloads", icon=":material/groups:", url_path="workloads"),
            st.Page(
                PAGES / "production.py",
                title="Production vs baseline",
                icon=":material/monitor_heart:",
                url_path="production",
            ),
            st.Page(PAGES / "report.py", title="Share", icon=":material/ios_share:", url_path="share"),
        ],
        "Files": [
            st.Page(PAGES / "upload.py", title="Upload", icon=":material/upload:", url_path="upload"),
            st.Page(PAGES / "data.py", title="Stored files", icon=":material/folder_open:", url_path="data"),
        ],
    }
)
try:
    with uploads.kept_open(queries.current_db()):
        catch_up()
        # Only where this account may write: the warm-up records a change build (a read-only role never builds).
        if exists(queries.current_db()) and queries.can_write():
            uploads.warm_up_builds(queries.current_db())
        nav.run()
except WarehouseBusy as exc:
    # The command line (or another app) holds the warehouse longer than KNEEPOINT_LOCK_WAIT_S: say so, no traceback.
    st.error(md_literal(str(exc)) + "\n\nReload the page when it has finished.")
