"""SET STATISTICS IO, TIME as users paste it: wrapped, cut and damaged lines, digit groups, comment marks. One damaged
line costs nothing but itself (a warning with its line number); a file is refused only when nothing in it reads.

The damaged inputs are corpus lines (jorriss-sampleoutput-en.txt) cut, wrapped or regrouped here; the fixture
en-damaged-wrapped-grouped.txt holds them together (its expected records beside it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kneepoint.ingest import formats
from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats import sqlstats
from kneepoint.ingest.records import QueryIoRecord, QueryTimeRecord

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sqlstats"
POSTS = (
    "Table 'Posts'. Scan count 1, logical reads 165586, physical reads 18, read-ahead reads 49191, lob logical "
    "reads 823463, lob physical reads 42854, lob read-ahead reads 3272."
)
EXECUTION = " SQL Server Execution Times:\n   CPU time = 17207 ms,  elapsed time = 38163 ms.\n"


def read_with_warnings(text: str):
    """parse(text)'s records and warnings (records.ParsedRecords carries them)."""
    records = sqlstats.parse(text)
    return records, records.warnings


def table(name: str, logical: str = "1") -> str:
    return (
        f"Table '{name}'. Scan count 1, logical reads {logical}, physical reads 0, read-ahead reads 0, "
        "lob logical reads 0, lob physical reads 0, lob read-ahead reads 0."
    )


def posts(records) -> QueryIoRecord:
    (rec,) = [r for r in records if isinstance(r, QueryIoRecord) and r.table_name == "Posts"]
    return rec


def whole(rec: QueryIoRecord) -> tuple:
    return rec.scan_count, rec.logical_reads, rec.read_ahead_reads, rec.lob_logical_reads, rec.lob_read_ahead_reads


# ---------------------------------------------------------------------------------------------- wrapped lines


@pytest.mark.parametrize(
    "wrapped",
    [
        POSTS.replace("lob logical reads", "lob logical\nreads"),  # at a space (the parser's docstring example)
        POSTS.replace("read-ahead reads 49191,", "read-ahead reads 49191,\n"),  # after a separator
        POSTS.replace("lob read-ahead", "lob read-ahe\nad"),  # inside a word, at a fixed width
        POSTS.replace("physical reads 18", "phys-\nical reads 18"),  # hyphenated
        POSTS.replace("lob logical reads", "lob\nlogical\n\nreads"),  # over three lines, a blank one between
    ],
)
def test_a_wrapped_table_line_is_joined(wrapped):
    text = "Table 'A'. Scan count 1, logical reads 2.\n" + wrapped + "\n" + table("Z") + "\n\n" + EXECUTION
    records, warnings = read_with_warnings(text)
    assert not warnings
    assert whole(posts(records)) == (1, 165586, 49191, 823463, 3272)
    assert posts(records).source_line == 2  # the line it starts on
    assert [r.table_name for r in records if isinstance(r, QueryIoRecord)] == ["A", "Posts", "Z"]
    assert {r.statement_index for r in records} == {0}


def test_a_wrapped_line_in_comments_is_joined():
    text = "--" + POSTS.replace("lob logical reads", "lob logical\n--reads") + "\n--\n-- " + EXECUTION
    text = text.replace("\n ", "\n-- ")
    records, warnings = read_with_warnings(text)
    assert not warnings and whole(posts(records)) == (1, 165586, 49191, 823463, 3272)
    block = "/*" + POSTS.replace("lob logical reads", "lob logical\nreads") + "*/\n"
    assert whole(posts(sqlstats.parse(block))) == (1, 165586, 49191, 823463, 3272)


def test_a_wrapped_time_line_is_joined():
    text = POSTS + "\n\n SQL Server Execution Times:\n   CPU time = 17207 ms,\n  elapsed time = 38163 ms.\n"
    records, warnings = read_with_warnings(text)
    assert not warnings
    assert [(r.phase, r.cpu_ms, r.elapsed_ms) for r in records if isinstance(r, QueryTimeRecord)] == [
        ("execution", 17207, 38163)
    ]


def test_a_line_that_starts_a_record_is_no_continuation():
    cut = "Table 'Users'. Scan count 5, logical reads 42015, physical rea"
    records, warnings = read_with_warnings(cut + "\n" + POSTS)
    assert [r.table_name for r in records] == ["Users", "Posts"]
    assert whole(posts(records)) == (1, 165586, 49191, 823463, 3272)
    assert warnings == [
        "line 1: table line for 'Users' cut off after 2 columns at 'physical rea' (kept scan_count, logical_reads)"
    ]


# ---------------------------------------------------------------------------------------------- cut and damaged


@pytest.mark.parametrize("mark", ["…", "...", "..", " …", ", ..."])
def test_a_line_cut_with_an_ellipsis_keeps_its_columns(mark):
    text = "Table 'Users'. Scan count 5, logical reads 42015, physical reads 1" + mark + "\n" + POSTS
    records, warnings = read_with_warnings(text)
    users = records[0]
    assert (users.scan_count, users.logical_reads, users.physical_reads, users.read_ahead_reads) == (5, 42015, 1, None)
    assert users.tool_version is None
    assert len(warnings) == 1 and warnings[0].startswith("line 1: table line for 'Users' cut off after 3 columns")
    assert whole(posts(records)) == (1, 165586, 49191, 823463, 3272)


def test_a_damaged_line_costs_neither_the_other_results_nor_the_numbering():
    # STATISTICS IO alone: statements are the runs of table lines between other lines. A damaged table line is
    # still a table line of its run: it splits nothing.
    text = "\n".join(
        [
            "(1 row affected)",
            table("A"),
            "Table 'B'. Scan count 1, logical reads 2, physical reads #, read-ahead reads 0.",
            table("C"),
            "",
            "(3 rows affected)",
            table("D"),
        ]
    )
    records, warnings = read_with_warnings(text)
    assert [(r.statement_index, r.table_name, r.logical_reads) for r in records] == [
        (0, "A", 1),
        (0, "B", 2),
        (0, "C", 1),
        (1, "D", 1),
    ]
    assert warnings == ["line 3: table line for 'B' damaged at 'physical reads #' (kept scan_count, logical_reads)"]


def test_warnings_reach_the_parsed_file_and_a_file_of_damage_is_refused_at_its_first_damaged_line():
    path = FIXTURES / "en-damaged-wrapped-grouped.txt"
    parsed = formats.parse_bytes(path.read_bytes(), path.name)
    assert parsed.warnings == [
        "line 11: table line for 'Tags' cut off after 4 columns (kept scan_count, logical_reads, physical_reads, "
        "read_ahead_reads)",
        "line 12: table line for 'PostLinks' cut off after 2 columns at 'physical rea' (kept scan_count, "
        "logical_reads)",
        "line 17: time line after a SQL Server time header cannot be read: 'CPU time = x ms, elapsed time = 2 ms.'",
    ]
    with pytest.raises(ParseError) as err:
        formats.parse_bytes(b"notes\nTable 'Users'. Scan count\nmore notes\n", "notes.sql", fmt="sqlstats")
    assert str(err.value).startswith("notes.sql:2: no SET STATISTICS IO or TIME output could be read: table line")


def test_warnings_are_bounded():
    text = "\n".join(["Table 'T'. Scan count 1, logical reads ?, physical reads 0."] * 500 + [POSTS])
    records, warnings = read_with_warnings(text)
    assert len(warnings) == 101 and warnings[-1].startswith("more damaged lines")
    assert len(records) == 501


# ---------------------------------------------------------------------------------------------- digit groups


@pytest.mark.parametrize("separator", [",", ".", " ", "\u00a0", "\u202f"])
def test_counts_and_times_with_digit_groups(separator):
    grouped = POSTS.replace("165586", f"165{separator}586").replace("823463", f"823{separator}463")
    text = (
        grouped
        + "\n\n SQL Server Execution Times:\n"
        + f"   CPU time = 17{separator}207 ms,  elapsed time = 38163 ms.\n"
    )
    records, warnings = read_with_warnings(text)
    assert not warnings
    assert whole(posts(records)) == (1, 165586, 49191, 823463, 3272)
    assert records[-1].cpu_ms == 17207
    big = table("Big", f"1{separator}026{separator}872")
    assert sqlstats.parse(big)[0].logical_reads == 1_026_872


@pytest.mark.parametrize("bad", ["1,02", "1,026.872", "12,3456"])
def test_a_badly_grouped_count_is_damage(bad):
    records, warnings = read_with_warnings(table("T", bad) + "\n" + POSTS)
    assert len(warnings) == 1 and warnings[0].startswith("line 1: ")
    assert whole(posts(records)) == (1, 165586, 49191, 823463, 3272)


# ---------------------------------------------------------------------------------------------- comments, notes


@pytest.mark.parametrize(
    ("before", "after"),
    [("--", ""), ("-- ", ""), ("/*", "*/"), ("/* ", " */"), ("* ", ""), ("- ", ""), ("VERBOSE: ", "")],
)
def test_comment_marks_and_list_items_around_output(before, after):
    text = "\n".join(before + line + after for line in [POSTS, "", *EXECUTION.strip("\n").split("\n")])
    records = sqlstats.parse(text)
    assert whole(posts(records)) == (1, 165586, 49191, 823463, 3272)
    assert (records[-1].phase, records[-1].elapsed_ms) == ("execution", 38163)


def test_full_width_colons_and_brackets():
    text = "SQL Server 执行时间：\n   CPU 时间 = 719 毫秒，占用时间 = 10188 毫秒。\n（1 行受影响）\n"
    text += "表 “Orders”。扫描计数 1，逻辑读取 25002 次，物理读取 0 次，预读 25002 次，"
    text += "lob 逻辑读取 0 次，lob 物理读取 0 次，lob 预读 0 次。\n"
    execution, orders = sqlstats.parse(text)
    assert (execution.cpu_ms, execution.elapsed_ms, execution.language) == (719, 10188, "zh-Hans")
    assert (orders.table_name, orders.logical_reads, orders.read_ahead_reads) == ("Orders", 25002, 25002)
