"""formats._common's readings of what users paste: grouped numbers, cut lines, and the warnings a parser hands on."""

from __future__ import annotations

import pytest

from kneepoint.ingest.formats._common import read_number, truncated, ungroup_numbers
from kneepoint.ingest.records import MAX_WARNINGS, MORE_WARNINGS, ParsedRecords, add_line_warning


@pytest.mark.parametrize(
    "text, value",
    [
        ("1026872", 1026872.0),
        ("1026.5", 1026.5),
        ("1,026,872", 1026872.0),
        ("1.026.872", 1026872.0),
        ("1 026 872", 1026872.0),
        ("1\u00a0026\u00a0872", 1026872.0),
        ("1\u202f026\u202f872", 1026872.0),
        ("1,026,872.25", 1026872.25),
        ("1.026.872,25", 1026872.25),
        ("-1,234", -1234.0),
        ("1.026", 1.026),  # a decimal number, as the tools print them
        ("1,026", 1026.0),
        ("1,5", 1.5),  # a decimal comma (sqlio's rule, since the helpers merged)
        ("0,026", 0.026),
        ("1,026,872.123456789012345", 1026872.123456789012345),
    ],
)
def test_read_number(text, value):
    assert read_number(text) == value


@pytest.mark.parametrize("text", ["", "abc", "1,026,872,5", "12,34,567", "1,026.872.5", "1.026.872.5", "1e309", "NaN"])
def test_read_number_refuses(text):
    assert read_number(text) is None


def test_ungroup_numbers_leaves_other_numbers_as_printed():
    assert ungroup_numbers("x 1,026,872 IOPS, 1.026 ms") == "x 1026872 IOPS, 1.026 ms"
    assert ungroup_numbers("(Q=  8, T= 1): 1.026,5 MB/s") == "(Q=  8, T= 1): 1026.5 MB/s"
    assert ungroup_numbers("2019 100 7 12") == "2019 100 7 12"  # four digits, then three: not one number
    line = "plain 7427.749 MB/s [ 7083.7 IOPS]"
    assert ungroup_numbers(line) is line


def test_truncated_and_records():
    assert truncated("SEQ 1MiB: 74…") and truncated("SEQ 1MiB: 74..  ") and not truncated("7427.749 MB/s")
    recs = ParsedRecords([1, 2], ["line 3: cut"])
    assert recs == [1, 2] and recs.warnings == ["line 3: cut"]


def test_line_warnings_stop_at_the_cap_with_one_note():
    warnings: list[str] = []
    for line in range(1, MAX_WARNINGS + 10):
        add_line_warning(warnings, line, "damaged")
    assert warnings[0] == "line 1: damaged" and len(warnings) == MAX_WARNINGS + 1 and warnings[-1] == MORE_WARNINGS
