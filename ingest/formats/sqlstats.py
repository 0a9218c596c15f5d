"""SQL Server `SET STATISTICS IO, TIME` output: the Messages tab of SSMS / Azure Data Studio, sqlcmd, or the same
text pasted into notes or into a .sql script as `--` or `/* */` comments. SQL Server 2000 to 2022 and Azure SQL, in
every language SQL Server ships its messages in (see LANGUAGES below).

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
     "elapsed_ms": 19.0, "tool": "sqlserver", "tool_version": null, "language": "en", "error_number": null}
    {"record": "query_io", "statement_index": 1, "source_line": 21, "table_name": "Posts", "scan_count": 1,
     "logical_reads": 165586, "physical_reads": 18, "page_server_reads": null, "read_ahead_reads": 49191,
     "page_server_read_ahead_reads": null, "lob_logical_reads": 823463, "lob_physical_reads": 42854,
     "lob_page_server_reads": null, "lob_read_ahead_reads": 3272, "lob_page_server_read_ahead_reads": null,
     "segment_reads": null, "segment_skipped": null, "tool": "sqlserver", "tool_version": "2008-2016",
     "language": "en"}
    {"record": "query_time", "statement_index": 1, "source_line": 24, "phase": "execution", "cpu_ms": 17207.0,
     "elapsed_ms": 38163.0, ...}

(The `Table 'Posts'` line above is wrapped over two lines, as a mail client or a narrow editor leaves it: it is read
as one line, numbered by its first.)

Rules:
- Table lines: `Table 'NAME'. Scan count N, logical reads N, ...` in any language of VOCABULARIES, with the name in
  straight or typographic quotes, `Tabelle: "NAME".` (German 2019+), and the older orders with the name first:
  `NAME-Tabelle.` (German before 2012) and `'NAME' 테이블.` (Korean). The name is kept as printed between the quotes
  (dots, brackets and quotes inside it are fine: the name ends at the last quote followed by `.`). Columns are
  `label N`, `label: N` or `label N 次` (Chinese), apart by `, `, `，` or `、`, ending in `.` or `。`; a count may be
  printed with digit groups (`1,026,872`, `1.026.872`, `1 026 872` with a space, no-break or narrow no-break space).
  Columns are read by their printed labels; a column the line lacks is null. Where a label is not known (a typo such
  as the Italian `letture read-ahea LOB server di pagine`, or wording that differs from the table), the column order
  SQL Server prints for that many columns decides (4: SQL 2000, 7: 2005-2016, 11: 2019+, 2: columnstore `Segment
  reads N, segment skipped N`), provided every label that is known sits where that order has it. A columnstore
  segment line is its own record with only the segment columns set. `Worktable` and `Workfile` are tables like any
  other.
- `tool_version` says which columns a table line carries: "2019+" with page-server columns, "2008-2016" with
  the LOB columns but no page-server ones (SQL Server 2005-2017 print that layout), null for the 4-column
  SQL 2000 layout, segment lines and time blocks (they print the same in every version).
- Time blocks: a `parse and compile time` (phase "compile") or `Execution Times` (phase "execution") header
  followed by `CPU time = N ms, elapsed time = N ms` on the same or the next non-blank line, in milliseconds
  as printed. A header whose time line never comes is skipped.
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
- Failed statements: an error header (`Msg 207, Level 16, State 1, Line 3` in any language of SSMS, which prints it
  in its own language whatever the session's) of severity 11 or more marks the statement being read, the one whose
  Execution Times block has not come yet, as failed: its time records carry `error_number` (the first error's
  number). A failed statement that prints no time block (a compile error at the end of the output, or STATISTICS IO
  alone) gets one execution record without times at the error's line, so it is still a statement, shown as failed.
  Messages of severity 10 or less (informational) fail nothing.
- Skipped: `(N row(s) affected)` lines in any language, the text of error messages, `DBCC ...`, `Completion
  time: ...`, warnings, T-SQL code, shell prompts, notes and blank lines. The marks of a T-SQL comment (`--` at the
  start, `/*` and `*/` around) and `VERBOSE: ` (PowerShell Invoke-Sqlcmd -Verbose) are removed first, so output pasted
  into a script as comments reads like plain output.
- Damaged lines: a table line cut short (`...`, `…`, or simply ending early) or wrapped over two or more lines is
  joined with the lines after it when the joined text reads whole (also when each half sits in its own `--`
  comment). A table line that still cannot be read whole keeps the columns it has before the damage (or its known
  columns, when a label fits no layout); one that yields nothing, a time line that cannot be read and a count beyond
  BIGINT are skipped. Each is a warning (`line N: reason`); the rest of the file is read
  as if the line were intact. A file is refused (ParseError, at its first damaged line if it has one) only when
  nothing in it reads. `parse` returns records.ParsedRecords: the warnings reach ParsedFile.warnings.
- `language` is the code of the vocabulary the line matched (LANGUAGES).
- Reading: a file prints a few table-line layouts hundreds of times. A line as a vocabulary prints it is read by that
  printed layout (`_PRINTED_LAYOUTS`, patterns built once from VOCABULARIES); another is read label by label (the
  robust reading above), and the parse then keeps that line as a pattern (`_Layout`: its text, with the name and each
  count a group). Lines that match a kept layout in full are read by it, which gives what the robust reading gives;
  runs of such lines are read without the per-line dispatch. Nothing is kept from one parse to the next.

LANGUAGES: where each vocabulary's texts come from. "Capture" is real output pasted into a public file; the other
sources are not captures. Where a layout has no capture the column-order rule above still reads its lines when a label
differs. GitHub sources read `owner/repo path @ commit`; "(search)" marks a capture found by exact-string search over
public GitHub files whose repository the search index did not name.

- en (English). 2005-2016 table lines, time blocks, `Msg 207, Level 16, ...`: capture, corpus
  jorriss-sampleoutput-en.txt. 2019+ lines with page-server columns and `Table 'X'. Segment reads 1, segment skipped
  0.`: capture, SKubaMX/otus-mssql-mskubenko `HW18-optimize/SQLQuery_1.sql` @ 3003d65be76f6a0947b34547bd15073550cdd07e
  (Azure Data Studio output as `--` comments), and corpus jorriss-test-sql2016-columnstore-segment-reads.txt.
- de (German). 2019+ `Tabelle: "X". Anzahl von Überprüfungen: 1, ...`, `SQL Server-Ausführungszeiten:`, `, CPU-Zeit =
  ...`: capture, corpus ppedv-de-2019-format-in-tsql-comments-cp1252.sql. The order before 2012, `t2-Tabelle.
  Scananzahl 1, logische Lesevorgänge 20001, ...`: capture (search; two ppedvAG course scripts, one in a `/* */`
  block). `Meldung 208, Ebene 16, Status 1, Zeile 5`: capture (search, ppedvAG). `Tabelle 'X'. Scananzahl ...`
  (2012-2017) and the compile header: none found.
- fr (French). ` SQL Server – Temps d'exécution : Temps UC = 858 ms, temps écoulé = 864 ms.` (an en dash) and `(1570
  ligne(s) affectée(s))`: capture (search; a .sql file with output in `/* */`). `Msg 12800, Niveau 16, État 1, Ligne
  2`: Microsoft's French docs. Table lines and the compile header: none found.
- es (Spanish). 2005-2016 lines and time blocks: capture, corpus jorriss-sampleoutput-es.txt. 2019+ labels (page
  server `lecturas de servidor de páginas`, LOB `de línea de negocio`) and segment labels: BrentOzarULTD/
  StatisticsParserExtension `source/StatisticsParser.Core/Parsing/ParserLanguage.cs` @
  c20867a1b06d3258fe7374bd195f5408e7bd2f3a, a parser's label list (no capture). `Mens. 207, Nivel 16, Estado 1, Línea
  12`: capture (search); `Mensaje 207, nivel 16, ...`: Microsoft's Spanish docs.
- it (Italian). 2019+ lines (with a real typo), time blocks, `Messaggio 207, livello 16, stato 1, riga 1`: capture,
  corpus jorriss-sampleoutput-it.txt. Segment labels: StatisticsParserExtension (as es). 2005-2016 lines: none found
  (the 2019+ wording without the page-server columns).
- pt (Portuguese, Brazil). 2005-2016 `Tabela 'CLUSTERED_DEMO'. Número de verificações 5, leituras lógicas 27330, ...,
  leituras read-ahead lob 0.` and ` Tempos de Execução do SQL Server:` / ` Tempo de CPU = 41687 ms, tempo decorrido =
  11364 ms.`: capture (search); `Tabela 'Invoices'. Contagem de verificações 1, leituras lógicas 166, ...`: capture
  (search, another file). 2019+ lines, the compile header and the error header: none found.
- ru (Russian). `Таблица "OrderLines". Число просмотров 4, логических чтений 0, ...`, `Таблица "OrderLines". Считано
  сегментов 2, пропущено 0.`, both time headers and lines, `(затронуто строк: 3619)`: capture,
  kalekinata/otus-mssql-2020-06 `HW15-hint's/Task.sql` @ cd91db9e691dafefb08fd7a8d52d9a285c82b6c4 (in a `/* */`
  block). `Сообщение 3013, уровень 16, состояние 1, строка 84`: capture (search). 2019+ lines: none found.
- ja (Japanese). None found. Labels from Microsoft's Japanese SET STATISTICS IO docs (`論理読み取り数`,
  `先行読み取り数`, ...); `スキャン カウント`, `先読み読み取り数` and ` SQL Server 実行時間:` / `CPU 時間 = 172
  ミリ秒、経過時間 = 61 ミリ秒。` from a tutorial's example that may not be a capture.
- ko (Korean). `테이블 'Sales'. 검색 수 1, 논리적 읽기 수 584, ...` and `(1개 행이 영향을 받음)`: capture (search; a
  .sql file, output in `--` comments). The SQL 2000 order `'Emp' 테이블. 스캔 수 1, 논리적 읽기 수 2, ...` and `SQL
  Server 실행 시간 : CPU 시간 = 0ms, 경과 시간 = 0ms.`: capture in a Korean blog post (search). 2019+ lines, compile
  and error headers: none found.
- zh-Hans (Chinese, Simplified). `表 'Orders'。扫描计数 1，逻辑读取 25002 次，...` with ` SQL Server 执行时间:` /
  `CPU 时间 = 719 毫秒，占用时间 = 10188 毫秒。`; SQL 2000 `表 'Employees'。扫描计数 1，逻辑读 1 次，...`, `SQL
  Server 分析和编译时间:`, `（所影响的行数为 1 行）`: captures (search; two sets of notes). 2019+ lines and the
  error header: none found.
- zh-Hant (Chinese, Traditional). 2019+ `資料表 'tbTest'。掃描計數 12，邏輯讀取 0，...，LOB 頁面伺服器讀取前讀取
  0。`, `資料表 'tbTest'。區段會讀取 68，略過區段 41。`, ` SQL Server 執行次數: ` / `，CPU 時間 = 982 ms，經過時間 =
  3760 ms。`, `(1 個資料列受到影響)`: capture (search; Taiwanese course scripts). 2005-2016 lines (the 2019+ wording
  without page-server columns), compile and error headers: none found.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from itertools import chain, islice
from operator import itemgetter
from typing import TypeVar

from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats._common import (
    GROUPED_INT,
    first_content_line,
    join_wrapped,
    read_grouped_int,
    truncated,
    uncomment_sql,
)
from kneepoint.ingest.records import ParsedRecords, QueryIoRecord, QueryTimeRecord, add_line_warning

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
# Errors of this severity or more failed their statement; below it SQL Server only informs.
FAILING_SEVERITY = 11


@dataclass(frozen=True, slots=True)
class IoLineForm:
    """How one layout of the table line is printed: `prefix` (with `{}` for the table name; the name may come first),
    then the pairs `label value_sep value unit` joined by `pair_sep`, then `end`. `labels` follow the layout's field
    order; `units` (when given, one per label) follow the values (Chinese `逻辑读取 25002 次`)."""

    prefix: str
    labels: tuple[str, ...]
    value_sep: str = " "
    pair_sep: str = ", "
    end: str = "."
    units: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """One language's SET STATISTICS texts. The first header of each kind and the line templates are what the
    writer (ingest/synth/sqlstats.py) prints; every form, label, header and alias is what the parser accepts."""

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
    # SSMS's error header, with {number}, {level}, {state} and {line}: its words are what the parser looks for
    error_header: str
    aliases: dict[str, str] = field(default_factory=dict)  # other printed labels -> field
    # Other printed forms of a table line: older word orders and wordings, with the columns each prints.
    other_forms: tuple[tuple[IoLineForm, tuple[str, ...]], ...] = ()


EN_2008 = (
    "Scan count",
    "logical reads",
    "physical reads",
    "read-ahead reads",
    "lob logical reads",
    "lob physical reads",
    "lob read-ahead reads",
)
EN_2019 = (
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
)
_ZH_HANS_UNITS = ("",) + (" 次",) * 10  # the scan count has none

# One entry per language; the sources of each text are in the module docstring (LANGUAGES). Texts with no source
# there were written from SQL Server's localized message catalog as remembered, not checked against a capture; the
# column-order rule reads those tables' lines even where a label differs.
VOCABULARIES: dict[str, Vocabulary] = {
    "en": Vocabulary(
        code="en",
        io_2008=IoLineForm("Table '{}'. ", EN_2008),
        io_2019=IoLineForm("Table '{}'. ", EN_2019),
        io_segment=IoLineForm("Table '{}'. ", ("Segment reads", "segment skipped")),
        compile_headers=("SQL Server parse and compile time:",),
        execution_headers=("SQL Server Execution Times:",),
        compile_line="   CPU time = {cpu} ms, elapsed time = {elapsed} ms.",
        execution_line="   CPU time = {cpu} ms,  elapsed time = {elapsed} ms.",
        row_affected="({n} row affected)",
        rows_affected="({n} rows affected)",
        error_header="Msg {number}, Level {level}, State {state}, Line {line}",
    ),
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
        error_header="Meldung {number}, Ebene {level}, Status {state}, Zeile {line}",
        aliases={"Read-Ahead-LOB-Lesevorgänge": "lob_read_ahead_reads"},
        other_forms=(
            (
                IoLineForm(
                    "{}-Tabelle. ",
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
                FIELDS_2008,
            ),
        ),
    ),
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
        compile_headers=(
            "Temps d'analyse et de compilation de SQL Server :",
            "SQL Server – Temps d'analyse et de compilation :",
        ),
        execution_headers=(
            "SQL Server – Temps d'exécution :",
            "Temps d'exécution de SQL Server :",
            "SQL Server \\endash Temps d'exécution :",  # as a copy through RTF leaves the dash (a capture)
        ),
        compile_line="   Temps UC = {cpu} ms, temps écoulé = {elapsed} ms.",
        execution_line="   Temps UC = {cpu} ms, temps écoulé = {elapsed} ms.",
        row_affected="({n} ligne affectée)",
        rows_affected="({n} lignes affectées)",
        error_header="Msg {number}, Niveau {level}, État {state}, Ligne {line}",
        aliases={
            "lectures logiques de données LOB": "lob_logical_reads",
            "lectures physiques de données LOB": "lob_physical_reads",
            "lectures anticipées de données LOB": "lob_read_ahead_reads",
        },
    ),
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
                "Número de examen",
                "lecturas lógicas",
                "lecturas físicas",
                "lecturas de servidor de páginas",
                "lecturas anticipadas",
                "lecturas anticipadas de servidor de páginas",
                "lecturas lógicas de línea de negocio",
                "lecturas físicas de línea de negocio",
                "lecturas de servidor de páginas de línea de negocio",
                "lecturas anticipadas de línea de negocio",
                "lecturas anticipadas de servidor de páginas de línea de negocio",
            ),
        ),
        io_segment=IoLineForm("Tabla '{}'. ", ("Lecturas de segmento", "segmento saltado")),
        compile_headers=("Tiempo de análisis y compilación de SQL Server:",),
        execution_headers=("Tiempos de ejecución de SQL Server:", "Tiempo de ejecución de SQL Server:"),
        compile_line="   Tiempo de CPU = {cpu} ms, tiempo transcurrido = {elapsed} ms.",
        execution_line="   Tiempo de CPU = {cpu} ms, tiempo transcurrido = {elapsed} ms.",
        row_affected="({n} fila afectada)",
        rows_affected="({n} filas afectadas)",
        error_header="Mens. {number}, Nivel {level}, Estado {state}, Línea {line}",
        aliases={
            "lecturas del servidor de páginas": "page_server_reads",
            "lecturas anticipadas del servidor de páginas": "page_server_read_ahead_reads",
            "lecturas del servidor de páginas de LOB": "lob_page_server_reads",
            "lecturas anticipadas del servidor de páginas de LOB": "lob_page_server_read_ahead_reads",
            "lecturas de servidor de páginas de LOB": "lob_page_server_reads",
            "lecturas anticipadas de servidor de páginas de LOB": "lob_page_server_read_ahead_reads",
        },
    ),
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
        io_segment=IoLineForm("Tabella '{}'. ", ("Letture segmento", "segmento saltato")),
        compile_headers=("Tempo di analisi e compilazione SQL Server:",),
        execution_headers=("Tempo di esecuzione SQL Server:", "Tempi di esecuzione SQL Server:"),
        compile_line="   tempo di CPU = {cpu} ms, tempo trascorso = {elapsed} ms.",
        execution_line=" tempo di CPU = {cpu} ms, tempo trascorso = {elapsed} ms.",
        row_affected="({n} riga interessata)",
        rows_affected="({n} righe interessate)",
        error_header="Messaggio {number}, livello {level}, stato {state}, riga {line}",
        aliases={"letture read-ahead LOB": "lob_read_ahead_reads"},
    ),
    "pt": Vocabulary(
        code="pt",
        io_2008=IoLineForm(
            "Tabela '{}'. ",
            (
                "Número de verificações",
                "leituras lógicas",
                "leituras físicas",
                "leituras read-ahead",
                "leituras lógicas lob",
                "leituras físicas lob",
                "leituras read-ahead lob",
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
        compile_line=" Tempo de CPU = {cpu} ms, tempo decorrido = {elapsed} ms.",
        execution_line=" Tempo de CPU = {cpu} ms, tempo decorrido = {elapsed} ms.",
        row_affected="({n} linha afetada)",
        rows_affected="({n} linhas afetadas)",
        error_header="Msg {number}, Nível {level}, Estado {state}, Linha {line}",
        aliases={
            "Contagem de varredura": "scan_count",
            "leituras antecipadas": "read_ahead_reads",
            "leituras lógicas de LOB": "lob_logical_reads",
            "leituras físicas de LOB": "lob_physical_reads",
            "leituras antecipadas de LOB": "lob_read_ahead_reads",
        },
    ),
    "ru": Vocabulary(
        code="ru",
        io_2008=IoLineForm(
            'Таблица "{}". ',
            (
                "Число просмотров",
                "логических чтений",
                "физических чтений",
                "упреждающих чтений",
                "lob логических чтений",
                "lob физических чтений",
                "lob упреждающих чтений",
            ),
        ),
        io_2019=IoLineForm(
            'Таблица "{}". ',
            (
                "Число просмотров",
                "логических чтений",
                "физических чтений",
                "чтений сервера страниц",
                "упреждающих чтений",
                "упреждающих чтений сервера страниц",
                "lob логических чтений",
                "lob физических чтений",
                "lob чтений сервера страниц",
                "lob упреждающих чтений",
                "lob упреждающих чтений сервера страниц",
            ),
        ),
        io_segment=IoLineForm('Таблица "{}". ', ("Считано сегментов", "пропущено")),
        compile_headers=("Время синтаксического анализа и компиляции SQL Server:",),
        execution_headers=("Время работы SQL Server:",),
        compile_line=" время ЦП = {cpu} мс, истекшее время = {elapsed} мс.",
        execution_line="   Время ЦП = {cpu} мс, затраченное время = {elapsed} мс.",
        row_affected="(затронута одна строка)",
        rows_affected="(затронуто строк: {n})",
        error_header="Сообщение {number}, уровень {level}, состояние {state}, строка {line}",
    ),
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
        compile_headers=("SQL Server 解析とコンパイルの時間:", "SQL Server の解析とコンパイルの時間:"),
        execution_headers=("SQL Server 実行時間:",),
        compile_line="   CPU 時間 = {cpu} ミリ秒、経過時間 = {elapsed} ミリ秒。",
        execution_line="   CPU 時間 = {cpu} ミリ秒、経過時間 = {elapsed} ミリ秒。",
        row_affected="({n} 行処理されました)",
        rows_affected="({n} 行処理されました)",
        error_header="メッセージ {number}、レベル {level}、状態 {state}、行 {line}",
        aliases={
            "スキャン カウント": "scan_count",
            "先読み読み取り数": "read_ahead_reads",
            "LOB 先読み読み取り数": "lob_read_ahead_reads",
        },
    ),
    "ko": Vocabulary(
        code="ko",
        io_2008=IoLineForm(
            "테이블 '{}'. ",
            (
                "검색 수",
                "논리적 읽기 수",
                "물리적 읽기 수",
                "미리 읽기 수",
                "LOB 논리적 읽기 수",
                "LOB 물리적 읽기 수",
                "LOB 미리 읽기 수",
            ),
        ),
        io_2019=IoLineForm(
            "테이블 '{}'. ",
            (
                "검색 수",
                "논리적 읽기 수",
                "물리적 읽기 수",
                "페이지 서버 읽기 수",
                "미리 읽기 수",
                "페이지 서버 미리 읽기 수",
                "LOB 논리적 읽기 수",
                "LOB 물리적 읽기 수",
                "LOB 페이지 서버 읽기 수",
                "LOB 미리 읽기 수",
                "LOB 페이지 서버 미리 읽기 수",
            ),
        ),
        io_segment=None,
        compile_headers=("SQL Server 구문 분석 및 컴파일 시간:",),
        execution_headers=("SQL Server 실행 시간:",),
        compile_line="   CPU 시간 = {cpu}ms, 경과 시간 = {elapsed}ms.",
        execution_line="   CPU 시간 = {cpu}ms, 경과 시간 = {elapsed}ms.",
        row_affected="({n}개 행이 영향을 받음)",
        rows_affected="({n}개 행이 영향을 받음)",
        error_header="메시지 {number}, 수준 {level}, 상태 {state}, 줄 {line}",
        other_forms=(
            (IoLineForm("'{}' 테이블. ", ("스캔 수", "논리적 읽기 수", "물리적 읽기 수", "미리 읽기 수")), FIELDS_2000),
        ),
    ),
    "zh-Hans": Vocabulary(
        code="zh-Hans",
        io_2008=IoLineForm(
            "表 '{}'。",
            ("扫描计数", "逻辑读取", "物理读取", "预读", "lob 逻辑读取", "lob 物理读取", "lob 预读"),
            pair_sep="，",
            end="。",
            units=_ZH_HANS_UNITS[:7],
        ),
        io_2019=IoLineForm(
            "表 '{}'。",
            (
                "扫描计数",
                "逻辑读取",
                "物理读取",
                "页面服务器读取",
                "预读读取",
                "页面服务器预读读取",
                "lob 逻辑读取",
                "lob 物理读取",
                "lob 页面服务器读取",
                "lob 预读读取",
                "lob 页面服务器预读读取",
            ),
            pair_sep="，",
            end="。",
            units=_ZH_HANS_UNITS,
        ),
        io_segment=None,
        compile_headers=("SQL Server 分析和编译时间:",),
        execution_headers=("SQL Server 执行时间:",),
        compile_line="   CPU 时间 = {cpu} 毫秒，占用时间 = {elapsed} 毫秒。",
        execution_line="   CPU 时间 = {cpu} 毫秒，占用时间 = {elapsed} 毫秒。",
        row_affected="({n} 行受影响)",
        rows_affected="({n} 行受影响)",
        error_header="消息 {number}，级别 {level}，状态 {state}，第 {line} 行",
        aliases={"逻辑读": "logical_reads", "物理读": "physical_reads"},
    ),
    "zh-Hant": Vocabulary(
        code="zh-Hant",
        io_2008=IoLineForm(
            "資料表 '{}'。",
            ("掃描計數", "邏輯讀取", "實體讀取", "讀取前讀取", "LOB 邏輯讀取", "LOB 實體讀取", "LOB 讀取前讀取"),
            pair_sep="，",
            end="。",
        ),
        io_2019=IoLineForm(
            "資料表 '{}'。",
            (
                "掃描計數",
                "邏輯讀取",
                "實體讀取",
                "頁面伺服器讀取",
                "讀取前讀取",
                "頁面伺服器讀取前讀取",
                "LOB 邏輯讀取",
                "LOB 實體讀取",
                "LOB 頁面伺服器讀取",
                "LOB 讀取前讀取",
                "LOB 頁面伺服器讀取前讀取",
            ),
            pair_sep="，",
            end="。",
        ),
        io_segment=IoLineForm("資料表 '{}'。", ("區段會讀取", "略過區段"), pair_sep="，", end="。"),
        compile_headers=("SQL Server 剖析與編譯時間:",),
        execution_headers=("SQL Server 執行次數:",),
        compile_line="，CPU 時間 = {cpu} ms，經過時間 = {elapsed} ms。",
        execution_line="，CPU 時間 = {cpu} ms，經過時間 = {elapsed} ms。",
        row_affected="({n} 個資料列受到影響)",
        rows_affected="({n} 個資料列受到影響)",
        error_header="訊息 {number}，層級 {level}，狀態 {state}，行 {line}",
    ),
}


def _norm(label: str) -> str:
    """Labels compare without case, runs of spaces or typographic apostrophes."""
    return " ".join(label.replace("\u2019", "'").split()).casefold()


def _form_word(prefix: str) -> tuple[str, bool]:
    """The table word of a printed form and whether the name comes first (`{}-Tabelle. `, `'{}' 테이블. `)."""
    before, after = prefix.split("{}")
    if not before.strip(" '\""):
        return after.strip(" .。'\""), True
    return re.split(r"['\"]", before, maxsplit=1)[0].strip(" :"), False


def _forms(vocab: Vocabulary) -> list[tuple[IoLineForm, tuple[str, ...]]]:
    """Every printed form of a vocabulary's table lines with the columns it prints, the writer's first."""
    forms = [(vocab.io_2019, FIELDS_2019), (vocab.io_2008, FIELDS_2008), (vocab.io_2008, FIELDS_2000)]
    if vocab.io_segment is not None:
        forms.append((vocab.io_segment, FIELDS_SEGMENT))
    return forms + list(vocab.other_forms)


@dataclass(frozen=True, slots=True)
class _Tables:
    labels: dict[str, dict[str, str]]  # language -> normalized label -> field
    table_words: dict[str, list[str]]  # as printed before the name -> languages using it
    suffix_words: dict[str, list[str]]  # as printed after the name -> languages using it
    headers: dict[str, tuple[str, str]]  # as printed, without the colon -> (language, phase)
    error_words: tuple[list[str], list[str], list[str]]  # message, severity and state words of the error headers


def _build_tables() -> _Tables:
    labels: dict[str, dict[str, str]] = {}
    table_words: dict[str, list[str]] = {}
    suffix_words: dict[str, list[str]] = {}
    headers: dict[str, tuple[str, str]] = {}
    error_words: tuple[list[str], list[str], list[str]] = ([], [], [])
    for code, vocab in VOCABULARIES.items():
        known: dict[str, str] = {}
        for form, fields_ in _forms(vocab):
            for label, name in zip(form.labels, fields_, strict=False):
                known[_norm(label)] = name
            word, name_first = _form_word(form.prefix)
            users = (suffix_words if name_first else table_words).setdefault(word, [])
            if code not in users:
                users.append(code)
        known.update({_norm(label): name for label, name in vocab.aliases.items()})
        labels[code] = known
        for phase, texts in (("compile", vocab.compile_headers), ("execution", vocab.execution_headers)):
            for text in texts:
                headers[text.rstrip(" :")] = (code, phase)
        for m in re.finditer(r"([^\s{},，、]+)\s*\{(number|level|state)\}", vocab.error_header):
            words = error_words[("number", "level", "state").index(m[2])]
            if m[1] not in words:
                words.append(m[1])
    error_words[0].append("Mensaje")  # Spanish, as Microsoft's docs and later SSMS print it
    return _Tables(labels, table_words, suffix_words, headers, error_words)


_TABLES = _build_tables()
_LABELS = _TABLES.labels
_TABLE_WORDS = _TABLES.table_words
_HEADERS = _TABLES.headers
_LANGUAGES_BY_WORD = {_norm(word): codes for word, codes in (*_TABLE_WORDS.items(), *_TABLES.suffix_words.items())}
_HEADER_BY_TEXT = {_norm(text): where for text, where in _HEADERS.items()}
_FIRST_FIELDS = frozenset({"scan_count", "segment_reads"})
# Every table line and time header starts with a table word or a header (`Table`, `Tabla`, ..., `SQL Server ...`,
# `Tiempo ...`): a line whose first letter is none of theirs is no record (matched without case, so other letters
# than ASCII ones are always tried). Name-first table lines are found by their table word (`_SUFFIX_WORDS`).
_FIRST_LETTERS = frozenset(text[0].casefold() for text in (*_TABLE_WORDS, *_HEADERS))
_SUFFIX_WORDS = tuple(_TABLES.suffix_words)

_QUOTES = "'\"\u2018\u2019\u201c\u201d\u201e"  # straight and typographic (a pasted line may have either)
_END_MARKS = ".。．"


def _alternation(texts: list[str]) -> str:
    """Longest first; any run of spaces matches any run of spaces, an apostrophe either apostrophe, a dash any dash."""
    escaped = (r"\s+".join(re.escape(word) for word in t.split()) for t in sorted(texts, key=len, reverse=True))
    return "|".join(e.replace("'", "['\u2019]").replace("–", "[-–—]") for e in escaped)


def _alternatives(entries: dict[str, _T]) -> list[tuple[re.Pattern[str], _T]]:
    """Each text's own pattern with its entry, in the order `_alternation` tries them."""
    return [(re.compile(_alternation([t]), re.IGNORECASE), entries[t]) for t in sorted(entries, key=len, reverse=True)]


def _entry(matched: str, by_norm: dict[str, _T], alternatives: list[tuple[re.Pattern[str], _T]]) -> _T:
    """The entry of the text an alternation matched: by its normalized form, or, where case folding differs from
    case-insensitive matching (`ı` and `İ` match `i` but do not fold to it; dashes), by trying the texts as it does."""
    found = by_norm.get(_norm(matched))
    if found is None:
        found = next(entry for pattern, entry in alternatives if pattern.fullmatch(matched))
    return found


_WORD_ALTERNATIVES = _alternatives({**_TABLE_WORDS, **_TABLES.suffix_words})
_HEADER_ALTERNATIVES = _alternatives(_HEADERS)


# Lines longer than this are not SET STATISTICS output (the longest, a 2019+ Italian line with a 128-character
# table name, is under 600); the bound keeps every match linear on damaged input.
_MAX_LINE = 2000
# A table line is `WORD 'NAME'. COLUMNS`: the head up to the opening quote, then the name, which ends at the last
# quote followed by `.` (`_table_line` finds it: a greedy `.+` would retry every character of the line). Or the name
# first: `NAME-Tabelle. COLUMNS`, `'NAME' 테이블. COLUMNS`.
_IO_HEAD = re.compile(r"(?P<word>" + _alternation(list(_TABLE_WORDS)) + rf")\s*:?\s*[{_QUOTES}]", re.IGNORECASE)
_SUFFIX_HEAD = re.compile(
    r"(?P<word>" + _alternation(list(_SUFFIX_WORDS)) + rf")\s*[{_END_MARKS}]\s*(?=\S)", re.IGNORECASE
)  # searched for: the name is what comes before it
_NAME_CLOSE = re.compile(rf"[{_QUOTES}]\s*[{_END_MARKS}]\s*(?=\S)")
# Columns are apart by `, ` (not the comma of a digit group: `1,026,872`), `，` or `、`.
_PAIR_SEP = re.compile(r"\s*(?:,(?![0-9]{3}(?![0-9]))|[，、])\s*")
_PAIR = re.compile(r"(?P<label>[^\d:=]*[^\d\s:=])\s*:?\s*(?P<value>" + GROUPED_INT + r")(?:\s*次)?")
_DIGIT_RUN = re.compile(r"(\d+)")
_HEADER = re.compile(r"(?P<header>" + _alternation(list(_HEADERS)) + r")\s*:?(?P<rest>.*)", re.IGNORECASE)
# `CPU time = 108 ms, elapsed time = 108 ms.` in every language: CPU first, then elapsed, in ms.
_TIME_VALUES = re.compile(r"[^=\d]+=\s*(" + GROUPED_INT + r")[^=\d]*=\s*(" + GROUPED_INT + r")[^=\d]*")
_PLAIN_TIME_VALUES = re.compile(r"[^=\d]+=\s*(\d{1,15})[^=\d]*=\s*(\d{1,15})[^=\d]*")
# `Msg 207, Level 16, State 1, Line 3` (SSMS prints it in its own language; older ones put `Server: ` first).
_ERROR = re.compile(
    r"(?:\w+\s*:\s*)?(?:"
    + "|".join(re.escape(w.rstrip(".")) + r"\.?" for w in _TABLES.error_words[0])
    + r")\s*(?P<number>[0-9]{1,9})\s*[,，、]\s*(?:"
    + "|".join(map(re.escape, _TABLES.error_words[1]))
    + r")\s*(?P<severity>[0-9]{1,3})\s*[,，、]\s*(?:"
    + "|".join(map(re.escape, _TABLES.error_words[2]))
    + r")\s*[0-9]",
    re.IGNORECASE,
)
_MARK_FIRST = frozenset("-/*vV")  # the first characters of a comment mark or `VERBOSE: `
_FIRST_CHARS = frozenset(c for letter in _FIRST_LETTERS if letter.isascii() for c in (letter, letter.upper()))
_NAME_FIRST = re.compile("|".join(map(re.escape, _SUFFIX_WORDS)))  # in a name-first table line
_UNSEEN = ("", "", "")  # a line `_Reader.headers` does not hold
_VERBOSE = re.compile(r"VERBOSE:\s", re.IGNORECASE)


def _unmark(line: str) -> str:
    """A stripped line without what surrounds output pasted into a script, notes or a log: the marks of a T-SQL
    comment, a `* ` continuing a block comment, a `- ` list item, PowerShell's `VERBOSE: `."""
    if line.startswith("--"):  # the usual case: a `--` comment around plain text
        line = line.lstrip("-").lstrip()
        if not line or (line[0] not in _MARK_FIRST and line[-1] != "/"):
            return line
    line = uncomment_sql(line)
    if line.startswith(("* ", "- ")) or line in ("*", "-"):  # a block comment's `*`, a list item's `-` (notes)
        line = line[1:].lstrip()
    if (m := _VERBOSE.match(line)) is not None:
        line = line[m.end() :].lstrip()
    return line


# --------------------------------------------------------------------------------------------- detection

_DETECT_CHARS = 1 << 19
# Detection matches its patterns at the start of candidate lines found by str.find (a MULTILINE `^` pattern would
# be tried at every character of a large file of another tool): a table line holds a quote or a name-first table
# word, a time header (not always on one line: its words may be apart) the lower-case literal every header contains.
_DETECT_LEAD = r"[ \t]*(?:(?:--+|/\*)[ \t]*|VERBOSE:[ \t]+)?"
_DETECT_IO = re.compile(
    _DETECT_LEAD + r"(?:" + _alternation(list(_TABLE_WORDS)) + rf")[ \t]*:?[ \t]*[{_QUOTES}]", re.IGNORECASE
)
_DETECT_HEADER = re.compile(_DETECT_LEAD + r"(?:" + _alternation(list(_HEADERS)) + r")[ \t]*:?", re.IGNORECASE)
_IO_ANCHORS = tuple(_QUOTES)  # _DETECT_IO ends at the quote that opens the name
# Table, Tabla, Tabella, Tabelle, Tabela, Таблица, テーブル, 테이블, 表, 資料表 (lower case, as found in head.lower())
_WORD_ANCHORS = tuple(sorted({word[:3].lower() for word in _TABLE_WORDS}))
_HEADER_ANCHORS = ("server",)  # every header names SQL Server; "sql" alone is in every SQLIO run header
# The last letters of the table words in either case (every table word is one word: tests check it). No other
# character matches these without case.
_WORD_ENDS = frozenset(c for word in _TABLE_WORDS for c in (word[-1].lower(), word[-1].upper()))
_MAX_CANDIDATES = 200  # lines detection reads as table lines at most: another tool's quoted lines cost no more


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
    starts = chain((m.start() for m in islice(matches, _MAX_CANDIDATES)), _name_first_starts(head))
    for start in starts:
        read = _read_table_line(_line_at(head, start), 1, None, -1)
        if read is None:
            continue
        if read.problem is None:
            io_lines += 1
        else:
            damaged += 1
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


def _name_first_starts(head: str) -> Iterator[int]:
    """Starts of the first lines holding a name-first table word (`-Tabelle`, `테이블`): rare in other tools' text."""
    for word in _SUFFIX_WORDS:
        for i in islice(_find_all(head, word), 8):
            yield head.rfind("\n", 0, i) + 1


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
    return any(_TIME_VALUES.fullmatch(_unmark(s.strip(" \t\r:"))) for s in following if len(s) <= _MAX_LINE)


def _line_at(text: str, pos: int) -> str:
    end = text.find("\n", pos)
    return _unmark(text[pos : end if end >= 0 else len(text)].strip())


# --------------------------------------------------------------------------------------------- reading


def parse(text: str) -> ParsedRecords:
    """The records of `text`, with its damaged lines as warnings (`line N: reason`); ParseError when nothing in it
    reads."""
    reader = _Reader(text.split("\n"))
    records = reader.read()
    if not any(isinstance(r, QueryIoRecord) or r.cpu_ms is not None for r in records):  # errors alone: no result
        if reader.damage is not None:
            number, reason = reader.damage
            raise ParseError(f"no SET STATISTICS IO or TIME output could be read: {reason}", number)
        raise ParseError(
            "no SET STATISTICS IO or TIME output found: no `Table '...'. Scan count ...` line and no "
            "`SQL Server Execution Times` block in a known language (" + ", ".join(VOCABULARIES) + ")",
            first_content_line(text),
        )
    return ParsedRecords(records, reader.warnings)


# Table-line layouts one parse learns, at most: a file prints a few, damaged input must not make it compile many.
_MAX_LAYOUTS = 8
# Lines a wrapped table or time line may continue on.
_MAX_CONTINUATIONS = 3


@dataclass(slots=True)
class _Layout:
    """A table line read before, as a pattern: its text before the name, the name (a group), the text after it,
    each count a group of at most 18 digits (so it fits a BIGINT). A line this matches in full has the same words,
    labels and separators as the line learned, so reading it the robust way gives the same language and columns
    (a label holds no digit; no quote after the name's closing one is followed by `. `)."""

    pattern: re.Pattern[str]
    fields: tuple[str, ...]  # of the counts, in the order printed
    language: str
    version: str | None
    arrange: itemgetter = field(init=False)  # (see `_arranger`)
    tail: tuple[str, str | None, str, None] = field(init=False)  # what `arrange` takes after the counts

    def __post_init__(self) -> None:
        self.arrange = _arranger(self.fields)
        self.tail = (TOOL, self.version, self.language, None)

    def record(self, index: int, number: int, m: re.Match[str]) -> QueryIoRecord:
        """The record of a line this layout matched in full."""
        groups = m.groups()
        return QueryIoRecord(*self.arrange((index, number, groups[0], *map(int, groups[1:]), *self.tail)))


# QueryIoRecord's fields but `record`, in the order the class declares them.
_RECORD_FIELDS = tuple(f.name for f in fields(QueryIoRecord) if f.name != "record")


def _arranger(counts: tuple[str, ...]) -> itemgetter:
    """What puts (statement_index, source_line, table_name, *counts in the order printed, tool, tool_version,
    language) into QueryIoRecord's arguments, by name, a column the line lacks None: records of the lines a layout
    reads (most of a file) are built positionally, at half the cost of keywords."""
    given = ("statement_index", "source_line", "table_name", *counts, "tool", "tool_version", "language")
    absent = len(given)  # `arrange` takes one more item: None
    return itemgetter(*(given.index(f) if f in given else absent for f in _RECORD_FIELDS))


@dataclass(slots=True)
class _TableRead:
    """What reading one table line gave."""

    record: QueryIoRecord | None  # None: nothing of the line could be read
    problem: str | None = None  # why it was read in part or not at all (a warning); None: read whole
    cut: bool = False  # it stops before its end mark: its rest may be on the next line
    layout: _Layout | None = None  # the printed layout that read it
    learn: tuple[tuple[str, int, int, int], tuple[str, ...]] | None = None  # (its `_table_line`, columns) to keep


@dataclass(slots=True)
class _Error:
    """An error that failed the statement being read."""

    number: int
    line: int
    position: int  # in the records: where its own record goes if no time block carries it
    carried: bool = False


@dataclass(slots=True)
class _Reader:
    """The records in file order, numbered into statements as they are read (rules in the module docstring).

    Records are made with the number of the statement being read; only a statement that no Execution Times block
    ends (cut by a compile block or the end of the file) is renumbered, by `_split_statements`."""

    lines: list[str]
    records: list[Record] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    damage: tuple[int, str] | None = None  # the first damaged line: where a file with no record is refused
    index: int = 0  # the number of the statement being read: records[start:]
    start: int = 0
    breaks: list[int] = field(default_factory=list)  # positions before which a line other than a record came
    pending: tuple[int, str, str] | None = None  # a time header waiting for its values: (line, language, phase)
    language: str | None = None  # the last table line's, to break ties between languages sharing a table word
    error: _Error | None = None  # the statement being read failed
    # A file repeats a few header lines and table-line layouts: each is read once. Layouts are kept per language of
    # the line before (it breaks ties), the last one used first.
    headers: dict[str, tuple[str, str, str] | None] = field(default_factory=dict)
    layouts: dict[str | None, list[_Layout]] = field(default_factory=dict)
    learned: int = 0

    def read(self) -> list[Record]:
        lines, records = self.lines, self.records
        count = len(lines)
        number = 0  # 1-based number of the line being read: lines[number] is the next one
        while number < count:
            line = lines[number].strip()
            number += 1
            if not line:
                continue
            if line[0] in _MARK_FIRST or line[-1] == "/":
                line = _unmark(line)
                if not line:
                    continue
            if self.pending is not None:
                number += self.time_line(line, number)
                continue
            # Most lines repeat the layout of the table line before: tried here as `table_line` tries it first.
            layouts = self.layouts.get(self.language)
            if layouts and len(line) <= _MAX_LINE and (m := layouts[0].pattern.fullmatch(line)) is not None:
                layout = layouts[0]
                records.append(layout.record(self.index, number, m))
                if layout.language != self.language:
                    self.language = layout.language
                    continue
                # The table lines right after it, as printed: a line the layout matches in full starts with a table
                # word and ends as a stripped line does, so the loop above would read it the same way.
                match, record, index = layout.pattern.fullmatch, layout.record, self.index
                while number < count and len(lines[number]) <= _MAX_LINE and (m := match(lines[number])) is not None:
                    number += 1
                    records.append(record(index, number, m))
                continue
            number += self.line(line, number)
        self.end_statement()
        return records

    def line(self, line: str, number: int) -> int:
        """Read a line that is no table line of the last layout: returns how many lines after it it took."""
        header = self.headers.get(line, _UNSEEN)  # read before: a header, or no table line nor header (None)
        if header is _UNSEEN:
            header = None
            first = line[0]
            if len(line) <= _MAX_LINE and (
                first in _FIRST_CHARS or not first.isascii() or _NAME_FIRST.search(line) is not None
            ):
                if (table := self.table_line(line, number)) is not None:
                    return self.keep_table_line(line, number, *table)
                header = self.header(line)
        if header is not None:
            return self.time_header(header, number)
        if (m := _ERROR.match(line)) is not None and int(m["severity"]) >= FAILING_SEVERITY:
            self.fail(int(m["number"]), number)
        if not self.breaks or self.breaks[-1] != len(self.records):  # a line other than a record came
            self.breaks.append(len(self.records))
        return 0

    def time_header(self, header: tuple[str, str, str], number: int) -> int:
        """A time header at line `number`: its values on the same line or the next ones; returns how many lines after
        it they took."""
        code, phase, rest = header
        if not rest:
            # The values follow, most often on the next line as printed: read here as the loop would read them.
            following = self.lines[number].strip() if number < len(self.lines) else ""
            if following and following[0] not in _MARK_FIRST and following[-1] != "/":
                if (values := _time_values(following)) is not None:
                    self.add_time(values, number, code, phase)
                    return 1
                self.pending = (number, code, phase)
                return 1 + self.time_line(following, number + 1)
            self.pending = (number, code, phase)
            return 0
        values, taken = self.values(rest, number)
        if values is not None:
            self.add_time(values, number, code, phase)
        elif "=" not in rest:
            self.pending = (number, code, phase)  # the values may follow
        return taken

    def warn(self, number: int, reason: str) -> None:
        if self.damage is None:
            self.damage = (number, reason)
        add_line_warning(self.warnings, number, reason)

    # -- time blocks

    def header(self, line: str) -> tuple[str, str, str] | None:
        """(language, phase, text after the header) of a time header line."""
        if line not in self.headers:
            m = _HEADER.fullmatch(line)
            if m is None:
                self.headers[line] = None
            else:
                code, phase = _entry(m["header"], _HEADER_BY_TEXT, _HEADER_ALTERNATIVES)
                self.headers[line] = (code, phase, m["rest"].strip())
        return self.headers[line]

    def time_line(self, line: str, number: int) -> int:
        """The line after a time header: its values, or a line that is read on its own (the header's values never
        came: it is skipped). Returns how many lines after it it took."""
        header_line, code, phase = self.pending  # type: ignore[misc]
        self.pending = None
        values, taken = self.values(line, number)
        if values is not None:
            self.add_time(values, header_line, code, phase)
            return taken
        return taken if "=" in line else self.line(line, number)

    def values(self, text: str, number: int) -> tuple[tuple[float, float] | None, int]:
        """The values of a time line (wrapped over the next lines, or damaged: a warning), and the lines after it
        they took."""
        values = _time_values(text)
        if values is not None or "=" not in text:
            return values, 0
        values, taken = self.continued(text, number, _time_values)
        if values is None:
            self.warn(number, f"time line after a SQL Server time header cannot be read: {text[:120]!r}")
        return values, taken

    def add_time(self, values: tuple[float, float], header_line: int, code: str, phase: str) -> None:
        if phase == "compile" and len(self.records) > self.start:
            # Compiling after reads: the statement read so far ended without Execution Times.
            self.end_statement()
        error = self.error
        self.records.append(
            QueryTimeRecord(
                statement_index=self.index,
                source_line=header_line,
                phase=phase,  # type: ignore[arg-type]
                cpu_ms=values[0],
                elapsed_ms=values[1],
                tool=TOOL,
                language=code,
                error_number=error.number if error is not None else None,
            )
        )
        if error is not None:
            error.carried = True
        if phase == "execution":
            self.index += 1
            self.start, self.breaks, self.error = len(self.records), [], None

    # -- table lines

    def table_line(self, line: str, number: int) -> tuple[_TableRead, int] | None:
        """How a table line reads, and how many lines after it its reading took (a wrapped line); None when the
        line is not one."""
        layouts = self.layouts.get(self.language, [])
        for layout in layouts:
            m = layout.pattern.fullmatch(line)
            if m is not None:
                if layout is not layouts[0]:
                    layouts.remove(layout)
                    layouts.insert(0, layout)
                return _TableRead(layout.record(self.index, number, m)), 0
        read = _read_table_line(line, number, self.language, self.index)
        if read is None:
            return None
        if read.cut:
            # A line wrapped over the next ones reads whole once joined.
            joined, taken = self.continued(line, number, lambda text: self.whole(text, number))
            if joined is not None:
                joined.learn = None  # a pattern of the joined text would match no printed line
                return joined, taken
        return read, 0

    def whole(self, text: str, number: int) -> _TableRead | None:
        read = _read_table_line(text, number, self.language, self.index)
        return read if read is not None and read.problem is None and not read.cut else None

    def keep_table_line(self, line: str, number: int, read: _TableRead, taken: int) -> int:
        """Keep what a table line read: its record, its layout, its warning; returns the lines after it it took."""
        if read.problem is not None:
            self.warn(number, read.problem)
        if read.record is None:
            return taken
        if self.learned < _MAX_LAYOUTS:  # (before the language changes: a layout is kept after the line before's)
            if read.layout is not None:
                self.keep(read.layout)
            elif read.learn is not None:
                self.learn(line, read)
        self.language = read.record.language
        self.records.append(read.record)
        return taken

    def learn(self, line: str, read: _TableRead) -> None:
        """Keep the layout of a table line just read the robust way, when the line reads back through it: each count
        one run of at most 18 digits (a longer one is read the robust way, which checks it fits a BIGINT)."""
        found, fields_ = read.learn  # type: ignore[misc]
        record = read.record
        assert record is not None and record.language is not None
        layout = _Layout(_layout_pattern(line, found), fields_, record.language, record.tool_version)
        if layout.pattern.groups != 1 + len(layout.fields) or layout.pattern.fullmatch(line) is None:
            return
        self.keep(layout)

    def keep(self, layout: _Layout) -> None:
        self.learned += 1
        # It reads as its language after a line of that language too: a tie between languages goes to the previous
        # line's, and the line it was made from was among the best.
        for previous in {self.language, layout.language}:
            self.layouts.setdefault(previous, []).insert(0, layout)

    def continued(self, line: str, number: int, read: Callable[[str], _R | None]) -> tuple[_R | None, int]:
        """`read` of a line wrapped over the next ones (blank lines between allowed, comment marks removed): the
        first joined text it reads, with how many lines after line `number` it took; (None, 0) when none reads."""
        text, taken = line, 0
        lines = self.lines
        for _ in range(_MAX_CONTINUATIONS):
            while number + taken < len(lines) and not lines[number + taken].strip():
                taken += 1
            if number + taken >= len(lines):
                break
            tail = lines[number + taken].strip()
            taken += 1
            tail = _unmark(tail) if tail[0] in _MARK_FIRST or tail[-1] == "/" else tail
            if not tail or len(text) + len(tail) > _MAX_LINE or _starts_record(tail):
                break
            for joined in join_wrapped(text, tail):
                if (done := read(joined)) is not None:
                    return done, taken
            text = text + " " + tail
        return None, 0

    # -- statements

    def fail(self, number: int, line: int) -> None:
        """An error failed the statement being read (the first error names it)."""
        if self.error is not None:
            return
        self.error = _Error(number, line, len(self.records))
        for rec in self.records[self.start :]:
            if isinstance(rec, QueryTimeRecord):
                rec.error_number = number
                self.error.carried = True

    def end_statement(self) -> None:
        """The statement being read ends without an Execution Times block (a compile block opens the next one, or
        the file ends): its error gets a record if no time block carried it; its runs of table lines are numbered."""
        error = self.error
        if error is not None and not error.carried:
            self.records.insert(
                error.position,
                QueryTimeRecord(
                    statement_index=self.index,
                    source_line=error.line,
                    phase="execution",
                    cpu_ms=None,
                    elapsed_ms=None,
                    tool=TOOL,
                    error_number=error.number,
                ),
            )
            self.breaks = [b + 1 if b > error.position else b for b in self.breaks]
        self.error = None
        if len(self.records) > self.start:
            self.index = _split_statements(self.records, self.start, self.breaks, self.index)
            self.start, self.breaks = len(self.records), []


_R = TypeVar("_R")


def _starts_record(line: str) -> bool:
    """Whether a line starts something of its own (a table line, a time header or its values, an error): no
    continuation of the line before."""
    return bool(
        _IO_HEAD.match(line) or _HEADER.match(line) or _ERROR.match(line) or _TIME_VALUES.fullmatch(line)
    ) or any(word in line for word in _SUFFIX_WORDS)


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


def _read_table_line(line: str, number: int, previous_language: str | None, index: int) -> _TableRead | None:
    """How one table line reads the robust way; None when the line is not one."""
    if len(line) > _MAX_LINE:
        return None
    found = _table_line(line)
    if found is None:
        return None
    word, start, end, pos = found
    # A line as a vocabulary prints it reads as the label-by-label reading below reads it (tests check it).
    for layout in _PRINTED_LAYOUTS.get(line[:start], ()):
        if m := layout.pattern.fullmatch(line):
            return _TableRead(layout.record(index, number, m), layout=layout)
    name = line[start:end]
    columns = _read_columns(word, name, line[pos:], previous_language)
    if columns is None:
        return None
    code, values, problem, cut = columns
    if not values:
        return _TableRead(None, problem, cut)
    record = _io_record(index, number, name, _version(values), code, values)
    learn = (found, tuple(values)) if problem is None and not cut else None
    return _TableRead(record, problem, cut, learn=learn)


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


def _time_values(line: str) -> tuple[float, float] | None:
    """(CPU ms, elapsed ms) of a time line."""
    if len(line) > _MAX_LINE:
        return None
    if (m := _PLAIN_TIME_VALUES.fullmatch(line)) is not None:  # as SQL Server prints them
        return float(m[1]), float(m[2])
    if (m := _TIME_VALUES.fullmatch(line)) is None:
        return None
    cpu, elapsed = read_grouped_int(m[1]), read_grouped_int(m[2])
    if cpu is None or elapsed is None:
        return None
    return float(cpu), float(elapsed)


def _table_line(line: str) -> tuple[str, int, int, int] | None:
    """(table word, where the name starts, where it ends, where the columns start) when `line` is shaped
    `WORD 'NAME'. COLUMNS` (the name ends at the last quote followed by `.` and more text) or `NAME-WORD. COLUMNS`."""
    head = _IO_HEAD.match(line)
    if head is not None:
        start = head.end()
        closes = list(_NAME_CLOSE.finditer(line, start + 1))  # the name cannot be empty
        if not closes:
            return None
        return head["word"], start, closes[-1].start(), closes[-1].end()
    head = _SUFFIX_HEAD.search(line)
    if head is None:
        return None
    start, end = 0, len(line[: head.start()].rstrip())
    if end - start >= 2 and line[start] in _QUOTES and line[end - 1] in _QUOTES:
        start, end = start + 1, end - 1
    if end <= start:
        return None
    return head["word"], start, end, head.end()


def _read_columns(
    word: str, name: str, rest: str, previous_language: str | None
) -> tuple[str, dict[str, int], str | None, bool] | None:
    """(language, the columns read, why not all could be (None: all were), whether the line stops before its end: it
    may go on on the next line) of a table line's text after the name, read pair by pair; None when the text is not
    a table line's."""
    candidates = _entry(word, _LANGUAGES_BY_WORD, _WORD_ALTERNATIVES)
    rest = rest.rstrip()
    marked = truncated(rest)
    if marked:
        rest = rest.rstrip(".…").rstrip()
    ended = not marked and rest[-1:] in _END_MARKS
    if ended:
        rest = rest[:-1].rstrip()
    parts = _PAIR_SEP.split(rest)
    trailing = len(parts) > 1 and not parts[-1]  # a separator last: the line goes on
    if trailing:
        parts.pop()
    pairs = [_PAIR.fullmatch(p) for p in parts]
    first = pairs[0]
    first_label = _norm(first["label"] if first is not None else parts[0].rstrip(" :"))
    first_known = any(_LABELS[c].get(first_label) in _FIRST_FIELDS for c in candidates)
    if not first_known and not (all(pairs) and len(pairs) in _POSITIONAL):
        return None  # a note that happens to start like a table line
    read = next((i for i, pm in enumerate(pairs) if pm is None), len(pairs))  # the pairs before the first damage
    labels = [pm["label"] for pm in pairs[:read] if pm is not None]
    normed = [_norm(label) for label in labels]
    code = _language(candidates, normed, previous_language)
    known = _LABELS[code]
    cut, problem = False, None
    if read < len(pairs) - 1:
        problem = f"table line for {name!r} damaged at {parts[read][:60]!r}"
    elif read == len(pairs) - 1 or marked or trailing or (not ended and len(pairs) not in _POSITIONAL):
        cut = True
        at = f" at {parts[read][:60]!r}" if read < len(pairs) else ""
        problem = f"table line for {name!r} cut off after {read} columns{at}"
    elif not ended:
        cut = True  # whole as it is, unless the next line turns out to go on with it
    fields_ = _fields(normed, known) if problem is None else None
    if fields_ is None:
        # Read in part: the columns whose labels are known (each once); the others stay null.
        if problem is None:
            unknown = [label for label, n in zip(labels, normed, strict=True) if n not in known]
            problem = (
                f"table line for {name!r}: {len(labels)} columns with labels not known in language {code!r} "
                f"({', '.join(repr(u) for u in unknown[:3]) or 'duplicates'}) fit no layout SQL Server prints"
            )
        fields_ = _known_once([known.get(n) for n in normed])
    values: dict[str, int] = {}
    printed = [pm["value"] for pm in pairs[:read] if pm is not None]  # (every pair before `read` matched)
    for column, text in zip(fields_, printed, strict=True):
        value = read_grouped_int(text)
        if value is None or value > _BIGINT_MAX:
            issue = f"table line for {name!r}: {text[:30]} is no 64-bit count"
            problem = f"{problem}; {issue}" if problem else issue
        elif column:
            values[column] = value
    if problem is not None:
        problem += f" (kept {', '.join(values) or 'nothing'})"
    return code, values, problem, cut


def _known_once(fields_: list[str | None]) -> tuple[str, ...]:
    """Each known field once, in place (a repeated or unknown label gives "": its count is not kept)."""
    seen: set[str] = set()
    out = []
    for f in fields_:
        out.append(f if f and f not in seen else "")
        if f:
            seen.add(f)
    return tuple(out)


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


def _printed_layouts() -> dict[str, list[_Layout]]:
    """Every vocabulary's table-line forms as SQL Server prints them (and the writer writes them), by their text before
    the name: a line read by one of these needs neither the label-by-label reading nor a pattern of its own."""
    count = r"(\d{1,18})"
    out: dict[str, list[_Layout]] = {}
    for code, vocab in VOCABULARIES.items():
        for form, fields_ in _forms(vocab):
            before, after = form.prefix.split("{}")
            units = form.units or ("",) * len(form.labels)
            pairs = re.escape(form.pair_sep).join(
                re.escape(label + form.value_sep) + count + re.escape(unit)
                for label, unit in zip(form.labels[: len(fields_)], units, strict=False)
            )
            pattern = re.compile(re.escape(before) + "(.+?)" + re.escape(after) + pairs + re.escape(form.end))
            out.setdefault(before, []).append(_Layout(pattern, fields_, code, _version(dict.fromkeys(fields_, 0))))
    return out


_PRINTED_LAYOUTS = _printed_layouts()
