"""End to end in Debian's chromium: every page renders with its charts, a file of every format is uploaded and
charted, a single-load series stays visible, hover text is plain numbers, Share leaves the sample disks out by
default, Compare says percent differences, a stored file is relabelled and deleted, charts export, nothing is
fetched from the network. Screenshots of each page go to test-artifacts/."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browsing import screenshot
from tests.helpers import ROOT, corpus_file

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
    page.wait_for_timeout(300)  # let a rerun begin: nothing on the page tells 'not begun' from 'done'
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=120_000)


def open_page(page, url: str) -> None:
    page.goto(url)
    wait_for_app(page)


def figure(page, index: int = 0) -> dict:
    """The data and layout plotly drew for the index-th chart of the page."""
    return page.evaluate(
        "i => { const gd = document.querySelectorAll('.js-plotly-plot')[i];"
        " return {data: gd.data, layout: gd._fullLayout ? JSON.parse(JSON.stringify({annotations:"
        " gd._fullLayout.annotations.map(a => ({text: a.text, yref: a.yref, y: a.y, yanchor: a.yanchor}))})) : {}}; }",
        index,
    )


def offsite_requests(page) -> list[str]:
    """Record every request the page makes to anything but the app itself."""
    seen: list[str] = []
    page.on(
        "request",
        lambda r: seen.append(r.url) if not r.url.startswith(("http://127.0.0.1", "data:", "blob:")) else None,
    )
    return seen


def q(text: str) -> str:
    from urllib.parse import quote_plus

    return quote_plus(text)


def test_curves_show_saturation_and_export(page, app_server, tmp_path):
    offsite = offsite_requests(page)
    open_page(page, f"{app_server}/?disk={q(FIO_DISK)}&pattern=random&op=read:100&bs=4096&dir=read")
    page.wait_for_selector(".js-plotly-plot .scatterlayer .trace", timeout=60_000)
    assert page.locator(".js-plotly-plot").count() >= 5
    iops = page.locator(".js-plotly-plot").first
    assert FIO_DISK in iops.locator(".legend").text_content()
    # the mart's saturation point, said above the chart (sample_data/fio/randread-4k-jobs1.json, job qd32)
    assert (
        "saturates at 32 outstanding: 177,525 IOPS, 0.18 ms mean"
        in iops.locator(".annotation-text").first.text_content()
    )
    # the CrystalDiskMark-style grid, and the rule with its tolerance
    assert page.get_by_text("RND 4 KiB, best").count() == 1
    assert page.get_by_text("no larger measured load delivers more than 10% more IOPS").count() == 1
    screenshot(page, "curves")

    # Hover a point: plain numbers, and the whole tooltip inside the chart
    # the leftmost point: its tooltip opens towards the chart's edge
    point = iops.locator(".scatterlayer .trace .points path").first
    iops.scroll_into_view_if_needed()
    box = point.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    tip = page.locator(".hoverlayer .hovertext").first
    tip.wait_for(timeout=10_000)
    text = tip.text_content()
    assert "IOPS" in text and "e+" not in text and "," in text
    chart_box, tip_box = iops.bounding_box(), tip.bounding_box()
    assert chart_box["x"] <= tip_box["x"] and tip_box["x"] + tip_box["width"] <= chart_box["x"] + chart_box["width"]

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
    assert offsite == []  # no font, icon or script from the network


def test_compare_and_sql_pages(page, app_server):
    open_page(
        page,
        f"{app_server}/compare?disk={q(P10_DISK)}&disk={q(STRIPE_DISK)}&pattern=random&op=read:100&bs=8192"
        f"&dir=read&base={q(P10_DISK)}",
    )
    page.wait_for_selector(".js-plotly-plot .barlayer", timeout=60_000)
    bars = page.locator(".js-plotly-plot").first.text_content()
    # percent differences to the baseline, like with like (best measured IOPS of both disks)
    assert "baseline" in bars and re.search(r"[+−]\d[\d,]* %", bars)
    assert page.get_by_text("best measured").count() >= 1
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
    summary = page.get_by_text(f"{len(paths)} files:")
    summary.wait_for(timeout=120_000)
    wait_for_app(page)
    text = summary.text_content()
    for fmt in ("CrystalDiskMark / KDiskMark ×2", "DiskSpd text", "DiskSpd XML", "fio JSON", "fio text", "SQLIO"):
        assert fmt in text
    assert "SQL Server STATISTICS IO/TIME" in text
    assert text.endswith("; 0 errors")
    label = page.get_by_role("textbox", name="Disk label (required)")
    label.fill("Corpus disk")
    label.press("Enter")
    wait_for_app(page)
    screenshot(page, "upload-preview")

    page.get_by_role("button", name=f"Store {len(paths)} files and rebuild").click()
    page.get_by_text("for disk Corpus disk").wait_for(timeout=BUILD_TIMEOUT_MS)
    wait_for_app(page)
    screenshot(page, "upload-done")

    # the next batch starts with empty labels
    assert page.get_by_role("textbox", name="Disk label (required)").input_value() == ""

    page.get_by_role("link", name="See the curves of Corpus disk").click()
    wait_for_app(page)
    page.wait_for_selector(".js-plotly-plot .legend", timeout=60_000)
    assert "Corpus disk" in page.locator(".js-plotly-plot").first.locator(".legend").text_content()
    screenshot(page, "curves-after-upload")

    # Share offers the disks the user stored; the sample disks only when asked for
    page.locator("a[data-testid=stSidebarNavLink][href$='/share']").click()
    wait_for_app(page)
    page.get_by_text("Disks to share").wait_for()
    chosen = page.locator("[data-testid='stMultiSelect']").first.text_content()
    assert "Corpus disk" in chosen and P10_DISK not in chosen and FIO_DISK not in chosen
    page.locator("[data-testid='stMultiSelect']").first.click()
    options = page.get_by_role("option").all_text_contents()
    page.keyboard.press("Escape")
    assert not any(o.startswith("synthetic") or o.startswith("sample vda") for o in options)
    screenshot(page, "share")
    page.get_by_role("button", name="Build the report and the bundle").click()
    page.get_by_role("button", name=re.compile(r"^Report \(HTML")).wait_for(timeout=BUILD_TIMEOUT_MS)
    wait_for_app(page)
    screenshot(page, "share-built")


def test_a_single_load_series_is_drawn_above_its_note(page, app_server, tmp_path):
    # one fio JSON file, 16 jobs at QD 1: the whole series is one point at 16 outstanding
    src = corpus_file("fio", "fioplot-3.6-randread-16jobs-no-group-reporting.json")
    dst = tmp_path / src.name
    shutil.copy(src, dst)
    open_page(page, f"{app_server}/upload")
    page.set_input_files("input[type=file]", [str(dst)])
    page.get_by_text("1 file:").wait_for(timeout=120_000)
    wait_for_app(page)
    page.get_by_role("textbox", name="Disk label (required)").fill("One fio file")
    page.get_by_role("textbox", name="Disk label (required)").press("Enter")
    wait_for_app(page)
    page.get_by_role("button", name="Store 1 file and rebuild").click()
    page.get_by_text("for disk One fio file").wait_for(timeout=BUILD_TIMEOUT_MS)

    open_page(page, f"{app_server}/?disk={q('One fio file')}")
    page.wait_for_selector(".js-plotly-plot .scatterlayer .trace", timeout=60_000)
    drawn = figure(page, 0)
    (series,) = [t for t in drawn["data"] if t["name"] == "One fio file"]
    assert series["x"] == [16] and series["mode"] == "markers" and series["cliponaxis"] is False
    # every note sits in the top margin, above the plot area
    assert drawn["layout"]["annotations"]
    assert all(a["yref"] == "paper" and a["y"] >= 1 for a in drawn["layout"]["annotations"])
    # and on the page: the marker is inside the plot area, below the note's box
    chart = page.locator(".js-plotly-plot").first
    marker = chart.locator(".scatterlayer .trace .points path").first.bounding_box()
    plot = chart.locator(".nsewdrag").first.bounding_box()
    note = chart.locator(".annotation").first.bounding_box()
    assert plot["y"] <= marker["y"] and marker["y"] + marker["height"] <= plot["y"] + plot["height"]
    assert note["y"] + note["height"] <= marker["y"]
    # this file's jobs carry percentiles but its summary has no p99: the page says so, and draws them
    assert page.get_by_text("the latency percentiles below are each run's own distribution").count() == 1
    screenshot(page, "curves-single-load")


def stored_files(db: Path) -> dict[str, str]:
    """The disk of every stored file by its id, as `kneepoint files --json` lists them."""
    done = subprocess.run(
        [sys.executable, "-m", "kneepoint.app.cli", "--db", str(db), "files", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return {f["file_id"]: f"{f['disk']} @ {f['host']}" for f in json.loads(done.stdout)}


def disk_options(page, app_server: str, typed: str) -> list[str]:
    """The disks Compare's picker offers (its options, not the chosen chips) for what is typed into it: typing
    filters the list, so a disk far down a long list is found too."""
    open_page(page, f"{app_server}/compare?disk={q(P10_DISK)}")
    picker = page.locator("[data-testid='stMultiSelect'] input").first
    picker.click()
    picker.fill(typed)
    listbox = page.get_by_role("listbox", name="Disks")
    # the disks, keyed by their index ("Select all", "Select 2 matches" have keys of their own, "No results" none),
    # read once no disk is left that does not match
    entries = listbox.locator("[role=option][data-key]:not([data-key^='__'])")
    unmatched = entries.filter(has_not_text=re.compile(re.escape(typed), re.IGNORECASE))
    expect(unmatched).to_have_count(0, timeout=10_000)
    options = entries.all_text_contents()
    page.keyboard.press("Escape")
    return options


def test_relabel_then_delete_a_stored_file(page, app_server, tmp_path):
    db = tmp_path / "warehouse.duckdb"  # app_server's private copy of the sample warehouse
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
    # the picker shows the new label at once, chosen and among the stored files it lists
    picker = page.locator("[data-testid='stSelectbox'] input").first
    assert picker.input_value() == f"{name} · Stripe B @ synthetic-sql01 · {file_id}"
    picker.click()
    listed = page.get_by_role("option").all_text_contents()
    page.keyboard.press("Escape")
    assert f"{name} · Stripe B @ synthetic-sql01 · {file_id}" in listed
    assert not any(o.startswith(f"{name} · synthetic 4-disk") for o in listed)
    # stored under the new label; the stripe's other file keeps the old one, so both disks are offered
    files = stored_files(db)
    assert files[file_id] == "Stripe B @ synthetic-sql01"
    assert list(files.values()).count(STRIPE_DISK) == 1
    assert disk_options(page, app_server, "Stripe B") == ["Stripe B @ synthetic-sql01"]
    assert STRIPE_DISK in disk_options(page, app_server, "stripe")
    open_page(page, f"{app_server}/data?file={file_id}")
    page.get_by_role("button", name="Download the original file").wait_for(timeout=60_000)

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
    # nothing chosen next and the action back on Download: no other file sits preselected under Delete
    assert page.get_by_role("button", name="Delete the file").count() == 0
    assert page.get_by_role("radio", name="Download").is_checked()
    picker = page.locator("[data-testid='stSelectbox'] input").first
    assert picker.input_value() == ""
    picker.click()
    listed = page.get_by_role("option").all_text_contents()
    page.keyboard.press("Escape")
    assert listed and not any(o.startswith(name) for o in listed)  # the stored files: the deleted one is gone
    # gone from the warehouse, the others kept; its disk gone from the picker's options, the stripe still there
    assert sorted(stored_files(db)) == sorted(set(files) - {file_id})
    assert not any("Stripe B" in o for o in disk_options(page, app_server, "Stripe B"))
    assert STRIPE_DISK in disk_options(page, app_server, "stripe")
