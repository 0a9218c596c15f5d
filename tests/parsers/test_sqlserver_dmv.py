"""SQL Server file and wait statistics (ingest/formats/sqlserver_dmv.py): deltas between snapshots, since-boot
rates, the layouts people paste, damaged rows, and the writer's round trip."""

from __future__ import annotations

import pytest

from kneepoint.ingest import formats
from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats import sqlserver_dmv as dmv
from kneepoint.ingest.records import IntervalRecord, WaitRecord
from kneepoint.ingest.synth import sqlserver_dmv as writer

HEADER = (
    "database_id file_id sample_ms   num_of_reads num_of_bytes_read io_stall_read_ms num_of_writes io_stall_write_ms"
)
DASHES = (
    "----------- ------- ----------- ------------ ----------------- ---------------- ------------- -----------------"
)


def text_row(*values: object) -> str:
    widths = [len(group) for group in DASHES.split()]
    return " ".join(str(v).ljust(w) for v, w in zip(values, widths, strict=True))


def snapshot(*rows: tuple[object, ...]) -> str:
    return "\n".join([HEADER, DASHES, *(text_row(*r) for r in rows), "", f"({len(rows)} rows affected)", ""])


def intervals(text: str) -> list[IntervalRecord]:
    return [r for r in dmv.parse(text) if isinstance(r, IntervalRecord)]


def test_two_snapshots_give_the_delta_over_the_seconds_between_them():
    text = (
        snapshot((5, 1, 1_000_000, 1000, 8_192_000, 5000, 200, 400))
        + "\n"
        + snapshot((5, 1, 1_010_000, 1500, 12_288_000, 7500, 300, 500))
    )
    (rec,) = intervals(text)
    assert rec.interval_s == 10.0 and not rec.since_boot
    assert rec.reads_per_s == 50.0 and rec.read_bytes_per_s == 409_600.0
    assert rec.read_latency_ms == 5.0  # 2500 ms of stalls over 500 reads
    assert rec.writes_per_s == 10.0 and rec.write_latency_ms == 1.0
    assert (rec.device, rec.device_kind, rec.tool) == ("database_id 5 file_id 1", "database_file", "sqlserver")


def test_no_reads_in_the_interval_has_no_read_latency():
    text = snapshot((2, 1, 0, 10, 81920, 30, 5, 5)) + snapshot((2, 1, 60_000, 10, 81920, 30, 65, 125))
    (rec,) = intervals(text)
    assert rec.reads_per_s == 0.0 and rec.read_latency_ms is None and rec.write_latency_ms == 2.0


def test_three_snapshots_give_consecutive_intervals_and_a_restart_refuses_only_that_file():
    text = (
        snapshot((5, 1, 0, 100, 819200, 500, 10, 10), (2, 1, 0, 50, 409600, 50, 10, 10))
        + snapshot((5, 1, 60_000, 700, 5_734_400, 3500, 70, 70), (2, 1, 60_000, 110, 901_120, 110, 10, 10))
        + snapshot((5, 1, 120_000, 1300, 10_649_600, 6500, 130, 130), (2, 1, 120_000, 3, 24576, 3, 0, 0))
    )
    parsed = dmv.parse(text)
    assert [(r.interval_index, r.device) for r in parsed] == [
        (0, "database_id 5 file_id 1"),
        (0, "database_id 2 file_id 1"),
        (1, "database_id 5 file_id 1"),
    ]
    assert len(parsed.warnings) == 1 and "num_of_reads went down" in parsed.warnings[0]
    assert "interval refused" in parsed.warnings[0]


def test_a_single_snapshot_is_since_boot_over_sample_ms():
    (rec,) = intervals(snapshot((5, 1, 3_600_000, 36_000, 294_912_000, 180_000, 3600, 7200)))
    assert rec.since_boot and rec.interval_s == 3600.0
    assert rec.reads_per_s == 10.0 and rec.read_latency_ms == 5.0 and rec.write_latency_ms == 2.0


def test_an_int_sample_ms_that_wrapped_is_unwrapped_between_snapshots():
    # SQL Server 2008-2014: sample_ms is an int; 2^31 - 5000 then 5000 ms later it reads negative.
    first, later = (1 << 31) - 5000, -(1 << 31) + 5000
    (rec,) = intervals(snapshot((5, 1, first, 0, 0, 0, 0, 0)) + snapshot((5, 1, later, 100, 819200, 500, 0, 0)))
    assert rec.interval_s == 10.0 and rec.reads_per_s == 10.0


def test_a_negative_sample_ms_in_a_single_snapshot_leaves_the_rates_unknown():
    parsed = dmv.parse(snapshot((5, 1, -1234, 100, 819200, 500, 0, 0)))
    (rec,) = parsed
    assert rec.interval_s is None and rec.reads_per_s is None and rec.read_latency_ms == 5.0
    assert "no uptime" in parsed.warnings[0]


def test_waits_keep_the_io_types_and_take_the_interval_from_the_file_statistics():
    waits = (
        "wait_type                     waiting_tasks_count  wait_time_ms\n"
        "----------------------------- -------------------- --------------------\n"
        "CXPACKET                      {c}                  {c}\n"
        "PAGEIOLATCH_SH                {t}                  {w}\n"
        "\n"
    )
    text = (
        snapshot((5, 1, 1_000_000, 0, 0, 0, 0, 0))
        + waits.format(c=5, t=100, w=500)
        + snapshot((5, 1, 1_030_000, 0, 0, 0, 0, 0))
        + waits.format(c=9, t=400, w=3500)
    )
    (wait,) = [r for r in dmv.parse(text) if isinstance(r, WaitRecord)]
    assert wait.wait_type == "PAGEIOLATCH_SH" and wait.interval_s == 30.0
    assert wait.waiting_tasks_per_s == 10.0 and wait.wait_ms_per_s == 100.0 and wait.avg_wait_ms == 10.0


def test_a_single_wait_snapshot_without_sample_ms_has_only_the_mean_wait():
    text = "wait_type\twaiting_tasks_count\twait_time_ms\nWRITELOG\t2000\t5000\nPAGEIOLATCH_EX\t0\t0\n"
    writelog, ex = dmv.parse(text)
    assert writelog.since_boot and writelog.interval_s is None and writelog.waiting_tasks_per_s is None
    assert writelog.avg_wait_ms == 2.5 and ex.avg_wait_ms is None


def test_host_version_and_clock_printed_beside_the_snapshots():
    one = lambda value: " " * 30 + "\n" + "-" * 30 + "\n" + value + "\n\n(1 row affected)\n\n"  # noqa: E731
    text = (
        one("SQLPROD01\\SALES")
        + one("Microsoft SQL Server 2019 (RTM-CU22) (KB5027702) - 15.0.4322.2 (X64) ")
        + one("2025-11-21 10:40:00.117")
        + snapshot((5, 1, 0, 0, 0, 0, 0, 0))
        + snapshot((5, 1, 60_000, 60, 491520, 60, 0, 0))
    )
    (rec,) = intervals(text)
    assert (rec.host, rec.tool_version) == ("SQLPROD01\\SALES", "15.0.4322.2")
    assert rec.interval_start == "2025-11-21T10:40:00.117"


def test_device_names_the_database_and_the_file_and_a_drive_query_names_the_volume():
    text = (
        "DB,name,physical_name,ReadLatency,WriteLatency\n"
        "tempdb,templog,T:\\tempdb.ldf,2,1\n"
        "\n"
        "Drive,ReadLatency,WriteLatency,AvgBPerRead\n"
        "E:,7,3,65536\n"
    )
    file_rec, drive_rec = dmv.parse(text)
    assert (file_rec.device, file_rec.device_kind) == ("tempdb templog T:\\tempdb.ldf", "database_file")
    assert (drive_rec.device, drive_rec.device_kind, drive_rec.read_latency_ms) == ("E:", "logical_disk", 7.0)


def test_a_damaged_row_costs_only_itself():
    text = snapshot((5, 1, 1000, 10, 81920, 50, 0, 0), (5, 2, 1000, 10, 81920, 50, 0, 0)).replace(
        text_row(5, 2, 1000, 10, 81920, 50, 0, 0), text_row(5, 2, 1000, "1O", 81920, 50, 0, 0)
    )
    parsed = dmv.parse(text)
    assert [r.device for r in parsed] == ["database_id 5 file_id 1"]
    assert parsed.warnings == ["line 4: damaged row of the result set at line 1: skipped"]


def test_no_result_set_is_a_parse_error_naming_the_line():
    with pytest.raises(ParseError, match="no sys.dm_io_virtual_file_stats or sys.dm_os_wait_stats") as err:
        dmv.parse("\n\nSELECT * FROM sys.dm_io_virtual_file_stats(NULL, NULL);\n")
    assert err.value.line == 3
    with pytest.raises(ParseError, match="give no interval") as err:
        dmv.parse("\n" + HEADER + "\n" + DASHES + "\n\n(0 rows affected)\n")
    assert err.value.line == 2


def test_detection_needs_the_dmv_columns_and_leaves_sqlstats_alone():
    assert dmv.detect(snapshot((5, 1, 1000, 10, 81920, 50, 0, 0))) == 0.9
    assert dmv.detect("SELECT num_of_reads, io_stall_read_ms FROM sys.dm_io_virtual_file_stats(NULL, NULL)") == 0.0
    sqlstats = "Table 'Orders'. Scan count 1, logical reads 1912, physical reads 3, read-ahead reads 1880.\n"
    assert dmv.detect(sqlstats) == 0.0
    assert formats.parse_text(snapshot((5, 1, 1000, 10, 81920, 50, 0, 0))).format == "sqlserver_dmv"


@pytest.mark.parametrize("layout", writer.LAYOUTS)
def test_the_writers_layouts_read_back_to_the_records(layout):
    records = writer.production_records(interval_s=120.0)
    parsed = formats.parse_text(writer.write(records, layout=layout))
    assert parsed.format == "sqlserver_dmv" and not parsed.warnings
    assert parsed.runs == 1
    by_name = {getattr(r, "device", None) or r.wait_type: r for r in parsed.records}
    for rec in records:
        back = by_name[rec.device if isinstance(rec, IntervalRecord) else rec.wait_type]
        assert back.interval_s == 120.0 and back.host == "SYNTHETIC-SQL01" and back.tool_version == "15.0.4322.2"
        if isinstance(rec, IntervalRecord):
            assert back.reads_per_s == pytest.approx(rec.reads_per_s, abs=0.01)
            assert back.write_bytes_per_s == pytest.approx(rec.write_bytes_per_s, abs=0.01)
            if rec.read_latency_ms is not None:
                assert back.read_latency_ms == pytest.approx(rec.read_latency_ms, rel=1e-3)
        else:
            assert back.waiting_tasks_per_s == pytest.approx(rec.waiting_tasks_per_s, abs=0.01)
            assert back.avg_wait_ms == pytest.approx(rec.avg_wait_ms, rel=1e-3)


def test_the_writer_writes_since_boot_records_as_one_snapshot():
    records = writer.production_records(interval_s=86_400.0, since_boot=True)
    parsed = dmv.parse(writer.write(records, layout="grid"))
    assert all(r.since_boot and r.interval_s == 86_400.0 for r in parsed)
    with pytest.raises(ValueError, match="layout"):
        writer.write(records, layout="html")
