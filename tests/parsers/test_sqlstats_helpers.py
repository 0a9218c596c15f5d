"""The helpers in ingest/formats/_common.py that the STATISTICS IO/TIME parser reads pasted text with (shared, any
format may use them): digit groups, wrapped lines, T-SQL comment marks."""

from __future__ import annotations

import pytest

from kneepoint.ingest.formats._common import join_wrapped, read_grouped_int, uncomment_sql


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1026872", 1026872),
        ("1,026,872", 1026872),
        ("1.026.872", 1026872),
        ("1 026 872", 1026872),
        ("1\u00a0026\u00a0872", 1026872),
        ("1\u202f026", 1026),
        ("0", 0),
        ("1,02", None),
        ("1,026.872", None),
        ("12,3456", None),
        ("1,", None),
        ("\u0663", None),  # digits are ASCII
    ],
)
def test_read_grouped_int(text, value):
    assert read_grouped_int(text) == value


def test_join_wrapped_and_uncomment_sql():
    assert join_wrapped("lob logical", "reads 1") == ["lob logical reads 1", "lob logicalreads 1"]
    assert join_wrapped("read-", "ahead") == ["read- ahead", "read-ahead", "readahead"]
    assert join_wrapped("reads 0,", "lob") == ["reads 0, lob"]
    assert uncomment_sql("---- Table 'X'.") == "Table 'X'."
    assert uncomment_sql("/*Время работы SQL Server:") == "Время работы SQL Server:"
    assert uncomment_sql("Время ЦП = 0 мс.*/") == "Время ЦП = 0 мс."
    assert uncomment_sql("SELECT 1 -- not a comment line") == "SELECT 1 -- not a comment line"
