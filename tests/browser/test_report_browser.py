"""The report in Debian's chromium with networking off: every chart renders (not blank), nothing is fetched,
labels holding markup run nothing; and the chart images kaleido renders for slides are real pictures."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from kneepoint.app.cli.main import main
from tests.browsing import ARTIFACTS
from tests.test_anonymize import build_planted

pytestmark = pytest.mark.browser

P10_DISK = "synthetic P10 (modelled) @ synthetic-sql01"


def _variety(png: bytes) -> tuple[int, float]:
    """Distinct colours, and the share of pixels that are not the white background."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    image.thumbnail((600, 600))
    pixels = np.asarray(image).reshape(-1, 3)
    return len(np.unique(pixels, axis=0)), float((pixels != 255).any(axis=1).mean())


def _open_offline(browser, report: Path):
    """A page with the network off (offline context, and every non-file request aborted and recorded)."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, offline=True)
    page = ctx.new_page()
    fetched: list[str] = []
    dialogs: list[str] = []
    errors: list[str] = []

    def block(route):
        fetched.append(route.request.url)
        route.abort()

    page.route(lambda url: not url.startswith("file://"), block)
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(report.as_uri())
    page.wait_for_selector("body[data-charts-done]", timeout=180_000)
    return ctx, page, fetched, dialogs, errors


@pytest.fixture(scope="module")
def report(sample_warehouse: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report-browser") / "report.html"
    assert main(["report", "--db", str(sample_warehouse), "--out", str(out)]) == 0
    return out


def test_every_chart_renders_offline(browser, report: Path):
    ctx, page, fetched, dialogs, errors = _open_offline(browser, report)
    try:
        charts = page.locator(".chart")
        count = charts.count()
        assert count > 20
        assert int(page.get_attribute("body", "data-charts-done")) == count
        assert page.locator(".chart[data-error]").count() == 0
        assert page.locator(".chart[data-rendered] .main-svg").count() >= count
        assert (fetched, dialogs, errors) == ([], [], [])
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report-top.png"))
        for i in range(count):
            chart = charts.nth(i)
            chart.scroll_into_view_if_needed()
            png = chart.screenshot()
            colours, inked = _variety(png)
            title = chart.get_attribute("aria-label")
            # A drawn chart has axes, grid, lines, markers and text in several colours on a white ground.
            assert colours >= 16 and inked > 0.02, (title, colours, inked)
            if i < 6:
                (ARTIFACTS / f"report-chart-{i + 1:02d}.png").write_bytes(png)
        page.locator("#saturation").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "report-saturation.png"))
        # the report fits the window: links wrap and wide tables scroll inside their own box
        assert page.evaluate("document.documentElement.scrollWidth") <= 1400
    finally:
        ctx.close()


def test_markup_in_labels_runs_nothing(browser, tmp_path: Path):
    db = build_planted(tmp_path / "planted.duckdb")
    out = tmp_path / "planted.html"
    assert main(["report", "--db", str(db), "--out", str(out)]) == 0
    ctx, page, fetched, dialogs, errors = _open_offline(browser, out)
    try:
        assert (fetched, dialogs, errors) == ([], [], [])
        assert page.locator(".chart[data-error]").count() == 0
        # The labels are on the page as text.
        assert "<script>alert('kp-xss-disk')</script>" in page.locator("#summary").inner_text()
        # Only the report's own two scripts and the inert figure JSON are script elements.
        assert page.locator("script:not([type='application/json'])").count() == 2
        assert page.locator("img, svg[onload]").count() == 0
        page.screenshot(path=str(ARTIFACTS / "report-planted-summary.png"))
    finally:
        ctx.close()


def test_images_for_slides(browser, sample_warehouse: Path, tmp_path: Path):
    # `browser`: kaleido renders through the same chromium, and the fixture fails in CI when it is missing
    out = tmp_path / "images"
    assert main(["images", "--db", str(sample_warehouse), "--disk", P10_DISK, "--out", str(out)]) == 0
    pngs = sorted(out.glob("*.png"))
    svgs = sorted(out.glob("*.svg"))
    assert len(pngs) == len(svgs) > 10
    assert pngs[0].name == "01-random-read-8-kib-iops.png"
    for png in pngs:
        image = Image.open(png)
        assert image.size[0] == 2400  # 1200 px at scale 2
        colours, inked = _variety(png.read_bytes())
        assert colours >= 16 and inked > 0.02, png.name
    assert all(s.read_text(encoding="utf-8").lstrip().startswith("<svg") for s in svgs)
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(pngs[0], ARTIFACTS / "report-image-iops.png")


LINK = '<a href="http://127.0.0.1:9/leak">x</a>'


def test_a_label_holding_a_link_reads_as_text_in_every_chart(browser, tmp_path: Path):
    from tests.helpers import SAMPLE

    db = tmp_path / "link.duckdb"
    # every kind of chart: benchmark curves, statements on the curve, production against it, load series
    folders = [str(SAMPLE / f) for f in ("sqlio", "sqlstats", "perfmon", "workloads")]
    assert main(["--db", str(db), "ingest", *folders, "--disk", LINK, "--host", LINK]) == 0
    out = tmp_path / "link.html"
    assert main(["report", "--db", str(db), "--out", str(out)]) == 0
    ctx, page, fetched, dialogs, errors = _open_offline(browser, out)
    try:
        assert (fetched, dialogs, errors) == ([], [], [])
        # plotly draws a subset of HTML in its text fields: the label must stay text, never an SVG link
        assert page.locator(".chart svg a").count() == 0
        titles = page.locator(".chart .gtitle").all_text_contents()
        assert any(t.startswith(f"Production vs baseline on {LINK} @ {LINK}") for t in titles), titles
        legends = page.locator(".chart .legendtext").all_text_contents()
        assert f"{LINK} @ {LINK}" in legends
        # and in the page's own text (the summary card), escaped by the template
        assert LINK in page.locator("#summary").inner_text()
        page.locator(".chart").first.screenshot(path=str(ARTIFACTS / "report-link-label.png"))
    finally:
        ctx.close()
