"""elbencho results: the result file (`--resfile`, the same table it prints) and the CSV file (`--csvfile`), 2.x-3.x.

Input (result file; the layout of elbencho's `Statistics` table, see tools/result-columns-explanation.md)::

    ISO DATE: 2026-08-12T16:27:22+0100
    COMMAND LINE: "/usr/local/bin/elbencho" "--write" "--threads" "4" "--iodepth" "4" "--block" "128k" "/data/f1"

    OPERATION   RESULT TYPE         FIRST DONE   LAST DONE
    =========== ================    ==========   =========
    WRITE       Elapsed time     :     30.140s     30.196s
                IOPS             :        2913        2911
                Throughput MiB/s :         364         363
                Total MiB        :       10980       10990
                IO latency       : [ min=212us avg=5.48ms max=41.3ms ]
                IO lat % us      : [ 1%<=2896 50%<=4096 75%<=6144 99%<=16384 ]
    ---

Input (CSV; one row per phase, `[first]` and `[last]` columns, docs/csv-docs.md)::

    ISO date,label,path type,paths,hosts,threads,...,block size,direct IO,random,random aligned,IO depth,...,operation,
    time ms [first],time ms [last],entries/s [first],entries/s [last],IOPS [first],IOPS [last],MiB/s [first],...

Records (normalized; one per I/O phase, WRITE / READ)::

    {"tool": "elbencho", "run_index": 0, "source_line": 6, "started_at": "2026-08-12T16:27:22+01:00",
     "pattern": "sequential", "operation": "write", "read_pct": 0.0, "direction": "write",
     "block_size_bytes": 131072, "threads": 4, "queue_depth": 4, "duration_s": 30.196, "iops": 2911.0,
     "throughput_bytes_per_s": 380633088.0, "latency_avg_ms": 5.48, "latency_p50_ms": 4.096, ...}

Record mapping:
- One run = one I/O phase (WRITE, READ; a mixed `--rwmixpct` phase gives a write and a read record, as its CSV
  row splits them). Phases without block I/O (MKDIRS, STAT, DELETE, SYNC, ...) give no record.
- The record holds the LAST DONE figures (the end result: until the slowest thread finished its share); the FIRST
  DONE figures (until the fastest thread finished, the "hero number") go to the metadata as `first_done.*`.
- threads = threads per host x hosts (the CSV's `hosts` and `threads`; the command line's `-t/--threads` and the
  number of `--hosts` named); queue_depth = `IO depth` / `--iodepth` (asynchronous I/Os per thread, 1 by
  default); block size = `block size` / `-b/--block` (binary: 128k = 131072); pattern random with `--rand` /
  `random` 1, else sequential.
- Throughput in MiB/s as printed; IOPS as printed. elbencho prints whole MiB/s: below 100 MiB/s (rounding over 1 %)
  the record takes IOPS x block size instead, listed in `inferred` (the printed figure in the metadata). Latency:
  the `IO latency` line prints each value with its own unit (`212us`, `5.48ms`): the record keeps microseconds
  (`us`), converting the others exactly; `IO lat % us` gives p50 / p95 / p99 where those percentiles are listed (it
  lists bucket bounds, in us). The CSV's `IO lat us` columns are already us.
- duration_s = the LAST DONE elapsed time (`2m3.241s`, `586ms`); started_at = `ISO DATE` (with its offset);
  `tool_version` = the CSV's `version` column (the result file prints none).
- A damaged or cut line is reported as a warning (`line N: ...`) and costs only itself; numbers with thousands
  separators read. ParseError when no phase with I/O is read.
"""

from __future__ import annotations

import csv
import re
import shlex
from dataclasses import dataclass, field

from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats._common import how_damaged, read_number
from kneepoint.ingest.records import IoRecord, ParsedRecords, add_line_warning
from kneepoint.ingest.textio import find_rare, size_to_bytes

NAME = "elbencho"
TITLE = "elbencho"
TOOLS = ("elbencho",)
HOST_KEYS: frozenset[str] = frozenset({"hosts"})  # --hosts names the service hosts
USER_KEYS: frozenset[str] = frozenset()
RESULT_KEY_PREFIXES: tuple[str, ...] = ("first_done.", "cpu.")
RESULT_KEYS: tuple[str, ...] = ()

MAX_LINE = 20000
MIB = 1024 * 1024
PRECISE_MIB_S = 100  # whole MiB/s above this are within 1 % (see _add)
_HEAD = 65536  # detect() reads this much of a text
_SPACE = re.compile(r"[\ufeff \t\r\n]*")
IO_PHASES = ("WRITE", "READ", "RWMIX")

_RESULT_HEADER = re.compile(r"^OPERATION\s+RESULT TYPE\s+FIRST DONE\s+LAST DONE")
# `WRITE       Elapsed time     :     30.140s     30.196s`, `            IOPS             :   2913   2911`.
_ROW = re.compile(r"^(?:(?P<phase>[A-Z][A-Z_]{1,20})\s{2,})?(?P<name>[A-Za-z][A-Za-z %/]{0,30}?)\s*:\s*(?P<rest>.*)$")
_LATENCY = re.compile(r"(?P<key>min|avg|max)=(?P<value>[0-9.,]{1,20})(?P<unit>ns|us|µs|ms|s)\b")
_PERCENTILE = re.compile(r"(?P<pct>[0-9.]{1,6})%<=(?P<value>[0-9.,]{1,20})")
_ELAPSED = re.compile(r"^(?:(?P<h>\d{1,6})h)?(?:(?P<m>\d{1,6})m(?!s))?(?:(?P<s>[0-9.]{1,12})s|(?P<ms>[0-9.]{1,12})ms)$")
_DATE = re.compile(r"^ISO DATE(?: start)?\s*:\s*(?P<date>\S{10,40})")
_ISO = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:([+-])(\d{2}):?(\d{2})|Z)?$")
_TO_US = {"ns": 0.001, "us": 1.0, "µs": 1.0, "ms": 1000.0, "s": 1_000_000.0}
_PERCENTILE_FIELDS = {50.0: "latency_p50", 95.0: "latency_p95", 99.0: "latency_p99", 99.9: "latency_p999"}
_CSV_HEADER_START = "ISO date,label,path type"
# Options that take no value: the word after one is a path (or the next option).
_NO_VALUE = frozenset(
    [
        "-w",
        "--write",
        "-r",
        "--read",
        "-d",
        "--mkdirs",
        "-D",
        "--deldirs",
        "-F",
        "--delfiles",
        "--stat",
        "--sync",
        "--dropcache",
        "--direct",
        "--rand",
        "--nolive",
        "--trunc",
        "--lat",
        "--latpercent",
        "--cpu",
        "--allelapsed",
        "--nodelerr",
        "--nocsvlabels",
    ]
)


def detect(text: str) -> float:
    # Every file of unknown format passes through here, most of them short: both outputs hold a U (the result table's
    # RESULT TYPE, the CSV header's CPU%), found by one memchr scan (CPython 3.11 finds a longer literal in a short
    # text several times slower); then the CSV's header at the start, where elbencho writes it.
    if text.find("U", 0, _HEAD) < 0:
        return 0.0
    start = 0 if text.startswith("I") else _SPACE.match(text).end()  # type: ignore[union-attr]
    if text.startswith(_CSV_HEADER_START, start):
        return 0.95 if text.find("[last]", start, _HEAD) >= 0 else 0.5
    head = text[:_HEAD]
    if find_rare(head, "FIRST DONE", 0) >= 0 and "LAST DONE" in head and "RESULT TYPE" in head:
        return 0.95
    if find_rare(head, _CSV_HEADER_START, 4) >= 0 and "[last]" in head:
        return 0.95
    return 0.0


def parse(text: str) -> list[IoRecord]:
    if text.lstrip("\ufeff \n").startswith(_CSV_HEADER_START) or "\n" + _CSV_HEADER_START in text[:65536]:
        return _CsvReader().read(text)
    return _ResultReader().read(text)


@dataclass(slots=True)
class _Phase:
    """One phase of the result table: its rows' FIRST DONE and LAST DONE columns as printed."""

    name: str
    line: int
    rows: dict[str, tuple[str, str]] = field(default_factory=dict)  # row name -> (first done, last done)
    latency: str | None = None  # the `IO latency` row's bracket
    percentiles: str | None = None  # the `IO lat % us` row's bracket


@dataclass(slots=True)
class _Setup:
    """What a result's command line says of its I/O."""

    block: int | None = None
    threads: int | None = None
    hosts: int = 1
    iodepth: int = 1
    random: bool = False
    rwmix_pct: float | None = None
    target: str | None = None
    inferred: set[str] = field(default_factory=set)
    meta: dict[str, str] = field(default_factory=dict)


class _ResultReader:
    """The result file (or the console's table): ISO DATE / COMMAND LINE, then one block per phase."""

    def __init__(self) -> None:
        self.records: list[IoRecord] = []
        self.warnings: list[str] = []
        self.started_at: str | None = None
        self.setup = _Setup()
        self.phase: _Phase | None = None
        self.in_table = False

    def warn(self, number: int, what: str) -> None:
        add_line_warning(self.warnings, number, what)

    def read(self, text: str) -> list[IoRecord]:
        for number, raw in enumerate(text.split("\n"), 1):
            if len(raw) > MAX_LINE:
                continue
            line = raw.strip()
            if not line:
                continue
            if line.startswith("ISO DATE"):
                self.close()
                if m := _DATE.match(line):
                    self.started_at = _iso(m["date"]) if "end" not in line[:14] else self.started_at
            elif line.startswith("COMMAND LINE:"):
                self.close()
                self.setup = _command_line(line[len("COMMAND LINE:") :])
            elif _RESULT_HEADER.match(line):
                self.close()
                self.in_table = True
            elif line[0] in "=-":
                if line.startswith("---"):
                    self.close()  # the end of a phase block
            elif self.in_table:
                self.row(line, number)
        self.close()
        if self.records:
            return ParsedRecords(self.records, self.warnings)
        raise ParseError("no elbencho WRITE or READ result found", 1)

    def row(self, line: str, number: int) -> None:
        m = _ROW.match(line)
        if m is None:
            self.warn(number, f"{how_damaged(line)} result line: skipped")
            return
        if m["phase"]:
            self.close()
            self.phase = _Phase(m["phase"], number)
        phase = self.phase
        if phase is None:
            return
        name, rest = " ".join(m["name"].split()), m["rest"].strip()
        if rest.startswith("["):
            if name == "IO latency":
                phase.latency = rest
            elif name == "IO lat % us":
                phase.percentiles = rest
            return
        cells = rest.split()
        if len(cells) != 2:
            self.warn(number, f"{how_damaged(line)} {name!r} line: skipped")
            return
        phase.rows[name] = (cells[0], cells[1])

    def close(self) -> None:
        phase, self.phase = self.phase, None
        if phase is None or phase.name not in IO_PHASES:
            return
        iops_cells = phase.rows.get("IOPS")
        mib_cells = phase.rows.get("Throughput MiB/s")
        if iops_cells is None and mib_cells is None:
            return
        iops = read_number(iops_cells[1]) if iops_cells else None
        mib = read_number(mib_cells[1]) if mib_cells else None
        elapsed = phase.rows.get("Elapsed time")
        first: dict[str, str] = {}
        for key, name in (("elapsed", "Elapsed time"), ("iops", "IOPS"), ("mib_s", "Throughput MiB/s"),
                          ("total_mib", "Total MiB")):  # fmt: skip
            if name in phase.rows:
                first[f"first_done.{key}"] = phase.rows[name][0]
        latency = _latency_us(phase.latency, phase.percentiles)
        _add(
            self.records,
            source_line=phase.line,
            operation=phase.name,
            setup=self.setup,
            iops=iops,
            mib_s=mib,
            duration_s=_seconds(elapsed[1]) if elapsed else None,
            started_at=self.started_at,
            latency=latency,
            metadata=first,
            version=None,
        )


class _CsvReader:
    """The CSV file: a header row, then one row per phase (a file may hold several runs' rows, headers repeated)."""

    def __init__(self) -> None:
        self.records: list[IoRecord] = []
        self.warnings: list[str] = []

    def read(self, text: str) -> list[IoRecord]:
        header: list[str] | None = None
        for number, raw in enumerate(text.split("\n"), 1):
            line = raw.strip().lstrip("\ufeff")
            if not line or len(line) > MAX_LINE:
                continue
            try:
                cells = next(csv.reader([line]))
            except (csv.Error, StopIteration):
                add_line_warning(self.warnings, number, "unreadable CSV row: skipped")
                continue
            if line.startswith(_CSV_HEADER_START):
                header = cells
                continue
            if header is None:
                continue
            if len(cells) != len(header):
                how = how_damaged(line, len(cells) < len(header))
                add_line_warning(self.warnings, number, f"{how} CSV row ({len(cells)} of {len(header)} cells): skipped")
                continue
            self.row(dict(zip(header, cells, strict=True)), number)
        if self.records:
            return ParsedRecords(self.records, self.warnings)
        raise ParseError("no elbencho WRITE or READ row found in the CSV file", 1)

    def row(self, row: dict[str, str], number: int) -> None:
        operation = row.get("operation", "").strip().upper()
        if operation not in IO_PHASES:
            return
        setup = _command_line(row.get("command", ""))
        hosts = _int(row.get("hosts")) or 1
        threads = _int(row.get("threads"))
        setup.threads = threads if threads is not None else setup.threads
        setup.hosts = hosts
        setup.block = _int(row.get("block size")) or setup.block
        setup.iodepth = _int(row.get("IO depth")) or setup.iodepth
        setup.random = row.get("random", "").strip() == "1" or setup.random
        setup.inferred.discard("threads")
        setup.inferred.discard("block_size_bytes")
        if row.get("label"):
            setup.meta["label"] = row["label"]
        started_at = _iso(row.get("ISO date", "").strip())
        version = row.get("version") or None
        seconds = _float(row.get("time ms [last]"))
        latency = {
            "latency_min": _float(row.get("IO lat us [min]")),
            "latency_avg": _float(row.get("IO lat us [avg]")),
            "latency_max": _float(row.get("IO lat us [max]")),
        }
        first = {
            f"first_done.{key}": row[col]
            for key, col in (("time_ms", "time ms [first]"), ("iops", "IOPS [first]"), ("mib_s", "MiB/s [first]"))
            if row.get(col)
        }
        if cpu := row.get("CPU% [last]"):
            first["cpu.last_done_pct"] = cpu
        rwmix_read = _float(row.get("rwmix read IOPS [last]"))
        records_before = len(self.records)
        _add(
            self.records,
            source_line=number,
            operation=operation,
            setup=setup,
            iops=_float(row.get("IOPS [last]")),
            mib_s=_float(row.get("MiB/s [last]")),
            duration_s=seconds / 1000 if seconds is not None else None,
            started_at=started_at,
            latency=latency,
            metadata=first,
            version=version,
            mixed=rwmix_read is not None,
        )
        if rwmix_read is not None and len(self.records) > records_before:
            read_latency = {
                "latency_min": _float(row.get("rwmix read IO lat us [min]")),
                "latency_avg": _float(row.get("rwmix read IO lat us [avg]")),
                "latency_max": _float(row.get("rwmix read IO lat us [max]")),
            }
            _add(
                self.records,
                source_line=number,
                operation="READ",
                setup=setup,
                iops=rwmix_read,
                mib_s=_float(row.get("rwmix read MiB/s [last]")),
                duration_s=seconds / 1000 if seconds is not None else None,
                started_at=started_at,
                latency=read_latency,
                metadata={},
                version=version,
                mixed=True,
                run_index=self.records[-1].run_index,
            )


def _add(
    records: list[IoRecord],
    *,
    source_line: int,
    operation: str,
    setup: _Setup,
    iops: float | None,
    mib_s: float | None,
    duration_s: float | None,
    started_at: str | None,
    latency: dict[str, float | None],
    metadata: dict[str, str],
    version: str | None,
    mixed: bool = False,
    run_index: int | None = None,
) -> None:
    if iops is None and mib_s is None:
        return
    direction = "read" if operation == "READ" else "write"
    inferred = set(setup.inferred)
    if mixed and setup.rwmix_pct is not None:
        read_pct = setup.rwmix_pct
    elif mixed:
        read_pct = 50.0  # elbencho's --rwmixpct default
        inferred.add("read_pct")
    else:
        read_pct = 100.0 if direction == "read" else 0.0
    block = setup.block
    if iops is None and mib_s is not None and block:
        iops = mib_s * MIB / block
        inferred.add("iops")
    elif iops and block and mib_s is not None and mib_s < PRECISE_MIB_S:
        # elbencho prints whole MiB/s: below 100 the rounding hides more than 1 %, so IOPS x block size is used.
        metadata = dict(metadata, printed_mib_s=f"{mib_s:g}")
        mib_s = iops * block / MIB
        inferred.add("throughput_bytes_per_s")
    threads = setup.threads * setup.hosts if setup.threads is not None else None
    meta = dict(setup.meta)
    meta["phase"] = operation
    if setup.hosts > 1 and setup.threads is not None:
        meta["threads_per_host"] = str(setup.threads)
    meta.update(metadata)
    records.append(
        IoRecord(
            tool="elbencho",
            tool_version=version,
            run_index=run_index if run_index is not None else (records[-1].run_index + 1 if records else 0),
            source_line=source_line,
            started_at=started_at,
            pattern="random" if setup.random else "sequential",
            operation="mixed" if mixed else direction,  # type: ignore[arg-type]
            read_pct=read_pct,
            direction=direction,  # type: ignore[arg-type]
            block_size_bytes=block,
            threads=threads,
            queue_depth=setup.iodepth,
            iops=iops,
            throughput=mib_s,
            throughput_unit="MiB/s",
            latency_unit="us",
            duration_s=duration_s,
            target=setup.target,
            inferred=sorted(inferred),
            metadata=meta,
            **latency,
        )
    )


def _command_line(text: str) -> _Setup:
    """elbencho's options as its COMMAND LINE (or the CSV's `command`) echoes them: `"--threads" "4"`."""
    setup = _Setup()
    try:
        tokens = shlex.split(text)
    except ValueError:
        tokens = text.replace('"', " ").split()
    options: dict[str, str] = {}
    flags: set[str] = set()
    paths: list[str] = []
    k = 1  # (tokens[0] is the program)
    while k < len(tokens):
        token = tokens[k]
        k += 1
        if not token.startswith("-"):
            paths.append(token)
            continue
        key, eq, value = token.partition("=")
        flags.add(key)
        if eq:
            options[key] = value
        elif key not in _NO_VALUE and k < len(tokens) and not tokens[k].startswith("-"):
            options.setdefault(key, tokens[k])
            k += 1
    if paths:
        setup.target = " ".join(paths)
    block = options.get("-b") or options.get("--block")
    setup.block = _size(block)
    if setup.block is None:
        setup.block = 1024 * 1024  # elbencho's default block size (1 MiB)
        setup.inferred.add("block_size_bytes")
    threads = options.get("-t") or options.get("--threads")
    setup.threads = _int(threads)
    if setup.threads is None:
        setup.threads = 1  # elbencho's default
        setup.inferred.add("threads")
    depth = _int(options.get("--iodepth"))
    setup.iodepth = depth or 1
    if depth is None:
        setup.inferred.add("queue_depth")
    setup.random = "--rand" in flags
    if "--rwmixpct" in options and (pct := _float(options["--rwmixpct"])) is not None:
        setup.rwmix_pct = min(100.0, max(0.0, pct))
    if hosts := options.get("--hosts"):
        setup.meta["hosts"] = hosts
        if "[" not in hosts:
            setup.hosts = len([h for h in hosts.split(",") if h])
    if "--direct" in flags:
        setup.meta["direct_io"] = "1"
    if text.strip():
        setup.meta["command_line"] = text.strip()
    return setup


def _latency_us(bracket: str | None, percentiles: str | None) -> dict[str, float | None]:
    out: dict[str, float | None] = {"latency_min": None, "latency_avg": None, "latency_max": None}
    for m in _LATENCY.finditer(bracket or ""):
        value = read_number(m["value"])
        if value is not None:
            out[f"latency_{m['key']}"] = round(value * _TO_US[m["unit"]], 6)
    for m in _PERCENTILE.finditer(percentiles or ""):
        pct, value = _float(m["pct"]), read_number(m["value"])
        if pct in _PERCENTILE_FIELDS and value is not None:
            out[_PERCENTILE_FIELDS[pct]] = value
    return out


def _seconds(text: str) -> float | None:
    """`30.196s`, `2m5.755s`, `1h2m3s`, `586ms` -> seconds."""
    m = _ELAPSED.match(text.strip())
    if m is None or not any(m.groups()):
        return None
    try:
        seconds = float(m["s"]) if m["s"] else float(m["ms"]) / 1000 if m["ms"] else 0.0
    except ValueError:
        return None
    return seconds + 60 * int(m["m"] or 0) + 3600 * int(m["h"] or 0)


def _iso(text: str) -> str | None:
    m = _ISO.match(text)
    if m is None:
        return None
    stamp, sign, hours, minutes = m.groups()
    return stamp + (f"{sign}{hours}:{minutes}" if sign else "+00:00" if text.endswith("Z") else "")


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    text = text.strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 9 else None


def _float(text: str | None) -> float | None:
    return read_number(text) if text else None


def _size(text: str | None) -> int | None:
    if not text:
        return None
    try:
        size = size_to_bytes(text)
    except (ValueError, OverflowError):
        return None
    return size if 0 < size < 2**40 else None
