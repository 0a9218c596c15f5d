"""End to end in Debian's chromium: every page renders with its charts, a file of every format is uploaded and
charted, a stored file is relabelled and deleted, charts export. Screenshots of each page go to test-artifacts/."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from tests.browsing import screenshot
from tests.helpers import corpus_file

pytestmark = pytest.mark.browser

FIO_DISK = "sample vda (virtio, fio sweep) @ kneepoint-dev-vm"
P10_DISK = "synthetic P10 (modelled) @ synthetic-sql01"
STRIPE_DISK = "synthetic 4-disk Storage Spaces stripe (modelled) @ synthetic-sql01"
BUILD_TIMEOUT_MS = 180_000

# One real file per format the app reads (the shared corpus; SOURCES.md says where each comes from).
CORPUS = {
    "fio_json": ("fio", "fioplot-2.18-randread-clat-usec.json"),
    "fio_text": ("fio", "m1mac-3.19-normal-text-randread-8jobs-macos.txt"),
    "sqlio": ("sqlio", "dataelisabeth-random-read-64k-8outstanding.txt"),
    "diskspd": ("diskspd", "patricklang-containers-2.0.21-mibs-latency-readme.txt"),
    "diskspd_xml": ("diskspd", "pkb-2.0.21a-xml-rxml-4threads-seqread.xml"),
    "crystaldiskmark": ("crystaldiskmark", "cdm8.0.1-x64-default-comment-wdblue.txt"),
    "kdiskmark": ("crystaldiskmark", "kdiskmark-3.0.0-readme-example.txt"),
    "sqlstats": ("sqlstats", "jorriss-sampleoutput-en.txt"),
}


def wait_for_app(page) -> None:
    page.wait_for_selector("[data-testid='stApp']", timeout=60_000)
    page.wait_for_timeout(300)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=120_000)


def open_page(page, url: str) -> None:
    page.goto(url)
    wait_for_app(page)


def q(text: str) -> str:
    from urllib.parse import quote_plus

    return quote_plus(text)


def test_curves_show_saturation_and_export(page, app_server, tmp_path):
    open_page(page, f"{app_server}/?disk={q(FIO_DISK)}&pattern=random&op=read:100&bs=4096&dir=read")
    page.wait_for_selector(".js-plotly-plot .scatterlayer .trace", timeout=60_000)
    assert page.locator(".js-plotly-plot").count() >= 5
    iops = page.locator(".js-plotly-plot").first
    assert FIO_DISK in iops.locator(".legend").text_content()
    # the mart's saturation point, annotated on the chart (sample_data/fio/randread-4k-jobs1.json, job qd32)
    assert (
        "saturates at 32 outstanding:177,525 IOPS, 0.18 ms mean"
        in iops.locator(".annotation-text").first.text_content()
    )
    screenshot(page, "curves")

    with page.expect_download() as dl:
        page.get_by_role("button", name="CSV").first.click()
    csv = Path(dl.value.path()).read_text()
    assert csv.splitlines()[0].startswith("disk_key,") and "outstanding_io" in csv.splitlines()[0]
    with page.expect_download() as dl:
        page.get_by_role("button", name="HTML").first.click()
    html = Path(dl.value.path()).read_text()
    assert "plotly" in html and "saturates at 32 outstanding" in html
    with page.expect_download(timeout=60_000) as dl:
        page.get_by_role("button", name="SVG").first.click()
    assert Path(dl.value.path()).read_text().lstrip().startswith("<svg")

    # The per-thread view and the heatmap, from the URL alone.
    open_page(page, f"{app_server}/?disk={q(P10_DISK)}&pattern=random&op=read:100&bs=8192&dir=read&threads=true")
    page.wait_for_selector(".js-plotly-plot .heatmaplayer", timeout=60_000)
    assert "per thread count" in page.locator(".js-plotly-plot").first.text_content()
    screenshot(page, "curves-per-thread")


def test_compare_and_sql_pages(page, app_server):
    open_page(
        page,
        f"{app_server}/compare?disk={q(P10_DISK)}&disk={q(STRIPE_DISK)}&pattern=random&op=read:100&bs=8192"
        f"&dir=read&base={q(P10_DISK)}",
    )
    page.wait_for_selector(".js-plotly-plot .barlayer", timeout=60_000)
    assert "baseline" in page.locator(".js-plotly-plot").first.text_content()
    overlaid = page.locator(".js-plotly-plot").nth(1).locator(".legend").text_content()
    assert P10_DISK in overlaid and STRIPE_DISK in overlaid
    screenshot(page, "compare")

    open_page(page, f"{app_server}/sql?disk={q(P10_DISK)}&pattern=random&op=read:100&bs=8192&dir=read")
    page.wait_for_selector(".js-plotly-plot .scatterlayer .trace", timeout=60_000)
    # sample_data/sqlstats/synthetic-p10-workload.txt: statement 1, CPU 3420 ms of 293201 ms elapsed
    assert "I/O-bound: 1% CPU" in page.locator(".js-plotly-plot").first.text_content()
    screenshot(page, "sql")


def test_upload_every_format_then_chart_it(page, app_server, tmp_path):
    paths = []
    for folder, name in CORPUS.values():
        src = corpus_file(folder, name)
        dst = tmp_path / name
        shutil.copy(src, dst)
        paths.append(str(dst))

    open_page(page, f"{app_server}/upload")
    page.set_input_files("input[type=file]", paths)
    summary = page.get_by_text(f"{len(paths)} file(s):")
    summary.wait_for(timeout=120_000)
    wait_for_app(page)
    text = summary.text_content()
    for fmt in ("crystaldiskmark ×2", "diskspd", "diskspd_xml", "fio_json", "fio_text", "sqlio", "sqlstats"):
        assert fmt in text
    assert text.endswith("; 0 error(s)")
    label = page.get_by_role("textbox", name="Disk label (required)")
    label.fill("Corpus disk")
    label.press("Enter")
    wait_for_app(page)
    screenshot(page, "upload-preview")

    page.get_by_role("button", name=f"Store {len(paths)} files and rebuild").click()
    page.get_by_text("for disk Corpus disk").wait_for(timeout=BUILD_TIMEOUT_MS)
    wait_for_app(page)
    screenshot(page, "upload-done")

    page.get_by_role("link", name="See the curves of Corpus disk").click()
    wait_for_app(page)
    page.wait_for_selector(".js-plotly-plot .legend", timeout=60_000)
    assert "Corpus disk" in page.locator(".js-plotly-plot").first.locator(".legend").text_content()
    screenshot(page, "curves-after-upload")


def test_relabel_then_delete_a_stored_file(page, app_server):
    name = "synthetic-ss-stripe-mixed-8k.xml"
    from tests.helpers import SAMPLE

    # a stored file's id is the start of its sha256
    file_id = hashlib.sha256((SAMPLE / "diskspd" / name).read_bytes()).hexdigest()[:16]
    open_page(page, f"{app_server}/data?file={file_id}")
    page.get_by_role("button", name="Download the original file").wait_for(timeout=60_000)
    screenshot(page, "data")

    page.get_by_role("radio", name="Relabel").click()
    wait_for_app(page)
    disk = page.get_by_role("textbox", name="Disk label")
    disk.fill("Stripe B")
    page.get_by_role("button", name="Relabel and rebuild").click()
    page.get_by_text(f"Relabel {name} as Stripe B @ synthetic-sql01: done").wait_for(timeout=BUILD_TIMEOUT_MS)
    wait_for_app(page)

    page.get_by_role("radio", name="Delete").click()
    wait_for_app(page)
    delete = page.get_by_role("button", name="Delete the file")
    assert delete.is_disabled()
    page.get_by_text(f"Yes, delete {name}").click()
    wait_for_app(page)
    delete.click()
    page.get_by_text(f"Delete {name}: done").wait_for(timeout=BUILD_TIMEOUT_MS)
    wait_for_app(page)
    screenshot(page, "data-after-delete")
    open_page(page, f"{app_server}/compare?disk={q(P10_DISK)}")
    assert "Stripe B" not in page.locator("[data-testid='stMultiSelect']").first.text_content()
