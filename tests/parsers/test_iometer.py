"""Iometer results CSV: one run per result block's ALL row, the access specification's size / reads / random,
workers as threads and outstanding I/Os per target per worker made per thread; damaged rows reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from kneepoint.ingest import formats
from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.synth import iometer as writer
from kneepoint.ingest.synth.disk_model import DiskModel, sweep

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "iometer" / "results-1.1.0-san-lun.csv"


def parse(text: str) -> formats.ParsedFile:
    return formats.parse_bytes(text.encode(), "results.csv")


def test_result_blocks_and_their_access_specifications():
    parsed = formats.parse_bytes(FIXTURE.read_bytes(), FIXTURE.name)
    qd1, qd16, mread, mwrite, mtotal = parsed.records
    assert parsed.format == "iometer" and [r.run_index for r in parsed.records] == [0, 1, 2, 2, 2]
    assert (qd1.pattern, qd1.operation, qd1.block_size_bytes, qd1.threads, qd1.queue_depth) == (
        "random", "read", 4096, 4, 1,
    )  # fmt: skip
    assert (qd1.tool_version, qd1.target, qd1.started_at) == ("1.1.0", "E:", "2024-02-07T10:15:02")
    assert qd1.metadata["manager_name"] == "SQL-BENCH-07" and qd1.throughput_unit == "MiB/s"
    assert qd1.metadata["test.description"] == "SAN LUN acceptance, 4K random read and 64K 70/30"
    # 4 workers with two targets each, 16 outstanding I/Os per target per worker: 32 per worker (thread).
    assert (qd16.threads, qd16.queue_depth, qd16.target, qd16.inferred) == (4, 32, "E:, F:", ["queue_depth"])
    # A mixed specification: read, write and the total Iometer prints.
    assert [(r.direction, r.operation, r.read_pct, r.pattern) for r in (mread, mwrite, mtotal)] == [
        ("read", "mixed", 70.0, "sequential"), ("write", "mixed", 70.0, "sequential"),
        ("total", "mixed", 70.0, "sequential"),
    ]  # fmt: skip
    assert mtotal.iops == pytest.approx(mread.iops + mwrite.iops, rel=1e-6)
    assert mread.latency_avg is not None and mread.latency_max is not None
    assert parsed.warnings == ["line 24: cut short WORKER row (11 of 80 cells): skipped"]


def test_a_specification_of_several_sizes_gives_the_average_transfer():
    text = FIXTURE.read_text().replace(
        "4096,100,100,100,0,1,0,0", "4096,50,100,100,0,1,0,0\n8192,50,100,100,0,1,0,0", 1
    )
    first = parse(text).records[0]
    assert "block_size_bytes" in first.inferred and first.block_size_bytes == 4096  # bytes / I/Os as measured
    assert first.metadata["access_specification.lines"].startswith("4096 B 50% of size")


def test_ambiguous_queue_depth_is_unknown():
    lines = FIXTURE.read_text().split("\n")
    header = next(line for line in lines if line.startswith("'Target Type"))[1:].split(",")
    depth = header.index("Queue Depth")
    for k, line in enumerate(lines):
        if line.startswith("ALL,"):
            cells = line.split(",")
            cells[depth] = "-1"  # Iometer's AMBIGUOUS_VALUE: workers with different depths
            lines[k] = ",".join(cells)
            break
    assert parse("\n".join(lines)).records[0].queue_depth is None


def test_no_result_row_is_refused():
    text = FIXTURE.read_text()
    with pytest.raises(ParseError, match="no Iometer result row"):
        formats.parse_bytes(text[: text.index("ALL,")].encode(), "cut.csv", fmt="iometer")


def test_writer_round_trip():
    disk = DiskModel("sata", service_time_ms=0.1, max_bytes_per_s=5.5e8)
    recs = sweep(disk, "iometer", pattern="random", operation="write", block_size_bytes=8192, threads=(1, 4),
                 queue_depths=(1, 32), throughput_unit="MiB/s")  # fmt: skip
    parsed = parse(writer.write(recs))
    assert [(r.threads, r.queue_depth, r.operation) for r in parsed.records] == [
        (1, 1, "write"), (1, 32, "write"), (4, 1, "write"), (4, 32, "write"),
    ]  # fmt: skip
    for a, b in zip(recs, parsed.records, strict=True):
        assert b.iops == pytest.approx(a.iops, abs=1e-6) and b.latency_avg == pytest.approx(a.latency_avg, abs=1e-6)
