"""The benchmark harness at its tiny size, so that `./dev bench` keeps working. No timing is asserted: CI
machines differ and are shared. What is asserted is that every stage ran on what the generator wrote, that
the generator and the parsers agree on it, and that the product's ingest stores the same with and without
its parsing pool."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench.__main__ import table
from bench.app import available as app_unavailable
from bench.app import sqlio_batch_log
from bench.floor import measure
from bench.generate import FULL_COUNTS, SPECS, TINY_COUNTS, counts, generate
from bench.harness import INGEST_WORKERS, SATURATION_NODES, Harness, Spec, results_path, run
from bench.memory import TreeMemory
from bench.rows import RUNS_PER_FILE, SWEEPS_PER_SERIES
from bench.team import ROWS as TEAM_ROWS
from bench.team import UPLOADERS
from kneepoint.ingest import formats

# CrystalDiskMark prints a mixed test's read and write records as one [Mix] line, read back as one record.
MERGES_RECORDS = {"crystaldiskmark"}
ROWS = 20_000
TEAM_MEASUREMENTS = ("prepare", "build", "ingest", "uploaders")


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bench")


@pytest.fixture(scope="module")
def results(out: Path) -> dict:
    # fio-plot's anchor needs PyPI to set up its venv: not in CI.
    path = run(
        "tiny", out / "out", out / "results", runs=1, warmup=0, fioplot=False, row_sizes=[ROWS], log=lambda _m: None
    )
    assert path.parent == out / "results"
    assert path.name == f"{datetime.now(UTC):%Y-%m-%d}-tiny.json"
    return json.loads(path.read_text())


def test_the_changes_stage_measures_whole_commands(results: dict) -> None:
    changes = results["summary"]["changes"]
    assert set(changes) == {"1file", "20k"} and set(changes["20k"]) == {"ingest", "relabel", "delete"}
    assert changes["1file"]["ingest"]["last_output"].startswith("models up to date")
    assert changes["20k"]["delete"]["wall_s"] > 0


def test_the_generator_covers_every_format_at_the_issues_counts() -> None:
    assert set(FULL_COUNTS) == set(TINY_COUNTS) == set(formats.names()) == set(SPECS)
    # Issue 8: 10,000 fio JSON files, 500 SQLIO batch logs, 5,000 CrystalDiskMark logs, 1,000 STATISTICS IO/TIME.
    assert (FULL_COUNTS["fio_json"], FULL_COUNTS["sqlio"]) == (10_000, 500)
    assert (FULL_COUNTS["crystaldiskmark"], FULL_COUNTS["sqlstats"]) == (5_000, 1_000)


def test_a_format_without_a_bench_spec_is_reported_not_skipped_silently(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr("bench.generate.SPECS", {k: v for k, v in SPECS.items() if k != "sqlstats"})
    wanted = counts("tiny")
    assert wanted["sqlstats"] == 0 and set(wanted) == set(formats.names())
    logged: list[str] = []
    corpus = generate(tmp_path / "corpus", {"sqlstats": 0, "sqlio": 1}, workers=1, log=logged.append)
    assert corpus.formats["sqlstats"].skipped == "no bench spec for sqlstats in bench/generate.py SPECS"
    assert corpus.formats["sqlio"].files == 1 and not corpus.formats["sqlio"].skipped
    assert any("sqlstats: skipped (no bench spec" in line for line in logged)


@pytest.mark.timeout(600)
def test_every_stage_ran(results: dict) -> None:
    expected = {f"parse.{f}" for f in TINY_COUNTS}
    expected |= {"anchor.json_floor", "anchor.duckdb_auto", "anchor.duckdb_depth2", "anchor.duckdb_objects"}
    expected |= {f"ingest.w{w}.{s}" for w in INGEST_WORKERS for s in ("fio_json", "all")}
    expected |= {"rows.20k.make", "rows.20k.build", "rows.20k.curve"}
    expected |= {"changes.1file.prepare", "changes.ingest.1file", "changes.20k.prepare"}
    expected |= {f"changes.{what}.20k" for what in ("ingest", "relabel", "delete")}
    expected |= {f"team.{engine}.{what}" for engine in _team_engines() for what in TEAM_MEASUREMENTS}
    if not app_unavailable():
        expected |= {"app.prepare", "app.fio", "app.sqlio"}
    expected |= {"production.prepare", "production.ingest", "production.draw"}
    assert set(results["measurements"]) == expected
    for name, m in results["measurements"].items():
        assert m["runs_counted"] == 1, name
        run = m["runs"][0]
        assert run["wall_s"] > 0 and run["cpu_s"] > 0 and run["max_rss_mb"] > 0, name
        assert run["tree_peak_mb"] > 0, name  # sampled from /proc: Linux, as CI


def _team_engines() -> set[str]:
    """DuckDB always; PostgreSQL where a server can be had (CI: required)."""
    from tests import postgres_server

    have = any(os.environ.get(v) for v in ("KNEEPOINT_BENCH_POSTGRES", "KNEEPOINT_TEST_POSTGRES"))
    if have or postgres_server.binaries() is not None or os.environ.get("KNEEPOINT_REQUIRE_POSTGRES") == "1":
        return {"duckdb", "postgres"}
    return {"duckdb"}


def test_the_team_stage_measures_both_engines_side_by_side(results: dict) -> None:
    team = results["summary"]["team"]
    assert set(team) == _team_engines()
    processes, folders, files = UPLOADERS["tiny"]
    for engine, figures in team.items():
        assert figures["build"]["wall_s"] > 0 and figures["build"]["slowest_nodes_s"], engine
        assert figures["ingest"]["wall_s"] > 0, engine
        uploads = figures["uploaders"]
        assert (uploads["files"], uploads["processes"]) == (processes * folders * files, processes), engine
        assert uploads["files_per_s"] > 0 and uploads["settle_build_s"] > 0, engine
    made = results["measurements"]["team.duckdb.prepare"]["result"]["made"]["rows"]["raw_io_records"]
    assert abs(made - TEAM_ROWS["tiny"]) < RUNS_PER_FILE
    if "postgres" in team:
        names = {t["target"] for t in results["targets"]}
        assert "PostgreSQL full build (every model and test) against DuckDB's, same rows" in names
        # The server's password never reaches the results: its URLs are written without one.
        assert not re.search(r"postgres(ql)?://[^/@\s]*:[^@\s]*@", json.dumps(results))


def test_the_app_stage_times_store_to_chart_in_a_browser(results: dict) -> None:
    if app_unavailable():
        pytest.skip(app_unavailable())
    app = results["summary"]["app"]
    assert set(app) == {"fio", "sqlio"}
    for kind, figures in app.items():
        assert 0 < figures["store_s"] < figures["store_to_chart_s"], kind
        assert figures["chart_s"] > 0, kind
    assert results["measurements"]["app.sqlio"]["result"]["file_bytes"] > 100_000


def test_the_production_stage_ingests_a_counter_log_and_draws_its_page(results: dict) -> None:
    production = results["summary"]["production"]
    assert production["intervals"] == 6 * 240 * 2  # the tiny log: 6 hours at 15 s for 2 disks
    assert production["ingest_s"] > 0 and production["draw_s"] > 0
    draw = results["measurements"]["production.draw"]["result"]
    # the page draws the log beside the sample's own day of that disk
    assert draw["intervals"] > production["intervals"] and draw["figures"] >= 2
    # past 1,200 intervals a device is drawn by each stretch's extremes
    assert 0 < draw["intervals_drawn"] < draw["intervals"]
    judged = [t["target"] for t in results["targets"]]
    assert any(t.startswith("ingest of a ") and t.endswith("counter log (2,880 intervals)") for t in judged)
    assert "its page drawn (reads and charts)" in judged


def test_the_sqlio_log_of_the_app_stage_holds_200_runs() -> None:
    from kneepoint.ingest.formats import parse_text

    assert len(parse_text(sqlio_batch_log("count")).records) == 200


def test_every_generated_format_parses_back(results: dict) -> None:
    for fmt, corpus in results["corpus"].items():
        assert corpus["files"] == TINY_COUNTS[fmt] and not corpus["skipped"], fmt
        parse = results["summary"]["parse"][fmt]
        assert parse["files"] == corpus["files"]
        assert parse["errors"] == 0, fmt
        assert parse["wrong_format"] == 0, fmt  # detection picks the format the writer wrote
        if fmt in MERGES_RECORDS:
            assert 0 < parse["records"] <= corpus["records_written"]
        else:
            assert parse["records"] == corpus["records_written"], fmt


# Formats whose records are not benchmark runs (raw_io_records): SQL Server statements, observed production load.
OBSERVED_LOAD = {"perfmon_csv", "iostat", "sqlserver_dmv"}
LOAD_SERIES = {"load_table", "hammerdb"}  # an application's load steps (raw_load_steps)
NOT_BENCHMARK_RECORDS = {"sqlstats", *OBSERVED_LOAD, *LOAD_SERIES}


def test_ingest_stores_every_file_the_same_with_and_without_the_pool(results: dict) -> None:
    ingest, m = results["summary"]["ingest"], results["measurements"]
    parsed = results["summary"]["parse"]
    for label, fmts in (("fio_json", ["fio_json"]), ("all", list(TINY_COUNTS))):
        files = sum(TINY_COUNTS[f] for f in fmts)
        records = sum(parsed[f]["records"] for f in fmts)
        runs = {w: m[f"ingest.w{w}.{label}"]["result"] for w in INGEST_WORKERS}
        for workers, result in runs.items():
            assert result["workers"] == workers
            assert result["outcomes"] == {"added": files}, (label, workers)
            assert result["records"] == records, (label, workers)
            stages = m[f"ingest.w{workers}.{label}"]["median"]["stages"]
            assert {"read_s", "parse_s", "store_s", "ingest_s"} <= set(stages), (label, workers)
        assert runs[1]["raw_rows"] == runs[2]["raw_rows"], label
        io_rows = runs[1]["raw_rows"]["raw_io_records"]
        assert io_rows == sum(parsed[f]["records"] for f in fmts if f not in NOT_BENCHMARK_RECORDS), label
        observed_rows = runs[1]["raw_rows"]["raw_intervals"] + runs[1]["raw_rows"]["raw_waits"]
        assert observed_rows == sum(parsed[f]["records"] for f in fmts if f in OBSERVED_LOAD), label
        load_rows = runs[1]["raw_rows"]["raw_load_steps"]
        assert load_rows == sum(parsed[f]["records"] for f in fmts if f in LOAD_SERIES), label
    # At tiny size one ingest builds the models (the builds are the same code; they are CI's time).
    assert [name for name, i in ingest.items() if i["built"]] == ["ingest.w1.all"]
    assert m["ingest.w1.all"]["median"]["stages"]["build_s"] > 0
    nodes = m["ingest.w1.all"]["result"]["build"]["nodes"]
    assert any(n.endswith(".mart_saturation_points") for n in nodes)


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
    anchors = results["summary"]["anchors"]
    assert anchors["kneepoint_read_parse_s"] > 0 and anchors["json_loads_read_loads_s"] > 0
    assert all(anchors[f"kneepoint_ingest_w{w}_s"] > 0 for w in INGEST_WORKERS)


def test_rows_build_and_curve(results: dict) -> None:
    rows = results["summary"]["rows"]["20k"]
    made = rows["made"]["rows"]["raw_io_records"]
    assert abs(made - ROWS) < RUNS_PER_FILE  # whole files of RUNS_PER_FILE runs
    assert made == rows["curve"]["fact_rows"]
    # The busiest series of the busiest disk: every sweep of it, every run.
    assert rows["curve"]["points_one_disk"] == SWEEPS_PER_SERIES * RUNS_PER_FILE
    assert rows["curve"]["disks"] == 5
    assert rows["build"]["runs"] == 1
    timed = results["measurements"]["rows.20k.build"]["median"]["stages"]
    assert all(f"dbt:{node}" in timed for node in SATURATION_NODES)


def test_results_describe_the_machine_and_render(results: dict) -> None:
    machine = results["machine"]
    assert machine["usable_cpus"] >= 1 and machine["memory_gib"] > 0 and machine["cpu"]
    assert machine["disk"]["filesystem"] and machine["disk"]["free_gb"] > 0
    assert machine["os"] and machine["python"].startswith("3.11")
    assert machine["packages"]["duckdb"] and machine["packages"]["dbt-core"]
    in_git_checkout = (Path(__file__).resolve().parents[1] / ".git").exists()
    assert len(results["code"]["commit"] or "") == (40 if in_git_checkout else 0)
    assert results["size"] == "tiny" and results["runs_per_measurement"] == 1
    assert results["concurrent_measurements"] == 2  # CI's time; the figures say nothing, and the results say so
    assert any("measurements ran at once" in note for note in results["notes"])
    assert results["targets"] and all(t["met"] is None for t in results["targets"])  # judged at full size only
    text = table(results)
    for fmt in results["summary"]["parse"]:
        assert f"| {fmt} |" in text
    for name in results["summary"]["ingest"]:
        assert f"| {name.removeprefix('ingest.')} |" in text
    assert "| 20k |" in text and "| target | goal | measured | met |" in text


def test_the_table_command_prints_a_results_file(results: dict, tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(results))
    done = subprocess.run([sys.executable, "-m", "bench", "table", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == table(results)


def test_results_files_are_never_overwritten(tmp_path: Path) -> None:
    when = datetime(2026, 3, 4, tzinfo=UTC)
    first = results_path(tmp_path, "full", when)
    assert first.name == "2026-03-04-full.json"
    first.write_text("{}")
    assert results_path(tmp_path, "full", when).name == "2026-03-04-full-2.json"


def test_a_budget_cuts_a_measurement_short_and_says_so(tmp_path: Path) -> None:
    h = Harness(tmp_path, runs=3, warmup=0, log=lambda _m: None)
    group = h.take(Spec("floor", "json_floor", {"paths": []}, budget_s=1e-6))
    assert len(group.runs) == 1 and group.planned == 3
    assert h.notes and h.notes[0].startswith("floor: median of 1 run(s), not 3")


def test_a_failed_measurement_ends_its_chain_and_the_run_goes_on(tmp_path: Path) -> None:
    """A command that fails (here: exits 3) is listed with its output; the measurements after it in its chain are
    not taken, and the other chains are."""
    import sys

    h = Harness(tmp_path, runs=1, warmup=0, log=lambda _m: None)
    failing = Spec("broken.prepare", cmd=[sys.executable, "-c", "import sys; print('no disk'); sys.exit(3)"])
    after = Spec("broken.measure", cmd=[sys.executable, "-c", "print('{}')"])
    other = Spec("other.measure", cmd=[sys.executable, "-c", "print('{}')"])
    h.measure([[failing, after], [other]])
    assert set(h.groups) == {"other.measure"}
    assert len(h.failures) == 1
    assert h.failures[0].startswith("broken.prepare failed (not measured after it: broken.measure)")
    assert "no disk" in h.failures[0]


def test_tree_memory_counts_every_process_of_the_tree() -> None:
    # A parent and a child holding 100 MB each (touched, so resident): the tree holds more than either.
    code = (
        "import subprocess, sys, time; b = bytearray(100 << 20); b[::4096] = b'x' * len(b[::4096]); "
        "c = subprocess.Popen([sys.executable, '-c', "
        "\"import time; b = bytearray(100 << 20); b[::4096] = b'x' * len(b[::4096]); time.sleep(1.5)\"]); "
        "c.wait()"
    )
    proc = subprocess.Popen([sys.executable, "-c", code])
    memory = TreeMemory(proc.pid, interval_s=0.05)
    proc.wait()
    peak = memory.stop()
    assert peak is not None and peak > 200


def test_equivalence_check_finds_a_changed_parser_and_passes_an_unchanged_one(monkeypatch):
    from bench import equivalence
    from kneepoint.ingest.formats import sqlio

    # Against the working tree's own file, loaded apart: the same parser.
    compared, differences = equivalence.compare("sqlio", None, mutations=200)
    assert compared > 200 and differences == []

    def loses_the_last_run(text: str) -> list:
        return original(text)[:-1]

    original = sqlio.parse
    monkeypatch.setattr(sqlio, "parse", loses_the_last_run)
    _, differences = equivalence.compare("sqlio", None, mutations=200)
    assert differences and all(": parse at the file" in d for d in differences)


def test_the_floor_reader_reads_as_many_records_as_the_product(results: dict, out: Path) -> None:
    """`python -m bench.floor` compares the CrystalDiskMark path with a reader doing the least: a fair comparison
    only while that reader makes the records the product makes."""
    floor = measure(out / "out" / "corpus", runs=1)
    assert floor.files == TINY_COUNTS["crystaldiskmark"]
    assert floor.floor_records == floor.product_records == results["summary"]["parse"]["crystaldiskmark"]["records"]
    assert len(floor.seconds) == 7 and all(s > 0 for s in floor.seconds.values())
