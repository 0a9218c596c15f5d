"""End to end in Debian's chromium: open the app, upload a fio JSON file with a disk label, see it charted."""

from __future__ import annotations

import pytest

from tests.browser.conftest import screenshot
from tests.helpers import SAMPLE

pytestmark = pytest.mark.browser


def wait_for_app(page) -> None:
    page.wait_for_selector("[data-testid='stApp']", timeout=60_000)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)


def test_sample_curves_render(page, app_server):
    page.goto(app_server)
    wait_for_app(page)
    page.wait_for_selector(".js-plotly-plot .scatterlayer .trace", timeout=60_000)
    assert page.locator(".js-plotly-plot").count() >= 4
    assert "sample vda" in page.locator(".js-plotly-plot").first.inner_text()
    screenshot(page, "curves-sample")


def test_upload_fio_json_then_see_disk_in_chart(page, app_server, tmp_path):
    data = (SAMPLE / "fio" / "randread-4k-jobs4.json").read_bytes().replace(b"\n", b"\n ", 1)
    upload = tmp_path / "p10-randread.json"
    upload.write_bytes(data)

    page.goto(app_server + "/upload")
    wait_for_app(page)
    page.set_input_files("input[type=file]", str(upload))
    page.get_by_role("textbox", name="Disk label (required)").fill("Premium P10")
    page.get_by_role("button", name="Ingest").click()
    page.get_by_text("Added 8 run(s) for disk").wait_for(timeout=90_000)
    screenshot(page, "upload-done")

    page.get_by_role("link", name="See the curves of Premium P10").click()
    wait_for_app(page)
    page.wait_for_selector(".js-plotly-plot .legend", timeout=60_000)
    legend = page.locator(".js-plotly-plot .legend").first.text_content()
    assert "Premium P10" in legend
    screenshot(page, "curves-after-upload")
