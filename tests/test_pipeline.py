"""Ingest -> DuckDB raw layer -> dbt build -> marts, and the CLI around them."""

from __future__ import annotations

import json
import subprocess
import sys

import duckdb
import pytest

from kneepoint.app.cli.main import main
from tests.helpers import ROOT, SAMPLE

KNEEPOINT = [sys.executable, "-m", "kneepoint.app.cli"]


@pytest.fixture(autouse=True, scope="module")
def private_dbt_target(tmp_path_factory):
    """dbt's target folder for this module's builds (in process and in the CLI subprocesses): other test runs
    on the machine may build at the same time."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KNEEPOINT_DBT_TARGET", str(tmp_path_factory.mktemp("dbt-target")))
        yield


def run_cli(*args: str, db=None) -> subprocess.CompletedProcess:
    cmd = KNEEPOINT + ([f"--db={db}"] if db else []) + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_sample_warehouse_has_the_sweep(sample_warehouse):
    # sample_data/fio: 4 KiB random and 128 KiB sequential reads, QD 1..128 x numjobs 1, 2, 4 (README).
    con = duckdb.connect(str(sample_warehouse), read_only=True)
    try:
        rows = con.execute(
            """SELECT pattern, block_size_bytes, count(*), count(DISTINCT threads), count(DISTINCT queue_depth),
                      min(outstanding_io), max(outstanding_io)
               FROM fct_io_results
               WHERE file_id IN (SELECT file_id FROM dim_files WHERE format = 'fio_json')
               GROUP BY ALL ORDER BY 1"""
        ).fetchall()
    finally:
        con.close()
    assert rows == [("random", 4096, 24, 3, 8, 1, 512), ("sequential", 131072, 24, 3, 8, 1, 512)]


def test_parse_prints_json_lines(sample_fio):
    proc = run_cli("parse", str(sample_fio[0]))
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(lines) == 8
    assert {line["record"] for line in lines} == {"io"}
    assert set(lines[0]) >= {
        "tool",
        "tool_version",
        "run_index",
        "source_line",
        "target",
        "started_at",
        "pattern",
        "operation",
        "read_pct",
        "direction",
        "block_size_bytes",
        "threads",
        "queue_depth",
        "duration_s",
        "iops",
        "throughput_bytes_per_s",
        "latency_avg_ms",
        "latency_min_ms",
        "latency_max_ms",
        "latency_p50_ms",
        "latency_p95_ms",
        "latency_p99_ms",
        "latency_p999_ms",
        "inferred",
    }


def test_parse_unrecognized_file_exits_2_with_file_and_line(tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("\n\nthese are my notes about the disk\nnothing measured here\n")
    proc = run_cli("parse", str(bad))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"{bad}:3: no recognizable result")
    assert proc.stdout == ""


def test_ingest_files_relabel_delete_round_trip(tmp_path, sample_fio):
    db = tmp_path / "w.duckdb"
    proc = run_cli("ingest", str(sample_fio[0]), str(sample_fio[1]), "--disk", "P10", "--host", "sql01", db=db)
    assert proc.returncode == 0, proc.stderr
    assert "2 file(s) added, 16 record(s)" in proc.stdout and "models up to date" in proc.stdout

    again = run_cli("ingest", str(sample_fio[0]), "--disk", "P20", db=db)
    assert again.returncode == 0, again.stderr
    assert "0 file(s) added" in again.stdout and "1 already stored (same sha256)" in again.stdout
    assert "same bytes (sha256" in again.stdout and "disk 'P10' @ 'sql01'" in again.stdout
    assert "kneepoint relabel" in again.stdout  # the label given differs from the stored one

    files = json.loads(run_cli("files", "--json", db=db).stdout)
    assert [f["records"] for f in files] == [8, 8]
    assert set(files[0]) == {"file_id", "name", "sha256", "format", "disk", "host", "records", "ingested_at"}
    assert {(f["disk"], f["host"], f["format"]) for f in files} == {("P10", "sql01", "fio_json")}

    file_id = files[0]["file_id"]
    relabelled = run_cli("relabel", file_id[:8], "--disk", "P20", db=db)
    assert relabelled.returncode == 0, relabelled.stderr
    assert relabelled.stdout.strip() == f"relabelled {file_id}: disk 'P20', host 'sql01'"
    assert run_cli("relabel", file_id, "--host", "", db=db).returncode == 0
    assert run_cli("relabel", file_id, "--disk", " ", db=db).returncode == 2
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM fct_io_results WHERE disk_key = 'P20'").fetchone()[0] == 8
    assert con.execute("SELECT disk_key FROM dim_disks ORDER BY 1").fetchall() == [("P10 @ sql01",), ("P20",)]
    con.close()

    refused = run_cli("delete", file_id, db=db)  # no --yes and no terminal: refuses
    assert refused.returncode != 0 and "without --yes" in refused.stderr
    assert run_cli("delete", file_id, "--yes", db=db).returncode == 0
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM fct_io_results").fetchone()[0] == 8
        for table in ("raw_files", "raw_io_records", "raw_run_metadata", "raw_latency_histograms", "raw_file_contents"):
            n = con.execute(f"SELECT count(*) FROM {table} WHERE file_id = ?", [file_id]).fetchone()[0]
            assert n == 0, table
    finally:
        con.close()


def test_ingest_needs_a_disk_label(tmp_path, sample_fio):
    proc = run_cli("ingest", str(sample_fio[0]), "--disk", "  ", db=tmp_path / "w.duckdb")
    assert proc.returncode == 2 and "a disk label is required" in proc.stderr


def test_build_on_a_new_warehouse_makes_empty_marts(tmp_path):
    db = tmp_path / "new.duckdb"
    proc = run_cli("build", db=db)
    assert proc.returncode == 0, proc.stderr
    con = duckdb.connect(str(db), read_only=True)
    try:
        for mart in ("fct_io_results", "fct_query_io", "fct_query_time", "fct_latency_distribution", "dim_disks"):
            assert con.execute(f"SELECT count(*) FROM {mart}").fetchone()[0] == 0, mart
    finally:
        con.close()


def test_bad_file_among_good_ones_is_reported_and_others_land(tmp_path, sample_fio, capsys):
    bad = tmp_path / "broken.json"
    bad.write_text('{\n  "fio version" : "fio-3.33",\n  "jobs" : [ {')
    db = tmp_path / "w.duckdb"
    code = main(["--db", str(db), "ingest", str(sample_fio[0]), str(bad), str(sample_fio[1]), "--disk", "d"])
    out = capsys.readouterr()
    assert code == 2
    assert f"{bad}:" in out.out and "2 file(s) added" in out.out
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM raw_files").fetchone()[0] == 2
    con.close()


def test_db_option_and_env_agree(tmp_path, sample_fio, monkeypatch):
    db = tmp_path / "env.duckdb"
    monkeypatch.setenv("KNEEPOINT_DB", str(db))
    assert main(["ingest", str(sample_fio[0]), "--disk", "x", "--no-build"]) == 0
    assert db.exists()


def test_unit_macros_and_python_factors_agree(warehouse):
    """The dbt macros and `kneepoint parse` read the same factor table: check a row converted both ways."""
    from kneepoint.ingest.formats import parse_bytes

    path = SAMPLE / "fio" / "randread-4k-jobs1.json"
    expected = [r.to_normalized() for r in parse_bytes(path.read_bytes(), str(path)).records]
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        got = con.execute(
            """SELECT throughput_bytes_per_s, latency_avg_ms, latency_p99_ms FROM fct_io_results
               WHERE file_name = 'randread-4k-jobs1.json' ORDER BY record_index"""
        ).fetchall()
    finally:
        con.close()
    assert got == [
        pytest.approx((e["throughput_bytes_per_s"], e["latency_avg_ms"], e["latency_p99_ms"])) for e in expected
    ]
