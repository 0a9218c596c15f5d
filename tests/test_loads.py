"""Load series (issue 22) through the models: staging's unit conversion, the facts' series and Little's-law check,
the disks' saturation rule over (load, throughput), the USL fit over concurrency, the rule at another tolerance,
and incremental builds of load files equal to a full refresh."""

from __future__ import annotations

import html
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from kneepoint.app import charts, queries
from kneepoint.app.cli.main import main
from kneepoint.app.sharing.report import build_report
from kneepoint.ingest.build import build_models
from kneepoint.ingest.records import LoadRecord
from kneepoint.ingest.warehouse import connect, delete_file, relabel_file
from tests.helpers import rows
from tests.loads import SESSIONS, load_files, sessions_sweep, store_loads
from tests.test_incremental import differences, snapshot

# A sweep with known figures: queries/min at 1..12 sessions. At 10 % tolerance 4 sessions (300/min) is the
# smallest load no larger load beats by more than 10 % (320 <= 330); at 3 sessions 320 > 286.
KNOWN_THROUGHPUT = (100.0, 190.0, 260.0, 300.0, 310.0, 315.0, 318.0, 320.0)


def known_sweep() -> list[LoadRecord]:
    return [
        LoadRecord("table", i, i + 2, "concurrent sessions", float(n), x, "queries/min", n / (x / 60) * 1000)
        for i, (n, x) in enumerate(zip(SESSIONS, KNOWN_THROUGHPUT, strict=True))
    ]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("loads")
    db = tmp / "warehouse.duckdb"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KNEEPOINT_DBT_TARGET", str(tmp / "dbt-target"))
        con = connect(db)
        try:
            for n, records in enumerate(load_files()):
                store_loads(con, records, disk="Azure P30", name=f"loads{n}.csv")
            store_loads(con, known_sweep(), disk="Azure P40 stripe", host="sql01", name="known.md")
            store_loads(con, sessions_sweep(slower=2.0), disk="slow", name="slow.csv")
        finally:
            con.close()
        build_models(db).raise_for_failure()
        yield db


@pytest.fixture
def con(built) -> Iterator[duckdb.DuckDBPyConnection]:
    c = duckdb.connect(str(built), read_only=True)
    yield c
    c.close()


def series(
    con: duckdb.DuckDBPyConnection, disk_key: str, what: str, workload: str = "", load_kind: str | None = None
) -> dict:
    found = rows(
        con,
        "SELECT * FROM mart_load_saturation WHERE disk_key = ? AND throughput_what = ? AND workload = ? "
        "AND load_kind = coalesce(?, load_kind)",
        [disk_key, what, workload, load_kind],
    )
    assert len(found) == 1, found
    return found[0]


def test_throughput_is_converted_to_per_second_and_keeps_what_it_counts(con):
    steps = rows(con, "SELECT * FROM fct_load_steps WHERE file_name = 'known.md' ORDER BY load")
    assert [s["throughput_per_s"] for s in steps] == pytest.approx([x / 60 for x in KNOWN_THROUGHPUT])
    assert {s["throughput_what"] for s in steps} == {"queries"}
    assert {s["disk_key"] for s in steps} == {"Azure P40 stripe @ sql01"}


def test_the_saturation_load_is_the_disks_rule_over_load_and_throughput(con):
    s = series(con, "Azure P40 stripe @ sql01", "queries")
    assert s["saturated"] and s["saturation_load"] == 4
    assert s["throughput_at_saturation"] == pytest.approx(300.0)
    assert s["throughput_unit"] == "queries/min"
    assert s["throughput_per_s_at_saturation"] == pytest.approx(5.0)
    assert s["response_avg_ms_at_saturation"] == pytest.approx(4 / 5 * 1000)
    assert (s["max_throughput"], s["max_throughput_load"]) == (pytest.approx(320.0), 12)
    assert s["response_growth_to_saturation"] == pytest.approx(800 / 600)
    assert (s["points"], s["min_load"], s["max_load"], s["tolerance"]) == (8, 1, 12, 0.1)


def test_the_rule_at_another_tolerance_is_read_from_the_stored_macro(con):
    at = {
        tol: rows(con, "SELECT * FROM load_saturation_points(?) WHERE disk_key = 'Azure P40 stripe @ sql01'", [tol])
        for tol in (0.0, 0.1, 0.5)
    }
    # 0 %: every larger load adds some throughput, and the largest has nothing larger measured: not saturated
    assert not at[0.0][0]["saturated"] and at[0.0][0]["saturation_load"] is None
    assert at[0.1][0]["saturation_load"] == 4
    # 50 %: 2 sessions' 190 x 1.5 = 285 < 320, 3 sessions' 260 x 1.5 = 390 >= 320
    assert at[0.5][0]["saturation_load"] == 3
    assert at[0.1] == rows(con, "SELECT * FROM mart_load_saturation WHERE disk_key = 'Azure P40 stripe @ sql01'")


def test_a_step_measured_twice_keeps_its_best_and_a_step_without_throughput_is_on_no_curve(con):
    points = rows(
        con,
        "SELECT load, steps, throughput FROM int_load_points WHERE disk_key = 'Azure P30' "
        "AND load_kind = 'concurrent sessions' AND throughput_what = 'queries' ORDER BY load",
    )
    assert [p["load"] for p in points] == list(SESSIONS)  # 7 sessions had no throughput
    at_4 = next(p for p in points if p["load"] == 4)
    assert at_4["steps"] == 2 and at_4["throughput"] == pytest.approx(sessions_sweep()[3].throughput)
    no_curve = rows(con, "SELECT series_id FROM fct_load_steps WHERE load = 7 AND disk_key = 'Azure P30'")
    assert no_curve == [{"series_id": None}]


def test_hammerdb_nopm_and_tpm_of_one_file_are_two_series(con):
    nopm, tpm = (
        series(con, "Azure P30", "new orders"),
        series(con, "Azure P30", "transactions", load_kind="virtual users"),
    )
    assert nopm["load_kind"] == tpm["load_kind"] == "virtual users"
    assert nopm["tools"] == "hammerdb" and nopm["throughput_unit"] == "new orders/min"
    # the same USL shape, so the same saturation load
    assert nopm["saturation_load"] == tpm["saturation_load"]
    assert nopm["littles_law_checked_steps"] == 0  # no response time printed


def test_littles_law_holds_on_a_consistent_sweep_and_flags_a_slow_one(con):
    good = series(con, "Azure P40 stripe @ sql01", "queries")
    assert good["littles_law_checked_steps"] == 8 and good["littles_law_flagged_steps"] == 0
    ratios = [
        r[0] for r in con.execute("SELECT littles_law_ratio FROM fct_load_steps WHERE disk_key = 'slow'").fetchall()
    ]
    assert ratios == pytest.approx([2.0] * 8)
    slow = series(con, "slow", "queries")
    assert slow["littles_law_flagged_steps"] == 8


def test_databases_are_not_checked_by_littles_law(con):
    steps = rows(con, "SELECT littles_law_ratio, littles_law_flag FROM fct_load_steps WHERE load_kind = 'databases'")
    assert len(steps) == 6 and all(s["littles_law_ratio"] is None and not s["littles_law_flag"] for s in steps)


def test_the_usl_fit_over_concurrency_recovers_the_sweeps_parameters(con):
    s = series(con, "slow", "queries")  # sessions_sweep: σ 0.08, κ 0.02, 60/min at one session
    assert s["usl_fitted"]
    assert (s["usl_sigma"], s["usl_kappa"]) == (pytest.approx(0.08, abs=1e-4), pytest.approx(0.02, abs=1e-5))
    assert s["usl_lambda_per_s"] == pytest.approx(1.0, rel=1e-4)
    assert s["usl_peak_load"] == pytest.approx(((1 - 0.08) / 0.02) ** 0.5, rel=1e-3)
    reports = series(con, "Azure P30", "transactions", "reports")  # σ 0.3, no coherency: no peak
    assert reports["usl_peak_load"] is None
    assert "transactions per second level off" in reports["usl_note"]


def test_incremental_load_changes_equal_a_full_refresh(tmp_path, monkeypatch):
    """Store, relabel into a series that holds another file's points, and delete load files, each followed by the
    product's incremental build; then every mart equals a --full-refresh build of a copy."""
    monkeypatch.setenv("KNEEPOINT_DBT_TARGET", str(tmp_path / "dbt-target"))
    db, copy = tmp_path / "incremental.duckdb", tmp_path / "full.duckdb"
    files = load_files()
    ids = []

    def change(fn) -> None:
        con = connect(db)
        try:
            fn(con)
        finally:
            con.close()
        result = build_models(db)
        assert result.success, result.failures

    change(lambda con: ids.append(store_loads(con, files[0], disk="P10", name="a.csv").file_id))
    change(lambda con: ids.append(store_loads(con, files[0], disk="P20", name="b.csv", variant=" ").file_id))
    change(lambda con: ids.append(store_loads(con, files[1], disk="P20", name="c.log").file_id))
    change(lambda con: relabel_file(con, ids[0], disk="P20", host=None))
    change(lambda con: ids.append(store_loads(con, files[3], disk="P10", host="sql01", name="d.csv").file_id))
    change(lambda con: delete_file(con, ids[1]))
    incremental = snapshot(db)
    shutil.copy(db, copy)
    result = build_models(copy, full_refresh=True)
    assert result.success and result.kind == "full", result.failures
    assert not differences(incremental, snapshot(copy))
    assert len(incremental["mart_load_saturation"]) == 4  # P20 sessions, NOPM, TPM; P10 @ sql01 databases


# --- kneepoint saturation -----------------------------------------------------------------------------------------


def cli(db: Path, monkeypatch, capsys, *args: str) -> str:
    monkeypatch.setenv("KNEEPOINT_DB", str(db))  # main() sets it; monkeypatch restores it afterwards
    assert main(["--db", str(db), "saturation", *args]) == 0
    return capsys.readouterr().out


def test_cli_json_gives_the_load_series_with_their_kind(built, monkeypatch, capsys):
    data = json.loads(cli(built, monkeypatch, capsys, "--json"))
    assert {o["series_kind"] for o in data} == {"load"}
    known = next(o for o in data if o["disk_key"] == "Azure P40 stripe @ sql01")
    assert (known["saturation_load"], known["throughput_at_saturation"]) == (4, pytest.approx(300.0))
    assert known["response_avg_ms_at_saturation"] == pytest.approx(800.0)
    assert known["throughput_unit"] == "queries/min" and known["load_kind"] == "concurrent sessions"
    at_half = json.loads(cli(built, monkeypatch, capsys, "--json", "--tolerance", "0.5"))
    assert next(o for o in at_half if o["disk_key"] == "Azure P40 stripe @ sql01")["saturation_load"] == 3


def test_cli_response_target_is_the_most_throughput_under_it(built, monkeypatch, capsys):
    data = json.loads(cli(built, monkeypatch, capsys, "--json", "--latency-target-ms", "1000"))
    known = next(o for o in data if o["disk_key"] == "Azure P40 stripe @ sql01")
    # the table gives means only (load / throughput): 5 sessions at 310/min answer in 968 ms, 6 in 1,143 ms
    assert known["latency_target_metric"] == "mean"
    assert (known["latency_target_load"], known["throughput_at_latency_target"]) == (5, pytest.approx(310.0))
    assert known["latency_ms_at_latency_target"] == pytest.approx(5 / (310 / 60) * 1000)
    # sessions_sweep gives p95 = 1.5 x the mean, "slow" twice Little's law: p95 3 s already at one session
    assert next(o for o in data if o["disk_key"] == "slow")["latency_target_load"] is None
    data = json.loads(cli(built, monkeypatch, capsys, "--json", "--latency-target-ms", "4000"))
    slow = next(o for o in data if o["disk_key"] == "slow")
    # the p95 is what the target is held to: 3 sessions answer in 3.84 s at p95 (2.56 s mean), 4 in 4.44 s
    assert (slow["latency_target_metric"], slow["latency_target_load"]) == ("p95", 3)
    nopm = next(o for o in data if o["throughput_what"] == "new orders")
    # HammerDB printed no response time: nothing to hold to the target, and said so
    assert nopm["latency_target_load"] is None and nopm["latency_target_timed_loads"] == 0


def test_cli_says_each_load_series_in_the_apps_words(built, monkeypatch, capsys):
    out = cli(built, monkeypatch, capsys, "--latency-target-ms", "1000")
    lines = out.splitlines()
    assert lines[0].startswith("Load series (tolerance 10%): The saturation load is the smallest load")
    assert max(len(line) for line in lines) <= 100
    block = next(b for b in out.split("\n\n") if b.startswith("Azure P40 stripe @ sql01 · queries against"))
    assert "    saturates at 4 concurrent sessions: 300 queries/min, 800 ms mean response" in block
    assert "    USL: the fitted USL model peaks at " in block
    nopm = next(b for b in out.split("\n\n") if b.startswith("Azure P30 · new orders against virtual users"))
    assert "Response-time target: no response time reported to hold to it" in nopm
    slow = next(b for b in out.split("\n\n") if b.startswith("slow · "))
    assert "Little's law off (load ≠ throughput × response time, outside 0.8–1.25) in 8 of 8 steps" in slow


# --- charts and the report ------------------------------------------------------------------------------------


def test_load_curve_figure_marks_saturation_and_overlays_the_usl(built):
    keys = ["Azure P40 stripe @ sql01", "slow"]
    saturation, points = queries.load_saturation(keys, built), queries.load_points(keys, built)
    fig = charts.load_curve_figure(points, saturation, "throughput", usl=True)
    names = [t.name for t in fig.data]
    assert names.count("saturation point") == 2 and "slow: USL model" in names
    known = next(t for t in fig.data if t.name == "Azure P40 stripe @ sql01")
    assert list(known.y) == pytest.approx(list(KNOWN_THROUGHPUT))  # in the series' unit, queries/min
    diamond = next(t for t in fig.data if t.name == "saturation point" and t.x[0] == 4)
    assert diamond.y[0] == pytest.approx(300.0)
    # the notes above the chart, wrapped to its width
    notes = re.sub(r"<[^>]+>|&nbsp;|■", "", fig.layout.annotations[0].text.replace("<br>", " "))
    assert "Azure P40 stripe @ sql01: saturates at 4 concurrent sessions: 300 queries/min" in " ".join(notes.split())
    usl = next(t for t in fig.data if t.name == "slow: USL model")
    assert usl.x[0] == 1 and usl.x[-1] == 12 and usl.y[0] == pytest.approx(60.0, rel=1e-3)  # λ: 60/min
    response = charts.load_curve_figure(points, saturation, "response")
    assert {t.name for t in response.data} >= {"slow · p95", "Azure P40 stripe @ sql01"}
    assert response.layout.yaxis.title.text == "Response time (ms)"


def test_report_has_a_workloads_section_when_load_series_are_in_scope(built):
    report = build_report(built)
    assert '<section id="workloads">' in report.html and 'href="#workloads"' in report.html
    text = html.unescape(report.html)
    assert "Azure P40 stripe @ sql01</strong>: saturates at 4 concurrent sessions: 300 queries/min" in text
    workloads = [c for c in report.charts if c.workload.startswith("Workload: ")]
    assert {c.workload for c in workloads} >= {
        "Workload: queries against concurrent sessions",
        "Workload: new orders against virtual users",
    }
    # HammerDB printed no response time: its workloads get the throughput chart only
    assert [c.name.rsplit("-", 1)[-1] for c in workloads if "new orders" in c.workload] == ["throughput"]
    # a configuration known by its load series alone is summed up by them
    assert dict(report.summary)["Azure P40 stripe @ sql01"] == (
        "no disk benchmark; queries against concurrent sessions: saturates at 4 concurrent sessions: 300 queries/min, "
        "800 ms mean response."
    )
    scoped = build_report(built, disks=["slow"])
    assert {c.workload for c in scoped.charts} == {"Workload: queries against concurrent sessions"}


def test_an_anonymized_report_keeps_the_load_series_under_pseudonyms(built):
    report = build_report(built, anonymize=True)
    assert '<section id="workloads">' in report.html
    assert "oltp" not in report.html and "Azure" not in report.html
    assert "Workload 1: transactions against concurrent sessions" in html.unescape(report.html)


# --- PostgreSQL ----------------------------------------------------------------------------------------------------


def test_load_series_are_the_same_on_postgresql(pg_db, tmp_path, monkeypatch):
    """The load models are portable SQL: the same files give the same rows on both engines, every dbt test passing
    (the singular tests of the rule and of Little's law among them), and the rule at another tolerance too."""
    from kneepoint.app.cli.saturation import saturation_rows
    from tests.test_postgres import _rows, assert_same_rows

    monkeypatch.setenv("KNEEPOINT_DBT_TARGET", str(tmp_path / "dbt-target"))
    duck = tmp_path / "warehouse.duckdb"
    for db in (duck, pg_db):
        con = connect(db)
        try:
            for n, records in enumerate(load_files()):
                store_loads(con, records, disk="Azure P30", name=f"loads{n}.csv")
            store_loads(con, known_sweep(), disk="Azure P40 stripe", host="sql01", name="known.md")
        finally:
            con.close()
        result = build_models(db, all_tests=True)
        assert result.success, result.failures
    for model in ("stg_load_steps", "fct_load_steps", "int_load_points", "mart_load_usl_fits", "mart_load_saturation"):
        assert_same_rows(model, _rows(duck, f"SELECT * FROM {model}"), _rows(pg_db, f"SELECT * FROM {model}"))
    d, p = saturation_rows(duck, 0.5), saturation_rows(pg_db, 0.5)
    assert len(d) == len(p) == 7 and {r["series_kind"] for r in d} == {"load"}
    names = list(d[0])
    assert_same_rows(
        "load rule at 0.5", (names, [tuple(r.values()) for r in d]), (list(p[0]), [tuple(r.values()) for r in p])
    )
