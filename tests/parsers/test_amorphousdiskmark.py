"""AmorphousDiskMark text results: what each test line becomes, the footer, headerless pastes (never read as
CrystalDiskMark), damaged lines, and the writer's round trip."""

from __future__ import annotations

from pathlib import Path

import pytest

from kneepoint.ingest import formats
from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats import amorphousdiskmark, crystaldiskmark
from kneepoint.ingest.synth import amorphousdiskmark as writer
from kneepoint.ingest.synth.disk_model import DiskModel, sweep

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "amorphousdiskmark" / "adm-4.0.1-m1-internal.txt"
MIB = 1024 * 1024


def read(text: str) -> formats.ParsedFile:
    return formats.parse_bytes(text.encode(), "adm.txt")


def test_each_test_line_is_a_run_with_the_footer_as_metadata():
    parsed = formats.parse_bytes(FIXTURE.read_bytes(), FIXTURE.name)
    recs = parsed.records
    assert parsed.format == "amorphousdiskmark" and len(recs) == 8 and parsed.warnings == []
    first, rnd = recs[0], recs[4]
    assert (first.pattern, first.operation, first.block_size_bytes, first.queue_depth, first.threads) == (
        "sequential", "read", MIB, 8, 1,
    )  # fmt: skip
    assert (first.throughput, first.throughput_unit, first.iops, first.latency_avg) == (2853.09, "MB/s", 2721.0, None)
    assert (rnd.pattern, rnd.block_size_bytes, rnd.queue_depth, rnd.iops) == ("random", 4096, 64, 220185.7)
    assert (first.tool_version, first.target, first.started_at) == (
        "4.0.1",
        "Macintosh HD",
        "2021-03-04T10:11:12+00:00",
    )
    assert first.duration_s == 5.0 and first.inferred == ["duration_s", "threads"]  # the defaults the text omits
    assert first.metadata["Device"] == "APPLE SSD AP0512Q" and first.metadata["Label"] == "Sequential Read 1MiB (QD= 8)"
    assert [r.run_index for r in recs] == list(range(8))


def test_headerless_paste_is_amorphousdiskmark_and_crystaldiskmark_leaves_it():
    text = FIXTURE.read_text()
    paste = text[text.index("  Sequential Read") :]
    assert formats.parse_bytes(paste.encode(), "paste.txt").format == "amorphousdiskmark"
    assert all(r.tool_version is None and "tool_version" in r.inferred for r in amorphousdiskmark.parse(paste))
    with pytest.raises(ParseError):
        crystaldiskmark.parse(paste)  # `4KiB (QD=  64)` is no CrystalDiskMark label


def test_limit_and_no_limit():
    text = FIXTURE.read_text()
    (rec, *_) = read(text.replace("[Interval=5 sec]", "[Interval=5 sec] [Limit=20 sec]")).records
    assert rec.duration_s == 20.0 and "duration_s" not in rec.inferred
    (rec, *_) = read(text.replace("[Interval=5 sec]", "[Interval=5 sec] [No Limit]")).records
    assert rec.duration_s is None


def test_damaged_wrapped_and_grouped_lines():
    text = FIXTURE.read_text()
    text = text.replace("2853.09 MB/s [   2721.0 IOPS]", "2,853.09 MB/s [   2,721.0 IOPS]")
    text = text.replace("   2512.51 MB/s [   2396.1 IOPS]", "   2512.51 MB/s\n[   2396.1 IOPS]")
    text = text.replace("    901.88 MB/s [ 220185.7 IOPS]", "    901.8…")
    parsed = read(text)
    assert len(parsed.records) == 7
    assert (parsed.records[0].throughput, parsed.records[0].iops) == (2853.09, 2721.0)
    assert parsed.records[1].iops == 2396.1
    assert parsed.warnings == ["line 14: cut short test line, no MB/s figure to read: skipped"]


def test_nothing_but_zeros_or_a_header_is_refused():
    text = FIXTURE.read_text()
    head = text[: text.index("  Sequential Read")]
    with pytest.raises(ParseError, match="header without any test"):
        formats.parse_bytes(head.encode(), "adm.txt", fmt="amorphousdiskmark")
    zeros = head + " Sequential Read 1MiB (QD=   8) :      0.00 MB/s [      0.0 IOPS]\n\n  Volume : SSD: 4% used\n"
    with pytest.raises(ParseError, match="reads 0 MB/s"):
        read(zeros)


def test_writer_round_trip():
    disk = DiskModel("ssd", service_time_ms=0.05, max_bytes_per_s=2.5e9)
    recs = sweep(disk, "amorphousdiskmark", pattern="random", block_size_bytes=4096, queue_depths=(1, 64),
                 throughput_unit="MB/s")  # fmt: skip
    parsed = read(writer.write(recs))
    assert [(r.queue_depth, r.block_size_bytes) for r in parsed.records] == [(1, 4096), (64, 4096)]
    for a, b in zip(recs, parsed.records, strict=True):
        assert b.iops == pytest.approx(a.iops, abs=0.06)
