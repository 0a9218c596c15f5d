"""The benchmark harness at its tiny size, so that `./dev bench` keeps working. No timing is asserted: CI
machines differ and are shared. What is asserted is that every stage ran on what the generator wrote and that
the generator and the parsers agree on it."""

from __future__ import annotations

import json

import pytest

from bench.__main__ import table
from bench.generate import TINY_COUNTS
from bench.harness import run
from bench.rows import RUNS_PER_FILE, SWEEPS_PER_SERIES

# CrystalDiskMark prints a mixed test's read and write records as one [Mix] line, read back as one record.
MERGES_RECORDS = {"crystaldiskmark"}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("bench")
    # fio-plot's anchor needs PyPI to set up its venv: not in CI.
    path = run("tiny", out / "out", out / "results", runs=1, warmup=0, fioplot=False, log=lambda _msg: None)
    assert path.parent == out / "results"
    return json.loads(path.read_text())


@pytest.mark.timeout(900)
def test_every_generated_format_parses_back(results: dict) -> None:
    generated = {f: c for f, c in results["corpus"].items() if c["files"]}
    assert "fio_json" in generated
    for fmt, corpus in generated.items():
        assert corpus["files"] == TINY_COUNTS[fmt]
        parse = results["summary"]["parse"][fmt]
        assert parse["files"] == corpus["files"]
        assert parse["errors"] == 0, fmt
        assert parse["wrong_format"] == 0, fmt  # detection picks the format the writer wrote
        if fmt in MERGES_RECORDS:
            assert 0 < parse["records"] <= corpus["records_written"]
        else:
            assert parse["records"] == corpus["records_written"], fmt


def test_ingest_stores_every_file(results: dict) -> None:
    files = sum(c["files"] for c in results["corpus"].values())
    ingest = results["summary"]["ingest"]
    assert ingest["ingest.all"]["outcomes"] == {"added": files}
    fio = results["corpus"]["fio_json"]["files"]
    assert ingest["ingest.fio_json"]["outcomes"] == {"added": fio}
    # The parallel prototype stores the same files, in the same order, with the same outcome.
    assert ingest["parallel.fio_json"]["outcomes"] == {"added": fio}
    m = results["measurements"]
    assert m["ingest.fio_json"]["result"]["records"] == m["parallel.fio_json"]["result"]["records"]
    for name in ingest:
        assert results["measurements"][name]["result"]["build"]["nodes"], name  # dbt ran its models


def test_anchors_read_the_same_fio_files(results: dict) -> None:
    fio = results["corpus"]["fio_json"]["files"]
    m = results["measurements"]
    assert m["anchor.json_floor"]["result"]["files"] == fio
    for variant in ("depth2", "objects"):
        assert m[f"anchor.duckdb_{variant}"]["result"]["files"] == fio
    auto = m["anchor.duckdb_auto"]["result"]  # fails for want of memory at full size, not on 16 files
    assert auto.get("files") == fio or auto["error"]
    assert "anchor.fioplot" not in m
    assert "fio-plot anchor skipped (--no-fioplot)" in results["notes"]


def test_rows_and_curve(results: dict) -> None:
    rows = results["summary"]["rows"]["20k"]
    assert rows["made"]["rows"]["raw_io_records"] == results["measurements"]["rows.20k.curve"]["result"]["fact_rows"]
    # The busiest series of the busiest disk: every sweep of it, every run.
    assert rows["curve"]["points_one_disk"] == SWEEPS_PER_SERIES * RUNS_PER_FILE
    assert rows["curve"]["disks"] == 5


def test_results_describe_the_machine_and_render(results: dict) -> None:
    assert results["machine"]["usable_cpus"] >= 1
    assert results["machine"]["packages"]["duckdb"]
    assert all(t["met"] is None for t in results["targets"])  # targets are judged at full size only
    text = table(results)
    for fmt in results["summary"]["parse"]:
        assert f"| {fmt} |" in text
    assert "| target | goal | measured | met |" in text
    assert results["size"] == "tiny" and results["runs_per_measurement"] == 1
