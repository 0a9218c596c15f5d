"""Streamlit AppTest: the pages render on the sample warehouse, and an upload lands in the chart."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers import ROOT, SAMPLE

APP = str(ROOT / "app" / "streamlit_app.py")


def new_app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=120)


def test_curves_page_shows_sample_disk(warehouse):
    at = new_app().run()
    assert not at.exception
    assert at.multiselect[0].value == ["sample vda (virtio, fio sweep) @ kneepoint-dev-vm"]
    charts = at.get("plotly_chart")
    assert len(charts) >= 4


def test_upload_then_chart_shows_new_disk(warehouse):
    at = new_app()
    at.switch_page("views/upload.py").run()
    assert not at.exception
    data = (SAMPLE / "fio" / "seqread-128k-jobs2.json").read_bytes()
    # Same bytes as a sample file would be a duplicate: change one harmless byte of whitespace.
    data = data.replace(b"\n", b"\n ", 1)
    at.file_uploader[0].set_value(("my-run.json", data, "application/json"))
    at.text_input[0].set_value("Premium P10")
    at.button[0].click().run()
    assert not at.exception
    assert any("Added 8 run(s) for disk **Premium P10**" in s.value for s in at.success)

    at.switch_page("views/curves.py").run()
    assert "Premium P10" in at.multiselect[0].options
    at.multiselect[0].set_value(["Premium P10"]).run()
    assert not at.exception
    figs = [c.proto.spec for c in at.get("plotly_chart")]
    assert any("Premium P10" in spec for spec in figs)


def test_upload_without_label_is_refused(warehouse):
    at = new_app()
    at.switch_page("views/upload.py").run()
    at.file_uploader[0].set_value(("x.json", b"{}", "application/json"))
    at.button[0].click().run()
    assert [e.value for e in at.error] == ["A disk label is required: it is how the curves name this disk."]


@pytest.mark.parametrize("payload", [b"", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"])
def test_upload_bad_file_shows_error(warehouse, payload):
    at = new_app()
    at.switch_page("views/upload.py").run()
    at.file_uploader[0].set_value(("bad.bin", payload, "application/octet-stream"))
    at.text_input[0].set_value("d")
    at.button[0].click().run()
    assert not at.exception
    assert any(e.value.startswith("bad.bin:1:") for e in at.error)
