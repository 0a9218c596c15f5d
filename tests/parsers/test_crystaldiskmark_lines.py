"""CrystalDiskMark test lines as the parser splits them: the label (before the first colon, read once per distinct
text in a parse) and the figures after it. Same label in other sections and other files, odd whitespace, huge
lines."""

from __future__ import annotations

import pytest

from kneepoint.ingest import formats
from kneepoint.ingest.records import IoRecord

MIB = 1024 * 1024
HEADER = "CrystalDiskMark 8.0.4 x64 (C) 2007-2021 hiyohiyo"
LABEL = "  SEQ    1MiB (Q=  8, T= 1):"


def parse_text(text: str) -> list[IoRecord]:
    return formats.parse_bytes(text.encode("utf-8"), "pasted.txt", fmt="crystaldiskmark").records


def test_figures_separated_by_tabs_are_all_read():
    # Each part of the line separated by tabs instead of the spaces CDM pads with: every figure still counts.
    text = f"{HEADER}\n[Read]\nSEQ\t1MiB (Q=\t8,T=1):\t7427.749 MB/s\t[7083.7 IOPS]\t<987.81 us>\n"
    (rec,) = parse_text(text)
    assert (rec.pattern, rec.operation, rec.block_size_bytes, rec.queue_depth, rec.threads) == (
        "sequential",
        "read",
        MIB,
        8,
        1,
    )
    assert (rec.throughput, rec.throughput_unit, rec.iops) == (7427.749, "MB/s", 7083.7)
    assert (rec.latency_avg, rec.latency_unit) == (987.81, "us")
    assert rec.metadata["Label"] == "SEQ 1MiB (Q= 8,T=1)"


def test_one_label_takes_the_section_it_is_in_every_time():
    # The same label text (read once per parse) under [Read], [Write], [Mix] and a second [Read]: the section decides
    # the operation each time, and the repeated [Read] starts a second result (no header: version from the shapes).
    text = (
        f"{HEADER}\n[Read]\n{LABEL}  100.000 MB/s [     95.4 IOPS] <  1.00 us>\n"
        f"[Write]\n{LABEL}  200.000 MB/s [    190.7 IOPS] <  2.00 us>\n"
        f"[Mix] Read 60%/Write 40%\n{LABEL}  300.000 MB/s [    286.1 IOPS] <  3.00 us>\n"
        f"[Read]\n{LABEL}  400.000 MB/s [    381.5 IOPS] <  4.00 us>\n"
    )
    recs = parse_text(text)
    assert [(r.operation, r.read_pct, r.throughput, r.source_line) for r in recs] == [
        ("read", 100.0, 100.0, 3),
        ("write", 0.0, 200.0, 5),
        ("mixed", 60.0, 300.0, 7),
        ("read", 100.0, 400.0, 9),
    ]
    assert [r.tool_version for r in recs] == ["8.0.4"] * 3 + ["8.x-9.x"]
    assert recs[3].inferred == ["tool_version"]
    # A later parse of the same label in another section is not influenced by the first.
    (rec,) = parse_text(f"[Write]\n{LABEL}  500.000 MB/s [    476.8 IOPS] <  5.00 us>\n")
    assert (rec.operation, rec.throughput, rec.source_line) == ("write", 500.0, 2)


def test_label_without_figures_and_figures_without_label_are_junk():
    text = (
        f"{HEADER}\n[Read]\n{LABEL} n/a\n"  # a label, no figures
        "  SEQ    1MiB (Q=  8):  100.000 MB/s [     95.4 IOPS]\n"  # figures, label without threads
        "  RND    4KiB (Q= 32, T= 1):    50.000 MB/s [  12207.0 IOPS] <  2621.44 us>\n"
    )
    (rec,) = parse_text(text)
    assert (rec.pattern, rec.block_size_bytes, rec.queue_depth, rec.source_line) == ("random", 4096, 32, 5)


@pytest.mark.parametrize("filler", [" ", "9", ":"])
def test_a_ten_megabyte_line_is_skipped(filler: str):
    huge = LABEL + filler * 10_000_000 + " 1.000 MB/s"
    text = f"{HEADER}\n[Read]\n{huge}\n{LABEL}  100.000 MB/s [     95.4 IOPS] <  1.00 us>\n"
    (rec,) = parse_text(text)
    assert (rec.source_line, rec.throughput) == (4, 100.0)
