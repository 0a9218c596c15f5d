"""Injection: labels, tags, notes and file names holding SQL, HTML, JS and Markdown go in through the command line
and through the app's upload path, and come out verbatim everywhere (raw layer, marts, `kneepoint files`, the
app's reads, the exported report) without anything of them running: no table dropped, no filter widened, no tag
live in the report. An upload's name is only a label: no file is opened, made or moved at a path built from it.
The pages themselves are checked in chromium by test_browser_reliability.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import markupsafe

from kneepoint.app import queries
from kneepoint.app import wording as w
from kneepoint.ingest.warehouse import RAW_TABLES, connect, list_files, row_counts
from tests.reliability.conftest import cli
from tests.reliability.inputs import HTML_PAYLOAD, SCRIPT_PAYLOAD, SQL_PAYLOAD, hostile_file_names


def stored_name(sent: str) -> str:
    """The name a file is listed under: what the browser (or the shell) gave, cut to its last path component
    (`/` or `\\`); a zip entry keeps its name after the `!`, as a label."""
    outer, _, inner = sent.partition("!")
    base = outer.replace("\\", "/").rsplit("/", 1)[-1]
    return f"{base}!{inner}" if inner else base


def test_labels_and_file_names_are_stored_verbatim(injected):
    outcome = injected["outcome"]
    assert not outcome.errors and outcome.build is not None and outcome.build.success, outcome.build
    con = connect(injected["db"], read_only=True)
    try:
        files = list_files(con)
        counts = row_counts(con)
        dim_files = con.execute("SELECT file_name, disk, host FROM dim_files").fetchall()
        dim_disks = {r[0]: r[1:] for r in con.execute("SELECT disk_key, disk, host FROM dim_disks").fetchall()}
    finally:
        con.close()
    # Every raw table is there and filled: no payload ran as SQL (DROP TABLE, DELETE ... WHERE 'a'='a').
    assert set(counts) == set(RAW_TABLES) and counts["raw_files"] == len(files)
    assert all(counts[t] > 0 for t in ("raw_files", "raw_file_contents", "raw_io_records"))

    for which in ("cli", "app"):
        labels = injected[f"{which}_labels"]
        mine = [f for f in files if f["disk"] == labels["disk"]]
        assert sorted(f["name"] for f in mine) == sorted(map(stored_name, injected[f"{which}_files"])), which
        for f in mine:
            assert (f["host"], f["tags"], f["notes"]) == (labels["host"], labels["tags"], labels["notes"]), which
        key = queries.disk_key(labels["disk"], labels["host"])
        assert dim_disks[key] == (labels["disk"], labels["host"])
        assert sum(disk == labels["disk"] and host == labels["host"] for _, disk, host in dim_files) == len(mine)


def test_the_app_reads_filter_by_parameters_only(injected):
    """A disk key holding quotes selects that disk and nothing more (a key spliced into SQL would fail or widen
    the filter to every disk)."""
    db = injected["db"]
    keys = [queries.disk_key(injected[w]["disk"], injected[w]["host"]) for w in ("cli_labels", "app_labels")]
    all_keys = set(queries.disks(db)["disk_key"].to_list())
    assert set(keys) <= all_keys
    for key in keys:
        options = queries.series_options([key], db)
        assert options.height > 0, key
        series = queries.Series(*(options.row(0, named=True)[c] for c in queries.Series._fields))
        points = queries.curve_points([key], series, db)
        assert points.height > 0 and set(points["disk_key"].to_list()) == {key}
        assert set(queries.saturation_overview([key], db)["disk_key"].to_list()) == {key}
    assert queries.curve_points([SQL_PAYLOAD, "' OR '1'='1"], series, db).is_empty()


def test_cli_lists_the_names_and_labels_verbatim(injected):
    proc = cli("--db", str(injected["db"]), "files", "--json")
    assert proc.returncode == 0, proc.stderr
    listed = json.loads(proc.stdout)
    assert {f["name"] for f in listed} == set(map(stored_name, [*injected["cli_files"], *injected["app_files"]]))
    assert {f["disk"] for f in listed} == {injected["cli_labels"]["disk"], injected["app_labels"]["disk"]}
    table = cli("--db", str(injected["db"]), "files")
    assert all(name in table.stdout for name in injected["cli_files"])


def test_uploads_never_touch_a_path_built_from_the_file_name(injected):
    """Audit events of the whole preview + store + build: no open, mkdir, rename or remove of a path holding the
    uploaded names' marker; nothing of that name exists anywhere it could have been written."""
    marker = injected["marker"]
    assert injected["watch"].hits == []
    for folder in (Path("/tmp"), Path.cwd(), injected["db"].parent, Path("/")):
        assert not [p for p in folder.glob(f"*{marker}*")], folder


def test_the_report_escapes_every_label(injected):
    text = injected["report"].read_text(encoding="utf-8")
    # No payload as live markup: not in the page, not inside the figures' <script type="application/json">.
    for payload in (HTML_PAYLOAD, SCRIPT_PAYLOAD, *(n for n in hostile_file_names() if "<" in n)):
        assert payload not in text, payload
    # The labels are in the report, as text: HTML-escaped in the page; in the figures' JSON \u003c-escaped, and
    # HTML-escaped inside it too (plotly draws a subset of HTML in its text fields: wording.esc).
    for labels in (injected["cli_labels"], injected["app_labels"]):
        assert str(markupsafe.escape(labels["disk"])) in text  # Jinja's autoescape
    figures = re.findall(r'<script type="application/json" class="kp-figure"[^>]*>(.*?)</script>', text, re.S)
    assert figures and all("<" not in f for f in figures)
    shown = w.esc(injected["app_labels"]["disk"])
    assert shown != injected["app_labels"]["disk"]
    assert any(shown in text for f in figures for text in strings(json.loads(f)))


def strings(value: object) -> list[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []
