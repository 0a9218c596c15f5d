"""A load table whose columns the user mapped by hand: `kneepoint parse/ingest --load-column ...`, the mapping stored
with the file (raw_files.parse_options) so that reading its bytes again gives the same records, an older warehouse
completed with the column."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from kneepoint.app.cli.main import main
from kneepoint.ingest.load import ingest_inputs, reread_stored
from kneepoint.ingest.sources import InputFile
from kneepoint.ingest.warehouse import connect, file_parse_options

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "load_table" / "no-header-numbers-only.csv"
MAPPING = ["--load-column", "1", "--throughput-column", "2", "--response-column", "3", "--throughput-unit",
           "queries/min", "--response-unit", "s", "--load-kind", "concurrent sessions"]  # fmt: skip
OPTIONS = {"load_column": "1", "throughput_column": "2", "response_column": "3", "throughput_unit": "queries/min",
           "response_unit": "s", "load_kind": "concurrent sessions"}  # fmt: skip


def test_parse_takes_the_mapping_and_refuses_the_file_without_it(capsys):
    assert main(["parse", str(FIXTURE)]) == 2
    assert "--load-column and --throughput-column" in capsys.readouterr().err
    assert main(["parse", str(FIXTURE), *MAPPING]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["load"], r["throughput"], r["response_avg_ms"], r["load_kind"]) for r in records] == [
        (1.0, 1.46, 41200.0, "concurrent sessions"), (2.0, 2.77, 43400.0, "concurrent sessions"),
        (4.0, 4.9, 49000.0, "concurrent sessions"),
    ]  # fmt: skip


def test_a_bad_mapping_is_refused_before_any_file_is_read(capsys, tmp_path):
    db = tmp_path / "w.duckdb"
    assert main(["--db", str(db), "ingest", str(FIXTURE), "--disk", "d", "--load-column", "1",
                 "--throughput-unit", "pages/s", "--no-build"]) == 2  # fmt: skip
    assert "throughput unit 'pages/s'" in capsys.readouterr().err
    assert not db.exists()


def test_the_mapping_is_stored_with_the_file_and_a_reread_gives_the_same_records(tmp_path):
    db = tmp_path / "w.duckdb"
    assert main(["--db", str(db), "ingest", str(FIXTURE), "--disk", "P30", "--no-build", *MAPPING]) == 0
    con = connect(db, read_only=True)
    try:
        (file_id, fmt, stored), *_ = con.execute("SELECT file_id, format, parse_options FROM raw_files").fetchall()
        assert fmt == "load_table" and json.loads(stored) == OPTIONS
        assert file_parse_options(con, file_id) == OPTIONS
        rows = con.execute(
            "SELECT load, throughput, throughput_unit, response_avg_ms FROM raw_load_steps ORDER BY record_index"
        ).fetchall()
        again = reread_stored(con, file_id)
    finally:
        con.close()
    assert rows == [(r.load, r.throughput, r.throughput_unit, r.response_avg_ms) for r in again.records]
    assert rows[0] == (1.0, 1.46, "queries/min", 41200.0)


def test_a_file_read_without_options_stores_none(tmp_path):
    db = tmp_path / "w.duckdb"
    table = b"sessions;throughput (queries/min);mean response (s)\n1;1,46;41,2\n2;2,77;43,4\n"
    report = ingest_inputs(db, [InputFile("t.csv", table)], disk="d", build=False)
    (outcome,) = report.added
    con = connect(db, read_only=True)
    try:
        assert con.execute("SELECT parse_options FROM raw_files").fetchall() == [(None,)]
        assert file_parse_options(con, outcome.file_id) == {}
        assert [r.load for r in reread_stored(con, outcome.file_id).records] == [1, 2]
    finally:
        con.close()


def test_an_older_warehouse_gets_the_column(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_inputs(db, [InputFile("t.csv", FIXTURE.read_bytes())], disk="d", options=OPTIONS, build=False)
    raw = duckdb.connect(str(db))
    raw.execute("ALTER TABLE raw_files DROP COLUMN parse_options")
    raw.execute("DELETE FROM kneepoint_schema")
    raw.close()
    con = connect(db)
    try:
        assert con.execute("SELECT parse_options FROM raw_files").fetchall() == [(None,)]
    finally:
        con.close()


def test_options_the_format_does_not_take_and_a_load_column_alone(capsys):
    assert main(["parse", str(FIXTURE), "--load-column", "1", "--format", "sqlio"]) == 2
    assert "format sqlio takes no parse options (load_column)" in capsys.readouterr().err
    # A load column without a throughput or response column reads no step, and says which column it looked for.
    assert main(["parse", str(FIXTURE), "--load-column", "1"]) == 2
    assert "no line holds the load column '1'" in capsys.readouterr().err


def test_an_anonymized_raw_layer_keeps_the_load_steps_and_scrubs_their_words(tmp_path):
    from kneepoint.app.sharing.anonymize import Anonymizer, read_raw

    db = tmp_path / "w.duckdb"
    table = (
        b"## kpsecrethost7 nightly\n\n| sessions | kpsecrethost7 q/min | mean response (s) |\n|---|---|---|\n"
        b"| 1 | 60 | 1,0 |\n\n## daytime\n\n| sessions | kpsecrethost7 q/min | mean response (s) |\n|---|---|---|\n"
        b"| 1 | 50 | 1,2 |\n"
    )
    options = {"load_column": "sessions", "throughput_column": "kpsecrethost7 q/min", "throughput_unit": "queries/min"}
    report = ingest_inputs(db, [InputFile("t.md", table)], disk="d", host="kpsecrethost7", options=options,
                           build=False)  # fmt: skip
    (outcome,) = report.added
    raw = Anonymizer().raw_tables(read_raw(db, [outcome.file_id], contents=False))
    steps = raw["raw_load_steps"].to_pylist()
    assert [(r["load"], r["throughput"]) for r in steps] == [(1.0, 60.0), (1.0, 50.0)]
    assert [r["workload"] for r in steps] == ["Workload 1", "Workload 2"]
    (files,) = raw["raw_files"].to_pylist()
    assert "kpsecrethost7" not in files["parse_options"] and "Host 1" in files["parse_options"]
