"""DiskSpd cells as printed: unusual blanks and percent signs in table cells, a repeated timespan's own flags, XML
latency points matched within a billionth."""

from __future__ import annotations

from kneepoint.ingest.formats import diskspd, diskspd_xml
from kneepoint.ingest.textio import decode
from tests.helpers import SAMPLE, corpus_file

MIXED = "patricklang-containers-2.0.21-mibs-latency-readme.txt"


def corpus_text(name: str) -> str:
    return decode(corpus_file("diskspd", name).read_bytes())[0]


def test_unusual_blanks_between_cells_read_the_same_records():
    text = corpus_text(MIXED)
    # A no-break space before every pipe: str.strip removes it, so every figure and metadata value comes out the same.
    odd = text.replace(" |", "\u00a0|")
    assert odd.count("\u00a0|") > 100
    assert diskspd.parse(odd) == diskspd.parse(text)


def test_percent_signs_in_total_cells_are_read_as_the_number():
    text = corpus_text(MIXED)
    # Read IO total row of the file: `total: 11837591552 | 2890037 | 94.08 | 24083.62 | 1.563 | 1.026`
    row = "total:       11837591552 |      2890037 |      94.08 |   24083.62 |    1.563 |     1.026"
    assert row in text
    read, _, _ = diskspd.parse(text.replace(row, row.replace("94.08 |", "94.08% |")))
    assert read.direction == "read"
    assert read.throughput == 94.08 and read.throughput_unit == "MiB/s"
    assert read.iops == 24083.62
    assert read.metadata["read.mib_per_s"] == "94.08%"  # kept as printed


def test_a_repeated_timespan_keeps_only_its_own_flags():
    text = corpus_text(MIXED)
    # The file's one profile: `timespan: 1` ... `measuring latency` (a line without a value) ... `think time`.
    start = text.index("        timespan:   1")
    block = text[start : text.index("                burst size: 0")]
    assert "measuring latency" in block
    repeated = text[:start] + block * 3 + text[start:]
    flags = set()
    garbage = []
    for k in range(30):
        garbage.append([object() for _ in range(k % 5)])  # other allocator states between calls
        flags.add(diskspd.parse(repeated)[0].metadata["input.flags"])
    assert flags == {"measuring latency"}


def test_xml_latency_points_match_within_a_billionth_only():
    text = decode((SAMPLE / "diskspd" / "synthetic-ss-stripe-mixed-8k.xml").read_bytes())[0]
    assert "<Percentile>99.9</Percentile>" in text and "<Percentile>50</Percentile>" in text
    first = diskspd_xml.parse(text)[0]
    assert first.latency_p999 is not None and first.latency_p50 is not None
    near = diskspd_xml.parse(text.replace("<Percentile>99.9</Percentile>", "<Percentile>99.9000000001</Percentile>"))
    assert near[0].latency_p999 == first.latency_p999
    far = diskspd_xml.parse(text.replace("<Percentile>50</Percentile>", "<Percentile>50.00001</Percentile>"))
    assert far[0].latency_p50 is None
    assert far[0].latency_p999 == first.latency_p999
