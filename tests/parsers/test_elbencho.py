"""elbencho: the result file and the CSV file; a record per I/O phase with the LAST DONE figures (FIRST DONE in the
metadata), threads x hosts, block size, IO depth, latency in us; damaged lines reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from kneepoint.ingest import formats
from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats import elbencho
from kneepoint.ingest.synth import elbencho as writer
from kneepoint.ingest.synth.disk_model import DiskModel, sweep

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "elbencho"


def parse(name: str) -> formats.ParsedFile:
    return formats.parse_bytes((FIXTURES / name).read_bytes(), name)


def test_result_file_phases_last_done_first_done_in_metadata():
    parsed = parse("resfile-3.0-write-read-two-depths.txt")
    write, read, read32 = parsed.records
    assert parsed.format == "elbencho" and [r.run_index for r in parsed.records] == [0, 1, 2]
    assert (write.operation, write.pattern, write.block_size_bytes, write.threads, write.queue_depth) == (
        "write", "random", 4096, 8, 4,
    )  # fmt: skip
    assert (write.iops, write.throughput, write.throughput_unit, write.duration_s) == (
        310861.0,
        1214.0,
        "MiB/s",
        61.377,
    )
    assert write.metadata["first_done.iops"] == "311,742" and write.metadata["first_done.elapsed"] == "1m1.204s"
    # IO latency prints each value in its own unit: the record keeps microseconds.
    assert (write.latency_unit, write.latency_min, write.latency_avg, write.latency_max) == ("us", 21.0, 102.0, 8940.0)
    assert (write.latency_p50, write.latency_p99) == (90.0, 362.0)  # `IO lat % us`
    assert (write.target, write.started_at) == ("/dev/nvme2n1", "2025-05-14T09:02:11+02:00")
    # The READ IOPS line was cut: IOPS from MiB/s and the block size, and a warning.
    assert read.iops == 1668 * 1024 * 1024 / 4096 and "iops" in read.inferred
    assert parsed.warnings == ["line 15: cut short 'IOPS' line: skipped"]
    assert (read32.queue_depth, read32.iops, read32.started_at) == (32, 971790.0, "2025-05-14T09:05:30+02:00")


def test_csv_threads_times_hosts_and_the_rwmix_split():
    parsed = parse("csv-3.0-hosts-rwmix.csv")
    write, read, mix_write, mix_read = parsed.records
    assert (write.threads, write.queue_depth, write.block_size_bytes) == (16, 16, 131072)  # 8 threads x 2 hosts
    assert write.metadata["threads_per_host"] == "8" and write.metadata["hosts"] == "node1,node2"
    assert (write.iops, write.throughput, write.duration_s, write.tool_version) == (39891.0, 4986.0, 98.204, "3.0-9")
    assert (write.latency_avg, write.latency_unit) == (3198.0, "us") and write.metadata["first_done.iops"] == "40012"
    assert read.operation == "read" and read.iops == 54402.0
    # --rwmixpct 70: one CSV row, the WRITE figures and the `rwmix read` ones: a mixed run of two records.
    assert {mix_write.run_index, mix_read.run_index} == {2}
    assert [(r.direction, r.operation, r.read_pct, r.iops) for r in (mix_write, mix_read)] == [
        ("write", "mixed", 70.0, 11951.0), ("read", "mixed", 70.0, 27862.0),
    ]  # fmt: skip
    assert mix_read.latency_avg == 2278.0 and mix_write.pattern == "random"
    assert parsed.warnings == ["line 6: cut short CSV row (19 of 55 cells): skipped"]


@pytest.mark.parametrize(
    "text, seconds",
    [("30.196s", 30.196), ("2m5.755s", 125.755), ("586ms", 0.586), ("1h2m3s", 3723.0), ("junk", None)],
)
def test_elapsed_times(text, seconds):
    assert elbencho._seconds(text) == seconds


def test_only_metadata_phases_is_refused():
    text = (FIXTURES / "csv-3.0-hosts-rwmix.csv").read_text().split("\n")
    with pytest.raises(ParseError, match="no elbencho WRITE or READ row"):
        formats.parse_bytes("\n".join(text[:2]).encode(), "mkdirs.csv", fmt="elbencho")


@pytest.mark.parametrize("csv_file", [False, True])
def test_writer_round_trip(csv_file):
    disk = DiskModel("nvme", service_time_ms=0.07, max_bytes_per_s=3e9)
    recs = sweep(disk, "elbencho", pattern="random", block_size_bytes=4096, threads=(1, 8), queue_depths=(1, 32),
                 throughput_unit="MiB/s", latency_unit="us")  # fmt: skip
    parsed = formats.parse_bytes(writer.write(recs, csv_file=csv_file).encode(), "elbencho.out")
    assert parsed.format == "elbencho"
    assert [(r.threads, r.queue_depth) for r in parsed.records] == [(1, 1), (1, 32), (8, 1), (8, 32)]
    for a, b in zip(recs, parsed.records, strict=True):
        assert b.iops == pytest.approx(a.iops, abs=0.5)


def test_whole_mib_s_below_100_yield_to_iops_x_block_size():
    text = (FIXTURES / "resfile-3.0-write-read-two-depths.txt").read_text()
    text = text.replace("IOPS             :      311,742      310,861", "IOPS             :          129          128")
    text = text.replace("Throughput MiB/s :        1,217        1,214", "Throughput MiB/s :            1            1")
    write = formats.parse_bytes(text.encode(), "slow.txt").records[0]
    assert (write.iops, write.throughput, write.metadata["printed_mib_s"]) == (128.0, 0.5, "1")
    assert "throughput_bytes_per_s" in write.inferred
