"""Labels are the users' own text. They are refused past their lengths before anything is stored, whichever path
writes them (command line, the app's Store and relabel form, bundle and whole-warehouse import); no model repeats
one per latency point; every human-readable output shows their terminal controls and bidi characters as escapes;
every chart, in the app and the report, shows their markup as text."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from kneepoint.app import queries
from kneepoint.app import wording as w
from kneepoint.app.cli.main import main
from kneepoint.app.sharing.bundle import import_bundle
from kneepoint.app.sharing.report import LOAD_TITLE, PRODUCTION_TITLE, build_report
from kneepoint.app.web import uploads
from kneepoint.ingest.labels import LabelError
from tests.app.test_apptest import figures, new_app
from tests.helpers import SAMPLE
from tests.reliability.test_injection import strings
from tests.test_cli import CONTROL, FIO

LINK = '<a href="http://127.0.0.1:9/leak">x</a>'
# A window title (OSC 0), colours, the bell, a line break and a right-to-left override, around a link.
HOSTILE = f"\x1b[31mRED\x1b[0m\x1b]0;pwned\x07\r\n{LINK} \u202eevil\u2066"
SHOWN = "\\x1b[31mRED\\x1b[0m\\x1b]0;pwned\\x07\\r\\n<a"  # how a terminal shows it: escapes, nothing raw
# One disk with every kind of file: a benchmark sweep, statements, a counter log and load series.
P10_FOLDERS = [SAMPLE / f for f in ("sqlio", "sqlstats", "perfmon", "workloads")]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("hostile") / "w.duckdb"
    labels = ["--disk", HOSTILE, "--host", HOSTILE, "--tag", HOSTILE, "--notes", HOSTILE]
    assert main(["--db", str(db), "ingest", *map(str, P10_FOLDERS), *labels]) == 0
    return db


def _table_names(db: Path) -> dict[str, set[str]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT table_name, column_name FROM information_schema.columns").fetchall()
    finally:
        con.close()
    out: dict[str, set[str]] = {}
    for table, column in rows:
        out.setdefault(table, set()).add(column)
    return out


# -- lengths ----------------------------------------------------------------------------------------------------


def test_no_model_repeats_a_label_per_latency_point(sample_warehouse: Path):
    """A 130,000-character label once ran DuckDB out of memory in fct_latency_distribution, which held it on every
    histogram point: the per-point models carry keys only, their labels are joined in where they are read."""
    columns = _table_names(sample_warehouse)
    for model in ("stg_latency_histograms", "fct_latency_distribution"):
        assert model in columns
        assert not columns[model] & {"disk", "host", "disk_key", "tags", "notes", "file_name"}, model


def test_the_app_store_refuses_a_long_label_before_anything_is_stored(tmp_path: Path):
    db = tmp_path / "w.duckdb"
    previews = uploads.preview_upload(FIO.name, FIO.read_bytes())
    label = "L" * 256 * 1024
    for labels in ({"disk": label}, {"disk": "ok", "host": label}, {"disk": "ok", "tags": [label]}):
        with pytest.raises(LabelError, match=r"is 262,144 characters long; the limit is 200$"):
            uploads.store_previews(db, previews, **{"host": None, "tags": [], "notes": None, **labels})
    with pytest.raises(LabelError, match="the notes is 10,001 characters long; the limit is 10,000"):
        uploads.store_previews(db, previews, disk="ok", host=None, tags=[], notes="n" * 10_001)
    assert not db.exists()


def test_the_app_relabel_form_refuses_a_long_label(warehouse: Path):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        file_id, disk = con.execute("SELECT file_id, disk FROM raw_files ORDER BY name LIMIT 1").fetchone()
    finally:
        con.close()
    at = new_app("data", file=file_id, action="Relabel").run()
    at.text_input[0].set_value("L" * 256 * 1024)
    at.button[0].click().run()  # the relabel form's submit button
    assert not at.exception
    shown = [e.value for e in at.error]
    assert shown == ["The disk label is 262,144 characters long; the limit is 200. Nothing was changed."]
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        assert con.execute("SELECT disk FROM raw_files WHERE file_id = ?", [file_id]).fetchone()[0] == disk
        assert con.execute("SELECT count(*) FROM raw_file_changes WHERE change = 'relabelled'").fetchone()[0] == 0
    finally:
        con.close()


def test_a_warehouse_file_holding_a_long_label_is_imported_without_that_file(tmp_path: Path, capsys):
    source = tmp_path / "laptop.duckdb"
    assert main(["--db", str(source), "ingest", str(FIO), str(FIO.with_name("randread-4k-jobs2.json")),
                 "--disk", "ok", "--no-build"]) == 0  # fmt: skip
    con = duckdb.connect(str(source))
    try:
        (long_one,) = con.execute("SELECT min(name) FROM raw_files").fetchone()
        con.execute("UPDATE raw_files SET disk = ? WHERE name = ?", ["L" * 130_000, long_one])
    finally:
        con.close()
    db = tmp_path / "w.duckdb"
    result = import_bundle(db, source, build=False)
    assert result.errors == [f"{long_one}: not imported: the disk label is 130,000 characters long; the limit is 200"]
    assert [f["name"] for f in result.added] == [FIO.with_name("randread-4k-jobs2.json").name]


def test_a_warehouse_file_whose_labels_are_not_text_is_refused_per_file(tmp_path: Path, capsys):
    source = tmp_path / "laptop.duckdb"
    assert main(["--db", str(source), "ingest", str(FIO), "--disk", "ok", "--no-build"]) == 0
    con = duckdb.connect(str(source))
    try:  # a number where the disk label belongs
        con.execute("ALTER TABLE raw_files ADD COLUMN number INTEGER DEFAULT 7")
        con.execute("ALTER TABLE raw_files DROP COLUMN disk")
        con.execute("ALTER TABLE raw_files RENAME COLUMN number TO disk")
    finally:
        con.close()
    capsys.readouterr()
    assert main(["--db", str(tmp_path / "w.duckdb"), "import", str(source), "--no-build"]) == 1
    err = capsys.readouterr().err
    assert err == f"kneepoint import: {FIO.name}: not imported: the disk label is not text but int '7'\n"


# -- terminals --------------------------------------------------------------------------------------------------


def test_every_command_shows_labels_escaped(hostile: Path, tmp_path: Path, capsys):
    db = tmp_path / "w.duckdb"
    shutil.copy(hostile, db)
    capsys.readouterr()
    assert main(["--db", str(db), "files", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {f["disk"] for f in listed} == {HOSTILE}  # stored as typed; JSON escapes it itself
    file_id = listed[0]["file_id"]
    bundle = tmp_path / "b.zip"
    commands = {
        "files": (["files"], True),
        "saturation": (["saturation", "--latency-target-ms", "5"], True),
        "saturation by threads": (["saturation", "--by-threads"], True),
        "headroom": (["headroom"], True),
        "headroom of one disk": (["headroom", "--disk", HOSTILE], True),
        "report": (["report", "--out", str(tmp_path / "r.html")], True),
        "export": (["export", "--out", str(bundle)], False),
        "import": (["--db", str(tmp_path / "other.duckdb"), "import", str(bundle), "--no-build"], True),
        "relabel": (["relabel", file_id, "--host", f"{HOSTILE}2"], True),
        "build": (["build"], False),
        "delete": (["delete", file_id, "--yes"], False),
    }
    for what, (command, names_the_label) in commands.items():
        assert main(["--db", str(db), *command]) == 0, what
        out = capsys.readouterr()
        printed = out.out + out.err
        assert not CONTROL.search(printed), (what, CONTROL.findall(printed))
        if names_the_label:
            # a line break in a label shows as \r\n, even where the text is wrapped to the terminal's width
            assert SHOWN in printed and "\\u202eevil\\u2066" in printed, (what, printed[:2000])


def test_printable_escapes_controls_and_bidi_and_keeps_the_rest():
    assert w.printable(HOSTILE) == f'{SHOWN} href="http://127.0.0.1:9/leak">x</a> \\u202eevil\\u2066'
    assert w.printable("\x9b31m\u200e\u200f\u061c\u202a\u2069\x7f\x00") == (
        "\\x9b31m\\u200e\\u200f\\u061c\\u202a\\u2069\\x7f\\x00"
    )
    assert w.printable("P10 · Ünïcödé 日本 – ok") == "P10 · Ünïcödé 日本 – ok"
    # escaped before wrapping: textwrap would have made the line break a space
    assert w.printable_wrap(f"disk {HOSTILE}", 100) == [f"disk {w.printable(HOSTILE)}"]


# -- charts -----------------------------------------------------------------------------------------------------


def _no_markup_from_the_label(figure: dict, where: str) -> bool:
    """No text of the figure holds the label's link as markup; whether the label is in it, escaped."""
    texts = strings(figure)
    assert not [t for t in texts if "<a " in t or "</a>" in t], where
    return any(w.esc(LINK) in t for t in texts)


def test_every_report_chart_shows_the_label_as_text(hostile: Path):
    report = build_report(hostile)
    assert any(c.workload.startswith(PRODUCTION_TITLE) for c in report.charts)
    assert any(c.workload.startswith(LOAD_TITLE) for c in report.charts)
    named = [c.title for c in report.charts if _no_markup_from_the_label(c.figure.to_plotly_json(), c.title)]
    assert len(named) == len(report.charts), set(c.title for c in report.charts) - set(named)


@pytest.mark.parametrize("page", ["curves", "compare", "sql", "production", "workloads"])
def test_every_app_chart_shows_the_label_as_text(hostile: Path, tmp_path: Path, monkeypatch, page: str):
    db = tmp_path / "w.duckdb"
    shutil.copy(hostile, db)
    monkeypatch.setenv("KNEEPOINT_DB", str(db))
    at = new_app(page, disk=queries.disk_key(HOSTILE, HOSTILE)).run()
    assert not at.exception
    shown = figures(at)
    assert shown, page
    assert any([_no_markup_from_the_label(f, f"{page} {i}") for i, f in enumerate(shown)])
