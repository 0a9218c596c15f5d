"""Performance Monitor counter logs (CSV): one interval record per host, disk and sample; rates as logged, latency
seconds -> ms, utilization from idle time; blank samples, decimal commas, day-first dates, damaged rows; a log with no
disk counter refused; the writer's logs read back; a week-long log read whole."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from kneepoint.ingest import formats
from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats import perfmon_csv
from kneepoint.ingest.synth import perfmon_csv as writer
from kneepoint.ingest.synth.disk_model import DiskModel

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "perfmon_csv"
DISK = DiskModel("P30", service_time_ms=2.5, sigma=0.04, kappa=0.0004, max_bytes_per_s=200e6)
HEADER = (
    '"(PDH-CSV 4.0) (GMT Standard Time)(0)","\\\\SQL01\\PhysicalDisk(0 C:)\\Disk Reads/sec",'
    '"\\\\SQL01\\PhysicalDisk(0 C:)\\Avg. Disk sec/Read","\\\\SQL01\\PhysicalDisk(0 C:)\\% Idle Time",'
    '"\\\\SQL01\\Processor(_Total)\\% Processor Time"'
)


def parse(name: str) -> formats.ParsedFile:
    return formats.parse_bytes((FIXTURES / name).read_bytes(), name)


def log(*rows: str, header: str = HEADER) -> list:
    return perfmon_csv.parse("\n".join([header, *rows]) + "\n")


def normalized(records: list) -> list[dict]:
    return [r.to_normalized() | {"source_line": 0} for r in records]


def test_typeperf_console_blank_first_sample_and_trailer():
    parsed = parse("typeperf-console-physicaldisk-star.txt")
    assert parsed.format == "perfmon_csv" and not parsed.warnings
    # 5 samples after the blank one, two instances each: the disk and _Total, kept as a device of its own.
    assert len(parsed.records) == 10 and parsed.runs == 5
    disk, total = parsed.records[:2]
    assert (disk.device, disk.device_kind, disk.host) == ("PhysicalDisk(0 C:)", "physical_disk", "WS-PERF-07")
    assert total.device == "PhysicalDisk(_Total)"
    # The blank first row times the first interval: it starts there, 10.030 s before the next sample.
    assert (disk.interval_start, disk.interval_s, disk.source_line) == ("2026-11-27T09:41:02.308", 10.03, 4)
    assert disk.tool == "perfmon" and disk.tool_version == "PDH-CSV 4.0" and not disk.since_boot


def test_counters_to_fields_seconds_to_ms_and_idle_to_utilization():
    [rec] = log(
        '"11/27/2026 14:03:00.118"," "," "," "," "', '"11/27/2026 14:03:15.123","412.5","0.004100","80.25","12"'
    )
    assert (rec.reads_per_s, rec.read_latency_ms, rec.utilization_pct) == (412.5, 4.1, 19.75)
    assert (rec.writes_per_s, rec.queue_length) == (None, None)  # not logged
    assert (rec.interval_start, rec.interval_s) == ("2026-11-27T14:03:00.118", 15.005)


def test_current_queue_and_disk_time_stand_in_where_the_mean_and_idle_are_not_logged():
    header = HEADER.replace("% Idle Time", "% Disk Time").replace("Avg. Disk sec/Read", "Current Disk Queue Length")
    first, second = log(
        '"11/27/2026 14:03:00.000","1","3","250","5"', '"11/27/2026 14:03:15.000","1","2","40","5"', header=header
    )
    assert (first.queue_length, first.utilization_pct) == (3.0, 100.0)  # % Disk Time above 100 is capped
    assert (second.queue_length, second.utilization_pct) == (2.0, 40.0)
    header = HEADER.replace("% Processor Time", "Avg. Disk Queue Length").replace(
        "\\Processor(_Total)", "\\PhysicalDisk(0 C:)"
    )
    [both] = log(
        '"11/27/2026 14:03:00.000","1","0.001","50","0.75"',
        header=header.replace("Avg. Disk sec/Read", "Current Disk Queue Length"),
    )
    assert both.queue_length == 0.75  # the mean over the interval, not the count at the sample's instant


def test_several_hosts_and_disks_a_device_without_values_in_a_row_gives_no_record():
    parsed = parse("relog-sql-two-hosts-physical-logical.csv")
    assert {(r.host, r.device) for r in parsed.records} == {
        (host, device)
        for host in ("SQLPROD01", "SQLPROD02")
        for device in ("PhysicalDisk(0 C:)", "PhysicalDisk(1 E:)", "PhysicalDisk(_Total)", "LogicalDisk(E:)")
    }
    assert {r.device_kind for r in parsed.records if r.device == "LogicalDisk(E:)"} == {"logical_disk"}
    # SQLPROD02's E: is blank in the row of line 5: its two devices have no record there, the others do.
    line5 = {(r.host, r.device) for r in parsed.records if r.source_line == 5}
    assert ("SQLPROD02", "PhysicalDisk(1 E:)") not in line5 and ("SQLPROD02", "LogicalDisk(E:)") not in line5
    assert len(line5) == 6
    # Memory, Processor and % Free Space are ignored: no field of theirs reaches a record.
    assert all(r.queue_length is None for r in parsed.records if r.device == "LogicalDisk(E:)")


def test_a_cut_row_costs_only_itself_and_still_times_the_next_one():
    parsed = parse("relog-sql-two-hosts-physical-logical.csv")
    assert parsed.warnings == ["line 6: cut short sample row (31 of 63 cells): skipped"]
    assert 6 not in {r.source_line for r in parsed.records}
    after = next(r for r in parsed.records if r.source_line == 7)
    assert after.interval_start == "2026-11-27T14:04:00.119"  # the cut row's time and after.interval_s == 14.997


def test_german_names_semicolons_decimal_commas_and_dotted_dates():
    parsed = parse("perfmon-de-semicolon-decimal-comma.csv")
    assert parsed.encoding == "cp1252" and not parsed.warnings
    first = parsed.records[0]
    assert (first.device, first.device_kind, first.host) == (
        "Physikalischer Datenträger(0 C:)",
        "physical_disk",
        "FILESRV-MUC",
    )
    assert first.interval_start == "2026-11-03T08:00:00.512" and first.interval_s == 30.0
    assert first.read_latency_ms == 10.938 and first.reads_per_s == 269.521445  # `0,010938` s, `269,521445`
    assert first.queue_length == 4.0 and first.utilization_pct == 50.895561  # Aktuelle Warteschlangenlänge, Zeit (%)


def test_day_first_dates_where_the_file_shows_them_else_month_first():
    parsed = parse("day-first-decimal-comma-logicaldisk.csv")
    # 13/11/2026 in a later row: the whole file is day first, 12/11 included.
    assert [r.interval_start[:10] for r in parsed.records] == ["2026-11-12", "2026-11-12", "2026-11-13", "2026-11-13"]
    assert parsed.warnings == ["line 4: unreadable value 'n/a': left out"]
    assert parsed.records[1].read_bytes_per_s is None and parsed.records[1].reads_per_s is not None
    # Nothing tells: month first, as PDH writes it.
    rows = [f'"11/12/2026 10:00:{s:02d}.000","1","0.001","50","1"' for s in (0, 15, 30)]
    assert [r.interval_start for r in log(*rows)] == [None, "2026-11-12T10:00:00.000", "2026-11-12T10:00:15.000"]


def test_a_decimal_comma_in_a_comma_separated_file_is_never_a_thousands_separator():
    [rec] = log('"11/27/2026 14:03:00.000"," "," "," "," "', '"11/27/2026 14:03:15.000","1,500","0,004","99,5","3"')
    assert (rec.reads_per_s, rec.read_latency_ms, rec.utilization_pct) == (1.5, 4.0, 0.5)


def test_a_log_without_disk_counters_is_refused_naming_the_header_line():
    with pytest.raises(ParseError, match="no disk counters") as caught:
        parse("no-disk-counters-processor-memory.csv")
    assert caught.value.line == 1
    text = '$ typeperf "\\Memory\\*"\n\n"(PDH-CSV 4.0)","\\\\H\\Memory\\Pages/sec"\n"11/27/2026 14:03:00.000","1"\n'
    with pytest.raises(ParseError, match="no disk counters") as caught:
        formats.parse_bytes(text.encode(), "memory.csv")
    assert caught.value.line == 3


def test_blank_samples_only_and_damaged_timestamps():
    with pytest.raises(ParseError, match="every sample blank"):
        log('"11/27/2026 14:03:00.000"," "," "," "," "')
    records = log(
        '"11/27/2026 14:03:00.000","1","0.001","50","1"',
        '"13/45/2026 14:03:15.000","1","0.001","50","1"',
        '"11/27/2026 14:03:30.000","2","0.001","50","1"',
        '"11/27/2026 14:03:20.000","3","0.001","50","1"',
    )
    assert records.warnings == [
        "line 3: sample row with an unreadable timestamp '13/45/2026 14:03:15.000': skipped",
        "line 5: the clock went back or stood still (2026-11-27T14:03:30.000 to 2026-11-27T14:03:20.000): "
        "interval unknown",
    ]
    # The row after the unreadable one has no known start; the row after the clock went back neither.
    assert [(r.reads_per_s, r.interval_start, r.interval_s) for r in records] == [
        (1.0, None, None), (2.0, None, None), (3.0, None, None),
    ]  # fmt: skip


def test_negative_and_non_finite_values_are_no_value():
    [rec] = log('"11/27/2026 14:03:00.000","-1","nan","inf","1"', '"11/27/2026 14:03:01.000","-1","nan","5","1"')
    assert (rec.reads_per_s, rec.read_latency_ms, rec.utilization_pct) == (None, None, 95.0)


def test_detect_claims_counter_logs_only():
    assert perfmon_csv.detect(HEADER + "\n") == 0.95
    assert perfmon_csv.detect("\ufeff" + HEADER.replace('","', '";"')) == 0.95
    assert perfmon_csv.detect("a note about (PDH-CSV 4.0) files\n") == 0.0
    for other in ("elbencho/csv-3.0-hosts-rwmix.csv", "iometer/results-1.1.0-san-lun.csv"):
        text = (FIXTURES.parent / other).read_text("utf-8", errors="replace")
        assert perfmon_csv.detect(text) == 0.0


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"separator": ";", "decimal_comma": True},
        {"decimal_comma": True},
        {"separator": "\t", "extra_counters": True},
    ],
)
def test_the_writers_logs_read_back_to_their_records(options):
    records = writer.observe(DISK, devices=("PhysicalDisk(0 C:)", "PhysicalDisk(1 E:)", "LogicalDisk(E:)"), samples=40)
    text = writer.write(records, **options)
    parsed = formats.parse_bytes(text.encode(), "log.csv")
    assert parsed.format == "perfmon_csv" and not parsed.warnings
    assert normalized(parsed.records) == normalized(records)


def test_observed_load_sits_on_the_disks_curve_and_slowdown_raises_latency():
    base = writer.observe(DISK, samples=200, seed=3)
    slow = writer.observe(DISK, samples=200, seed=3, slowdown=2.0)
    for a, b in zip(base, slow, strict=True):
        assert b.read_latency_ms == pytest.approx(2 * a.read_latency_ms, abs=0.002)
        assert b.reads_per_s == pytest.approx(a.reads_per_s / 2, abs=1e-5)
        # Little's law: I/Os in flight = IOPS x latency.
        assert a.queue_length == pytest.approx(
            (a.reads_per_s + a.writes_per_s) * a.read_latency_ms / 0.9 / 1000, rel=1e-3
        )
    assert max(r.reads_per_s + r.writes_per_s for r in base) < DISK.iops(8192, 64)


def test_a_week_at_15_s_for_8_disks_reads_whole():
    """Issue 21's large log (its ingest and drawing are timed in bench/production.py, not here)."""
    devices = [f"PhysicalDisk({i} {chr(67 + i)}:)" for i in range(8)]
    records = writer.observe(
        DISK, host="SQLPROD-NODE01", devices=devices, samples=7 * 24 * 240, start=datetime(2026, 11, 23)
    )
    data = writer.write(records).encode()
    del records
    assert len(data) > 30e6
    parsed = formats.parse_bytes(data, "week.csv")
    assert len(parsed.records) == 7 * 24 * 240 * 8 and parsed.runs == 7 * 24 * 240
    assert parsed.warnings == []


def test_a_quote_left_open_swallows_no_other_row():
    rows = [f'"11/27/2026 14:03:{s:02d}.000","{s}","0.001","50","1"' for s in (0, 15, 30, 45)]
    rows[1] = rows[1][:30]  # cut inside its second cell: `"11/27/2026 14:03:15.000","1` and no closing quote
    records = log(*rows)
    assert [r.reads_per_s for r in records] == [0.0, 30.0, 45.0]
    assert records.warnings == ["line 3: cut short sample row (2 of 5 cells): skipped"]
    rows[1] = rows[1] + "x" * 200_000  # past the csv module's field limit
    records = log(*rows)
    assert [r.reads_per_s for r in records] == [0.0, 30.0, 45.0]
    assert records.warnings == ["line 3: unreadable CSV row: skipped"]
