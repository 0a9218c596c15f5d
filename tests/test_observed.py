"""Observed production load (IntervalRecord / WaitRecord) through the warehouse: stored in the file's one
transaction, deleted with it, carried by bundles, anonymized, added to an older warehouse on connect; then the
models that place it on the disk's benchmark curve (headroom, degradation) on a case computed by hand."""

from __future__ import annotations

import dataclasses
import json
import math
import zipfile
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from kneepoint.app import wording as w
from kneepoint.app.cli.main import main
from kneepoint.app.sharing.anonymize import Anonymizer
from kneepoint.app.sharing.bundle import export_bundle, import_bundle
from kneepoint.ingest import schema
from kneepoint.ingest.build import build_models, run_dbt
from kneepoint.ingest.load import ingest_inputs
from kneepoint.ingest.records import INTERVAL_FIELDS, WAIT_FIELDS
from kneepoint.ingest.sources import iter_paths
from kneepoint.ingest.warehouse import connect, delete_file, row_counts
from tests.helpers import SAMPLE
from tests.observed import ingest_observed, interval, store_observed, waits

DB_HOST = "kpsecretsql7"


def observed_records() -> list:
    return [
        interval(0, 1000.0, 2.0, host=DB_HOST, device=f"\\\\{DB_HOST}\\PhysicalDisk(0 C:)", since_boot=True),
        interval(1, 1500.0, 2.5, host=DB_HOST, read_share=0.7, queue_length=3.75),
        interval(
            2,
            1800.0,
            3.0,
            host=DB_HOST,
            device="tempdb templog T:\\tempdb.ldf",
            device_kind="database_file",
            tool="sqlserver",
        ),
        waits(0, host=DB_HOST),
        waits(0, "WRITELOG", host=DB_HOST),
    ]


def test_intervals_and_waits_are_stored_with_every_field_and_deleted_with_their_file(tmp_path):
    db = tmp_path / "w.duckdb"
    records = observed_records()
    con = connect(db)
    try:
        result = store_observed(con, records, disk="SAN LUN 4", host="sql01")
        assert result.status == "added" and result.runs == 3  # intervals 0..2; the waits share interval 0
        counts = row_counts(con, result.file_id)
        assert counts["raw_intervals"] == 3 and counts["raw_waits"] == 2
        stored = con.execute(f"SELECT {', '.join(INTERVAL_FIELDS)} FROM raw_intervals ORDER BY record_index").fetchall()
        assert stored == [tuple(getattr(r, f) for f in INTERVAL_FIELDS) for r in records[:3]]
        stored_waits = con.execute(f"SELECT {', '.join(WAIT_FIELDS)} FROM raw_waits ORDER BY record_index").fetchall()
        assert stored_waits == [tuple(getattr(r, f) for f in WAIT_FIELDS) for r in records[3:]]
        assert con.execute("SELECT record_index FROM raw_waits ORDER BY 1").fetchall() == [(3,), (4,)]
        # since_boot is a real boolean column, not a number
        assert schema.RAW_INTERVALS.arrow_schema().field("since_boot").type == "bool"
        delete_file(con, result.file_id)
        assert row_counts(con, result.file_id) == dict.fromkeys(schema.RAW_TABLES, 0)
    finally:
        con.close()


def test_an_older_warehouse_gets_the_observed_tables_on_connect(tmp_path):
    db = tmp_path / "old.duckdb"
    con = connect(db)
    con.close()
    raw = duckdb.connect(str(db))
    raw.execute("DROP TABLE raw_intervals; DROP TABLE raw_waits; DROP TABLE kneepoint_changed_disks")
    raw.execute("UPDATE kneepoint_schema SET schema_hash = 'before issue 21'")
    raw.close()
    con = connect(db)
    try:
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        assert {"raw_intervals", "raw_waits", "kneepoint_changed_disks"} <= tables
        assert store_observed(con, observed_records(), disk="d").status == "added"
    finally:
        con.close()


def test_a_bundle_carries_the_observed_rows_and_its_import_stores_them(tmp_path):
    source, target = tmp_path / "source.duckdb", tmp_path / "target.duckdb"
    con = connect(source)
    try:
        store_observed(con, observed_records(), disk="SAN LUN 4")
    finally:
        con.close()
    build_models(source).raise_for_failure()
    out = tmp_path / "b.zip"
    export_bundle(source, out)
    with zipfile.ZipFile(out) as zf:
        assert pq.read_table(zf.open("raw/raw_intervals.parquet")).num_rows == 3
        assert pq.read_table(zf.open("raw/raw_waits.parquet")).num_rows == 2
        assert pq.read_table(zf.open("marts/fct_observed_intervals.parquet")).num_rows == 3
    result = import_bundle(target, out)
    assert not result.errors and not result.build_failures
    a, b = duckdb.connect(str(source), read_only=True), duckdb.connect(str(target), read_only=True)
    try:
        for table in ("raw_intervals", "raw_waits", "fct_observed_intervals"):
            assert (
                a.sql(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
                == b.sql(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
            )
    finally:
        a.close()
        b.close()


def test_anonymization_replaces_the_observed_host_and_it_inside_device_names(tmp_path):
    db = tmp_path / "w.duckdb"
    con = connect(db)
    try:
        store_observed(con, observed_records(), disk="SAN LUN 4", host="sql01")
        tables = {t: con.sql(f"SELECT * FROM {t}").to_arrow_table() for t in schema.RAW_TABLES}
    finally:
        con.close()
    out = Anonymizer().raw_tables(tables)
    intervals = out["raw_intervals"].to_pylist()
    hosts = {r["host"] for r in intervals} | {r["host"] for r in out["raw_waits"].to_pylist()}
    assert hosts == {"Host 2"}  # Host 1 is the file's host label, sql01
    text = repr(intervals) + repr(out["raw_waits"].to_pylist())
    assert DB_HOST not in text.lower() and "tempdb.ldf" not in text
    devices = [r["device"] for r in intervals]
    # the counter path's computer becomes the host's pseudonym; drive letters and paths as everywhere else
    assert devices == ["\\\\Host 2\\PhysicalDisk(0 Drive 1)", "PhysicalDisk(1 Drive 2)", "tempdb templog Path 1"]
    # the measurement stays
    assert [r["reads_per_s"] for r in intervals] == [r["reads_per_s"] for r in tables["raw_intervals"].to_pylist()]
    assert all(not math.isnan(r["interval_s"]) for r in intervals)


# fio's own figures for the runs the hand computation reads (sample_data/fio/randread-4k-jobs1.json, 4 KiB random
# reads, one job): read.iops and read.lat_ns.mean per iodepth.
FIO_QD1 = (74958.76031, 13153.137174e-6)
FIO_QD4 = (105773.556611, 37653.30169e-6)
FIO_QD8 = (151111.472132, 52779.906488e-6)
FIO_QD32_IOPS = 177525.11872  # the saturation point: nothing past QD32 beats it by more than 10 %


@pytest.fixture(scope="module")
def placed(tmp_path_factory) -> Path:
    """The sample's fio 4 KiB random-read sweep as disk `vda @ vm`, and a day of Perfmon intervals of the same disk:
    E: 21 intervals of 4 KiB reads at 40,000 + 5,000 i IOPS and 0.10 + 0.01 i ms (i = 0..20), a since_boot
    average and a _Total instance (both left out of the percentiles); F: 21 intervals at 60,000 IOPS and 0.02 ms."""
    db = tmp_path_factory.mktemp("placed") / "w.duckdb"
    report = ingest_inputs(db, iter_paths(sorted((SAMPLE / "fio").glob("randread-4k-*.json"))), disk="vda", host="vm")
    assert not report.errors
    records = [interval(i, 40_000.0 + 5_000 * i, 0.10 + 0.01 * i) for i in range(21)]
    records += [interval(21, 500_000.0, 5.0, since_boot=True)]
    records += [interval(i, 300_000.0, 9.0, device="PhysicalDisk(_Total)") for i in range(21)]
    records += [interval(i, 60_000.0, 0.02, device="PhysicalDisk(2 F:)") for i in range(21)]
    ingest_observed(db, records, disk="vda", host="vm")
    return db


def headroom_rows(db: Path) -> dict[str, dict]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        cur = con.execute("SELECT * FROM mart_headroom")
        names = [d[0] for d in cur.description]
        return {row[names.index("device")]: dict(zip(names, row, strict=True)) for row in cur.fetchall()}
    finally:
        con.close()


def test_headroom_and_degradation_on_a_case_computed_by_hand(placed):
    rows = headroom_rows(placed)
    assert set(rows) == {"PhysicalDisk(1 E:)", "PhysicalDisk(2 F:)"}  # _Total is no device of its own
    e = rows["PhysicalDisk(1 E:)"]
    # 21 values, continuous percentiles: p50 the 11th, p95 the 20th (0.95 x 20 = 19), p99 0.8 of the way to the 21st
    assert e["intervals"] == 21  # the since_boot average is left out
    assert e["iops_p50"] == pytest.approx(90_000.0)
    assert e["iops_p95"] == pytest.approx(135_000.0)
    assert e["iops_p99"] == pytest.approx(139_000.0)
    assert e["latency_avg_ms_p95"] == pytest.approx(0.29)
    assert e["bytes_per_io"] == pytest.approx(4096.0) and e["read_pct"] == pytest.approx(100.0)
    assert e["series_id"] == "vda @ vm | random read 100% read 4096 B read"
    assert e["baseline_saturation_iops"] == pytest.approx(FIO_QD32_IOPS)
    # 135,000 IOPS first lies between QD4 and QD8 (QD2 -> QD4 stays near 105,770): linear in IOPS there
    (x0, y0), (x1, y1) = FIO_QD4, FIO_QD8
    baseline_ms = y0 + (135_000.0 - x0) / (x1 - x0) * (y1 - y0)
    assert baseline_ms == pytest.approx(0.047404, abs=1e-6)
    assert e["baseline_latency_at_p95_iops_ms"] == pytest.approx(baseline_ms, rel=1e-9)
    assert e["headroom"] == pytest.approx(FIO_QD32_IOPS / 135_000.0, rel=1e-9)  # 1.31x
    assert e["latency_ratio"] == pytest.approx(0.29 / baseline_ms, rel=1e-9)  # 6.1x
    assert e["degraded"] is True and e["beyond_baseline"] is False

    f = rows["PhysicalDisk(2 F:)"]
    # below the lightest load's IOPS the baseline's latency is that load's: 0.02 / 0.013153 = 1.52x, not degraded
    assert f["baseline_latency_at_p95_iops_ms"] == pytest.approx(FIO_QD1[1], rel=1e-9)
    assert f["latency_ratio"] == pytest.approx(0.02 / FIO_QD1[1], rel=1e-9)
    assert f["headroom"] == pytest.approx(FIO_QD32_IOPS / 60_000.0, rel=1e-9)
    assert f["degraded"] is False


def test_each_interval_is_placed_and_flagged(placed):
    con = duckdb.connect(str(placed), read_only=True)
    try:
        rows = con.execute(
            "SELECT device, interval_index, iops, since_boot, is_total_instance, baseline_latency_at_iops_ms, "
            "beyond_baseline, headroom, degraded, outstanding_io, outstanding_io_source "
            "FROM mart_production_vs_baseline"
        ).fetchall()
        n_intervals = con.execute("SELECT count(*) FROM fct_observed_intervals").fetchall()[0][0]
    finally:
        con.close()
    assert len(rows) == n_intervals == 64  # every interval had I/O and a baseline
    by_key = {(r[0], r[1]): r for r in rows}
    # E: interval 19, 135,000 IOPS at 0.29 ms: the same figures as the device's p95
    e19 = by_key[("PhysicalDisk(1 E:)", 19)]
    (x0, y0), (x1, y1) = FIO_QD4, FIO_QD8
    assert e19[5] == pytest.approx(y0 + (135_000.0 - x0) / (x1 - x0) * (y1 - y0), rel=1e-9)
    assert e19[7] == pytest.approx(FIO_QD32_IOPS / 135_000.0) and e19[8] is True
    # Little's law where Perfmon logged no queue: 135,000 IOPS x 0.29 ms = 39.15 outstanding
    assert e19[9] == pytest.approx(39.15) and e19[10] == "littles_law"
    # the since_boot average (500,000 IOPS) is placed, flagged, and beyond anything the benchmark reached
    boot = by_key[("PhysicalDisk(1 E:)", 21)]
    assert boot[3] is True and boot[6] is True and boot[5] is None and boot[8] is None
    assert all(r[4] for r in rows if r[0] == "PhysicalDisk(_Total)")


def test_a_stricter_factor_is_a_dbt_var(placed, tmp_path):
    """degradation_factor is declared once (dbt_project.yml); F's 1.52x is degraded at a factor of 1.5."""
    import shutil

    db = tmp_path / "w.duckdb"
    shutil.copy(placed, db)
    run = run_dbt(db, ["run", "--select", "mart_headroom", "--full-refresh", "--vars", "{degradation_factor: 1.5}"])
    assert not run.failures
    rows = headroom_rows(db)
    assert rows["PhysicalDisk(2 F:)"]["degraded"] is True and rows["PhysicalDisk(2 F:)"]["degradation_factor"] == 1.5


def test_the_headroom_sentence_says_the_issues_example():
    row = {
        "series_id": "s",
        "iops_p95": 1240.0,
        "latency_avg_ms_p95": 7.8,
        "baseline_saturated": True,
        "headroom": 4.1,
        "beyond_baseline": False,
        "latency_ratio": 3.2,
        "degraded": True,
        "degradation_factor": 2.0,
    }
    assert w.headroom_sentence(row) == (
        "p95 load is 1,240 IOPS at 7.8 ms: 4.1× below saturation; latency at that load is 3.2× the baseline's — "
        "the disk is slower than when it was benchmarked"
    )
    calm = {**row, "latency_ratio": 1.3, "degraded": False}
    assert w.headroom_sentence(calm).endswith(
        "latency at that load is 1.3× the baseline's, within the 2× that would mean it degraded"
    )
    unsaturated = {
        **row,
        "baseline_saturated": False,
        "headroom": None,
        "headroom_at_least": 8.0,
        "baseline_max_iops": 9920.0,
    }
    assert "at least 8× below saturation (the benchmark did not saturate up to 9,920 IOPS)" in w.headroom_sentence(
        unsaturated
    )
    assert w.headroom_sentence({**row, "series_id": None}).startswith(
        "p95 load is 1,240 IOPS at 7.8 ms; no benchmark of this disk"
    )


def test_kneepoint_headroom_prints_one_sentence_per_device_and_json(placed, capsys):
    assert main(["headroom", "--db", str(placed)]) == 0
    out = capsys.readouterr().out
    assert (
        "p95 load is 135,000 IOPS at 0.29 ms over the whole log, 2026-11-02 09:00:00–09:05:15 (under an hour): 1.3× "
        "below saturation; latency at that load is 6.1× the baseline's" in " ".join(out.split())
    )
    assert "the disk is slower than when it was benchmarked" in " ".join(out.split())
    assert "p95 load is 60,000 IOPS at 0.02 ms over the whole log" in " ".join(out.split())
    assert "(under an hour): 3× below saturation; latency at that load is 1.5× the baseline's" in " ".join(out.split())
    assert main(["headroom", "--db", str(placed), "--disk", "vda", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["devices"]
    assert [r["device"] for r in rows] == ["PhysicalDisk(1 E:)", "PhysicalDisk(2 F:)"]
    assert rows[0]["degraded"] is True and rows[0]["sentence"].startswith("p95 load is 135,000 IOPS")
    assert main(["headroom", "--db", str(placed), "--disk", "other disk"]) == 1
    assert "disks with observed load: vda @ vm" in capsys.readouterr().err


def test_the_baseline_is_named_with_the_observed_size_per_io():
    row = {
        "series_id": "s",
        "bytes_per_io": 10650.0,
        "read_pct": 70.0,
        "baseline_pattern": "random",
        "baseline_read_pct": 100.0,
        "baseline_block_size_bytes": 8192,
        "baseline_direction": "read",
    }
    # an average size per I/O is rarely a whole block: said in KiB like every size, never '10650 B'
    assert w.baseline_text(row) == "random read 8 KiB, the nearest to 10.4 KiB per I/O, 70% reads"
    assert w.baseline_text({**row, "bytes_per_io": 8192.2}).endswith("the nearest to 8 KiB per I/O, 70% reads")
    assert w.fmt_io_size(512) == "512 B" and w.fmt_io_size(3 * 2**20 + 40_000) == "3.04 MiB"


# -- the busy hour ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def busy_day(tmp_path_factory) -> Path:
    """Three hours of 5-minute Perfmon intervals of E: from 09:00 (no benchmark: the percentiles need none): 09:xx at
    1,000 + 10 i IOPS, 10:xx at 3,000 + 100 i IOPS and 2 + 0.2 i ms (i = 0..11, the busiest), 11:xx at 2,000 IOPS;
    a since_boot average of 90,000 IOPS at 10:30 (left out, or it would make 10:xx busier still). F: 40 minutes
    across a clock hour (09:40 to 10:20), so its whole log is its busy hour. G: no times at all."""
    db = tmp_path_factory.mktemp("busy") / "w.duckdb"
    e = [interval(i, 1_000.0 + 10 * i, 1.0, interval_s=300.0) for i in range(12)]
    e += [interval(12 + i, 3_000.0 + 100 * i, 2.0 + 0.2 * i, interval_s=300.0) for i in range(12)]
    e += [interval(24 + i, 2_000.0, 1.5, interval_s=300.0) for i in range(12)]
    e += [interval(6, 90_000.0, 9.0, interval_s=300.0, start="2026-11-02T10:00:00", since_boot=True)]
    f = [
        interval(i, 500.0 + 100 * i, 1.0, interval_s=300.0, device="PhysicalDisk(2 F:)", start="2026-11-02T09:40:00")
        for i in range(8)
    ]
    g = [
        interval(i, 700.0 + 100 * i, 1.0, device="sdc", host="db-linux", tool="iostat", device_kind="block_device")
        for i in range(5)
    ]
    g = [dataclasses.replace(r, interval_start=None) for r in g]
    ingest_observed(db, e + f + g, disk="E drive")
    return db


def test_the_percentiles_are_the_busy_hours(busy_day):
    from datetime import datetime

    rows = headroom_rows(busy_day)
    e = rows["PhysicalDisk(1 E:)"]
    assert (e["busy_hour_start"], e["busy_hour_end"]) == (datetime(2026, 11, 2, 10), datetime(2026, 11, 2, 11))
    assert e["busy_hour_whole_log"] is False
    assert e["intervals"] == 36 and e["busy_hour_intervals"] == 12
    # 12 values 3,000 .. 4,100: p50 halfway between the 6th and 7th, p95 0.45 of the way from the 11th to the 12th
    assert e["iops_p50"] == pytest.approx(3_550.0)
    assert e["iops_p95"] == pytest.approx(4_000.0 + 0.45 * 100)
    assert e["latency_avg_ms_p95"] == pytest.approx(4.0 + 0.45 * 0.2)
    assert w.headroom_sentence(e).startswith(
        "p95 load is 4,045 IOPS at 4.09 ms in the busiest hour, 2026-11-02 10:00–11:00; no benchmark of this disk"
    )
    f = rows["PhysicalDisk(2 F:)"]
    # 09:40 to 10:20 (the last interval starts at 10:15 and lasts 5 minutes): under an hour, every interval counts
    assert f["busy_hour_whole_log"] is True and f["busy_hour_intervals"] == f["intervals"] == 8
    assert (f["busy_hour_start"], f["busy_hour_end"]) == (datetime(2026, 11, 2, 9, 40), datetime(2026, 11, 2, 10, 20))
    assert f["iops_p50"] == pytest.approx(850.0)
    assert w.busy_hour_text(f) == "over the whole log, 2026-11-02 09:40–10:20 (under an hour)"
    g = rows["sdc"]
    assert g["busy_hour_whole_log"] is True and g["busy_hour_start"] is None and g["busy_hour_intervals"] == 5
    assert w.busy_hour_text(g) == "over the whole log (no times logged)"


def test_kneepoint_headroom_says_the_busy_hour(busy_day, capsys):
    assert main(["headroom", "--db", str(busy_day)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "in the busiest hour, 2026-11-02 10:00–11:00" in out and "12 of 36 intervals in the busy hour" in out
    assert main(["headroom", "--db", str(busy_day), "--json"]) == 0
    rows = {r["device"]: r for r in json.loads(capsys.readouterr().out)["devices"]}
    e = rows["PhysicalDisk(1 E:)"]
    assert e["busy_hour_start"] == "2026-11-02T10:00:00" and e["busy_hour_end"] == "2026-11-02T11:00:00"


def test_the_busy_hour_rule_is_checked(busy_day, tmp_path):
    """assert_observed_rules_hold finds a busy hour moved to a quieter hour."""
    import shutil

    from kneepoint.ingest.build import run_model_tests

    db = tmp_path / "w.duckdb"
    shutil.copy(busy_day, db)
    assert not run_model_tests(db, ["assert_observed_rules_hold"])
    con = duckdb.connect(str(db))
    try:
        con.execute(
            "UPDATE mart_headroom SET busy_hour_start = busy_hour_start + INTERVAL 1 HOUR, "
            "busy_hour_end = busy_hour_end + INTERVAL 1 HOUR WHERE NOT busy_hour_whole_log"
        )
    finally:
        con.close()
    assert [f.split(":")[0] for f in run_model_tests(db, ["assert_observed_rules_hold"])] == [
        "assert_observed_rules_hold"
    ]


def test_the_busy_hour_is_said_across_midnight():
    from datetime import datetime

    assert w.time_span(datetime(2026, 11, 2, 23), datetime(2026, 11, 3)) == "2026-11-02 23:00–00:00"
    assert w.time_span(datetime(2026, 11, 2, 23, 50), datetime(2026, 11, 3, 0, 20)) == (
        "2026-11-02 23:50–2026-11-03 00:20"
    )


# -- SQL Server waits against the baseline ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def waited(tmp_path_factory) -> Path:
    """The fio 4 KiB random-read sweep as disk `vda @ vm`, and SQL Server snapshots of SQL01 on it: in one file, two
    60 s intervals of file statistics (data.mdf reading 4 KiB at 50,000 / 60,000 reads/s, tempdb.mdf at 80,000 /
    80,000: the server read 130,000 then 140,000/s) with PAGEIOLATCH_SH (7 ms per waiting task, 120 tasks/s) and
    WRITELOG (no writes to place it by) in the same intervals, and a since-boot PAGEIOLATCH_SH of 900 ms (left
    out); in another file PAGEIOLATCH_EX alone, without file statistics."""
    db = tmp_path_factory.mktemp("waited") / "w.duckdb"
    report = ingest_inputs(db, iter_paths(sorted((SAMPLE / "fio").glob("randread-4k-*.json"))), disk="vda", host="vm")
    assert not report.errors
    sql = dict(interval_s=60.0, tool="sqlserver", device_kind="database_file")
    records = [
        interval(0, 50_000.0, 0.2, device="data.mdf", **sql),
        interval(1, 60_000.0, 0.2, device="data.mdf", **sql),
    ]
    records += [interval(i, 80_000.0, 0.2, device="tempdb.mdf", **sql) for i in range(2)]
    records += [waits(i) for i in range(2)] + [waits(i, "WRITELOG") for i in range(2)]
    boot = waits(2)
    records.append(dataclasses.replace(boot, since_boot=True, avg_wait_ms=900.0, wait_ms_per_s=108_000.0))
    con = connect(db)
    try:
        store_observed(con, records, disk="vda", host="vm", name="dmv.txt", fmt="sqlserver_dmv")
        store_observed(con, [waits(0, "PAGEIOLATCH_EX")], disk="vda", host="vm", name="waits.txt", fmt="sqlserver_dmv")
    finally:
        con.close()
    build_models(db).raise_for_failure()
    return db


def wait_rows(db: Path) -> dict[str, dict]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        cur = con.execute("SELECT * FROM mart_waits_vs_baseline")
        names = [d[0] for d in cur.description]
        return {row[names.index("wait_type")]: dict(zip(names, row, strict=True)) for row in cur.fetchall()}
    finally:
        con.close()


def test_a_page_read_wait_is_placed_at_the_servers_reads(waited):
    rows = wait_rows(waited)
    assert set(rows) == {"PAGEIOLATCH_SH", "PAGEIOLATCH_EX", "WRITELOG"}
    sh = rows["PAGEIOLATCH_SH"]
    # the since-boot total (900 ms a wait) is left out: two intervals of 840 ms waited by 120 tasks each second
    assert sh["intervals"] == 2 and sh["intervals_with_io"] == 2
    assert sh["avg_wait_ms"] == pytest.approx(7.0) and sh["waiting_tasks_per_s"] == pytest.approx(120.0)
    # reads summed over the server's files, averaged over the two minutes: (130,000 + 140,000) / 2
    assert sh["iops"] == pytest.approx(135_000.0) and sh["bytes_per_io"] == pytest.approx(4096.0)
    assert sh["series_id"] == "vda @ vm | random read 100% read 4096 B read"
    (x0, y0), (x1, y1) = FIO_QD4, FIO_QD8
    baseline_ms = y0 + (135_000.0 - x0) / (x1 - x0) * (y1 - y0)
    assert sh["baseline_latency_at_iops_ms"] == pytest.approx(baseline_ms, rel=1e-9)
    assert sh["latency_ratio"] == pytest.approx(7.0 / baseline_ms, rel=1e-9) and sh["degraded"] is True
    assert w.wait_sentence(sh) == (
        "PAGEIOLATCH_SH waits 7 ms per waiting task (120 tasks/s) at 135,000 reads/s: 148× the baseline's read "
        "latency at that load (0.0474 ms) — the disk is slower than when it was benchmarked"
    )
    # WRITELOG: the files wrote nothing in those intervals; PAGEIOLATCH_EX: no file statistics with it at all
    log, ex = rows["WRITELOG"], rows["PAGEIOLATCH_EX"]
    assert log["iops"] == 0.0 and log["series_id"] is None and log["degraded"] is None
    assert w.wait_sentence(log).endswith(
        "at 0 writes/s: the server's files saw no writes in those snapshots to place it by"
    )
    assert ex["intervals_with_io"] == 0 and ex["iops"] is None and ex["series_id"] is None
    assert "no file statistics captured with these waits" in w.wait_sentence(ex)


def test_the_wait_is_said_by_the_cli_and_its_rule_is_checked(waited, capsys, tmp_path):
    import shutil

    from kneepoint.ingest.build import run_model_tests

    assert main(["headroom", "--db", str(waited)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "vda @ vm · SQL01 · SQL Server waits PAGEIOLATCH_EX waits 7 ms per waiting task" in out
    assert "PAGEIOLATCH_SH waits 7 ms per waiting task (120 tasks/s) at 135,000 reads/s: 148×" in out
    assert main(["headroom", "--db", str(waited), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [r["wait_type"] for r in shown["waits"]] == ["PAGEIOLATCH_EX", "PAGEIOLATCH_SH", "WRITELOG"]
    assert shown["waits"][1]["sentence"] == w.wait_sentence(wait_rows(waited)["PAGEIOLATCH_SH"])
    # a wait's flag that no longer follows from its ratio is found
    db = tmp_path / "w.duckdb"
    shutil.copy(waited, db)
    assert not run_model_tests(db, ["assert_observed_rules_hold"])
    con = duckdb.connect(str(db))
    try:
        con.execute("UPDATE mart_waits_vs_baseline SET degraded = false WHERE wait_type = 'PAGEIOLATCH_SH'")
    finally:
        con.close()
    assert [f.split(":")[0] for f in run_model_tests(db, ["assert_observed_rules_hold"])] == [
        "assert_observed_rules_hold"
    ]


# -- one computer, however its tools write it ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def one_server(tmp_path_factory) -> Path:
    """Files of disk `SAN LUN 4` labelled on host sqlprod01, each naming the computer its own way: Perfmon's
    `\\\\SQLPROD01\\PhysicalDisk(1 E:)` at 09:00, another Perfmon log of the same drive writing `sqlprod01` at 09:01,
    SQL Server's @@SERVERNAME `SQLPROD01\\INST1` (file statistics and waits) and `sqlprod01\\INST2` (waits), and an
    iostat report that names no host (the file's label then)."""
    db = tmp_path_factory.mktemp("one-server") / "w.duckdb"
    sql = dict(interval_s=60.0, tool="sqlserver", device_kind="database_file")
    files = [
        [interval(i, 1_000.0, 2.0, host="SQLPROD01") for i in range(4)],
        [interval(i, 3_000.0, 2.0, host="sqlprod01", start="2026-11-02T09:01:00") for i in range(4)],
        [interval(i, 500.0, 4.0, host="SQLPROD01\\INST1", device="SalesDB file_id 1", **sql) for i in range(2)]
        + [waits(i, host="SQLPROD01\\INST1") for i in range(2)],
        [waits(0, host="sqlprod01\\INST2")],
        [interval(i, 200.0, 1.0, host=None, device="sdb", tool="iostat", device_kind="block_device") for i in range(3)],
    ]
    con = connect(db)
    try:
        for n, records in enumerate(files):
            store_observed(con, records, disk="SAN LUN 4", host="sqlprod01", name=f"log{n}.txt")
    finally:
        con.close()
    build_models(db).raise_for_failure()
    return db


def test_a_computer_is_one_host_in_any_case_and_an_instance_is_no_host(one_server):
    con = duckdb.connect(str(one_server), read_only=True)
    try:
        facts = set(
            con.execute("SELECT DISTINCT host, host_key, instance, device FROM fct_observed_intervals").fetchall()
        )
        headroom = con.execute("SELECT host, host_key, device, intervals FROM mart_headroom ORDER BY device").fetchall()
        waited = con.execute(
            "SELECT host, instance, wait_type, intervals FROM mart_waits_vs_baseline ORDER BY instance"
        ).fetchall()
        wait_hosts = set(con.execute("SELECT DISTINCT host, host_key, instance FROM fct_observed_waits").fetchall())
    finally:
        con.close()
    # the tools' spellings kept in the fact, compared by host_key; the instance apart, and in front of its files
    assert facts == {
        ("SQLPROD01", "sqlprod01", None, "PhysicalDisk(1 E:)"),
        ("sqlprod01", "sqlprod01", None, "PhysicalDisk(1 E:)"),
        ("SQLPROD01", "sqlprod01", "INST1", "INST1: SalesDB file_id 1"),
        ("sqlprod01", "sqlprod01", None, "sdb"),
    }
    assert wait_hosts == {("SQLPROD01", "sqlprod01", "INST1"), ("sqlprod01", "sqlprod01", "INST2")}
    # one host, one spelling: E: is one device of both Perfmon logs' 8 intervals
    assert headroom == [
        ("SQLPROD01", "sqlprod01", "INST1: SalesDB file_id 1", 2),
        ("SQLPROD01", "sqlprod01", "PhysicalDisk(1 E:)", 8),
        ("SQLPROD01", "sqlprod01", "sdb", 3),
    ]
    # two instances' waits stay apart, on the same computer, named as the devices are
    assert waited == [("SQLPROD01", "INST1", "PAGEIOLATCH_SH", 2), ("SQLPROD01", "INST2", "PAGEIOLATCH_SH", 1)]
    assert (
        w.wait_label({"host": "SQLPROD01", "instance": "INST2", "wait_type": "PAGEIOLATCH_SH"}) == "SQLPROD01 · INST2"
    )
    assert w.wait_label({"host": "SQLPROD01", "instance": "", "wait_type": "WRITELOG"}) == "SQLPROD01"


def test_the_cli_names_one_computer_once(one_server, capsys):
    assert main(["headroom", "--db", str(one_server)]) == 0
    out = capsys.readouterr().out
    # the label ends with the computer's name (in another case): said once
    assert "SAN LUN 4 @ sqlprod01 · PhysicalDisk(1 E:)" in out and "SQLPROD01 ·" not in out
    assert "SAN LUN 4 @ sqlprod01 · INST1: SQL Server waits" in out
    assert "SAN LUN 4 @ sqlprod01 · INST2: SQL Server waits" in out


def test_anonymization_keeps_one_computer_and_its_instances_apart(tmp_path):
    db = tmp_path / "w.duckdb"
    con = connect(db)
    try:
        records = [interval(0, 1_000.0, 2.0, host="SQLPROD01"), interval(1, 1_000.0, 2.0, host="sqlprod01")]
        records += [waits(0, host="SQLPROD01\\INST1"), waits(0, "WRITELOG", host="SQLPROD01\\INST2")]
        store_observed(con, records, disk="SAN LUN 4")
        tables = {t: con.sql(f"SELECT * FROM {t}").to_arrow_table() for t in schema.RAW_TABLES}
    finally:
        con.close()
    out = Anonymizer().raw_tables(tables)
    assert [r["host"] for r in out["raw_intervals"].to_pylist()] == ["Host 1", "Host 1"]
    assert [r["host"] for r in out["raw_waits"].to_pylist()] == ["Host 1\\Instance 1", "Host 1\\Instance 2"]


# -- a long log, drawn -------------------------------------------------------------------------------------------


def test_a_long_log_is_drawn_by_each_stretchs_extremes(tmp_path):
    """Past DRAWN_INTERVALS a device's log is cut into DRAWN_STRETCHES equal stretches of its time, and of each the
    intervals with the lowest and highest IOPS and latency are what the charts get: every peak is there (the one
    spike of a quiet day too), far fewer points than intervals; a short log of the same disk is drawn whole."""
    from kneepoint.app import charts, queries

    n = 3 * queries.DRAWN_INTERVALS
    iops = [1_000.0 + (i * 7919) % 500 for i in range(n)]  # a quiet load, in no order
    latency = [1.0 + ((i * 104_729) % 300) / 100 for i in range(n)]
    iops[1234], latency[2345] = 50_000.0, 90.0  # one spike of each
    e = [interval(i, iops[i], latency[i]) for i in range(n)]
    f = [interval(i, 500.0 + i, 1.0, device="PhysicalDisk(2 F:)") for i in range(21)]
    db = tmp_path / "w.duckdb"
    ingest_observed(db, e + f, disk="E drive")

    drawn = queries.observed_intervals(["E drive"], db)
    e_drawn = drawn.filter(drawn["device"] == "PhysicalDisk(1 E:)")
    f_drawn = drawn.filter(drawn["device"] == "PhysicalDisk(2 F:)")
    assert f_drawn.height == 21 and f_drawn["all_drawn"].all() and set(f_drawn["device_intervals"]) == {21}
    assert set(e_drawn["device_intervals"]) == {n} and not e_drawn["all_drawn"].any()
    # the stretches, as their rule says: equal parts of the log's time (15 s per interval)
    stretches: dict[int, list[int]] = {}
    for i in range(n):
        stretches.setdefault(math.floor(i * queries.DRAWN_STRETCHES / (n - 1)), []).append(i)
    expected = set()
    for members in stretches.values():
        for values in (iops, latency):
            low, high = min(values[i] for i in members), max(values[i] for i in members)
            expected |= {i for i in members if values[i] in (low, high)}
    assert set(e_drawn["interval_index"]) == expected
    assert {1234, 2345} <= expected and len(expected) <= 4 * (queries.DRAWN_STRETCHES + 1) < n
    # in time order, so that the time chart's line runs through them as through the whole log
    assert e_drawn["interval_index"].to_list() == sorted(expected)
    headroom = queries.headroom(["E drive"], db)
    assert charts.production_time_figure(drawn, headroom).data[0].y[:2] == (
        iops[min(expected)],
        iops[sorted(expected)[1]],
    )
    assert w.intervals_drawn(len(expected), n) == f"{n:,} observed intervals ({len(expected):,} drawn)"
    assert w.intervals_drawn(21, 21) == "21 observed intervals"
