"""Load-series tables as people keep them: an application's throughput and response time at N concurrent sessions,
users, threads, databases... as CSV/TSV, a Markdown table or a whitespace-aligned table pasted from Excel or a Word
document, its header in the user's language (English, Japanese, German, French, Spanish, Italian, Portuguese,
Russian, Chinese, Korean: the languages SQL Server is localized in).

Input (the shape of the source documents this project grew from: the same SQL from N sessions on one disk)::

    | sessions | session 1 (mm:ss.ss) | session 2 (mm:ss.ss) | mean response (mm:ss.ss) | throughput (queries/min) |
    |---------:|---------------------:|---------------------:|-------------------------:|-------------------------:|
    |        1 |             00:41.20 |                      |                 00:41.20 |                     1.46 |
    |        2 |             00:43.05 |             00:43.71 |                 00:43.38 |                     2.77 |

Records (normalized; one per data row)::

    {"record": "load", "tool": "table", "step_index": 0, "source_line": 3, "load_kind": "concurrent sessions",
     "load": 1.0, "throughput": 1.46, "throughput_unit": "queries/min", "response_avg_ms": 41200.0, ...}

Rules:
- A table starts at a header line whose cells name a load column (sessions, users, threads, concurrency,
  connections, virtual users, databases, instances, load, in any of the languages above) AND a throughput column
  (throughput, TPS, TPM, QPS, NOPM, "per minute", "/s"...) or a response-time column (response, elapsed, mean,
  average, latency...) or per-session elapsed columns (`Session 1`, `Session 2`, ...). A header naming I/O figures
  (IOPS, MB/s, bytes, queue depth, await, a Perfmon counter path) is a disk tool's table, never a load table: the
  detector leaves those files to their formats. Cells are split on `|` (Markdown), tabs, `;` or `,` (CSV, quotes
  honoured), else on runs of two or more spaces (a pasted table), else on any whitespace.
- Each following row whose load cell is a number is a step; a blank line or a line of text without a figure ends the
  table. A row whose load cell does not read (a `Total` or `Average` row, a damaged line) is skipped with a warning.
- `load_kind` from the load column's words: `concurrent sessions` (sessions, connections, concurrency, parallel,
  clients, load), `concurrent users`, `virtual users`, `threads` (threads, workers), `databases`, `instances`; a
  column given by the `load_column` option whose header names none of them: `load` (or the `load_kind` option).
- `throughput_unit` is what the header counts per what time: transactions (TPS, TPM, transactions), queries (QPS,
  QPM, queries), new orders (NOPM), batches, requests, executions; per second, minute or hour. A header naming a
  time but not what is counted (`throughput per minute`) counts transactions. A throughput header naming no time
  takes the `throughput_unit` option, else the file is refused with the options to give.
- Response times: `mm:ss.ss` and `h:mm:ss` values are read as such; plain numbers in the unit the header or the cell
  names (ms, s, min), else the `response_unit` option, else the file is refused. The mean response column is
  response_avg_ms; percentile columns (p50/median, p95, p99) the percentiles; where no mean column exists, the mean
  of the row's per-session elapsed times (blank cells left out) is response_avg_ms.
- A `duration` column (seconds or h:mm:ss) is duration_s, an `errors` column errors.
- Workloads: a workload column (`workload`, `query`, `test`, `scenario`...) labels each row; otherwise, in a file of
  several tables, the line above each table (a Markdown `## heading`, a `Query A:` line) labels its rows. A file's
  only table has no label (None: the file's one workload).
- Column mapping (`load_column`, `throughput_column`, `response_column`: a header cell's text or a 1-based column
  number; `parse(text, options)`, stored with the file): for tables whose header this reader does not recognize, or
  which have no header. A file without a recognizable header and without a mapping is refused, naming the line and
  the options to give.
- ParseError when no step is read.
"""

from __future__ import annotations

import csv
import math
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field

from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats._common import first_content_line, read_number
from kneepoint.ingest.records import LoadRecord, ParsedRecords, add_line_warning

NAME = "load_table"
TITLE = "Load table (sessions, throughput, response time)"
TOOLS = ("table",)
HOST_KEYS: frozenset[str] = frozenset()
USER_KEYS: frozenset[str] = frozenset()
RESULT_KEY_PREFIXES: tuple[str, ...] = ()
RESULT_KEYS: tuple[str, ...] = ()
# The parse options this format takes (the column mapping), stored with the file.
OPTIONS = ("load_column", "throughput_column", "response_column", "throughput_unit", "response_unit", "load_kind")

MAX_LINE = 4000
MAX_CELLS = 200
_HEAD = 65536
_HEAD_LINES = 400  # detect() looks for a header among this many lines of the head

# -- header words (matched on the cell in lower case, NFKC-normalized: full-width forms read as ASCII)

# load_kind -> its words, most specific first (`virtual users` before `users`).
_LOAD_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(words))
    for kind, words in (
        (
            "virtual users",
            r"virtual\s*users?|\bv-?users?\b|\bvus?\b|仮想ユーザー?|虚拟用户|虛擬使用者|가상\s*사용자|virtuelle\s+benutzer"
            r"|utilisateurs\s+virtuels|usuarios\s+virtuales|utenti\s+virtuali|usuários\s+virtuais|виртуальн\w*\s+пользоват",
        ),
        (
            "databases",
            r"databases?|\bdbs\b|datenbanken|bases?\s+de\s+(?:données|datos|dados)|bancos?\s+de\s+dados|баз\w*\s+данных"
            r"|データベース|数据库|資料庫|데이터베이스",
        ),
        (
            "instances",
            r"instances?|instanzen|instancias|istanze|instâncias|экземпляр|インスタンス|实例|執行個體|인스턴스",
        ),
        ("threads", r"threads?|workers?|subprocesos|hilos|スレッド|线程|執行緒|스레드|поток"),
        (
            "concurrent users",
            r"users?\b|benutzer|utilisateurs|usuarios|utenti|usuários|utilizadores|пользоват|ユーザー?|用户|使用者|사용자",
        ),
        (
            "concurrent sessions",
            r"sessions?|sitzung|sesion|sesión|sessioni|sessões|sessão|сеанс|сесси|セッション|会话|會話|工作階段|세션"
            r"|connections?|verbindungen|connexions|conexiones|connessioni|conexões|подключени|соединени|接続|连接|連線|연결"
            r"|concurren|parallel|gleichzeitig|simultan|concorren|параллел|одновремен|同時|多重度|并发|並行|並發|동시"
            r"|clients?\b|\bdop\b|\bload\b|\blast\b|\bcharge\b|\bcarga\b|\bcarico\b|нагрузк|負荷|负载|負載|부하",
        ),
    )
)
# Literal parts of the load words (lower case), for detect() to find candidate header lines with str.find.
_LOAD_STEMS = (
    "session", "thread", "user", "concurren", "connection", "client", "parallel", "load", "databas", "instanc",
    "worker", "vu", "dop", "dbs", "sitzung", "benutzer", "verbindung", "gleichzeitig", "datenbank", "instanz", "last",
    "utilisateur", "connexion", "simultan", "charge", "données", "sesion", "sesión", "usuario", "conexi", "subproceso",
    "hilo", "datos", "carga", "sessõ", "sessão", "usuári", "utilizador", "conexõ", "dados", "utent", "connession",
    "istanz", "concorr", "carico", "сеанс", "сесси", "поток", "пользоват", "параллел", "одновремен", "подключ",
    "соедин", "данных", "экземпляр", "нагрузк", "セッション", "スレッド", "ユーザ", "同時", "多重度", "並列", "接続",
    "データベース", "インスタンス", "負荷", "仮想", "会话", "會話", "工作階段", "线程", "執行緒", "用户", "使用者",
    "并发", "並行", "並發", "连接", "連線", "数据库", "資料庫", "实例", "執行個體", "负载", "負載", "虚拟", "虛擬",
    "세션", "스레드", "사용자", "동시", "연결", "데이터베이스", "인스턴스", "부하", "가상",
)  # fmt: skip
# Literal parts of the throughput and response words: a candidate header line holds one of them.
_FIGURE_STEMS = (
    "throughput", "tp", "qp", "nopm", "/", "per ", "resp", "laten", "elapsed", "mean", "av", "durchsatz", "antwort",
    "reaktion", "mittel", "verstrichen", "durchschnitt", "débit", "réponse", "écoulé", "moy", "rendimiento",
    "productividad", "respuesta", "transcurrido", "medi", "promedio", "velocit", "risposta", "trascorso", "vazão",
    "taxa", "resposta", "decorrido", "пропускн", "отклик", "ответ", "затрачен", "истекш", "средн", "スループット",
    "処理量", "応答", "レスポンス", "経過", "平均", "実行時間", "吞吐量", "輸送量", "响应", "回應", "回应", "已用时间",
    "占用时间", "經過", "처리량", "응답", "경과", "평균", "pro ", "par ", "por ", "al ", "в ", "毎", "每", "당",
    "session", "sitzung", "sesión", "sessione", "sessão", "сеанс", "сесси", "セッション", "会话", "會話", "세션",
    "user", "benutzer", "utilisateur", "usuario", "utente", "usuário", "пользоват", "ユーザ", "用户", "使用者",
    "사용자", "thread", "スレッド", "线程", "스레드",
)  # fmt: skip
_DETECT_HEAD = 16384  # a load table's header is near the top of its file
_DETECT_LINES = 64  # candidate header lines read at most
# A per-session column: a session (user, thread) word and its number, `Session 1`, `セッション2`.
_PER_SESSION = re.compile(
    r"^(?:elapsed\s*)?(?:sessions?|sitzung|session|sesión|sessione|sessão|сеанс|сессия|セッション|会话|會話|세션"
    r"|users?|benutzer|utilisateur|usuario|utente|usuário|пользователь|ユーザー?|用户|使用者|사용자"
    r"|threads?|スレッド|线程|스레드|vuser|vu)\s*(?:#|no\.?|nr\.?|n°|№)?\s*(?P<n>\d{1,4})(?:\s*\(.*\))?$"
)
_WORKLOAD = re.compile(
    r"^(?:workload|query|test|scenario|series|label|name|benchmark|config|configuration|case|procedure|statement"
    r"|ワークロード|クエリ|テスト|シナリオ|arbeitslast|abfrage|charge de travail|requête|scénario|carga de trabajo"
    r"|consulta|escenario|carico di lavoro|scenario|carga de trabalho|cenário|рабочая нагрузка|запрос|сценарий"
    r"|工作负载|工作負載|查询|查詢|场景|場景|워크로드|쿼리|시나리오)\s*:?$"
)
_ERRORS = re.compile(
    r"errors?|failures?|failed|fehler|erreurs?|échecs|errores|errori|erros|ошибк|エラー|错误|錯誤|오류"
)
_PERCENTILE = re.compile(
    r"\bp\s?(?P<p>50|90|95|99|99\.9|999)\b|\b(?P<q>50|90|95|99|99\.9)\s*(?:th|e|er|º|°|\.|-?й)?\s*(?:%|-?\s*(?:percentile"
    r"|perzentil|centile|percentil|процентил)|パーセンタイル|百分位|퍼센타일)|\b(?P<r>50|90|95|99)th\b"
    r"|(?P<median>median|médiane|mediana|медиана|中央値|中位数|中位數|중앙값)"
)
# Columns kept out of the record (extremes, spread): their words must not make them the mean response.
_IGNORED = re.compile(
    r"^(?:max|min)\b|\bmax(?:imum)?\b|\bminimum\b|\bstd|deviation|最大|最小|höchst|máximo|mínimo|massimo|minimo"
    r"|максимал|минимал|최대|최소|標準偏差|标准差|標準差|표준\s*편차"
)
_DURATION = re.compile(
    r"duration|run\s*time|test\s*time|\bdauer|laufzeit|durée|duración|durata|duração|длительность|продолжительность"
    r"|測定時間|所要時間|持续时间|持續時間|지속\s*시간|테스트\s*시간"
)
_THROUGHPUT = re.compile(
    r"throughput|\btp[smh]\b|\bqp[smh]\b|\bnopm\b|durchsatz|débit|rendimiento|productividad|velocità|vazão"
    r"|taxa de transfer|пропускн|スループット|処理量|吞吐量|輸送量|처리량"
)
_RESPONSE = re.compile(
    r"response|\bresp\b|latency|elapsed|\bmean\b|average|\bavg\b|antwortzeit|reaktionszeit|verstrichen|mittel|durchschnitt"
    r"|réponse|écoulé|moyen|respuesta|transcurrido|\bmedia\b|promedio|risposta|trascorso|\bmedio\b|resposta|decorrido"
    r"|média|médio|отклик|ответ|затрачен|истекш|средн|応答|レスポンス|経過|平均|実行時間|响应|回應|回应|已用时间|占用时间|經過"
    r"|응답|경과|평균"
)
# A disk tool's table (sqlio, DiskSpd, iostat, vdbench, Iometer, Perfmon): never a load table.
_DISK_WORDS = re.compile(
    r"i/o|\biops\b|\bios\b|io/s|\b[kmgt]i?b/s|\b[kmgt]i?bs?/sec|bytes|queue|await|\b[rw]/s\b|\bqd\b|block\s*size"
    r"|%\s*util|\\\\|pdh-csv|\bmbps\b|avg-cpu|%\s*(?:user|idle|system|iowait|nice|steal)"
)

# Rates: per second / minute / hour, in the header's words.
_PER = (
    ("s", re.compile(
        r"/\s*(?:s|sec|second|秒|초|с|сек)\b|/\s*(?:秒|초)|per\s+sec|pro\s+sekunde|par\s+seconde|por\s+segundo|al\s+secondo"
        r"|в\s+секунду|毎秒|秒あたり|秒間|每秒|초당|\b(?:tps|qps)\b|/sec\b")),
    ("min", re.compile(
        r"/\s*(?:m|min|minute|分|분|мин)\b|/\s*(?:分|분)|per\s+min|pro\s+minute|par\s+minute|por\s+minuto|al\s+minuto"
        r"|в\s+минуту|毎分|分あたり|分間|每分|분당|\b(?:tpm|qpm|nopm)\b")),
    ("h", re.compile(
        r"/\s*(?:h|hr|hour|時|時間|시간|ч|час)\b|/\s*(?:時間?|시간)|per\s+hour|pro\s+stunde|par\s+heure|por\s+hora"
        r"|all'ora|в\s+час|毎時|時間あたり|每小时|每小時|시간당|\b(?:tph|qph)\b")),
)  # fmt: skip
# What is counted.
_WHAT = (
    ("new orders", re.compile(r"\bnopm\b|new\s*orders?|neue\s+bestellungen|nouvelles\s+commandes|nuevos\s+pedidos")),
    ("batches", re.compile(r"batch|バッチ|批处理|批次|일괄")),
    ("queries", re.compile(
        r"\bqp[smh]\b|quer|abfrage|requête|requete|consulta|запрос|クエリ|问询|查询|查詢|쿼리|\bsql\b")),
    ("transactions", re.compile(
        r"\btp[smh]\b|trans|\btxn|\btx\b|transaktion|transacci|transazion|transaç|транзакц|トランザクション|事务|交易|트랜잭션")),
    ("requests", re.compile(r"request|\breq\b|anfrage|demande|solicitud|richiest|requisi|リクエスト|请求|要求|요청")),
    ("executions", re.compile(r"exec|ausführ|exécution|ejecuci|esecuzion|execuç|выполнени|実行|执行|執行|실행")),
)  # fmt: skip
# Time units of a response (or duration) column.
_TIME_UNITS = (
    ("ms", re.compile(
        r"\bms\b|\bmsec|millisec|milliseconds|ミリ秒|毫秒|밀리초|миллисекунд|\bмс\b|millisekunden|millisecondes"
        r"|milisegundos|millisecondi|milissegundos")),
    ("s", re.compile(r"\bs\b|\bsec|seconds?|秒|초|секунд|\bс\b|sekunden|secondes|segundos|secondi|segundo")),
    ("min", re.compile(r"\bmin\b|minutes?|分|분|минут|minuten|minutos|minuti")),
)  # fmt: skip
_CLOCK_HEADER = re.compile(r"\b(?:h{1,2}:)?mm:ss")
_TO_MS = {"ms": 1.0, "s": 1000.0, "min": 60000.0}
_LOAD_UNITS_PER = {"s": "s", "min": "min", "h": "h"}

_MD_RULE = re.compile(r"^\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?$")
_TWO_SPACES = re.compile(r"\s{2,}")
_CLOCK = re.compile(r"^(?:(?P<h>\d{1,3}):)?(?P<m>\d{1,2}):(?P<s>\d{1,2}(?:[.,]\d{1,9})?)$")
_WITH_UNIT = re.compile(r"^(?P<n>[-+]?[0-9][0-9.,\s\u00a0\u202f]*?)\s*(?P<unit>ms|s|sec|min|秒|ミリ秒|毫秒)$")
_EMPTY = frozenset({"", "-", "–", "—", "n/a", "na", "none", "null", "?"})
_HEADING_MARKS = "#*_=:>- \t"


def detect(text: str) -> float:
    # Every file of unknown format passes through here, most of them other tools' outputs full of `thread`, `user`
    # and `load`: the lines holding a load word are found with str.find (a regex alternation of these words reads
    # a text ~100 times slower), and only those that also hold a throughput or response word are split into cells.
    head = text[:_DETECT_HEAD]
    low = head.lower()
    starts: set[int] = set()
    for stem in _LOAD_STEMS:
        i = low.find(stem)
        while i >= 0 and len(starts) < _DETECT_LINES:
            starts.add(low.rfind("\n", 0, i) + 1)
            end = low.find("\n", i)
            if end < 0:
                break
            i = low.find(stem, end)
    for start in sorted(starts):
        end = low.find("\n", start)
        end = len(low) if end < 0 else end
        if end - start > MAX_LINE or not any(stem in low[start:end] for stem in _FIGURE_STEMS):
            continue
        header = _header(head[start:end], {})
        if header is None:
            continue
        for nxt in head[end + 1 :].split("\n", 4)[:4]:
            if _MD_RULE.match(nxt.strip()):
                continue
            cells = _split(nxt, header.delimiter)
            if header.load < len(cells) and _number(cells[header.load]) is not None:
                return 0.8
            break
    return 0.0


MAPPING_OPTIONS = (
    "name its columns: --load-column and --throughput-column or --response-column (a header cell's text or a 1-based "
    "column number; with --throughput-unit, --response-unit where the header names none), or map them on the "
    "Upload page"
)


def refusal_hint(text: str) -> str | None:
    """For a text no format recognized: the column mapping to give when it holds a table of figures, else None."""
    if table_columns(text) is None:
        return None
    return f"if it is a load table (load, throughput, response time), {MAPPING_OPTIONS}"


def table_columns(text: str) -> list[str] | None:
    """The columns of the first table of figures in `text` (two rows in a row with as many cells, the second with a
    figure): its header's cells, or `column 1`, `column 2`... for a table without a header; None when there is
    none. What a column mapping chooses from (`load_column` etc. take the 1-based number)."""
    rows: list[list[str] | None] = []
    for raw in text[:_HEAD].split("\n", _HEAD_LINES)[:_HEAD_LINES]:
        line = raw.strip()
        if _MD_RULE.match(line) and line:
            continue  # a Markdown table's rule between its header and its rows
        cells = next((c for d in _delimiters(line) if len(c := _split(line, d)) >= 2), None) if line else None
        rows.append(cells if cells is not None and len(raw) <= MAX_LINE and len(cells) <= MAX_CELLS else None)
    for first, second in zip(rows, rows[1:], strict=False):
        if first is None or second is None or len(first) != len(second):
            continue
        if not any(_number(c) is not None or _clock_ms(c) is not None for c in second):
            continue
        if sum(_number(c) is not None or _clock_ms(c) is not None for c in first) > len(first) // 2:
            return [f"column {k}" for k in range(1, len(first) + 1)]
        return [c or f"column {k}" for k, c in enumerate(first, 1)]
    return None


def parse(text: str, options: Mapping[str, str] | None = None) -> list[LoadRecord]:
    """The records of `text`, in file order; ParseError(reason, line) when none can be read. `options`: the column
    mapping (see OPTIONS and the module's rules)."""
    return _Reader(check_options(options or {})).read(text)


def check_options(options: Mapping[str, str]) -> dict[str, str]:
    """The column mapping without blank values; ValueError for an unknown option or unit."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ValueError(f"unknown load_table option(s) {', '.join(unknown)}; known: {', '.join(OPTIONS)}")
    out = {k: str(v).strip() for k, v in options.items() if v is not None and str(v).strip()}
    unit = out.get("throughput_unit")
    if unit is not None:
        from kneepoint.ingest import units  # (a formats module imports no warehouse code at import time)

        if unit not in units.load_throughput_units():
            raise ValueError(f"throughput unit {unit!r} is not one of {', '.join(units.load_throughput_units())}")
    if out.get("response_unit") not in (None, *_TO_MS):
        raise ValueError(f"response unit {out['response_unit']!r} is not one of {', '.join(_TO_MS)}")
    return out


# -- header


@dataclass(slots=True)
class _Header:
    """Which cell holds what, in a table's header line (indexes are 0-based)."""

    line: int  # 1-based, where the header is
    delimiter: str  # "|", "\t", ";", ",", "  " (two or more spaces) or " " (any whitespace)
    cells: list[str]
    load: int
    load_kind: str
    throughput: int | None = None
    throughput_unit: str | None = None
    response: int | None = None
    response_unit: str | None = None  # None: clock values (mm:ss.ss, h:mm:ss) or a unit in each cell
    percentiles: dict[int, tuple[int, str | None]] = field(default_factory=dict)  # 50/95/99 -> (cell, unit)
    sessions: list[tuple[int, str | None]] = field(default_factory=list)  # per-session elapsed (cell, unit)
    duration: tuple[int, str | None] | None = None
    errors: int | None = None
    workload: int | None = None
    unit_problem: str | None = None  # why a column's unit is unknown (raised when the table has a step)
    headerless: bool = False  # the table starts at this line (a mapping by column numbers)


def _normal(cell: str) -> str:
    """A header cell as the words are matched: NFKC (full-width forms as ASCII), lower case, `_` as a space
    (`mean_ms`), spaces collapsed."""
    return " ".join(unicodedata.normalize("NFKC", cell).lower().replace("_", " ").split())


def _split(line: str, delimiter: str) -> list[str]:
    line = line.strip()
    if delimiter == "|":
        cells = line.split("|")
        if cells and not cells[0].strip():
            cells = cells[1:]
        if cells and not cells[-1].strip():
            cells = cells[:-1]
        return [c.strip() for c in cells]
    if delimiter in (",", ";") and '"' in line:
        try:
            return [c.strip() for c in next(csv.reader([line], delimiter=delimiter))]
        except (csv.Error, StopIteration):
            return [c.strip() for c in line.split(delimiter)]
    if delimiter in ("\t", ",", ";"):
        return [c.strip() for c in line.split(delimiter)]
    if delimiter == "  ":
        return _TWO_SPACES.split(line)
    return line.split()


def _delimiters(line: str) -> list[str]:
    """The ways a header line may be split, most likely first."""
    stripped = line.strip()
    if stripped.startswith("|") or stripped.count("|") >= 2:
        return ["|"]
    if "\t" in stripped:
        return ["\t"]
    out = [d for d in (";", ",") if d in stripped]
    return out + ["  ", " "]


def _header(line: str, options: Mapping[str, str]) -> _Header | None:
    """The header a line is, recognized from its words (and the column mapping), else None."""
    for delimiter in _delimiters(line):
        cells = _split(line, delimiter)
        if len(cells) < 2 or len(cells) > MAX_CELLS:
            continue
        header = _roles(cells, delimiter, options)
        if header is not None:
            return header
    return None


def _column(spec: str | None, cells: list[str]) -> int | None:
    """A mapped column: its 1-based number or its header text (case and spacing aside); None if not in `cells`."""
    if spec is None:
        return None
    if spec.isdigit():
        index = int(spec) - 1
        return index if 0 <= index < len(cells) else None
    wanted = _normal(spec)
    for i, cell in enumerate(cells):
        if _normal(cell) == wanted:
            return i
    return None


def _roles(cells: list[str], delimiter: str, options: Mapping[str, str]) -> _Header | None:
    words = [_normal(c) for c in cells]
    mapping = any(options.get(f"{key}_column") for key in ("load", "throughput", "response"))
    if not mapping and any(_DISK_WORDS.search(w) for w in words):
        return None  # (a table the user mapped by hand is read whatever its words)
    if sum(_number(c) is not None or _clock_ms(c) is not None for c in cells) > len(cells) // 2:
        return _headerless(cells, delimiter, options)  # a data row: a header only for a mapping by numbers
    load = throughput = response = errors = workload = None
    load_kind = options.get("load_kind")
    percentiles: dict[int, tuple[int, str | None]] = {}
    sessions: list[tuple[int, str | None]] = []
    duration: tuple[int, str | None] | None = None
    for i, w in enumerate(words):
        if not w:
            continue
        if _IGNORED.search(w):
            continue
        if _WORKLOAD.match(w):
            workload = i if workload is None else workload
        elif _ERRORS.search(w):
            errors = i if errors is None else errors
        elif m := _PERCENTILE.search(w):
            p = m["p"] or m["q"] or m["r"] or "50"
            if p in ("50", "95", "99"):
                percentiles.setdefault(int(p), (i, _time_unit(w)))
        elif _PER_SESSION.match(w):
            sessions.append((i, _time_unit(w)))
        elif _THROUGHPUT.search(w) or (_rate(w) is not None and _what(w) is not None):
            throughput = i if throughput is None else throughput
        elif _DURATION.search(w):
            duration = (i, _time_unit(w)) if duration is None else duration
        elif _RESPONSE.search(w):
            response = i if response is None else response
        elif load is None and not w.startswith("%") and (kind := _load_kind(w)) is not None:
            load, load_kind = i, load_kind or kind
    mapped = {key: _column(options.get(f"{key}_column"), cells) for key in ("load", "throughput", "response")}
    if mapping and mapped["load"] is None and load is None:
        return None  # a mapping given: the header is the line that holds the mapped load column
    load = mapped["load"] if mapped["load"] is not None else load
    throughput = mapped["throughput"] if mapped["throughput"] is not None else throughput
    response = mapped["response"] if mapped["response"] is not None else response
    if load is None or (throughput is None and response is None and not sessions):
        return None
    if options.get("load_column") and mapped["load"] is not None:
        load_kind = options.get("load_kind") or _load_kind(words[load]) or "load"
    taken = {load, throughput, response}  # a mapped column is that column only
    header = _Header(
        0, delimiter, cells, load, load_kind or "load", throughput=throughput, response=response,
        percentiles={p: c for p, c in percentiles.items() if c[0] not in taken},
        sessions=[s for s in sessions if s[0] not in taken],
        duration=duration if duration is None or duration[0] not in taken else None,
        errors=errors if errors not in taken else None,
        workload=workload if workload not in taken else None,
    )  # fmt: skip
    if throughput is not None:
        header.throughput_unit = options.get("throughput_unit") or _throughput_unit(words[throughput])
        if header.throughput_unit is None:
            header.unit_problem = (
                f"the throughput column {cells[throughput]!r} names no time unit (per second, per minute): "
                "give --throughput-unit (e.g. transactions/min, queries/s)"
            )
    if response is not None:
        header.response_unit = options.get("response_unit") or _time_unit(words[response])
    return header


def _headerless(cells: list[str], delimiter: str, options: Mapping[str, str]) -> _Header | None:
    """A table without a header, its columns mapped by number: the first row whose load cell is a number starts it."""
    specs = {key: options.get(f"{key}_column") for key in ("load", "throughput", "response")}
    if not specs["load"] or not (specs["throughput"] or specs["response"]):
        return None
    if not all(spec.isdigit() for spec in specs.values() if spec):
        return None
    index = {key: int(spec) - 1 if spec else None for key, spec in specs.items()}
    if not all(i is None or 0 <= i < len(cells) for i in index.values()):
        return None
    load = index["load"]
    if load is None or _number(cells[load]) is None:
        return None
    header = _Header(0, delimiter, [""] * len(cells), load, options.get("load_kind") or "load",
                     throughput=index["throughput"], response=index["response"], headerless=True)  # fmt: skip
    if header.throughput is not None:
        header.throughput_unit = options.get("throughput_unit")
        if header.throughput_unit is None:
            header.unit_problem = "a throughput column without a header: give --throughput-unit (e.g. queries/min)"
    header.response_unit = options.get("response_unit")
    return header


def _load_kind(word: str) -> str | None:
    for kind, pattern in _LOAD_KINDS:
        if pattern.search(word):
            return kind
    return None


def _rate(word: str) -> str | None:
    for per, pattern in _PER:
        if pattern.search(word):
            return per
    return None


def _what(word: str) -> str | None:
    for what, pattern in _WHAT:
        if pattern.search(word):
            return what
    return None


def _throughput_unit(word: str) -> str | None:
    """`queries/min` from `throughput (queries/min)`, `transactions/s` from `TPS`; None when no time is named."""
    per = _rate(word)
    if per is None:
        return None
    return f"{_what(word) or 'transactions'}/{_LOAD_UNITS_PER[per]}"


def _time_unit(word: str) -> str | None:
    """The unit a time column's header names (ms, s, min); None for clock values (`mm:ss.ss`) or none named."""
    if _CLOCK_HEADER.search(word):
        return None
    for unit, pattern in _TIME_UNITS:
        if pattern.search(word):
            return unit
    return None


# -- values


def _number(cell: str) -> float | None:
    value = read_number(cell)
    return value if value is not None and math.isfinite(value) else None


def _clock_ms(cell: str) -> float | None:
    """`mm:ss.ss`, `m:ss`, `h:mm:ss` in ms, else None."""
    m = _CLOCK.match(cell.strip())
    if m is None:
        return None
    seconds = float(m["s"].replace(",", "."))
    minutes = int(m["m"])
    if m["h"] is not None:
        if minutes >= 60 or seconds >= 60:
            return None
        return round(((int(m["h"]) * 60 + minutes) * 60 + seconds) * 1000, 6)
    if seconds >= 60:
        return None
    return round((minutes * 60 + seconds) * 1000, 6)


class _BadValue(ValueError):
    """A cell that does not read as its column's figure."""


def _time_ms(cell: str, unit: str | None) -> float | None:
    """A time cell in ms: clock values, a number with its unit, or a plain number in `unit`; None when blank."""
    cell = cell.strip()
    if cell.lower() in _EMPTY:
        return None
    if ":" in cell:
        value = _clock_ms(cell)
        if value is None:
            raise _BadValue(cell)
        return value
    number = _number(cell)
    if number is None and (m := _WITH_UNIT.match(cell)):
        number = _number(m["n"])
        unit = {"sec": "s", "秒": "s", "ミリ秒": "ms", "毫秒": "ms"}.get(m["unit"], m["unit"])
    if number is None or number < 0:
        raise _BadValue(cell)
    if unit is None:
        raise _NoUnit(cell)
    return number * _TO_MS[unit]


class _NoUnit(ValueError):
    """A plain number in a time column whose header names no unit."""


def _figure(cell: str) -> float | None:
    cell = cell.strip()
    if cell.lower() in _EMPTY:
        return None
    value = _number(cell)
    if value is None:
        value = _number(cell.split()[0]) if cell.split() else None  # `1,234 q/min`
    if value is None or value < 0:
        raise _BadValue(cell)
    return value


# -- reader


class _Reader:
    """Tables one after another: the header in force, the line above it (a workload's heading)."""

    def __init__(self, options: dict[str, str]) -> None:
        self.options = options
        self.records: list[LoadRecord] = []
        self.warnings: list[str] = []
        self.tables: list[tuple[_Header, str | None, list[LoadRecord]]] = []
        self.heading: str | None = None

    def warn(self, number: int, what: str) -> None:
        add_line_warning(self.warnings, number, what)

    def read(self, text: str) -> list[LoadRecord]:
        lines = text.split("\n")
        i = 0
        while i < len(lines):
            raw = lines[i]
            line = raw.strip()
            if not line or len(raw) > MAX_LINE:
                i += 1
                continue
            header = _header(line, self.options)
            if header is None:
                if not _MD_RULE.match(line):
                    self.heading = line.strip(_HEADING_MARKS) or self.heading
                i += 1
                continue
            header.line = i + 1
            i = self.table(header, lines, i if header.headerless else i + 1)
            self.heading = None
        self.label_tables()
        if self.records:
            return ParsedRecords(self.records, self.warnings)
        raise ParseError(self.why_nothing(), first_content_line(text))

    def why_nothing(self) -> str:
        if self.options.get("load_column"):
            return (
                f"no load step found: no line holds the load column {self.options['load_column']!r} with a number "
                "below it (--load-column takes a header cell's text or a column number)"
            )
        return (
            "no load table found: no header line names a load column (sessions, users, threads, databases...) "
            f"and a throughput or response-time column; {MAPPING_OPTIONS}"
        )

    def table(self, header: _Header, lines: list[str], start: int) -> int:
        """Read the rows under `header`; the index of the line after the table."""
        rows: list[LoadRecord] = []
        self.tables.append((header, self.heading, rows))
        i = start
        while i < len(lines):
            raw = lines[i]
            line = raw.strip()
            number = i + 1
            if not line:
                break
            if len(raw) > MAX_LINE:
                self.warn(number, "line too long for a table row: skipped")
                i += 1
                continue
            if header.delimiter == "|" and _MD_RULE.match(line):
                i += 1
                continue
            cells = self.cells(line, header)
            if not any(_number(c) is not None or _clock_ms(c) is not None for c in cells):
                break  # text after the table (or the next table's heading or header)
            record = self.row(cells, header, number)
            if record is not None:
                if header.unit_problem is not None:
                    raise ParseError(header.unit_problem, header.line)
                rows.append(record)
                self.records.append(record)
            i += 1
        return i

    @staticmethod
    def cells(line: str, header: _Header) -> list[str]:
        cells = _split(line, header.delimiter)
        if header.delimiter == "  " and len(cells) != len(header.cells):
            spaced = line.split()
            if len(spaced) == len(header.cells):
                return spaced
        return cells

    def row(self, cells: list[str], header: _Header, number: int) -> LoadRecord | None:
        def cell(index: int | None) -> str:
            return cells[index] if index is not None and index < len(cells) else ""

        load = _number(cell(header.load))
        if load is None or load <= 0:
            what = "no load" if not cell(header.load) else f"load {cell(header.load)[:40]!r} is not a positive number"
            self.warn(number, f"{what}: row skipped")
            return None
        try:
            throughput = _figure(cell(header.throughput))
            response = _time_ms(cell(header.response), header.response_unit)
            # The other figures cost only themselves when a cell does not read.
            unit = header.response_unit
            percentiles = {p: self.secondary(number, cell(c), u or unit) for p, (c, u) in header.percentiles.items()}
            per_session = [
                v for c, u in header.sessions if (v := self.secondary(number, cell(c), u or unit)) is not None
            ]
            duration_ms = (
                self.secondary(number, cell(header.duration[0]), header.duration[1] or "s") if header.duration else None
            )
            errors = self.secondary(number, cell(header.errors), None, time=False)
        except _NoUnit as exc:
            raise ParseError(
                f"the time {exc} names no unit and its column's header says none: write the unit in the header "
                "(ms, s, mm:ss.ss) or give --response-unit (ms, s or min)",
                number,
            ) from None
        except _BadValue as exc:
            self.warn(number, f"cell {str(exc)[:40]!r} is not a figure: row skipped")
            return None
        if response is None and per_session:
            response = sum(per_session) / len(per_session)
        if throughput is None and response is None:
            self.warn(number, "neither a throughput nor a response time: row skipped")
            return None
        workload = cell(header.workload).strip() or None if header.workload is not None else None
        return LoadRecord(
            tool="table",
            step_index=len(self.records),
            source_line=number,
            load_kind=header.load_kind,
            load=load,
            throughput=throughput,
            throughput_unit=header.throughput_unit if throughput is not None else None,
            response_avg_ms=response,
            response_p50_ms=percentiles.get(50),
            response_p95_ms=percentiles.get(95),
            response_p99_ms=percentiles.get(99),
            duration_s=duration_ms / 1000 if duration_ms is not None else None,
            errors=round(errors) if errors is not None and errors < 2**31 else None,
            workload=workload,
        )

    def secondary(self, number: int, text: str, unit: str | None, time: bool = True) -> float | None:
        """A figure besides the load, throughput and mean response (a time in `unit`, else a count): None with a
        warning when its cell does not read (a time without a unit still refuses the file)."""
        try:
            return _time_ms(text, unit) if time else _figure(text)
        except _BadValue as exc:
            self.warn(number, f"cell {str(exc)[:40]!r} is not a figure: left out")
            return None

    def label_tables(self) -> None:
        """A file of several tables: each table's heading labels the rows that have no workload cell."""
        read = [(header, heading, rows) for header, heading, rows in self.tables if rows]
        if len(read) < 2:
            return
        for number, (_, heading, rows) in enumerate(read, 1):
            for record in rows:
                if record.workload is None:
                    record.workload = (heading or f"table {number}")[:200]
