"""SET STATISTICS IO, TIME in every language SQL Server ships: the fixtures written in the shape of real outputs
(tests/fixtures/SOURCES.md names each real file), then the layouts and languages no real output was found for.

Expected figures are read by hand from the fixtures (comments name the line). The tests in the section "derived
from the vocabulary" build their input from the parser's own vocabulary table: they check that the parser reads
what it claims to, not that SQL Server prints it so (an audit found such tests cannot catch a wrong word); the
module docstring of ingest/formats/sqlstats.py (LANGUAGES) says which texts have no capture behind them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kneepoint.ingest import formats
from kneepoint.ingest.formats import sqlstats
from kneepoint.ingest.records import QueryIoRecord, QueryTimeRecord
from kneepoint.ingest.synth import sqlstats as writer
from kneepoint.ingest.textio import decode
from tests.helpers import corpus_file

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sqlstats"


def read(name: str):
    path = FIXTURES / name
    return formats.parse_bytes(path.read_bytes(), name)


def ios(parsed) -> list[QueryIoRecord]:
    return [r for r in parsed.records if isinstance(r, QueryIoRecord)]


def times(parsed) -> list[QueryTimeRecord]:
    return [r for r in parsed.records if isinstance(r, QueryTimeRecord)]


def shape(rec: QueryIoRecord, fields=sqlstats.FIELDS_2008) -> tuple:
    return tuple(getattr(rec, f) for f in fields)


# ------------------------------------------------------------------------------------ shaped like real outputs


def test_russian_in_a_block_comment_with_a_segment_line_and_a_failed_statement():
    parsed = read("ru-2016-output-in-block-comment.sql")
    assert parsed.format == "sqlstats" and not parsed.warnings
    # Line 19: `Таблица "Orders". Число просмотров 2, ..., lob логических чтений 163, ...`; line 20 its segment line.
    orders, segment, worktable, workfile, customers = ios(parsed)
    assert (orders.source_line, orders.table_name, orders.language, orders.tool_version) == (
        19,
        "Orders",
        "ru",
        "2008-2016",
    )
    assert shape(orders) == (2, 0, 0, 0, 163, 0, 0)
    assert (segment.table_name, segment.segment_reads, segment.segment_skipped) == ("Orders", 1, 0)
    assert (worktable.table_name, workfile.table_name) == ("Worktable", "Workfile")
    assert shape(customers) == (1, 40, 1, 38, 0, 0, 0)
    # Lines 9 (inside `/*`), 12, 15, 27, 31, 34 (closed by `*/` on the values line): the SET statement's blocks,
    # the query's, and after `Сообщение 207, уровень 16, ...` (line 29) a statement that failed.
    assert [
        (r.statement_index, r.source_line, r.phase, r.cpu_ms, r.elapsed_ms, r.error_number) for r in times(parsed)
    ] == [
        (0, 9, "compile", 0, 0, None),
        (0, 12, "execution", 0, 0, None),
        (1, 15, "compile", 31, 33, None),
        (1, 27, "execution", 94, 131, None),
        (2, 31, "compile", 0, 0, 207),
        (2, 34, "execution", 0, 0, 207),
    ]
    assert {r.statement_index for r in ios(parsed)} == {1}
    assert {r.language for r in parsed.records} == {"ru"}


def test_german_name_first_before_2012_in_windows_1252_comments():
    parsed = read("de-2008-name-first-in-comments.sql")
    assert parsed.encoding == "cp1252" and not parsed.warnings
    t2, umsatz = ios(parsed)
    # Line 9 in `/* */`: `t2-Tabelle. Scananzahl 1, logische Lesevorgänge 20001, ...`; line 23 as a `--` comment.
    assert (t2.source_line, t2.table_name, t2.language, shape(t2)) == (9, "t2", "de", (1, 20001, 0, 9, 0, 0, 0))
    assert (umsatz.source_line, umsatz.table_name, shape(umsatz)) == (23, "UMSATZ", (5, 17388, 0, 11, 0, 0, 0))
    # Lines 11-12 and 25-26 (` --, CPU-Zeit = ...`); line 29 `--Meldung 208, Ebene 16, Status 1, Zeile 21` ends the
    # file: that statement printed no time block, it gets one execution record without times.
    assert [(r.statement_index, r.source_line, r.cpu_ms, r.elapsed_ms, r.error_number) for r in times(parsed)] == [
        (0, 11, 141, 902, None),
        (1, 25, 47, 98, None),
        (2, 29, None, None, 208),
    ]


def test_french_execution_times_on_the_header_line():
    parsed = read("fr-execution-times-rows-affected.txt")
    # Lines 4, 7, 10 (`SQL Server \endash Temps d'exécution :`, as an RTF copy left it), 13 (`1 021 ms`).
    assert [
        (r.statement_index, r.source_line, r.phase, r.cpu_ms, r.elapsed_ms, r.language) for r in parsed.records
    ] == [
        (0, 4, "execution", 812, 845, "fr"),
        (1, 7, "execution", 301, 452, "fr"),
        (2, 10, "execution", 498, 517, "fr"),
        (3, 13, "execution", 509, 1021, "fr"),
    ]
    assert sqlstats.detect(decode((FIXTURES / "fr-execution-times-rows-affected.txt").read_bytes())[0]) >= 0.8


def test_brazilian_portuguese_both_scan_labels_and_english_rows_lines():
    parsed = read("pt-br-2008-in-block-comments.sql")
    first, worktable, second = ios(parsed)
    # Line 7 `Número de verificações 5, ...`, line 17 `Contagem de verificações 8, ...` (CRLF file).
    assert (first.source_line, first.language, shape(first)) == (7, "pt", (5, 25110, 0, 0, 290311, 0, 0))
    assert (second.source_line, shape(second)) == (17, (8, 25894, 0, 0, 293377, 121, 0))
    assert worktable.table_name == "Worktable"
    assert [(r.statement_index, r.cpu_ms, r.elapsed_ms) for r in times(parsed)] == [
        (0, 39812, 10977),
        (1, 40115, 11208),
    ]


def test_korean_both_orders_and_the_time_on_its_header_line():
    parsed = read("ko-2008-and-2000-in-comments.sql")
    assert parsed.encoding == "utf-8-sig"
    sales, emp = ios(parsed)
    # Line 11 `--테이블 'Sales'. 검색 수 1, 논리적 읽기 수 572, ...`;
    # line 17 `--'Emp' 테이블. 스캔 수 1, ...` (SQL 2000).
    assert (sales.source_line, sales.table_name, sales.language, shape(sales)) == (
        11,
        "Sales",
        "ko",
        (1, 572, 0, 0, 0, 0, 0),
    )
    assert (emp.source_line, emp.table_name, emp.tool_version) == (17, "Emp", None)
    assert shape(emp, sqlstats.FIELDS_2000) == (1, 2, 0, 0)
    # Line 18: `SQL Server 실행 시간 : CPU 시간 = 0ms, 경과 시간 = 0ms.` ends the one statement.
    (execution,) = times(parsed)
    assert (execution.source_line, execution.phase, execution.cpu_ms, execution.elapsed_ms) == (18, "execution", 0, 0)


def test_simplified_chinese_full_width_punctuation_and_counts_in_ci():
    parsed = read("zh-hans-2005-and-2000-notes.txt")
    employees, orders = ios(parsed)
    # Line 8 `表 'Employees'。扫描计数 1，逻辑读 1 次，物理读 0 次，预读 0 次。` (SQL 2000),
    # after `（所影响的行数为 1 行）`.
    assert (employees.source_line, employees.language, shape(employees, sqlstats.FIELDS_2000)) == (
        8,
        "zh-Hans",
        (1, 1, 0, 0),
    )
    # Line 26, a Markdown list item: `- 表 'Orders'。扫描计数 1，逻辑读取 24117 次，...，预读 24117 次，...`.
    assert (orders.source_line, shape(orders)) == (26, (1, 24117, 0, 24117, 0, 0, 0))
    # Lines 16 and 18 (`耗费时间`), 23 (` - SQL Server 执行时间:`, `占用时间`).
    assert [(r.source_line, r.phase, r.cpu_ms, r.elapsed_ms) for r in times(parsed)] == [
        (16, "execution", 0, 0),
        (18, "compile", 0, 1),
        (23, "execution", 702, 9871),
    ]


def test_traditional_chinese_2019_columns_and_segment_lines():
    parsed = read("zh-hant-2022-columnstore-in-comments.sql")
    lines = ios(parsed)
    # Lines 3-4 and 16-17: `資料表 'tbSales'。掃描計數 12，...，LOB 邏輯讀取 81244，...`
    # and `區段會讀取 71，略過區段 38。`.
    assert [
        (r.source_line, r.tool_version, r.lob_logical_reads, r.segment_reads, r.segment_skipped) for r in lines
    ] == [
        (3, "2019+", 81244, None, None),
        (4, None, None, 71, 38),
        (16, "2019+", 16011, None, None),
        (17, None, None, 13, 96),
    ]
    assert lines[0].page_server_reads == 0 and lines[0].scan_count == 12
    # Lines 6-7 and 20-21: ` SQL Server 執行次數: ` / `，CPU 時間 = 1015 ms，經過時間 = 3902 ms。`.
    assert [(r.statement_index, r.cpu_ms, r.elapsed_ms, r.language) for r in times(parsed)] == [
        (0, 1015, 3902, "zh-Hant"),
        (1, 812, 3511, "zh-Hant"),
    ]


def test_english_2019_as_azure_data_studio_prints_it():
    parsed = read("en-2019-azure-data-studio-comments.sql")
    orderlines, segment, worktable, orders = ios(parsed)
    assert (orderlines.tool_version, orderlines.lob_logical_reads, orderlines.lob_read_ahead_reads) == (
        "2019+",
        502,
        781,
    )
    assert (segment.segment_reads, segment.segment_skipped, segment.tool_version) == (2, 0, None)
    assert (orders.physical_reads, orders.read_ahead_reads, orders.page_server_reads) == (3, 831, 0)
    assert {r.statement_index for r in (orderlines, segment, worktable, orders)} == {2}


@pytest.mark.parametrize(
    "path", [p for p in sorted(FIXTURES.glob("*")) if not p.name.endswith(".jsonl")], ids=lambda p: p.name
)
def test_every_fixture_is_detected_from_its_content(path):
    assert formats.parse_bytes(path.read_bytes(), "no-extension").format == "sqlstats"
    assert sqlstats.detect(decode(path.read_bytes())[0]) >= 0.8


# ------------------------------------------------------------------------------------ derived from the vocabulary
# The inputs below are the writer's, from the parser's own vocabulary table: they check the reading, not the words.
# Where a capture holds the table line the writer prints for a (language, layout), the test above reads that file;
# the others are still self-derived (no real output found; LANGUAGES in the parser's docstring), and their test ids
# end in "self-derived". A layout: "2019+" (page-server columns), "2008-2016" (LOB columns), None (SQL 2000).
CAPTURED_TABLE_LINES = {
    ("en", "2008-2016"): ("corpus", "jorriss-sampleoutput-en.txt"),
    ("en", "2019+"): ("fixture", "en-2019-azure-data-studio-comments.sql"),
    ("de", "2019+"): ("corpus", "ppedv-de-2019-format-in-tsql-comments-cp1252.sql"),
    ("es", "2008-2016"): ("corpus", "jorriss-sampleoutput-es.txt"),
    ("it", "2019+"): ("corpus", "jorriss-sampleoutput-it.txt"),
    ("pt", "2008-2016"): ("fixture", "pt-br-2008-in-block-comments.sql"),
    ("ru", "2008-2016"): ("fixture", "ru-2016-output-in-block-comment.sql"),
    ("ko", "2008-2016"): ("fixture", "ko-2008-and-2000-in-comments.sql"),
    ("zh-Hans", "2008-2016"): ("fixture", "zh-hans-2005-and-2000-notes.txt"),
    ("zh-Hant", "2019+"): ("fixture", "zh-hant-2022-columnstore-in-comments.sql"),
}
# Where each error header's words come from (LANGUAGES): a capture, Microsoft's docs in that language, else nothing
# (self-derived).
ERROR_HEADER_SOURCES = {"en": "captured", "de": "captured", "es": "captured", "it": "captured", "ru": "captured"}
ERROR_HEADER_SOURCES["fr"] = "docs"


def _derived(language: str, version: str | None) -> str:
    return f"{language}-{version}-" + ("captured" if (language, version) in CAPTURED_TABLE_LINES else "self-derived")


@pytest.mark.parametrize(("language", "version"), sorted(CAPTURED_TABLE_LINES))
def test_each_captured_layout_is_in_its_real_file(language, version):
    # The claim above, checked: the named file holds table lines of that language and layout, read as such.
    where, name = CAPTURED_TABLE_LINES[(language, version)]
    path = corpus_file("sqlstats", name) if where == "corpus" else FIXTURES / name
    parsed = formats.parse_bytes(path.read_bytes(), name)
    assert (language, version) in {(r.language, r.tool_version) for r in ios(parsed) if r.segment_reads is None}


def vocabulary_text(language: str, version: str | None) -> str:
    records = [
        QueryTimeRecord(0, 1, "compile", 3.0, 4.0),
        QueryIoRecord(0, 1, "Orders", 1, 88, 1, None, 80, None, *((4, 5, None, 7) if version else (None,) * 4)),
        QueryTimeRecord(0, 1, "execution", 47.0, 212.0),
    ]
    return writer.write(records, language=language, tool_version=version, rows_affected={0: 42})


@pytest.mark.parametrize(
    ("language", "version"),
    [
        pytest.param(language, version, id=_derived(language, version))
        for language in sorted(sqlstats.VOCABULARIES)
        for version in ("2019+", "2008-2016", None)
    ],
)
def test_every_vocabulary_reads_back_what_its_writer_prints(language, version):
    records = sqlstats.parse(vocabulary_text(language, version))
    (io,) = [r for r in records if isinstance(r, QueryIoRecord)]
    assert (io.table_name, io.language, io.tool_version) == ("Orders", language, version)
    assert (io.scan_count, io.logical_reads, io.physical_reads, io.read_ahead_reads) == (1, 88, 1, 80)
    assert [(r.phase, r.cpu_ms, r.elapsed_ms, r.language) for r in records if isinstance(r, QueryTimeRecord)] == [
        ("compile", 3, 4, language),
        ("execution", 47, 212, language),
    ]


@pytest.mark.parametrize(
    "language",
    [
        pytest.param(code, id=f"{code}-{ERROR_HEADER_SOURCES.get(code, 'self-derived')}")
        for code in sorted(sqlstats.VOCABULARIES)
    ],
)
def test_every_vocabularys_error_header_fails_its_statement(language):
    records = [QueryTimeRecord(0, 1, "compile", 0.0, 0.0, error_number=8134)]
    records.append(QueryTimeRecord(0, 1, "execution", 0.0, 1.0, error_number=8134))
    text = writer.write(records, language=language)
    assert [r.error_number for r in sqlstats.parse(text)] == [8134, 8134]


def test_vocabulary_forms_with_the_name_first_and_older_wordings():
    # Both self-derived: German 2012-2017 `Tabelle 'X'. Scananzahl ...` (no capture; the 2019+ and pre-2012 forms
    # are captured) and Japanese (no capture at all; the labels are Microsoft's Japanese docs').
    lines = [
        "Tabelle 'Kunden'. Scananzahl 3, logische Lesevorgänge 120, physische Lesevorgänge 0, "
        "Read-Ahead-Lesevorgänge 0, logische LOB-Lesevorgänge 0, physische LOB-Lesevorgänge 0, "
        "Read-Ahead-LOB-Lesevorgänge 0.",
        "テーブル 'Orders'。スキャン カウント 1、論理読み取り数 6018、物理読み取り数 0、"
        "先読み読み取り数 0、LOB 論理読み取り数 0、LOB 物理読み取り数 0、LOB 先読み読み取り数 0。",
    ]
    de, ja = sqlstats.parse("\n\n".join(lines))
    assert (de.language, de.scan_count, de.logical_reads, de.tool_version) == ("de", 3, 120, "2008-2016")
    assert (ja.language, ja.logical_reads, ja.read_ahead_reads) == ("ja", 6018, 0)
