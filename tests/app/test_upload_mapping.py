"""The Upload page's column mapping: a table whose header names no column is refused with its columns offered, read
again with the mapping chosen, and stored with that mapping; files with and without a mapping stored together."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from kneepoint.app.web import uploads
from kneepoint.ingest.build import BuildResult
from kneepoint.ingest.warehouse import connect
from tests.helpers import ROOT

APP = str(ROOT / "app" / "web" / "streamlit_app.py")
BARE = b"1,1.46,41.2\n2,2.77,43.4\n4,4.90,49.0\n"
NAMED = b"sessions;throughput (queries/min);mean response (s)\n1;1,46;41,2\n2;2,77;43,4\n"


def test_a_bare_table_is_refused_with_its_columns_then_read_with_a_mapping():
    (preview,) = uploads.preview_upload("bare.csv", BARE)
    assert not preview.ok and "--load-column" in (preview.error or "")
    assert preview.columns == ["column 1", "column 2", "column 3"]
    mapped = uploads.remap(
        preview,
        {"load_column": "1", "throughput_column": "2", "throughput_unit": "queries/min", "response_column": "",
         "response_unit": "", "load_kind": "concurrent sessions"},
    )  # fmt: skip
    assert mapped.ok and mapped.format == "load_table" and mapped.load_records == 3
    assert mapped.options == {"load_column": "1", "throughput_column": "2", "throughput_unit": "queries/min",
                              "load_kind": "concurrent sessions"}  # fmt: skip
    # A mapping that reads nothing keeps the file refused, its columns still offered.
    wrong = uploads.remap(preview, {"load_column": "2", "response_column": "3"})
    assert not wrong.ok and wrong.columns == preview.columns


def test_files_are_stored_each_with_its_own_mapping(tmp_path, monkeypatch):
    monkeypatch.setattr(uploads, "rebuild", lambda db, progress=None: BuildResult(True))
    (bare,) = uploads.preview_upload("bare.csv", BARE)
    bare = uploads.remap(bare, {"load_column": "1", "throughput_column": "2", "throughput_unit": "queries/min"})
    (named,) = uploads.preview_upload("named.csv", NAMED)
    assert named.ok and named.options is None
    db = tmp_path / "w.duckdb"
    outcome = uploads.store_previews(db, [bare, named], disk="P30", host=None, tags=[], notes=None)
    assert [o.name for o in outcome.added] == ["bare.csv", "named.csv"]
    con = connect(db, read_only=True)
    try:
        stored = dict(con.execute("SELECT name, parse_options FROM raw_files").fetchall())
        steps = con.execute("SELECT count(*) FROM raw_load_steps").fetchall()[0][0]
    finally:
        con.close()
    assert json.loads(stored["bare.csv"]) == bare.options and stored["named.csv"] is None
    assert steps == 5


def test_the_upload_page_offers_the_mapping_form(empty_db):
    at = AppTest.from_file(APP, default_timeout=180)
    at.switch_page("views/upload.py")
    at.run()
    at.file_uploader[0].set_value(("bare.csv", BARE, "text/csv")).run()
    assert not at.exception
    assert at.dataframe[0].value["status"].tolist() == ["error"]
    form = at.selectbox  # load column, load kind, throughput column, its unit, response column, its unit
    assert [s.label for s in form] == ["Load column", "The load counts", "Throughput column", "Throughput unit",
                                       "Mean response time column", "Response time unit"]  # fmt: skip
    form[2].set_value(2)
    form[3].set_value("queries/min")
    form[4].set_value(3)
    form[5].set_value("s")
    at.button[0].click().run()  # the form's submit button comes first
    assert not at.exception
    assert at.dataframe[0].value["status"].tolist() == ["ready"]
    assert at.dataframe[0].value["runs"].tolist() == [3]
