"""Failed statements: an error header (`Msg 207, Level 16, State 1, Line 3` in SSMS's language) fails the statement
being read, which is shown as failed (`error_number` on its time records), not as a 0 ms statement; the numbering of
the other statements stays as it was.

The error headers' words are captures where LANGUAGES in ingest/formats/sqlstats.py says so (en, de, es, it, ru,
and French from Microsoft's docs); the Portuguese, Japanese, Korean and Chinese ones are derived from the parser's own
vocabulary (no capture found)."""

from __future__ import annotations

import pytest

from kneepoint.ingest.formats import sqlstats
from kneepoint.ingest.records import QueryIoRecord, QueryTimeRecord
from tests.helpers import corpus_file

COMPILE = "SQL Server parse and compile time: \n   CPU time = 0 ms, elapsed time = 0 ms.\n"
EXECUTION = "\n SQL Server Execution Times:\n   CPU time = 5 ms,  elapsed time = 6 ms.\n"


def table(name: str) -> str:
    return f"Table '{name}'. Scan count 1, logical reads 7, physical reads 0, read-ahead reads 0.\n"


def outline(text: str) -> list[tuple]:
    return [
        (r.statement_index, r.table_name)
        if isinstance(r, QueryIoRecord)
        else (r.statement_index, r.phase, r.error_number, r.cpu_ms is not None)
        for r in sqlstats.parse(text)
    ]


def test_the_corpus_english_sample_marks_its_third_statement_failed():
    text = corpus_file("sqlstats", "jorriss-sampleoutput-en.txt").read_text(encoding="utf-8")
    failed = [
        (r.statement_index, r.source_line) for r in sqlstats.parse(text) if r.record == "query_time" and r.error_number
    ]
    # Line 26 `Msg 207, Level 16, State 1, Line 1`, then the compile (line 28) and execution (line 31) blocks.
    assert failed == [(2, 28), (2, 31)]


def test_a_compile_error_before_its_blocks_and_a_runtime_error_between_them():
    text = COMPILE + table("A") + EXECUTION
    text += "Msg 207, Level 16, State 1, Line 4\nInvalid column name 'x'.\n" + COMPILE + EXECUTION
    text += (
        COMPILE + "Msg 8134, Level 16, State 1, Line 9\nDivide by zero error encountered.\n" + table("B") + EXECUTION
    )
    text += COMPILE + table("C") + EXECUTION
    assert outline(text) == [
        (0, "compile", None, True),
        (0, "A"),
        (0, "execution", None, True),
        (1, "compile", 207, True),
        (1, "execution", 207, True),
        (2, "compile", 8134, True),
        (2, "B"),
        (2, "execution", 8134, True),
        (3, "compile", None, True),
        (3, "C"),
        (3, "execution", None, True),
    ]


def test_a_failed_statement_without_a_time_block_gets_one_and_keeps_the_others_numbers():
    # STATISTICS IO alone: the error after B's run fails B's statement; D's keeps its number.
    text = "(1 row affected)\n" + table("A") + "\n(1 row affected)\n" + table("B")
    text += "Msg 8134, Level 16, State 1, Line 2\nDivide by zero error encountered.\n\n(1 row affected)\n" + table("D")
    assert outline(text) == [(0, "A"), (1, "B"), (1, "execution", 8134, False), (2, "D")]
    # An error at the end, after the last statement's Execution Times: a statement of its own (the Italian corpus).
    records = sqlstats.parse(COMPILE + table("A") + EXECUTION + "Msg 207, Level 16, State 1, Line 1\nx\n")
    failed = records[-1]
    assert (failed.statement_index, failed.source_line, failed.phase, failed.error_number) == (1, 7, "execution", 207)
    assert (failed.cpu_ms, failed.elapsed_ms) == (None, None)


def test_the_first_error_names_the_statement_and_informational_messages_fail_nothing():
    text = COMPILE + "Msg 207, Level 16, State 1, Line 12\nInvalid column name 'a'.\n"
    text += "Msg 207, Level 16, State 1, Line 10\nInvalid column name 'b'.\n" + EXECUTION
    text += "Msg 15477, Level 10, State 1, Procedure sp_rename, Line 3\nCaution: changing any part of a name.\n"
    text += COMPILE + table("T") + EXECUTION
    assert [(r.statement_index, r.error_number) for r in sqlstats.parse(text) if r.record == "query_time"] == [
        (0, 207),
        (0, 207),
        (1, None),
        (1, None),
    ]


@pytest.mark.parametrize(
    "header",
    [
        "Msg 207, Level 16, State 1, Line 3",
        "Server: Msg 207, Level 16, State 1, Line 3",  # SQL Server 2000's Query Analyzer
        "Meldung 207, Ebene 16, Status 1, Zeile 3",
        "Msg 207, Niveau 16, État 1, Ligne 3",
        "Mens. 207, Nivel 16, Estado 1, Línea 3",
        "Mensaje 207, nivel 16, estado 1, línea 3",
        "Messaggio 207, livello 16, stato 1, riga 3",
        "Msg 207, Nível 16, Estado 1, Linha 3",
        "Сообщение 207, уровень 16, состояние 1, строка 3",
        "メッセージ 207、レベル 16、状態 1、行 3",
        "메시지 207, 수준 16, 상태 1, 줄 3",
        "消息 207，级别 16，状态 1，第 3 行",
        "訊息 207，層級 16，狀態 1，行 3",
        "--Msg 207, Level 16, State 1, Line 3",
    ],
)
def test_error_headers_in_every_language_of_ssms(header):
    # SSMS prints the header in its own language, whatever the session's: English statistics around them.
    text = COMPILE + header + "\nmessage\n" + EXECUTION
    assert [r.error_number for r in sqlstats.parse(text)] == [207, 207]


def test_notes_that_look_like_error_headers_are_none():
    text = COMPILE + "Msg from the team: Level 16 means severe\nMsg 207 was raised\n" + EXECUTION
    assert [r.error_number for r in sqlstats.parse(text)] == [None, None]
    assert all(isinstance(r, QueryTimeRecord) for r in sqlstats.parse(text))
