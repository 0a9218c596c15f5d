"""SQL Server `SET STATISTICS IO, TIME` output: the Messages tab of SSMS / Azure Data Studio, sqlcmd, or the same
text pasted into notes or into a .sql script as `--` comments. SQL Server 2000 to 2022 and Azure SQL, in English,
Spanish, Italian, German, French, Portuguese and Japanese.

Input (corpus `jorriss-sampleoutput-en.txt`, second statement, IO lines cut short here)::

    SQL Server parse and compile time:
       CPU time = 16 ms, elapsed time = 19 ms.

    (233033 row(s) affected)
    Table 'Worktable'. Scan count 0, logical reads 0, physical reads 0, read-ahead reads 0, lob logical ...
    Table 'Posts'. Scan count 1, logical reads 165586, physical reads 18, read-ahead reads 49191, lob logical
    reads 823463, lob physical reads 42854, lob read-ahead reads 3272.

     SQL Server Execution Times:
       CPU time = 17207 ms,  elapsed time = 38163 ms.

Records (normalized; one `query_io` per table line, one `query_time` per time block)::

    {"record": "query_time", "statement_index": 1, "source_line": 15, "phase": "compile", "cpu_ms": 16.0,
     "elapsed_ms": 19.0, "tool": "sqlserver", "tool_version": null, "language": "en"}
    {"record": "query_io", "statement_index": 1, "source_line": 21, "table_name": "Posts", "scan_count": 1,
     "logical_reads": 165586, "physical_reads": 18, "page_server_reads": null, "read_ahead_reads": 49191,
     "page_server_read_ahead_reads": null, "lob_logical_reads": 823463, "lob_physical_reads": 42854,
     "lob_page_server_reads": null, "lob_read_ahead_reads": 3272, "lob_page_server_read_ahead_reads": null,
     "segment_reads": null, "segment_skipped": null, "tool": "sqlserver", "tool_version": "2008-2016",
     "language": "en"}
    {"record": "query_time", "statement_index": 1, "source_line": 24, "phase": "execution", "cpu_ms": 17207.0,
     "elapsed_ms": 38163.0, ...}

Rules:
- Table lines: `Table 'NAME'. Scan count N, logical reads N, ...` in any language of VOCABULARIES. The name is
  kept as printed between the quotes (dots, brackets and quotes inside it are fine: the name ends at the last
  quote followed by `.`). Columns are read by their printed labels; a column the line lacks is null. Where a
  label is not known (a typo such as the Italian `letture read-ahea LOB server di pagine`, or wording that
  differs from the table), the column order SQL Server prints for that many columns decides (4: SQL 2000,
  7: 2005-2016, 11: 2019+, 2: columnstore `Segment reads N, segment skipped N`), provided every label that is
  known sits where that order has it. A columnstore segment line is its own record with only the segment
  columns set. `Worktable` and `Workfile` are tables like any other.
- `tool_version` says which columns a table line carries: "2019+" with page-server columns, "2008-2016" with
  the LOB columns but no page-server ones (SQL Server 2005-2017 print that layout), null for the 4-column
  SQL 2000 layout, segment lines and time blocks (they print the same in every version).
- Time blocks: a `parse and compile time` (phase "compile") or `Execution Times` (phase "execution") header
  followed by `CPU time = N ms, elapsed time = N ms` on the same or the next non-blank line, in milliseconds
  as printed. A header whose time line never comes is skipped; a time line that cannot be read is an error.
- Statements are numbered from 0 in file order. A statement ends with its Execution Times block: the table
  lines and the parse/compile block before that block belong to it (the jorriss/StatisticsParser grouping, so
  summing a statement's records gives that tool's per-statement totals, and summing by `table_name` over the
  file its per-table totals). A parse/compile block that follows table lines or another parse/compile block
  (with no Execution Times block between) starts a new statement: SQL Server compiles a statement before it
  reads, so such a block opens the next statement, and a statement that only compiled (a compile error, or
  the batch's own compile block before a statement's recompile) keeps its own number. Table lines with no
  Execution Times block after them (STATISTICS IO without TIME) are split into statements at the lines
  between them (rows affected, messages): each run of table lines, blank lines allowed, is one statement. With
  SET NOCOUNT ON and no TIME output two statements' table lines cannot be told apart; they count as one.
- Skipped: `(N row(s) affected)` / `(N rows affected)` in any language, `Msg ...` errors and their text,
  `DBCC ...`, `Completion time: ...`, warnings, T-SQL code, shell prompts, notes and blank lines. A `--` (T-SQL
  comment) or `VERBOSE: ` (PowerShell Invoke-Sqlcmd -Verbose) at the start of a line is removed first, so
  output pasted into a script as comments reads like plain output.
- `language` is the code of the vocabulary the line matched ("en", "es", "it", "de", "fr", "pt", "ja").
- A table line whose first column is recognized but whose columns cannot all be read (cut off, a label that
  fits no layout, a count beyond BIGINT) raises ParseError at that line; so does a file without any table line
  or time block.
- Reading: a file prints a few table-line layouts hundreds of times. The first line of a layout is read label by
  label (the robust reading above); the parse then keeps that line as a pattern (`_Layout`: its text, with the name
  and each count a group) and reads the lines that match it in full by it, which gives what the robust reading
  gives. Nothing is kept from one parse to the next.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TypeVar

from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats._common import first_content_line
from kneepoint.ingest.records import QueryIoRecord, QueryTimeRecord

_T = TypeVar("_T")


NAME = "sqlstats"
TITLE = "SQL Server STATISTICS IO/TIME"
TOOLS: tuple[str, ...] = ()  # no IoRecords: its query records carry the tool "sqlserver"
HOST_KEYS: frozenset[str] = frozenset()
USER_KEYS: frozenset[str] = frozenset()
RESULT_KEY_PREFIXES: tuple[str, ...] = ()
RESULT_KEYS: tuple[str, ...] = ()
TOOL = "sqlserver"  # of the query records

# Columns in the order SQL Server prints them, per layout.
FIELDS_2019 = (
    "scan_count",
    "logical_reads",
    "physical_reads",
    "page_server_reads",
    "read_ahead_reads",
    "page_server_read_ahead_reads",
    "lob_logical_reads",
    "lob_physical_reads",
    "lob_page_server_reads",
    "lob_read_ahead_reads",
    "lob_page_server_read_ahead_reads",
)
FIELDS_2008 = (
    "scan_count",
    "logical_reads",
    "physical_reads",
    "read_ahead_reads",
    "lob_logical_reads",
    "lob_physical_reads",
    "lob_read_ahead_reads",
)
FIELDS_2000 = FIELDS_2008[:4]
FIELDS_SEGMENT = ("segment_reads", "segment_skipped")
PAGE_SERVER_FIELDS = frozenset(f for f in FIELDS_2019 if "page_server" in f)
LOB_FIELDS = frozenset(f for f in FIELDS_2019 if f.startswith("lob_"))
# Column order by number of columns, for lines whose labels are not all known.
_POSITIONAL = {len(f): f for f in (FIELDS_2019, FIELDS_2008, FIELDS_2000, FIELDS_SEGMENT)}

VERSION_2019 = "2019+"
VERSION_2008 = "2008-2016"
_BIGINT_MAX = 2**63 - 1


@dataclass(frozen=True, slots=True)
class IoLineForm:
    """How one layout of the table line is printed: `prefix` (with `{}` for the table name), then the pairs
    `label value_sep value` joined by `pair_sep`, then `end`. `labels` follow the layout's field order."""

    prefix: str
    labels: tuple[str, ...]
    value_sep: str = " "
    pair_sep: str = ", "
    end: str = "."


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """One language's SET STATISTICS texts. The first header of each kind and the line templates are what the
    writer (ingest/synth/sqlstats.py) prints; every label, header and alias is what the parser accepts."""

    code: str
    io_2008: IoLineForm
    io_2019: IoLineForm
    io_segment: IoLineForm | None  # None: no localized sample seen; such lines are read by column order
    compile_headers: tuple[str, ...]
    execution_headers: tuple[str, ...]
    compile_line: str  # with {cpu} and {elapsed}
    execution_line: str
    row_affected: str  # with {n}; written by the writer only (the parser skips these lines)
    rows_affected: str
    aliases: dict[str, str] = field(default_factory=dict)  # other printed labels -> field


# One entry per language. Texts marked "no sample" were written from SQL Server's localized message catalog as
# remembered (messages 3612/3613/3615 and the columnstore segment message), not checked against a capture; the
# column-order rule reads those tables' lines even where a label differs.
VOCABULARIES: dict[str, Vocabulary] = {
    # Corpus: jorriss-sampleoutput-en.txt (2008-2016), jorriss-test-sql2016-columnstore-segment-reads.txt.
    # The 2019+ labels are those of Microsoft's SET STATISTICS IO documentation (no capture in the corpus).
    "en": Vocabulary(
        code="en",
        io_2008=IoLineForm(
            "Table '{}'. ",
            (
                "Scan count",
                "logical reads",
                "physical reads",
                "read-ahead reads",
                "lob logical reads",
                "lob physical reads",
                "lob read-ahead reads",
            ),
        ),
        io_2019=IoLineForm(
            "Table '{}'. ",
            (
                "Scan count",
                "logical reads",
                "physical reads",
                "page server reads",
                "read-ahead reads",
                "page server read-ahead reads",
                "lob logical reads",
                "lob physical reads",
                "lob page server reads",
                "lob read-ahead reads",
                "lob page server read-ahead reads",
            ),
        ),
        io_segment=IoLineForm("Table '{}'. ", ("Segment reads", "segment skipped")),
        compile_headers=("SQL Server parse and compile time:",),
        execution_headers=("SQL Server Execution Times:",),
        compile_line="   CPU time = {cpu} ms, elapsed time = {elapsed} ms.",
        execution_line="   CPU time = {cpu} ms,  elapsed time = {elapsed} ms.",
        row_affected="({n} row affected)",
        rows_affected="({n} rows affected)",
    ),
    # Corpus: jorriss-sampleoutput-es.txt (2008-2016). No sample of the 2019+ or segment lines in Spanish.
    "es": Vocabulary(
        code="es",
        io_2008=IoLineForm(
            "Tabla '{}'. ",
            (
                "Recuento de exámenes",
                "lecturas lógicas",
                "lecturas físicas",
                "lecturas anticipadas",
                "lecturas lógicas de LOB",
                "lecturas físicas de LOB",
                "lecturas anticipadas de LOB",
            ),
        ),
        io_2019=IoLineForm(
            "Tabla '{}'. ",
            (
                "Recuento de exámenes",
                "lecturas lógicas",
                "lecturas físicas",
                "lecturas del servidor de páginas",
                "lecturas anticipadas",
                "lecturas anticipadas del servidor de páginas",
                "lecturas lógicas de LOB",
                "lecturas físicas de LOB",
                "lecturas del servidor de páginas de LOB",
                "lecturas anticipadas de LOB",
                "lecturas anticipadas del servidor de páginas de LOB",
            ),
        ),
        io_segment=None,
        compile_headers=("Tiempo de análisis y compilación de SQL Server:",),
        execution_headers=("Tiempos de ejecución de SQL Server:", "Tiempo de ejecución de SQL Server:"),
        compile_line="   Tiempo de CPU = {cpu} ms, tiempo transcurrido = {elapsed} ms.",
        execution_line="   Tiempo de CPU = {cpu} ms, tiempo transcurrido = {elapsed} ms.",
        row_affected="({n} fila afectada)",
        rows_affected="({n} filas afectadas)",
    ),
    # Corpus: jorriss-sampleoutput-it.txt (2019+). The 2008-2016 labels are the 2019+ ones without the page
    # server columns (no sample); `letture read-ahead LOB` is the older wording of the LOB read-ahead column.
    "it": Vocabulary(
        code="it",
        io_2008=IoLineForm(
            "Tabella '{}'. ",
            (
                "Conteggio analisi",
                "letture logiche",
                "letture fisiche",
                "letture read-ahead",
                "letture logiche LOB",
                "letture fisiche LOB",
                "letture LOB read-ahead",
            ),
        ),
        io_2019=IoLineForm(
            "Tabella '{}'. ",
            (
                "Conteggio analisi",
                "letture logiche",
                "letture fisiche",
                "letture server di pagine",
                "letture read-ahead",
                "letture read-ahead server di pagine",
                "letture logiche LOB",
                "letture fisiche LOB",
                "letture LOB server di pagine",
                "letture LOB read-ahead",
                "letture read-ahead LOB server di pagine",
            ),
        ),
        io_segment=None,
        compile_headers=("Tempo di analisi e compilazione SQL Server:",),
        execution_headers=("Tempo di esecuzione SQL Server:", "Tempi di esecuzione SQL Server:"),
        compile_line="   tempo di CPU = {cpu} ms, tempo trascorso = {elapsed} ms.",
        execution_line=" tempo di CPU = {cpu} ms, tempo trascorso = {elapsed} ms.",
        row_affected="({n} riga interessata)",
        rows_affected="({n} righe interessate)",
        aliases={"letture read-ahead LOB": "lob_read_ahead_reads"},
    ),
    # Corpus: ppedv-de-2019-format-in-tsql-comments-cp1252.sql (2019+: `Tabelle: "X".`, `label: value`, and the
    # German `, CPU-Zeit` line with its leading comma). The 2008-2016 form (`Tabelle 'X'. Scananzahl 1, ...`)
    # has no sample in the corpus.
    "de": Vocabulary(
        code="de",
        io_2008=IoLineForm(
            "Tabelle '{}'. ",
            (
                "Scananzahl",
                "logische Lesevorgänge",
                "physische Lesevorgänge",
                "Read-Ahead-Lesevorgänge",
                "logische LOB-Lesevorgänge",
                "physische LOB-Lesevorgänge",
                "Read-Ahead-LOB-Lesevorgänge",
            ),
        ),
        io_2019=IoLineForm(
            'Tabelle: "{}". ',
            (
                "Anzahl von Überprüfungen",
                "logische Lesevorgänge",
                "physische Lesevorgänge",
                "Lesevorgänge Auslagerungsserver",
                "Read-Ahead-Lesevorgänge",
                "Read-Ahead-Lesevorgänge Auslagerungsserver",
                "logische LOB-Lesevorgänge",
                "physische LOB-Lesevorgänge",
                "LOB-Lesevorgänge Auslagerungsserver",
                "LOB-Read-Ahead-Lesevorgänge",
                "LOB-Read-Ahead-Lesevorgänge Auslagerungsserver",
            ),
            value_sep=": ",
        ),
        io_segment=None,
        compile_headers=("SQL Server-Analyse- und Kompilierzeit:",),
        execution_headers=("SQL Server-Ausführungszeiten:",),
        compile_line=", CPU-Zeit = {cpu} ms, verstrichene Zeit = {elapsed} ms.",
        execution_line=", CPU-Zeit = {cpu} ms, verstrichene Zeit = {elapsed} ms.",
        row_affected="({n} Zeile betroffen)",
        rows_affected="({n} Zeilen betroffen)",
        aliases={"Read-Ahead-LOB-Lesevorgänge": "lob_read_ahead_reads"},
    ),
    # No sample in the corpus (French).
    "fr": Vocabulary(
        code="fr",
        io_2008=IoLineForm(
            "Table '{}'. ",
            (
                "Nombre d'analyses",
                "lectures logiques",
                "lectures physiques",
                "lectures anticipées",
                "lectures logiques de la LOB",
                "lectures physiques de la LOB",
                "lectures anticipées de la LOB",
            ),
        ),
        io_2019=IoLineForm(
            "Table '{}'. ",
            (
                "Nombre d'analyses",
                "lectures logiques",
                "lectures physiques",
                "lectures du serveur de pages",
                "lectures anticipées",
                "lectures anticipées du serveur de pages",
                "lectures logiques de la LOB",
                "lectures physiques de la LOB",
                "lectures du serveur de pages de la LOB",
                "lectures anticipées de la LOB",
                "lectures anticipées du serveur de pages de la LOB",
            ),
        ),
        io_segment=None,
        compile_headers=("Temps d'analyse et de compilation de SQL Server :",),
        execution_headers=("Temps d'exécution de SQL Server :",),
        compile_line="   Temps UC = {cpu} ms, temps écoulé = {elapsed} ms.",
        execution_line="   Temps UC = {cpu} ms, temps écoulé = {elapsed} ms.",
        row_affected="({n} ligne affectée)",
        rows_affected="({n} lignes affectées)",
    ),
    # No sample in the corpus (Brazilian Portuguese). Older builds word some columns differently (aliases).
    "pt": Vocabulary(
        code="pt",
        io_2008=IoLineForm(
            "Tabela '{}'. ",
            (
                "Contagem de verificações",
                "leituras lógicas",
                "leituras físicas",
                "leituras antecipadas",
                "leituras lógicas de LOB",
                "leituras físicas de LOB",
                "leituras antecipadas de LOB",
            ),
        ),
        io_2019=IoLineForm(
            "Tabela '{}'. ",
            (
                "Contagem de verificações",
                "leituras lógicas",
                "leituras físicas",
                "leituras de servidor de páginas",
                "leituras antecipadas",
                "leituras antecipadas de servidor de páginas",
                "leituras lógicas de LOB",
                "leituras físicas de LOB",
                "leituras de servidor de páginas de LOB",
                "leituras antecipadas de LOB",
                "leituras antecipadas de servidor de páginas de LOB",
            ),
        ),
        io_segment=None,
        compile_headers=("Tempo de análise e compilação do SQL Server:",),
        execution_headers=("Tempos de Execução do SQL Server:", "Tempo de execução do SQL Server:"),
        compile_line="   Tempo de CPU = {cpu} ms, tempo decorrido = {elapsed} ms.",
        execution_line="   Tempo de CPU = {cpu} ms, tempo decorrido = {elapsed} ms.",
        row_affected="({n} linha afetada)",
        rows_affected="({n} linhas afetadas)",
        aliases={
            "Contagem de varredura": "scan_count",
            "leituras read-ahead": "read_ahead_reads",
            "leituras lógicas lob": "lob_logical_reads",
            "leituras físicas lob": "lob_physical_reads",
            "leituras read-ahead lob": "lob_read_ahead_reads",
        },
    ),
    # No sample in the corpus (Japanese): full-width `、` between columns and `。` at the end.
    "ja": Vocabulary(
        code="ja",
        io_2008=IoLineForm(
            "テーブル '{}'。",
            (
                "スキャン数",
                "論理読み取り数",
                "物理読み取り数",
                "先行読み取り数",
                "LOB 論理読み取り数",
                "LOB 物理読み取り数",
                "LOB 先行読み取り数",
            ),
            pair_sep="、",
            end="。",
        ),
        io_2019=IoLineForm(
            "テーブル '{}'。",
            (
                "スキャン数",
                "論理読み取り数",
                "物理読み取り数",
                "ページ サーバー読み取り数",
                "先行読み取り数",
                "ページ サーバー先行読み取り数",
                "LOB 論理読み取り数",
                "LOB 物理読み取り数",
                "LOB ページ サーバー読み取り数",
                "LOB 先行読み取り数",
                "LOB ページ サーバー先行読み取り数",
            ),
            pair_sep="、",
            end="。",
        ),
        io_segment=None,
        compile_headers=("SQL Server 解析とコンパイルの時間:",),
        execution_headers=("SQL Server 実行時間:",),
        compile_line="   CPU 時間 = {cpu} ミリ秒、経過時間 = {elapsed} ミリ秒。",
        execution_line="   CPU 時間 = {cpu} ミリ秒、経過時間 = {elapsed} ミリ秒。",
        row_affected="({n} 行処理されました)",
        rows_affected="({n} 行処理されました)",
    ),
}


def _norm(label: str) -> str:
    """Labels compare without case, runs of spaces or typographic apostrophes."""
    return " ".join(label.replace("\u2019", "'").split()).casefold()


def _table_word(prefix: str) -> str:
    return re.split(r"['\"]", prefix, maxsplit=1)[0].strip(" :")


def _build_tables() -> tuple[dict[str, dict[str, str]], dict[str, list[str]], dict[str, tuple[str, str]]]:
    labels: dict[str, dict[str, str]] = {}
    table_words: dict[str, list[str]] = {}  # as printed -> languages using that word
    headers: dict[str, tuple[str, str]] = {}  # as printed, without the colon -> (language, phase)
    for code, vocab in VOCABULARIES.items():
        known: dict[str, str] = {}
        forms = [(vocab.io_2008, FIELDS_2008), (vocab.io_2019, FIELDS_2019)]
        if vocab.io_segment is not None:
            forms.append((vocab.io_segment, FIELDS_SEGMENT))
        for form, fields_ in forms:
            for label, name in zip(form.labels, fields_, strict=True):
                known[_norm(label)] = name
            users = table_words.setdefault(_table_word(form.prefix), [])
            if code not in users:
                users.append(code)
        known.update({_norm(label): name for label, name in vocab.aliases.items()})
        labels[code] = known
        for phase, texts in (("compile", vocab.compile_headers), ("execution", vocab.execution_headers)):
            for text in texts:
                headers[text.rstrip(" :")] = (code, phase)
    return labels, table_words, headers


_LABELS, _TABLE_WORDS, _HEADERS = _build_tables()
_LANGUAGES_BY_WORD = {_norm(word): codes for word, codes in _TABLE_WORDS.items()}
_HEADER_BY_TEXT = {_norm(text): where for text, where in _HEADERS.items()}
_FIRST_FIELDS = frozenset({"scan_count", "segment_reads"})
# Every table line and time header starts with a table word or a header (`Table`, `Tabla`, ..., `SQL Server ...`,
# `Tiempo ...`): a line whose first letter is none of theirs is no record (matched without case, so other letters
# than ASCII ones are always tried).
_FIRST_LETTERS = frozenset(text[0].casefold() for text in (*_TABLE_WORDS, *_HEADERS))


def _alternation(texts: list[str]) -> str:
    """Longest first; any run of spaces matches any run of spaces, an apostrophe either apostrophe."""
    escaped = (r"\s+".join(re.escape(word) for word in t.split()) for t in sorted(texts, key=len, reverse=True))
    return "|".join(e.replace("'", "['\u2019]") for e in escaped)


def _alternatives(entries: dict[str, _T]) -> list[tuple[re.Pattern[str], _T]]:
    """Each text's own pattern with its entry, in the order `_alternation` tries them."""
    return [(re.compile(_alternation([t]), re.IGNORECASE), entries[t]) for t in sorted(entries, key=len, reverse=True)]


def _entry(matched: str, by_norm: dict[str, _T], alternatives: list[tuple[re.Pattern[str], _T]]) -> _T:
    """The entry of the text an alternation matched: by its normalized form, or, where case folding differs from
    case-insensitive matching (`ı` and `İ` match `i` but do not fold to it), by trying the texts as it does."""
    found = by_norm.get(_norm(matched))
    if found is None:
        found = next(entry for pattern, entry in alternatives if pattern.fullmatch(matched))
    return found


_WORD_ALTERNATIVES = _alternatives(_TABLE_WORDS)
_HEADER_ALTERNATIVES = _alternatives(_HEADERS)


# Lines longer than this are not SET STATISTICS output (the longest, a 2019+ Italian line with a 128-character
# table name, is under 600); the bound keeps every match linear on damaged input.
_MAX_LINE = 2000
# A table line is `WORD 'NAME'. COLUMNS`: the head up to the opening quote, then the name, which ends at the last
# quote followed by `.` (`_table_line` finds it with rfind: a greedy `.+` would retry every character of the line).
_IO_HEAD = re.compile(r"(?P<word>" + _alternation(list(_TABLE_WORDS)) + r")\s*:?\s*['\"]", re.IGNORECASE)
_NAME_END = re.compile(r"\s*[.。]\s*(?=\S)")
_PAIR_SEP = re.compile(r"\s*[,、]\s*")
_PAIR = re.compile(r"^(?P<label>[^\d:=]*[^\d\s:=])\s*:?\s*(?P<value>\d{1,20})$")
_DIGIT_RUN = re.compile(r"(\d+)")
_HEADER = re.compile(r"^(?P<header>" + _alternation(list(_HEADERS)) + r")\s*:?(?P<rest>.*)$", re.IGNORECASE)
# `CPU time = 108 ms, elapsed time = 108 ms.` in every language: CPU first, then elapsed, in ms.
_TIME_VALUES = re.compile(r"^[^=\d]+=\s*(\d{1,15})[^=\d]*=\s*(\d{1,15})[^=\d]*$")
_PREFIX = re.compile(r"^\s*(?:--+|VERBOSE:\s)", re.IGNORECASE)
_PREFIX_FIRST = frozenset("-vV")  # the first characters `_PREFIX` can match after white space


# --------------------------------------------------------------------------------------------- detection

_DETECT_CHARS = 1 << 19
# Detection matches its patterns at the start of candidate lines found by str.find (a MULTILINE `^` pattern would
# be tried at every character of a large file of another tool): a table line holds a quote, a time header (not
# always on one line: its words may be apart) the lower-case literal every header contains.
_DETECT_LEAD = r"[ \t]*(?:--+[ \t]*|VERBOSE:[ \t]+)?"
_DETECT_IO = re.compile(
    _DETECT_LEAD + r"(?:" + _alternation(list(_TABLE_WORDS)) + r")[ \t]*:?[ \t]*['\"]", re.IGNORECASE
)
_DETECT_HEADER = re.compile(_DETECT_LEAD + r"(?:" + _alternation(list(_HEADERS)) + r")[ \t]*:?", re.IGNORECASE)
_IO_ANCHORS = ("'", '"')  # _DETECT_IO ends at the quote that opens the name
_WORD_ANCHORS = ("tab", "テーブル")  # Table, Tabla, Tabella, Tabelle, Tabela; Japanese (lower case)
_HEADER_ANCHORS = ("server",)  # every header names SQL Server; "sql" alone is in every SQLIO run header
# The last letters of the table words in either case (every table word is one word: tests check it). No other
# character matches these without case.
_WORD_ENDS = frozenset(c for word in _TABLE_WORDS for c in (word[-1].lower(), word[-1].upper()))


def _line_matches(pattern: re.Pattern[str], head: str, low: str, anchors: tuple[str, ...]) -> Iterator[re.Match[str]]:
    """Matches of `pattern` at the start of the lines of `head` that hold one of `anchors` (`low` is head.lower())."""
    if len(low) != len(head):  # a character whose lower case is longer: positions differ, try every line
        starts: Iterator[int] = (m.start() for m in re.finditer(r"^", head, re.MULTILINE))
    else:
        starts = (head.rfind("\n", 0, i) + 1 for a in anchors for i in _find_all(low, a))
    seen: set[int] = set()
    for start in starts:
        if start not in seen:
            seen.add(start)
            if m := pattern.match(head, start):
                yield m


def _find_all(text: str, literal: str) -> Iterator[int]:
    i = text.find(literal)
    while i >= 0:
        yield i
        i = text.find(literal, i + 1)


Record = QueryIoRecord | QueryTimeRecord


def detect(text: str) -> float:
    """Table lines that read, or time blocks, within the first 512 KiB (a script may carry output at its end)."""
    head = text[:_DETECT_CHARS]
    io_lines = damaged = 0
    low: str | None = None
    if head.count('"', 0, 1024) + head.count("'", 0, 1024) > 32:  # JSON, XML: a quote on most lines
        low = head.lower()
        matches = _line_matches(_DETECT_IO, head, low, _WORD_ANCHORS)
    else:
        matches = _quoted_line_matches(head)
    for m in matches:
        line = _line_at(head, m.start())
        try:
            read = _read_table_line(line, 1, None, -1)
        except ParseError:
            damaged += 1
            continue
        io_lines += read is not None
        if io_lines >= 2:
            break
    time_blocks = _has_time_block(head, low)
    if io_lines and time_blocks:
        return 0.95
    if io_lines:
        return 0.9 if io_lines >= 2 else 0.85
    if time_blocks:
        return 0.8
    return 0.5 if damaged else 0.0


def _quoted_line_matches(head: str) -> Iterator[re.Match[str]]:
    """Matches of _DETECT_IO at the start of the lines holding a quote. The pattern is tried only where the line's
    first quote of that kind follows a table word's last letter (and `[ \t]*:?[ \t]*`): the lead and the word hold
    no quote, so the quote a table line opens its name with is its first."""
    tried: set[int] = set()
    for quote in _IO_ANCHORS:
        i = head.find(quote)
        while i >= 0:
            start = head.rfind("\n", 0, i) + 1
            before = head[start:i]
            stem = before.rstrip(" \t:")
            # As stripping " \t", one ":" and " \t" again (stem ends in a letter).
            if stem[-1:] in _WORD_ENDS and before.count(":", len(stem)) <= 1 and start not in tried:
                tried.add(start)
                if m := _DETECT_IO.match(head, start):
                    yield m
            i = head.find("\n", i)
            if i >= 0:
                i = head.find(quote, i)


def _has_time_block(head: str, low: str | None) -> bool:
    """A header followed by its values (on its own line or one of the next two); `low` is head.lower() or None."""
    if "q" not in head and "Q" not in head:
        return False  # every header names SQL Server (re matches `q` without case to these two only)
    if low is None:
        first_values = head.find("=")  # the values are `... = N ..., ... = N`
        if first_values < 0:
            return False
        # The header just before the first value line settles most files without lowering the whole head: its
        # line holds the anchor, so it is one of the lines tried below.
        anchor = head.rfind("Server", 0, first_values)
        if anchor >= 0:
            m = _DETECT_HEADER.match(head, head.rfind("\n", 0, anchor) + 1)
            if m is not None and _values_follow(head, m.end()):
                return True
        low = head.lower()
    return any(_values_follow(head, m.end()) for m in _line_matches(_DETECT_HEADER, head, low, _HEADER_ANCHORS))


def _values_follow(head: str, end: int) -> bool:
    following = head[end : end + 600].split("\n")[:3]
    return any(_TIME_VALUES.match(_strip_prefix(s).strip(" \t:")) for s in following)


def _line_at(text: str, pos: int) -> str:
    end = text.find("\n", pos)
    return _strip_prefix(text[pos : end if end >= 0 else len(text)]).strip()


def _strip_prefix(line: str) -> str:
    m = _PREFIX.match(line)
    return line[m.end() :] if m else line


# --------------------------------------------------------------------------------------------- reading


def parse(text: str) -> list[Record]:
    records = _Reader().read(text)
    if not records:
        raise ParseError(
            "no SET STATISTICS IO or TIME output found: no `Table '...'. Scan count ...` line and no "
            "`SQL Server Execution Times` block in a known language (" + ", ".join(VOCABULARIES) + ")",
            first_content_line(text),
        )
    return records


# Table-line layouts one parse learns, at most: a file prints a few, damaged input must not make it compile many.
_MAX_LAYOUTS = 8


@dataclass(slots=True)
class _Layout:
    """A table line read before, as a pattern: its text before the name, the name (a group), the text after it,
    each count a group of at most 18 digits (so it fits a BIGINT). A line this matches in full has the same words,
    labels and separators as the line learned, so reading it the robust way gives the same language and columns
    (a label holds no digit; no quote after the name's closing one is followed by `. `)."""

    pattern: re.Pattern[str]
    fields: tuple[str, ...]  # of the counts, in the order printed
    language: str | None
    version: str | None


@dataclass(slots=True)
class _Reader:
    """The records in file order, numbered into statements as they are read (rules in the module docstring).

    Records are made with the number of the statement being read; only a statement that no Execution Times block
    ends (cut by a compile block or the end of the file) is renumbered, by `_split_statements`."""

    records: list[Record] = field(default_factory=list)
    index: int = 0  # the number of the statement being read: records[start:]
    start: int = 0
    breaks: list[int] = field(default_factory=list)  # positions before which a line other than a record came
    pending: tuple[int, str, str] | None = None  # a time header waiting for its values: (line, language, phase)
    language: str | None = None  # the last table line's, to break ties between languages sharing a table word
    # A file repeats a few header lines and table-line layouts: each is read once. Layouts are kept per language of
    # the line before (it breaks ties), the last one used first.
    headers: dict[str, tuple[str, str, str] | None] = field(default_factory=dict)
    layouts: dict[str | None, list[_Layout]] = field(default_factory=dict)
    learned: int = 0

    def read(self, text: str) -> list[Record]:
        for number, raw in enumerate(text.split("\n"), 1):
            line = raw.strip()
            if line and line[0] in _PREFIX_FIRST:  # `--` (a T-SQL comment) or `VERBOSE: ` is removed first
                line = _strip_prefix(raw).strip()
            if line:
                self.line(line, number)
        if len(self.records) > self.start:
            _split_statements(self.records, self.start, self.breaks, self.index)
        return self.records

    def line(self, line: str, number: int) -> None:
        values: tuple[float, float] | None = None
        if self.pending is not None:
            header_line, code, phase = self.pending
            self.pending = None
            # None: the header's values never came (cut off); the header is skipped, this line read on its own.
            values = _time_values(line, number)
        if values is None:
            first = line[0]
            if len(line) <= _MAX_LINE and (not first.isascii() or first.casefold() in _FIRST_LETTERS):
                record = self.table_line(line, number)
                if record is not None:
                    self.language = record.language
                    self.records.append(record)
                    return
                header = self.header(line)
                if header is not None:
                    header_line = number
                    code, phase, rest = header
                    values = _time_values(rest, number) if rest else None
                    if values is None:
                        self.pending = (number, code, phase)
                        return
            if values is None:
                if not self.breaks or self.breaks[-1] != len(self.records):
                    self.breaks.append(len(self.records))
                return
        if phase == "compile" and len(self.records) > self.start:
            # Compiling after reads: the statement read so far ended without Execution Times.
            self.index = _split_statements(self.records, self.start, self.breaks, self.index)
            self.start, self.breaks = len(self.records), []
        self.records.append(
            QueryTimeRecord(
                statement_index=self.index,
                source_line=header_line,
                phase=phase,  # type: ignore[arg-type]
                cpu_ms=values[0],
                elapsed_ms=values[1],
                tool=TOOL,
                language=code,
            )
        )
        if phase == "execution":
            self.index += 1
            self.start, self.breaks = len(self.records), []

    def header(self, line: str) -> tuple[str, str, str] | None:
        """(language, phase, text after the header) of a time header line."""
        if line not in self.headers:
            m = _HEADER.match(line)
            if m is None:
                self.headers[line] = None
            else:
                code, phase = _entry(m["header"], _HEADER_BY_TEXT, _HEADER_ALTERNATIVES)
                self.headers[line] = (code, phase, m["rest"].strip())
        return self.headers[line]

    def table_line(self, line: str, number: int) -> QueryIoRecord | None:
        """The record of a table line; None when the line is not one; ParseError when it is one but unreadable."""
        layouts = self.layouts.get(self.language, [])
        for layout in layouts:
            m = layout.pattern.fullmatch(line)
            if m is not None:
                if layout is not layouts[0]:
                    layouts.remove(layout)
                    layouts.insert(0, layout)
                name, *counts = m.groups()
                values = dict(zip(layout.fields, map(int, counts), strict=True))
                return _io_record(self.index, number, name, layout.version, layout.language, values)
        if line in self.headers:  # read as a header before: no table line (it was tried as one first)
            return None
        read = _read_table_line(line, number, self.language, self.index)
        if read is None:
            return None
        record, found, fields_ = read
        if self.learned < _MAX_LAYOUTS:
            self.learn(line, found, record, fields_)
        return record

    def learn(
        self, line: str, found: tuple[str, int, int, int], record: QueryIoRecord, fields_: tuple[str, ...]
    ) -> None:
        """Keep the layout of a table line just read the robust way, when the line reads back through it: each count
        one run of at most 18 digits (a longer one is read the robust way, which checks it fits a BIGINT)."""
        layout = _Layout(_layout_pattern(line, found), fields_, record.language, record.tool_version)
        if layout.pattern.groups != 1 + len(layout.fields) or layout.pattern.fullmatch(line) is None:
            return
        self.learned += 1
        # It reads as its language after a line of that language too: a tie between languages goes to the previous
        # line's, and this one was among the best.
        for previous in {self.language, layout.language}:
            self.layouts.setdefault(previous, []).insert(0, layout)


def _layout_pattern(line: str, found: tuple[str, int, int, int]) -> re.Pattern[str]:
    """A table line as a `_Layout` pattern (`found`: its `_table_line`): its text, the name and each run of digits a
    group."""
    _, start, end, pos = found
    texts = _DIGIT_RUN.split(line[pos:])[0::2]
    count = r"(\d{1,18})"
    return re.compile(re.escape(line[:start]) + "(.+?)" + re.escape(line[end:pos]) + count.join(map(re.escape, texts)))


def _io_record(
    index: int, number: int, name: str, version: str | None, code: str, values: dict[str, int]
) -> QueryIoRecord:
    return QueryIoRecord(
        statement_index=index,
        source_line=number,
        table_name=name,
        tool=TOOL,
        tool_version=version,
        language=code,
        **values,
    )


def _read_table_line(
    line: str, number: int, previous_language: str | None, index: int
) -> tuple[QueryIoRecord, tuple[str, int, int, int], tuple[str, ...]] | None:
    """The record of one table line read the robust way, its `_table_line` parts and its columns in the order
    printed; None when the line is not one; ParseError when it is one but unreadable."""
    if len(line) > _MAX_LINE:
        return None
    found = _table_line(line)
    if found is None:
        return None
    word, start, end, pos = found
    name = line[start:end]
    read = _read_columns(word, name, line[pos:], number, previous_language)
    if read is None:
        return None
    code, values = read
    return _io_record(index, number, name, _version(values), code, values), found, tuple(values)


def _version(values: dict[str, int]) -> str | None:
    """Which columns a table line carries: 2019+ with page-server ones, 2008-2016 with LOB ones, else none."""
    if PAGE_SERVER_FIELDS & values.keys():
        return VERSION_2019
    if LOB_FIELDS & values.keys():
        return VERSION_2008
    return None


def _split_statements(out: list[Record], start: int, breaks: list[int], index: int) -> int:
    """Number out[start:], a statement no Execution Times block ended, from `index`: each run of table lines
    (with what compiled before it) is a statement. Returns the next statement's number."""
    after_break = set(breaks)
    seen_io = broken = False
    for pos in range(start, len(out)):
        broken = broken or (seen_io and pos in after_break)
        rec = out[pos]
        if isinstance(rec, QueryIoRecord):
            if seen_io and broken:
                index += 1
                broken = False
            seen_io = True
        rec.statement_index = index
    return index + 1


def _time_values(line: str, number: int) -> tuple[float, float] | None:
    if len(line) > _MAX_LINE:
        return None
    m = _TIME_VALUES.match(line)
    if m:
        return float(m[1]), float(m[2])
    if "=" in line:
        raise ParseError(f"time line after a SQL Server time header cannot be read: {line[:120]!r}", number)
    return None


def _table_line(line: str) -> tuple[str, int, int, int] | None:
    """(table word, where the name starts, where it ends, where the columns start) when `line` is shaped
    `WORD 'NAME'. COLUMNS`: the name ends at the last quote followed by `.` and more text."""
    head = _IO_HEAD.match(line)
    if head is None:
        return None
    start = head.end()
    quote = line[start - 1]
    end = line.rfind(quote)
    while end > start:  # the name is not empty
        after = _NAME_END.match(line, end + 1)
        if after is not None:
            return head["word"], start, end, after.end()
        end = line.rfind(quote, start, end)
    return None


def _read_columns(
    word: str, name: str, rest: str, number: int, previous_language: str | None
) -> tuple[str, dict[str, int]] | None:
    """The language and columns of a table line's text after the name, read pair by pair; None when the text is
    not a table line's; ParseError when it is one but unreadable."""
    candidates = _entry(word, _LANGUAGES_BY_WORD, _WORD_ALTERNATIVES)
    rest = rest.rstrip()
    ended = rest[-1] in ".。"
    if ended:
        rest = rest[:-1].rstrip()
    parts = _PAIR_SEP.split(rest)
    pairs = [_PAIR.match(p) for p in parts]
    first = pairs[0]
    first_label = _norm(first["label"] if first is not None else parts[0].rstrip(" :"))
    first_known = any(_LABELS[c].get(first_label) in _FIRST_FIELDS for c in candidates)
    if not first_known and not (all(pairs) and len(pairs) in _POSITIONAL):
        return None  # a note that happens to start like a table line
    bad = next((p for p, pm in zip(parts, pairs, strict=True) if pm is None), None)
    if bad is not None:
        raise ParseError(f"table line for {name!r} cut off or damaged at {bad[:60]!r}", number)
    if not ended and len(pairs) not in _POSITIONAL:
        raise ParseError(f"table line for {name!r} cut off after {len(pairs)} columns", number)
    labels = [pm["label"] for pm in pairs if pm is not None]
    values = [int(pm["value"]) for pm in pairs if pm is not None]
    too_big = next((v for v in values if v > _BIGINT_MAX), None)
    if too_big is not None:
        raise ParseError(f"table line for {name!r}: {too_big} does not fit a 64-bit count", number)
    normed = [_norm(label) for label in labels]
    code = _language(candidates, normed, previous_language)
    fields_ = _fields(normed, _LABELS[code])
    if fields_ is None:
        unknown = [label for label, n in zip(labels, normed, strict=True) if n not in _LABELS[code]]
        raise ParseError(
            f"table line for {name!r}: {len(labels)} columns with labels not known in language {code!r} "
            f"({', '.join(repr(u) for u in unknown[:3]) or 'duplicates'}) fit no layout SQL Server prints",
            number,
        )
    return code, dict(zip(fields_, values, strict=True))


def _language(candidates: list[str], normed: list[str], previous: str | None) -> str:
    """The candidate whose vocabulary knows most labels; ties go to the previous line's language, then to order."""
    scores = {c: sum(label in _LABELS[c] for label in normed) for c in candidates}
    best = max(scores.values())
    tied = [c for c in candidates if scores[c] == best]
    return previous if previous in tied else tied[0]


def _fields(normed: list[str], known: dict[str, str]) -> tuple[str, ...] | None:
    by_label = [known.get(label) for label in normed]
    if all(by_label) and len(set(by_label)) == len(by_label):
        return tuple(f for f in by_label if f)
    layout = _POSITIONAL.get(len(normed))
    if layout is None:
        return None
    # Every label that is known must sit where the printed column order has it.
    if any(f is not None and f != layout[i] for i, f in enumerate(by_label)):
        return None
    return layout
