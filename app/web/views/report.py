"""Share: the self-contained HTML report, the data bundle and chart images for a storage vendor, anonymized on
request. The same code as `kneepoint report`, `export` and `images` (app/sharing/: report.py, bundle.py, images.py)."""

from __future__ import annotations

import plotly.io as pio
import streamlit as st

from kneepoint.app import queries
from kneepoint.app.sharing.anonymize import shared_warehouse
from kneepoint.app.sharing.bundle import bundle_bytes
from kneepoint.app.sharing.images import ensure_browser, images_zip
from kneepoint.app.sharing.report import LATENCY_TARGET_MS, app_colors, render
from kneepoint.app.web import state, ui
from kneepoint.ingest.errors import WarehouseBusy

st.title("Share with a vendor")
st.caption(
    "One HTML file that opens offline in any browser (interactive charts, saturation table, test conditions, "
    "checks, data appendix, provenance), a data bundle another kneepoint imports with `kneepoint import`, and "
    "the charts as images for slides."
)
if not queries.has_marts():
    st.info("The warehouse is empty. Upload result files on the **Upload** page.")
    st.stop()

version = queries.data_version()
every_disk = state.cached(queries.all_disk_keys, version)
uploaded = state.uploaded_disks(every_disk)
# The disks the user stored; the sample data's only when asked for, so a first report never sends them.
with_sample = st.toggle(
    "Offer the sample disks",
    key="share_sample",
    value=not uploaded,
    help="The sample data's disks (synthetic, and a small VM): left out of a report unless you choose them.",
)
offered = every_disk if with_sample else uploaded
if not offered:
    st.info("No disks of your own yet: upload your results on the **Upload** page, or offer the sample disks.")
    st.stop()
chosen = state.disks_picker(offered, default=uploaded or offered, label="Disks to share")
anonymize = st.toggle(
    "Anonymize",
    key="share_anonymize",
    help="Disk and host labels, computer and user names, file names, paths, drive letters, IP addresses, tags and "
    "comments become pseudonyms (Disk A, Host 1, Path 1); notes and the original files are left out.",
)
redact = st.text_area(
    "Also replace (one per line)",
    key="share_redact",
    disabled=not anonymize,
    placeholder="a project or customer name",
    help="Any other text to replace by a pseudonym (Label 1) wherever it appears.",
)
marked = [line.strip() for line in redact.splitlines() if line.strip()] if anonymize else []
target_ms = st.number_input(
    "Latency target for the summary (ms p99)",
    min_value=0.1,
    value=LATENCY_TARGET_MS,
    step=1.0,
    key="share_target",
    help="Each disk's summary gives the largest measured load whose p99 latency stays under it.",
    width=260,
)
settings = (tuple(chosen), anonymize, tuple(marked), target_ms, version)

if st.button("Build the report and the bundle", type="primary", disabled=not chosen, key="share_build"):
    try:
        with (
            st.spinner("Building" + (" an anonymized copy, then" if anonymize else "") + " the report and the bundle…"),
            shared_warehouse(queries.current_db(), chosen, anonymize, marked) as share,
        ):
            report = render(share, latency_target_ms=target_ms, colors=app_colors(queries.current_db(), share))
            bundle = bundle_bytes(share, report.html)
    except (WarehouseBusy, RuntimeError, KeyError) as exc:
        st.error(f"The report could not be built: {exc}")
    else:
        st.session_state["share_built"] = {
            "settings": settings,
            "html": report.html.encode("utf-8"),
            "bundle": bundle,
            "figures": [(c.name, c.figure.to_json()) for c in report.charts],
            "summary": report.summary,
            "colors": report.colors,
            "anonymized": report.anonymized,
        }

built = st.session_state.get("share_built")
if not built:
    st.stop()
if built["settings"] != settings:
    st.warning("Built for other disks or settings, or before new data arrived: build again to share what you see.")

st.subheader("Summary" + (" (anonymized)" if built["anonymized"] else ""))
colors = built["colors"]
for disk, sentence in built["summary"]:
    ui.swatch(disk, colors.get(disk, "#444"), sentence)
suffix = "-anonymized" if built["anonymized"] else ""
row = st.container(horizontal=True, gap="small")
row.download_button(
    f"Report (HTML, {len(built['html']) / 1e6:.1f} MB)",
    data=built["html"],
    file_name=f"kneepoint-report{suffix}.html",
    mime="text/html",
    icon=":material/description:",
    key="share_html",
    on_click="ignore",
)
row.download_button(
    f"Bundle (zip, {len(built['bundle']) / 1e6:.1f} MB)",
    data=built["bundle"],
    file_name=f"kneepoint-bundle{suffix}.zip",
    mime="application/zip",
    icon=":material/folder_zip:",
    key="share_bundle",
    on_click="ignore",
    help="Parquet marts and raw layer, the report and a manifest; `kneepoint import` loads it.",
)

st.subheader(f"Images for slides ({len(built['figures'])} charts)")
if not built["figures"]:
    st.info("No chart: no workload was measured at two loads or more.")
elif ensure_browser() is None:
    st.info("Images need Chrome or Chromium on the server (kaleido renders them): apt-get install chromium.")
else:
    figures = [(name, pio.from_json(spec)) for name, spec in built["figures"]]
    row = st.container(horizontal=True, gap="small")
    for fmt in ("png", "svg"):
        row.download_button(
            f"All charts as {fmt.upper()} (zip)",
            # rendered on click: kaleido takes a few seconds per dozen charts
            data=lambda fmt=fmt: images_zip(figures, fmt),
            file_name=f"kneepoint-charts{suffix}-{fmt}.zip",
            mime="application/zip",
            icon=":material/image:",
            key=f"share_{fmt}",
            on_click="ignore",
            help="PNG at 2400 px wide (sharp on a projector)" if fmt == "png" else "Vector images",
        )
