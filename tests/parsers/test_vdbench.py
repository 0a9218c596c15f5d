"""vdbench: the console output (and totals.html, the same lines in HTML) and flatfile.html; one record per run
average, its parameters from the For loops and the parameter lines, damaged lines reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from kneepoint.ingest import formats, units
from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.synth import vdbench as writer
from kneepoint.ingest.synth.disk_model import DiskModel, sweep

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "vdbench"
MIB = 1024 * 1024


def parse(name: str) -> formats.ParsedFile:
    return formats.parse_bytes((FIXTURES / name).read_bytes(), name)


def test_console_one_record_per_average_with_the_run_definitions():
    parsed = parse("console-5.04.07-two-rds-for-loops.txt")
    rand4, rand16, seq = parsed.records
    assert parsed.format == "vdbench" and parsed.warnings == []
    # rd_rand (wd_rand: 4k, rdpct=70, seekpct=100), For loops threads=4 then threads=16.
    assert (rand4.pattern, rand4.operation, rand4.direction, rand4.read_pct) == ("random", "mixed", "total", 69.99)
    assert (rand4.block_size_bytes, rand4.threads, rand4.queue_depth) == (4096, 4, 1)
    assert (rand4.iops, rand4.latency_avg, rand4.latency_max) == (42058.55, 0.094, 2.90)
    assert units.to_bytes_per_s(rand4.throughput, rand4.throughput_unit) == pytest.approx(164.29 * MIB)
    assert rand16.threads == 16 and rand16.iops == 122498.05 and rand16.source_line == 32
    assert rand4.inferred == ["queue_depth"]  # one outstanding I/O per vdbench thread
    assert rand4.metadata["rd"] == "rd_rand" and rand4.metadata["rdpct"] == "70"
    assert rand4.metadata["measured.queue_depth"] == "3.9"
    # rd_seq (wd_seq: 1m, seekpct=0), threads=8 on its rd= line.
    assert (seq.pattern, seq.operation, seq.block_size_bytes, seq.threads) == ("sequential", "read", MIB, 8)
    assert (seq.tool_version, seq.target, seq.duration_s) == ("50407", "/dev/nvme1n1", 30.0)


def test_totals_html_several_run_definitions():
    parsed = parse("totals-5.04.07-three-rds.html")
    r4k, mix, seqw = parsed.records
    assert [r.metadata["rd"] for r in parsed.records] == ["rd_4k_r100", "rd_64k_mix", "rd_1m_seqw"]
    assert (r4k.operation, r4k.block_size_bytes, r4k.threads, r4k.iops) == ("read", 4096, 32, 188304.4)
    assert (mix.operation, mix.read_pct, mix.block_size_bytes, mix.threads) == ("mixed", 49.98, 65536, 8)
    assert (seqw.operation, seqw.direction, seqw.block_size_bytes, seqw.threads) == ("write", "write", MIB, 4)
    assert all("pattern" in r.inferred for r in parsed.records)  # totals.html names no seekpct: vdbench's 100


def test_flatfile_avg_rows_and_a_cut_one():
    parsed = parse("flatfile-5.04.07-write-threads.html")
    assert [(r.threads, r.operation, r.pattern, r.block_size_bytes) for r in parsed.records] == [
        (1, "write", "random", 8192), (4, "write", "random", 8192),
    ]  # fmt: skip
    assert parsed.records[0].tool_version == "50407" and parsed.records[0].metadata["rd"] == "rd_t1"
    assert parsed.warnings == ["line 15: cut short flatfile avg row: skipped"]


def test_avg_line_without_its_header_and_a_damaged_one():
    text = (
        "09:12:34.063     avg_2-3    42058.55   164.29    4096  69.99    0.094    0.089    0.105     2.22     2.90"
        "    0.030    3.9  13.9   9.6\n"
        "09:13:34.063     avg_2-3    42058.55   164.29    4096  69.99    0.0…\n"
    )
    parsed = formats.parse_bytes(text.encode(), "paste.txt", fmt="vdbench")
    (rec,) = parsed.records
    assert (rec.iops, rec.read_pct, rec.threads, rec.queue_depth) == (42058.55, 69.99, None, None)
    assert parsed.warnings == ["line 2: cut short avg_ line (5 figures): skipped"]


def test_nothing_but_intervals_is_refused():
    text = (FIXTURES / "console-5.04.07-two-rds-for-loops.txt").read_text()
    no_avg = "\n".join(line for line in text.split("\n") if "avg_" not in line)
    with pytest.raises(ParseError, match="no vdbench run result"):
        formats.parse_bytes(no_avg.encode(), "x.txt", fmt="vdbench")


@pytest.mark.parametrize("layout", ["console", "flatfile"])
def test_writer_round_trip(layout):
    disk = DiskModel("hdd", service_time_ms=6.0, max_bytes_per_s=200e6)
    recs = sweep(disk, "vdbench", pattern="sequential", operation="write", block_size_bytes=65536,
                 threads=(1, 4, 16), queue_depths=(1,), throughput_unit="MiB/s")  # fmt: skip
    parsed = formats.parse_bytes(writer.write(recs, layout=layout).encode(), f"vdbench.{layout}")
    assert parsed.format == "vdbench"
    assert [(r.threads, r.pattern, r.operation) for r in parsed.records] == [
        (t, "sequential", "write") for t in (1, 4, 16)
    ]
    for a, b in zip(recs, parsed.records, strict=True):
        assert b.iops == pytest.approx(a.iops, abs=0.06)
