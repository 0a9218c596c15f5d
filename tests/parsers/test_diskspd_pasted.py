"""DiskSpd text as users paste it: no Input parameters (the echoed command line fills what the results do not say,
listed in `inferred`), a mixed run's three records, and damaged rows that cost only themselves."""

from __future__ import annotations

from pathlib import Path

import pytest

from kneepoint.ingest import formats
from kneepoint.ingest.formats import diskspd

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "diskspd" / "cmdline-only-mixed-pasted.txt"
MIB = 1024 * 1024
FROM_COMMAND_LINE = ["block_size_bytes", "duration_s", "operation", "pattern", "queue_depth", "read_pct"]


def test_command_line_fills_a_mixed_run_without_input_parameters():
    parsed = formats.parse_bytes(FIXTURE.read_bytes(), FIXTURE.name)
    read, write, total = parsed.records
    assert [r.direction for r in (read, write, total)] == ["read", "write", "total"]
    for r in (read, write, total):
        # -b8K -r -t4 -o16 -w30 -d60 -Sh; `thread count: 4` is a result, not read from the command line.
        assert (r.pattern, r.operation, r.read_pct, r.block_size_bytes) == ("random", "mixed", 70.0, 8192)
        assert (r.threads, r.queue_depth, r.duration_s, r.source_line) == (4, 16, 60.0, 3)
        assert r.inferred == FROM_COMMAND_LINE  # no `actual test time:` either: -d60
        assert r.target == "C:\\bench\\io.dat"
        assert r.metadata["command_line.caching"] == "software caching and hardware write caching disabled (-Sh)"
        assert r.metadata["parameters_from"] == "command line"
    # Grouped figures (a paste from a localized console) read right; the total is the tool's Total IO row.
    assert (read.iops, read.throughput, read.latency_avg) == (22400.0, 175.0, 1.613)
    assert (write.iops, write.latency_p99) == (9600.0, 5.02)
    assert (total.iops, total.throughput, total.latency_avg, total.latency_p99) == (32000.0, 250.0, 2.0, 4.48)
    assert parsed.warnings == ["line 37: cut short row of the read IO table: skipped"]


def test_targets_from_the_command_line_when_the_tables_name_none():
    text = FIXTURE.read_text(encoding="utf-8")
    start = text.index("Results for timespan 1:")
    # Only the tables' total rows pasted (thread rows dropped): the command line's path is the target.
    kept = [line for line in text[start:].split("\n") if not line.strip()[:1].isdigit() and line[:4] != "dat "]
    pasted = text[: text.index("System information:")] + "\n".join(kept)
    read, write, total = diskspd.parse(pasted)
    assert read.target == "C:\\bench\\io.dat" and "target" in read.inferred
    assert "threads" not in read.inferred  # `thread count: 4` is still there


def test_defaults_for_flags_the_command_line_leaves_out():
    text = FIXTURE.read_text(encoding="utf-8").replace("-b8K -r -t4 -o16 -w30 -d60 -Sh ", "")
    text = text.replace("thread count:\t\t4\n", "")
    read, _, _ = diskspd.parse(text)
    # DiskSpd's defaults: 64 KiB blocks, 2 outstanding I/Os, sequential; the write share from what was measured.
    assert (read.block_size_bytes, read.queue_depth, read.pattern) == (65536, 2, "sequential")
    assert read.threads == 4 and "threads" in read.inferred  # the thread rows counted
    assert read.read_pct == pytest.approx(70.0) and read.duration_s is None
    assert "command_line.caching" not in read.metadata


def test_a_run_with_a_cut_total_row_is_a_warning_beside_the_others():
    one = FIXTURE.read_text(encoding="utf-8")
    cut = one.replace("total:       4,718,592,000 |       576,000 |      75.00 |    9,600.00 |    2.903 |     0.712",
                      "total:       4,718,592,000 |       576,000 |      75.0…")  # fmt: skip
    parsed = formats.parse_bytes((cut + "\n\n" + one).encode(), "two.txt")
    assert [r.run_index for r in parsed.records] == [0, 0, 0]  # the second, whole run
    assert parsed.warnings[-1] == "line 44: DiskSpd total: row has no MiB/s value: that run is skipped"
