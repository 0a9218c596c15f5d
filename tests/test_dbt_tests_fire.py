"""Every singular dbt test (tests/dbt) can fail: each is run on a copy of a built warehouse with one bad row planted
where it looks, and must report it. (A test that passes on good data proves nothing by itself.)"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from kneepoint.ingest.build import run_dbt, run_model_tests
from tests.helpers import ROOT

# test name -> the SQL that plants one bad row it must find (in a copy of the sample warehouse)
FIRST_ROW = "rowid = (SELECT min(rowid) FROM {t})"
PLANTS = {
    "assert_no_file_rows_twice": "INSERT INTO fct_io_results SELECT * FROM fct_io_results LIMIT 1",
    "assert_units_known": (
        "UPDATE raw_io_records SET throughput_unit = 'MB/min' WHERE " + FIRST_ROW.format(t="raw_io_records")
    ),
    "assert_latency_distribution_is_a_curve": (
        "UPDATE fct_latency_distribution SET percentile = 150 WHERE " + FIRST_ROW.format(t="fct_latency_distribution")
    ),
    "assert_saturation_columns_consistent": (
        "UPDATE mart_saturation_points SET iops_at_saturation = NULL WHERE series_id = "
        "(SELECT min(series_id) FROM mart_saturation_points WHERE saturated)"
    ),
    "assert_saturation_rule_holds": (
        "UPDATE mart_saturation_points SET saturation_outstanding_io = max_outstanding_io WHERE series_id = "
        "(SELECT min(series_id) FROM mart_saturation_points WHERE saturated)"
    ),
    "assert_saturation_point_is_a_measured_load": (
        "UPDATE mart_saturation_points SET saturation_outstanding_io = 3 WHERE series_id = "
        "(SELECT min(series_id) FROM mart_saturation_points WHERE saturated)"
    ),
    "assert_throughput_matches_iops_x_block_size": (
        "UPDATE mart_unit_checks SET deviation = 0.05, within_tolerance = false WHERE "
        + FIRST_ROW.format(t="mart_unit_checks")
    ),
    "assert_io_results_in_range": "UPDATE fct_io_results SET read_pct = 120 WHERE "
    + FIRST_ROW.format(t="fct_io_results"),
    # the sample's production logs are placed on their disks' curves: one device's headroom no longer follows
    "assert_observed_rules_hold": (
        "UPDATE mart_headroom SET headroom = 2 * headroom WHERE rowid = "
        "(SELECT min(rowid) FROM mart_headroom WHERE headroom IS NOT NULL)"
    ),
    # the sample holds no load series: a planted one that claims a saturation point no point supports
    "assert_load_saturation_rule_holds": (
        "INSERT INTO mart_load_saturation (series_id, disk_key, load_kind, throughput_what, throughput_unit, points, "
        "saturated, saturation_load, tolerance) VALUES ('planted | load: concurrent sessions · queries', 'planted', "
        "'concurrent sessions', 'queries', 'queries/min', 3, true, 4, 0.1)"
    ),
    # 2 queries/s x 1 s over 4 sessions: Little's law off by half, yet not flagged
    "assert_load_littles_law_holds": (
        "INSERT INTO fct_load_steps (load_step_id, disk_key, disk, tool, load_kind, load, throughput_per_s, "
        "response_avg_ms, littles_law_ratio, littles_law_flag, file_id, record_index) VALUES ('planted:0', "
        "'planted', 'planted', 'table', 'concurrent sessions', 4, 2.0, 1000.0, 0.5, false, 'planted', 0)"
    ),
}


def test_every_singular_test_is_planted() -> None:
    assert set(PLANTS) == {p.stem for p in (ROOT / "tests" / "dbt").glob("*.sql")}


@pytest.fixture(scope="module")
def planted_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("planted")


@pytest.mark.parametrize("test_name", sorted(PLANTS))
def test_the_singular_test_finds_its_planted_row(test_name: str, sample_warehouse: Path, planted_dir: Path) -> None:
    # One path for every case: dbt's parsed project is kept per warehouse path.
    db = planted_dir / "planted.duckdb"
    Path(f"{db}.wal").unlink(missing_ok=True)
    shutil.copy(sample_warehouse, db)
    assert not run_model_tests(db, [test_name]), "the test fails before anything is planted"
    con = duckdb.connect(str(db))
    try:
        con.execute(PLANTS[test_name])
    finally:
        con.close()
    failures = run_model_tests(db, [test_name])
    assert [f.split(":")[0] for f in failures] == [test_name], failures


# assert_io_results_in_range checks many things; each is planted on its own row of fct_io_results (the nth row), with
# the columns it reads set so that only the condition planted holds, and must be reported for that row.
_LATENCY_COLUMNS = tuple(f"latency_{c}_ms" for c in ("min", "avg", "max", "p50", "p95", "p99"))


def _latencies(**ms: float) -> str:
    return ", ".join(f"{c} = {ms.get(c.split('_')[1], 'NULL')}" for c in _LATENCY_COLUMNS)


RANGE_PLANTS: list[tuple[str, str]] = [
    ("read_pct = 120, operation = 'mixed'", "read_pct outside 0..100"),
    ("read_pct = -1, operation = 'mixed'", "read_pct outside 0..100"),
    ("threads = 0", "threads below 1"),
    ("queue_depth = 0", "queue_depth below 1"),
    ("iops = -1", "negative iops or throughput"),
    ("throughput_bytes_per_s = -1", "negative iops or throughput"),
    (_latencies() + ", latency_p999_ms = -1", "negative latency"),
    (_latencies(avg=-1), "negative latency"),
    ("operation = 'read', read_pct = 50", "operation does not match read_pct"),
    ("operation = 'write', read_pct = 50", "operation does not match read_pct"),
    (_latencies(min=2, avg=1, max=3) + ", latency_p999_ms = NULL", "latencies out of order"),
    (_latencies(min=1, avg=3, max=2) + ", latency_p999_ms = NULL", "latencies out of order"),
    (_latencies(min=3, max=2) + ", latency_p999_ms = NULL", "latencies out of order"),
    (_latencies(p50=2, p95=1) + ", latency_p999_ms = NULL", "latencies out of order"),
    (_latencies(p95=2, p99=1) + ", latency_p999_ms = NULL", "latencies out of order"),
    (_latencies(p99=2) + ", latency_p999_ms = 1", "latencies out of order"),
]


def _plant_and_test(
    sample_warehouse: Path,
    tmp_path: Path,
    plant: Callable[[duckdb.DuckDBPyConnection], None],
    select: str,
    failures_query: str,
) -> tuple[list[str], list[tuple]]:
    """A copy of the sample warehouse with `plant` applied, dbt's tests `select` run over every row with their
    failing rows stored: the failed tests' names, and `failures_query` over the stored rows."""
    db = tmp_path / "planted.duckdb"
    shutil.copy(sample_warehouse, db)
    con = duckdb.connect(str(db))
    try:
        plant(con)
        con.execute("UPDATE kneepoint_build_window SET test_scope = 'all'")  # every row, as run_model_tests
    finally:
        con.close()
    run = run_dbt(db, ["test", "--select", select, "--store-failures"])
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [f.split(":")[0] for f in run.failures], con.execute(failures_query).fetchall()
    finally:
        con.close()


def test_every_range_check_finds_its_planted_row(sample_warehouse: Path, tmp_path: Path) -> None:
    ids: list[str] = []

    def plant(con: duckdb.DuckDBPyConnection) -> None:
        ids.extend(r[0] for r in con.execute("SELECT io_result_id FROM fct_io_results ORDER BY rowid").fetchall())
        # Every other column of the planted rows as the sample has it: none of them is out of range before.
        for n, (assignments, _) in enumerate(RANGE_PLANTS):
            con.execute(f"UPDATE fct_io_results SET {assignments} WHERE io_result_id = ?", [ids[n]])

    failed, rows = _plant_and_test(
        sample_warehouse,
        tmp_path,
        plant,
        "assert_io_results_in_range",
        "SELECT io_result_id, problem FROM main_dbt_test__audit.assert_io_results_in_range",
    )
    assert failed == ["assert_io_results_in_range"]
    found = set(rows)
    planted = {(ids[n], problem) for n, (_, problem) in enumerate(RANGE_PLANTS)}
    assert planted - found == set()
    assert {i for i, _ in found} == {i for i, _ in planted}  # no other row of the sample is out of range


def test_not_null_columns_names_each_column_that_holds_a_null(sample_warehouse: Path, tmp_path: Path) -> None:
    """The models' never-null columns are tested one model at a time (tests/dbt/generic/not_null_columns.sql): a
    null planted in two of fct_io_results' columns fails that model's test, and the failure names both."""

    def plant(con: duckdb.DuckDBPyConnection) -> None:
        con.execute("UPDATE fct_io_results SET iops = NULL WHERE " + FIRST_ROW.format(t="fct_io_results"))
        con.execute("UPDATE fct_io_results SET threads = NULL WHERE rowid = (SELECT max(rowid) FROM fct_io_results)")

    failed, found = _plant_and_test(
        sample_warehouse,
        tmp_path,
        plant,
        "fct_io_results,test_name:not_null_columns",
        "SELECT null_column, null_rows FROM main_dbt_test__audit.not_null_fct_io_results",
    )
    assert failed == ["not_null_fct_io_results"]
    assert sorted(found) == [("iops", 1), ("threads", 1)]
