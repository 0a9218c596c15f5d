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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import TypeVar

from ingest.errors import ParseError
from ingest.records import QueryIoRecord, QueryTimeRecord

_T = TypeVar("_T")

NAME = "sqlstats"
TITLE = "SQL Server STATISTICS IO/TIME"
TOOLS = ()
HOST_KEYS: frozenset[str] = frozenset()
USER_KEYS: frozenset[str] = frozenset()
RESULT_KEY_PREFIXES: tuple[str, ...] = ()
RESULT_KEYS: tuple[str, ...] = ()
TOOL = "sqlserver"

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


@lru_cache(maxsize=4096)  # the same few dozen labels on every table line
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


def _time_form(template: str) -> Callable[[str], re.Match[str] | None]:
    """The fullmatch of a vocabulary's time line as printed, the two numbers its groups: twice as fast as
    _TIME_VALUES, and a line it matches _TIME_VALUES matches with the same groups (checked here): it reads the same."""
    before, rest = template.strip().split("{cpu}")
    between, after = rest.split("{elapsed}")
    m = _TIME_VALUES.match(before + "1" + between + "2" + after)
    if m is None or m.span(1) != (len(before), len(before) + 1) or m.end(2) != len(m[0]) - len(after):
        raise ImportError(f"time line {template!r} is not one _TIME_VALUES reads")
    number = r"(\d{1,15})"
    return re.compile(re.escape(before) + number + re.escape(between) + number + re.escape(after)).fullmatch


def _ascii_starts(texts: Iterable[str], n: int) -> frozenset[str]:
    """The first `n` characters, when ASCII, of the lines that can start with one of `texts` (matched without case;
    a line with a non-ASCII character there is always tried: case-insensitive matching folds some onto ASCII)."""
    starts = [""]
    for k in range(1, n + 1):
        heads = {t[:k] for t in texts}
        if any(len(h) < k or any(c.isspace() or c in "'\u2019" for c in h) for h in heads):
            # Spaces and apostrophes match more than themselves (see _alternation).
            raise ValueError(f"cannot dispatch on {k} characters of {sorted(heads)}")
        pattern = re.compile("|".join(map(re.escape, heads)), re.IGNORECASE)
        starts = [s + c for s in starts for c in map(chr, range(128)) if pattern.fullmatch(s + c)]
    return frozenset(starts)


# Cheap dispatch on a line's first characters before any regex: most lines are blank, rows affected or time values,
# and two characters tell headers such as `Tiempo ...` from table lines (`Tabla ...`).
_PREFIX_STARTS = _ascii_starts(("-", "v"), 1)
_IO_STARTS = _ascii_starts(_TABLE_WORDS, 2)
_HEADER_STARTS = _ascii_starts(_HEADERS, 2)
# The time line a header of each language and phase is followed by (others are read by _TIME_VALUES).
_TIME_FORMS = {
    (code, phase): _time_form(template)
    for code, vocab in VOCABULARIES.items()
    for phase, template in (("compile", vocab.compile_line), ("execution", vocab.execution_line))
}
if any(
    template.strip()[0] in _PREFIX_STARTS
    for v in VOCABULARIES.values()
    for template in (v.compile_line, v.execution_line)
):
    raise ImportError("a time line starts like a `--` or `VERBOSE:` prefix: _scan reads the line after a header as is")

_DETECT_CHARS = 1 << 19
# Detection matches its patterns at the start of candidate lines found by str.find (a MULTILINE `^` pattern makes
# Python's re attempt a match at every character of a large foreign file): a table line holds a quote, a time
# header (not always on one line: its words may be apart) the lower-case literal every header contains.
_DETECT_LEAD = r"[ \t]*(?:--+[ \t]*|VERBOSE:[ \t]+)?"
_DETECT_IO = re.compile(
    _DETECT_LEAD + r"(?:" + _alternation(list(_TABLE_WORDS)) + r")[ \t]*:?[ \t]*['\"]", re.IGNORECASE
)
_DETECT_HEADER = re.compile(_DETECT_LEAD + r"(?:" + _alternation(list(_HEADERS)) + r")[ \t]*:?", re.IGNORECASE)
_IO_ANCHORS = ("'", '"')  # _DETECT_IO ends at the quote that opens the name
_WORD_ANCHORS = ("tab", "テーブル")  # Table, Tabla, Tabella, Tabelle, Tabela; Japanese (lower case)
_HEADER_ANCHORS = ("server",)  # every header names SQL Server; "sql" alone is in every SQLIO run header
if any(len(word.split()) != 1 for word in _TABLE_WORDS):
    raise ImportError("a table word of several words: _DETECT_IO may span lines, quotes no longer find its lines")
# The last letters of the table words in either case. No other character matches these without case (re's special
# case-insensitive matches are for other letters: k, s, i, Greek, ...).
_WORD_ENDS = frozenset("aAeEル")
if {word[-1] for word in _TABLE_WORDS} - _WORD_ENDS:
    raise ImportError("a table word ends in another letter: update sqlstats._WORD_ENDS")

# The table-line records are built positionally (half the cost of keywords): the columns in QueryIoRecord's order.
_COLUMNS = FIELDS_2019 + FIELDS_SEGMENT
if tuple(f.name for f in fields(QueryIoRecord))[:19] != (
    ("statement_index", "source_line", "table_name") + _COLUMNS + ("tool", "tool_version", "language")
):
    raise ImportError("QueryIoRecord's fields changed: update sqlstats._COLUMNS and _io_record")


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
            rec = _io_record(line, 1, None, -1, None)
        except ParseError:
            damaged += 1
            continue
        io_lines += rec is not None
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
            # As stripping " \t", one ":" and " \t" again (stem ends in a letter): another tool's quote costs one strip.
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
        return False  # every header names SQL Server (re matches `q` without case to these two only): memchr scans
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


def parse(text: str) -> list[Record]:
    records = _scan(text)
    if not records:
        raise ParseError(
            "no SET STATISTICS IO or TIME output found: no `Table '...'. Scan count ...` line and no "
            "`SQL Server Execution Times` block in a known language (" + ", ".join(VOCABULARIES) + ")",
            _first_content_line(text),
        )
    return records


def _scan(text: str) -> list[Record]:
    """The records in file order, numbered into statements as they are read (rules in the module docstring).

    Records are made with the number of the statement being read; only a statement that no Execution Times block
    ends (cut by a compile block or the end of the file) is renumbered, by `_split_statements`."""
    out: list[Record] = []
    index = 0  # the number of the statement being read: out[start:]
    start = 0
    breaks: list[int] = []  # positions in `out` before which a line other than a record came, in this statement
    pending: tuple[int, str, str] | None = None  # a time header waiting for its values: (line, language, phase)
    language: str | None = None  # the last table line's, to break ties between languages sharing a table word
    budget = _Budget()
    append = out.append
    fast_match, fast_build, fast_language = _fast_layout(language)
    lines = text.split("\n")
    count = len(lines)
    number = 0  # 1-based number of the line being read: lines[number] is the next one
    while number < count:
        raw = lines[number]
        number += 1
        line = raw.strip()
        if not line:
            continue
        if line[0] in _PREFIX_STARTS:
            # `--` and `VERBOSE: ` are removed first (see _PREFIX); dashes, the usual case, without the regex. No
            # other first character can start one: _PREFIX's `\s*` skips what strip() skips.
            line = line.lstrip("-").strip() if line.startswith("--") else _strip_prefix(raw).strip()
            if not line:
                continue
        values: tuple[float, float] | None = None
        if pending is not None:
            header_line, code, phase = pending
            pending = None
            if (m := _TIME_FORMS[code, phase](line)) is not None:
                values = float(m[1]), float(m[2])
            else:
                # None: the header's values never came (cut off); the header is skipped, this line read on its own.
                values = _time_values(line, number)
        if values is None:
            if len(line) <= _MAX_LINE:
                start2 = line[:2]
                ascii2 = start2.isascii()
                if start2 in _IO_STARTS or not ascii2:
                    # Most table lines fit the layout last used after the same language: read here as _io_record
                    # reads them (any layout learned after a language reads a line as the robust way does).
                    if fast_match is not None and (m := fast_match(line)) is not None:
                        append(fast_build(index, number, m.groups(0)))
                        if fast_language != language:
                            language = fast_language
                            fast_match, fast_build, fast_language = _fast_layout(language)
                        # The table lines right after, as printed: a line the layout matches whole has no spaces
                        # or `--` around it (the layout starts with a table word and ends with what a stripped
                        # line ended with), so the loop would read it the same way.
                        while number < count and fast_match is not None:
                            raw = lines[number]
                            if len(raw) > _MAX_LINE or (m := fast_match(raw)) is None:
                                break
                            number += 1
                            append(fast_build(index, number, m.groups(0)))
                            if fast_language != language:
                                language = fast_language
                                fast_match, fast_build, fast_language = _fast_layout(language)
                        continue
                    io = _io_record(line, number, language, index, budget)
                    if io is not None:
                        language = io.language
                        fast_match, fast_build, fast_language = _fast_layout(language)
                        append(io)
                        continue
                if start2 in _HEADER_STARTS or not ascii2:
                    header = _HEADERS_SEEN.get(line) or _header(line)
                    if header is not None:
                        header_line = number
                        code, phase, rest = header
                        values = _time_values(rest, number) if rest else None
                        if values is None:
                            # The values on the next line, as printed, are read here as the loop would read them
                            # (a time form starts with no `-` or `v`); else the header waits for them.
                            if number < count and (m := _TIME_FORMS[code, phase](lines[number].strip())) is not None:
                                number += 1
                                values = float(m[1]), float(m[2])
                            else:
                                pending = (number, code, phase)
                                continue
            if values is None:
                if not breaks or breaks[-1] != len(out):
                    breaks.append(len(out))
                continue
        if phase == "compile" and len(out) > start:
            # Compiling after reads: the statement read so far ended without Execution Times.
            index = _split_statements(out, start, breaks, index)
            start, breaks = len(out), []
        out.append(QueryTimeRecord(index, header_line, phase, values[0], values[1], TOOL, None, code))  # type: ignore[arg-type]
        if phase == "execution":
            index += 1
            start, breaks = len(out), []
    if len(out) > start:
        _split_statements(out, start, breaks, index)
    return out


def _fast_layout(
    language: str | None,
) -> tuple[Callable[[str], re.Match[str] | None] | None, Callable[..., QueryIoRecord] | None, str | None]:
    """(fullmatch, build, language) of the layout most recently used after a table line in `language`."""
    layouts = _LAYOUTS.get(language)
    if not layouts:
        return None, None, None
    return layouts[0].pattern.fullmatch, layouts[0].build, layouts[0].language


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


# Header lines repeat verbatim through a file: (language, phase, text after the header) by line, bounded.
_HEADERS_SEEN: dict[str, tuple[str, str, str]] = {}


def _header(line: str) -> tuple[str, str, str] | None:
    found = _HEADERS_SEEN.get(line)
    if found is None:
        m = _HEADER.match(line)
        if m is None:
            return None
        found = (*_entry(m["header"], _HEADER_BY_TEXT, _HEADER_ALTERNATIVES), m["rest"].strip())
        if len(_HEADERS_SEEN) >= 1024:
            _HEADERS_SEEN.clear()
        _HEADERS_SEEN[line] = found
    return found


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


@dataclass(frozen=True, slots=True, eq=False)
class _Layout:
    """A table line read before, as a pattern: its text up to the name and from the name's closing quote on, the
    name a group, each count a group of at most 18 digits (so it fits a BIGINT; a `0` is matched apart, read as
    the groups' default). A line that fully matches has the same words, labels and separators, and no quote after
    its name's that `_table_line` would take as the name's end (those quotes sit where they sit in the learned
    line, followed by the same text), so the robust reading gives the same name, language and columns."""

    pattern: re.Pattern[str]
    build: Callable[[int, int, tuple[str | int, ...]], QueryIoRecord]  # (statement, line, match.groups(0))
    language: str


# Layouts by the previous table line's language (it breaks ties between languages sharing a table word), most
# recently used first. Bounded: damaged input must not grow them; a line no layout matches is read the robust way.
# Lists are replaced, never changed in place, so that parses in other threads read them safely.
_LAYOUTS: dict[str | None, list[_Layout]] = {}
_MAX_LAYOUTS = 24  # the first table line of a file comes after none: 7 languages, 2 or 3 layouts each
_MAX_QUOTES = 4
# Shapes of table lines read once, waiting for a second line to be worth a pattern: (previous language, text before
# the name, text from the name's closing quote to the columns, then the text between the counts).
_SHAPES_SEEN: set[tuple[str | None, ...]] = set()
_MAX_SHAPES = 1024


@dataclass(slots=True)
class _Budget:
    """Patterns one parse may still compile: a file has a few layouts, and however many shapes damaged input
    shows, compiling their patterns must not cost more than reading the file the robust way."""

    patterns: int = 32


def _io_record(
    line: str, number: int, previous_language: str | None, index: int, budget: _Budget | None
) -> QueryIoRecord | None:
    """The record of one table line; None when the line is not one; ParseError when it is one but unreadable.
    Its layout is learned within `budget` (None: not learned)."""
    if len(line) > _MAX_LINE:
        return None
    layouts = _LAYOUTS.get(previous_language)
    if layouts is not None:
        for layout in layouts:
            m = layout.pattern.fullmatch(line)
            if m is not None:
                if layout is not layouts[0]:
                    _LAYOUTS[previous_language] = [layout, *(other for other in layouts if other is not layout)]
                return layout.build(index, number, m.groups(0))
    found = _table_line(line)
    if found is None:
        return None
    word, start, end, pos = found
    name = line[start:end]
    read = _read_columns(word, name, line[pos:], number, previous_language)
    if read is None:
        return None
    code, columns = read
    if PAGE_SERVER_FIELDS & columns.keys():
        version: str | None = VERSION_2019
    elif LOB_FIELDS & columns.keys():
        version = VERSION_2008
    else:
        version = None
    if budget is not None and budget.patterns > 0:
        _learn(previous_language, line, found, tuple(columns), version, code, budget)
    return QueryIoRecord(
        statement_index=index,
        source_line=number,
        table_name=name,
        tool=TOOL,
        tool_version=version,
        language=code,
        **columns,
    )


def _learn(
    previous_language: str | None,
    line: str,
    found: tuple[str, int, int, int],
    fields_: tuple[str, ...],
    version: str | None,
    code: str,
    budget: _Budget,
) -> None:
    """Remember the layout of a table line just read the robust way, the second time its shape comes: compiling
    a pattern costs more than reading a line, and a file of ever-different lines must not pay that per line."""
    _, start, end, pos = found
    after_name = line[end:pos]
    if line.count(line[start - 1], end) > _MAX_QUOTES:
        # Each quote after the name's is a place where matching the pattern's name group may retry the rest.
        return
    parts = _DIGIT_RUN.split(line[pos:])
    if len(parts) // 2 != len(fields_):  # each column is one run of digits; anything else is not learned
        return
    shape = (previous_language, line[:start], after_name, *parts[0::2])
    if shape not in _SHAPES_SEEN:
        if len(_SHAPES_SEEN) >= _MAX_SHAPES:
            _SHAPES_SEEN.clear()
        _SHAPES_SEEN.add(shape)
        return
    _SHAPES_SEEN.discard(shape)
    body = r"(?:0|(\d{1,18}))".join(re.escape(s) for s in parts[0::2])
    pattern = re.compile(re.escape(line[:start]) + "(.+?)" + re.escape(after_name) + body)
    if pattern.fullmatch(line) is None:  # a count of more than 18 digits: lines like this one are read the robust way
        return
    budget.patterns -= 1
    layouts = _LAYOUTS.get(previous_language, [])
    _LAYOUTS[previous_language] = [
        _Layout(pattern, _builder(fields_, version, code), code),
        *layouts[: _MAX_LAYOUTS - 1],
    ]


@lru_cache(maxsize=256)  # a few dozen layouts: (columns, version, language) in each language's two or three forms
def _builder(
    fields_: tuple[str, ...], version: str | None, code: str
) -> Callable[[int, int, tuple[str | int, ...]], QueryIoRecord]:
    """The record of a line a layout matched, from its groups (the name, then the counts in `fields_` order; a
    count of `0` is matched apart, so its group is the default 0). Generated code that passes every column to
    QueryIoRecord positionally: a third of the cost of placing the counts by an itemgetter and unpacking them."""
    args = ", ".join(f"int(g[{fields_.index(f) + 1}])" if f in fields_ else "None" for f in _COLUMNS)
    namespace = {"make": QueryIoRecord, "int": int, "tool": TOOL, "version": version, "language": code}
    exec(
        f"def build(index, number, g):\n    return make(index, number, g[0], {args}, tool, version, language)",
        namespace,
    )
    return namespace["build"]  # type: ignore[no-any-return]


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
    first_label = first["label"] if first is not None else parts[0].rstrip(" :")
    first_known = any(_LABELS[c].get(_norm(first_label)) in _FIRST_FIELDS for c in candidates)
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
    code = _language(candidates, labels, previous_language)
    fields_ = _fields(labels, _LABELS[code])
    if fields_ is None:
        unknown = [label for label in labels if _norm(label) not in _LABELS[code]]
        raise ParseError(
            f"table line for {name!r}: {len(labels)} columns with labels not known in language {code!r} "
            f"({', '.join(repr(u) for u in unknown[:3]) or 'duplicates'}) fit no layout SQL Server prints",
            number,
        )
    return code, dict(zip(fields_, values, strict=True))


def _language(candidates: list[str], labels: list[str], previous: str | None) -> str:
    """The candidate whose vocabulary knows most labels; ties go to the previous line's language, then to order."""
    scores = {c: sum(_norm(label) in _LABELS[c] for label in labels) for c in candidates}
    best = max(scores.values())
    tied = [c for c in candidates if scores[c] == best]
    return previous if previous in tied else tied[0]


def _fields(labels: list[str], known: dict[str, str]) -> tuple[str, ...] | None:
    by_label = [known.get(_norm(label)) for label in labels]
    if all(by_label) and len(set(by_label)) == len(by_label):
        return tuple(f for f in by_label if f)
    layout = _POSITIONAL.get(len(labels))
    if layout is None:
        return None
    # Every label that is known must sit where the printed column order has it.
    if any(f is not None and f != layout[i] for i, f in enumerate(by_label)):
        return None
    return layout


def _first_content_line(text: str) -> int:
    for number, line in enumerate(text.split("\n"), 1):
        if line.strip():
            return number
    return 1
