"""SQL Server `SET STATISTICS IO, TIME` writer: QueryIoRecord / QueryTimeRecord back into the text of SSMS's
Messages tab, in any language of `ingest.formats.sqlstats.VOCABULARIES`.

Each statement (records grouped by `statement_index`, in order of first appearance) is written as SSMS prints it
(see the corpus and ingest/formats/sqlstats.py)::

    SQL Server parse and compile time:                  <- one block per compile record
       CPU time = 15 ms, elapsed time = 18 ms.

    (1 row affected)                                    <- when `rows_affected` has the statement's count
    Table 'OrderLinesArchive'. Scan count 1, ...        <- one line per table record

     SQL Server Execution Times:                        <- one block per execution record
       CPU time = 3420 ms,  elapsed time = 294581 ms.

A failed statement (its time records carry `error_number`) gets SSMS's error header in the vocabulary's language before
its Execution Times block (or after its last line when it has none; a time record without times prints nothing else).
A table record is written in the layout its columns call for: with page-server columns the 2019+ line, with LOB
columns the 2005-2016 line, with only scan/logical/physical/read-ahead the SQL 2000 line, with only the segment
columns a columnstore segment line; `tool_version="2019+"` or `"2008-2016"` forces a layout (absent page-server
counts print as 0). Times print as whole milliseconds. Statements without an Execution Times block stay apart
in the parsed text only when a rows-affected line or a compile block separates them (the parser's rules).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kneepoint.ingest.formats.sqlstats import (
    FIELDS_2000,
    FIELDS_2008,
    FIELDS_2019,
    FIELDS_SEGMENT,
    PAGE_SERVER_FIELDS,
    TOOL,
    VERSION_2008,
    VERSION_2019,
    VOCABULARIES,
    IoLineForm,
    Vocabulary,
)
from kneepoint.ingest.records import QueryIoRecord, QueryTimeRecord
from kneepoint.ingest.synth.disk_model import DiskModel, sweep

SAMPLE_FOLDER = "sqlstats"
PAGE_BYTES = 8192

Record = QueryIoRecord | QueryTimeRecord


def write(
    records: Iterable[Record],
    *,
    language: str = "en",
    tool_version: str | None = None,
    rows_affected: Mapping[int, int] | None = None,
    notes: Iterable[str] = (),
    completion_time: str | None = None,
    comment: bool = False,
    newline: str = "\n",
) -> str:
    """The Messages text for `records`.

    `rows_affected` maps statement_index -> row count (`(N rows affected)` before its table lines); `notes` are
    lines put first (PRINT output, say); `completion_time` adds SSMS's closing `Completion time: ...` line;
    `comment` writes every line as a T-SQL `--` comment (output pasted into a script)."""
    try:
        vocab = VOCABULARIES[language]
    except KeyError:
        raise ValueError(f"unknown language {language!r}; known: {', '.join(VOCABULARIES)}") from None
    if tool_version not in (None, VERSION_2019, VERSION_2008):
        raise ValueError(f"tool_version is {VERSION_2019!r}, {VERSION_2008!r} or None, not {tool_version!r}")
    statements: dict[int, list[Record]] = {}
    for rec in records:
        statements.setdefault(rec.statement_index, []).append(rec)

    lines: list[str] = list(notes)
    if lines:
        lines.append("")
    counts = rows_affected or {}
    for index, recs in statements.items():
        times = [rec for rec in recs if isinstance(rec, QueryTimeRecord)]
        error = next((rec.error_number for rec in times if rec.error_number is not None), None)
        for rec in times:
            if rec.phase == "compile":
                lines += [vocab.compile_headers[0] + " ", _time_line(vocab.compile_line, rec)]
        if index in counts:
            n = counts[index]
            lines += ["", (vocab.row_affected if n == 1 else vocab.rows_affected).format(n=n)]
        lines += [_io_line(vocab, rec, tool_version) for rec in recs if isinstance(rec, QueryIoRecord)]
        for rec in times:
            if rec.phase == "execution" and rec.cpu_ms is not None:
                if error is not None:  # SSMS prints the error before the failed statement's Execution Times
                    lines += _error_lines(vocab, error)
                    error = None
                lines += ["", " " + vocab.execution_headers[0], _time_line(vocab.execution_line, rec)]
        if error is not None:  # no Execution Times block: the error ends the statement's output
            lines += _error_lines(vocab, error)
    if completion_time is not None:
        lines += ["", f"Completion time: {completion_time}"]
    if comment:
        lines = [f"--{line}" if line else line for line in lines]
    return newline.join(lines) + newline


def _time_line(template: str, rec: QueryTimeRecord) -> str:
    if rec.cpu_ms is None or rec.elapsed_ms is None:
        raise ValueError(f"statement {rec.statement_index}: a {rec.phase} time block needs CPU and elapsed time")
    return template.format(cpu=int(round(rec.cpu_ms)), elapsed=int(round(rec.elapsed_ms)))


def _error_lines(vocab: Vocabulary, number: int) -> list[str]:
    """SSMS's error header (in the vocabulary's language) and a message text."""
    return [vocab.error_header.format(number=number, level=16, state=1, line=1), f"Error {number} (synthetic)."]


def _io_line(vocab: Vocabulary, rec: QueryIoRecord, tool_version: str | None) -> str:
    form, fields = _layout(vocab, rec, tool_version)
    values = []
    for name in fields:
        value = getattr(rec, name)
        if value is None and name in PAGE_SERVER_FIELDS:
            value = 0  # a forced 2019+ layout on a server without page servers prints 0
        if value is None:
            raise ValueError(f"table {rec.table_name!r}: {name} is missing for the {len(fields)}-column layout")
        values.append(value)
    units = form.units or ("",) * len(form.labels)
    pairs = form.pair_sep.join(
        f"{label}{form.value_sep}{value}{unit}" for label, value, unit in zip(form.labels, values, units, strict=False)
    )
    return form.prefix.format(rec.table_name) + pairs + form.end


def _layout(vocab: Vocabulary, rec: QueryIoRecord, tool_version: str | None) -> tuple[IoLineForm, tuple[str, ...]]:
    present = {name for name in FIELDS_2019 + FIELDS_SEGMENT if getattr(rec, name) is not None}
    if present and present <= set(FIELDS_SEGMENT):
        if vocab.io_segment is None:
            raise ValueError(f"no columnstore segment line text known for language {vocab.code!r}")
        return vocab.io_segment, FIELDS_SEGMENT
    if present & set(FIELDS_SEGMENT):
        raise ValueError(f"table {rec.table_name!r}: segment counts are a line of their own, not table columns")
    page_server = {name for name in PAGE_SERVER_FIELDS if getattr(rec, name)}
    if tool_version == VERSION_2008 and page_server:
        raise ValueError(f"table {rec.table_name!r}: page-server reads do not fit the 2008-2016 layout")
    if tool_version == VERSION_2019 or (tool_version is None and present & PAGE_SERVER_FIELDS):
        return vocab.io_2019, FIELDS_2019
    if tool_version == VERSION_2008 or present - set(FIELDS_2000):
        return vocab.io_2008, FIELDS_2008
    return vocab.io_2008, FIELDS_2000


# ---------------------------------------------------------------------------------------------- sample data

# The modelled disk of every synthetic "P10" sample (see ingest/synth/sqlio.py): ~5 ms per random read, 100 MB/s.
P10 = DiskModel(
    "synthetic P10 (modelled)",
    service_time_ms=5.0,
    sigma=0.05,
    kappa=0.0006,
    max_bytes_per_s=100e6,
    write_penalty=0.6,
    sequential_speedup=2.5,
    noise=0.03,
)
# Read-ahead on a fragmented table cannot merge pages into large reads: it keeps a few 8 KiB reads in flight.
READ_AHEAD_DEPTH = 3
# Statements: (rows, compile CPU/elapsed ms, execution CPU ms, degree of parallelism, tables), each table
# (name, scan count, logical reads, physical reads, read-ahead reads).
WORKLOAD: tuple[tuple[int, tuple[int, int], int, int, tuple[tuple[str, int, int, int, int], ...]], ...] = (
    # An I/O-bound scan of a fragmented archive table: ~155,000 pages from disk.
    (1, (15, 18), 3_420, 1, (("OrderLinesArchive", 1, 155_486, 1_138, 154_102),)),
    # A CPU-bound parallel query over pages already in the buffer pool.
    (66_812, (4, 4), 41_875, 4, (("Customers", 5, 4_212, 0, 0), ("Invoices", 5, 28_904, 0, 0))),
    # A join that spools to a Worktable (and opens a Workfile it never uses).
    (
        663,
        (31, 36),
        1_840,
        1,
        (
            ("Worktable", 1_004, 48_722, 0, 0),
            ("Workfile", 0, 0, 0, 0),
            ("OrderLines", 1, 5_431, 12, 5_390),
            ("Orders", 1, 1_912, 3, 1_880),
        ),
    ),
)


def workload_records(disk: DiskModel = P10, seed: int = 11) -> tuple[list[Record], dict[int, int]]:
    """WORKLOAD on `disk`: elapsed time is the time the disk needs for the statement's physical reads (one page
    at a time) and read-ahead reads (READ_AHEAD_DEPTH pages in flight), with the CPU work overlapping the waits
    but for a tenth. Returns the records and the rows-affected counts."""
    one_at_a_time, read_ahead = sweep(
        disk,
        TOOL,
        pattern="random",
        operation="read",
        block_size_bytes=PAGE_BYTES,
        queue_depths=(1, READ_AHEAD_DEPTH),
        seed=seed,
    )
    records: list[Record] = []
    rows: dict[int, int] = {}
    for index, (row_count, (compile_cpu, compile_elapsed), cpu_ms, dop, tables) in enumerate(WORKLOAD):
        rows[index] = row_count
        records.append(_time(index, "compile", compile_cpu, compile_elapsed))
        io_ms = 0.0
        for name, scans, logical, physical, ahead in tables:
            io_ms += 1000 * (physical / (one_at_a_time.iops or 1) + ahead / (read_ahead.iops or 1))
            records.append(
                QueryIoRecord(
                    statement_index=index,
                    source_line=1,
                    table_name=name,
                    scan_count=scans,
                    logical_reads=logical,
                    physical_reads=physical,
                    page_server_reads=0,
                    read_ahead_reads=ahead,
                    page_server_read_ahead_reads=0,
                    lob_logical_reads=0,
                    lob_physical_reads=0,
                    lob_page_server_reads=0,
                    lob_read_ahead_reads=0,
                    lob_page_server_read_ahead_reads=0,
                    tool=TOOL,
                    tool_version=VERSION_2019,
                    language="en",
                )
            )
        cpu_wall_ms = cpu_ms / dop
        elapsed = max(io_ms, cpu_wall_ms) + 0.1 * min(io_ms, cpu_wall_ms)
        records.append(_time(index, "execution", cpu_ms, round(elapsed)))
    return records, rows


def _time(index: int, phase: str, cpu_ms: float, elapsed_ms: float) -> QueryTimeRecord:
    return QueryTimeRecord(
        statement_index=index,
        source_line=1,
        phase=phase,  # type: ignore[arg-type]
        cpu_ms=float(cpu_ms),
        elapsed_ms=float(elapsed_ms),
        tool=TOOL,
        language="en",
    )


def sample_files() -> dict[str, str | bytes]:
    """SSMS Messages text (English, SQL Server 2019+ layout, CRLF as SSMS saves it) of three statements on the
    modelled P10 disk."""
    records, rows = workload_records()
    notes = [
        "SYNTHETIC sample, not captured from a server: written by kneepoint's ingest/synth/sqlstats.py.",
        "Disk: synthetic P10 (modelled), ~5 ms per 8 KiB random read, 100 MB/s cap; read-ahead keeps 3 reads in",
        "flight. Statements: an I/O-bound scan of a fragmented archive table, a CPU-bound parallel query over",
        "cached pages, a join that spools to a Worktable.",
    ]
    text = write(
        records,
        rows_affected=rows,
        notes=notes,
        completion_time="2025-11-21T10:42:17.5310442+01:00",
        newline="\r\n",
    )
    return {"synthetic-p10-workload.txt": text}
