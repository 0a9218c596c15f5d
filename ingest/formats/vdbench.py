"""vdbench (Oracle) raw-I/O results, 5.0x: the console output (also `summary.html` / `totals.html`, the same lines
in HTML) and `flatfile.html` (one row per interval, named columns).

Input (console, vdbench 5.04.07; `Starting RD=` line, the two header lines, the intervals and the `avg_` line)::

    16:24:31.001 Starting RD=rd1; I/O rate: Uncontrolled MAX; elapsed=5; For loops: xfersize=4k threads=8

    Jan 24, 2019    interval        i/o   MB/sec   bytes   read     resp     read    write     read    write ...
                                   rate  1024**2     i/o    pct     time     resp     resp      max      max ...
    16:24:32.018           1    12084.0    47.20    4096  70.00    0.659    0.512    1.002    14.03    18.05 ...
    16:24:36.053     avg_2-5    12104.5    47.28    4096  69.98    0.658    0.511    1.001    15.05    19.12 ...

    (and `resp stddev`, `queue depth`, `cpu% sys+u`, `cpu% sys` after them)

Records (normalized; one per `avg_` line, i.e. per run definition and For-loop value)::

    {"tool": "vdbench", "tool_version": "50407", "run_index": 0, "source_line": 6, "pattern": "random",
     "operation": "mixed", "read_pct": 70.0, "direction": "total", "block_size_bytes": 4096, "threads": 8,
     "queue_depth": 1, "iops": 12104.5, "throughput_bytes_per_s": 49577820.16, "latency_avg_ms": 0.658,
     "latency_max_ms": 19.12, "inferred": ["queue_depth"], ...}

Record mapping:
- One run = one `avg_` line (console, totals.html) or `avg` row (flatfile) of a run definition (`RD=` name; each
  For-loop value is a run of its own). Interval lines are not runs (the first interval is vdbench's warm-up and
  the average leaves it out). A run that did no I/O (`i/o rate` 0) and vdbench's format runs (`RD=format_for_...`,
  `SD_format`: the fill before the measured runs) give no record.
- vdbench prints one figure for all I/O of a run and its read share: operation read (read pct 100), write (0) or
  mixed with direction `total` and read_pct as measured (the run definition's `rdpct` is kept in the metadata).
- `i/o rate` -> iops; `MB/sec` is 2^20 bytes (its header says `1024**2`) -> MiB/s; `bytes i/o` -> block size (the
  average transfer; `xfersize` of the run where given); `resp time` -> latency_avg (ms); `resp max` (older
  layouts) or the larger of `read max` / `write max` -> latency_max (ms). The measured `queue depth` and cpu% are
  metadata.
- threads = vdbench's `threads=` (For loops, the run definition, or the flatfile's column): each vdbench thread
  keeps one I/O outstanding, so queue_depth = 1 per thread (listed in `inferred`).
- pattern from `seekpct` (0, `seq` or `sequential`: sequential; otherwise random, vdbench's default of 100,
  listed in `inferred` when not given); the parameter file's `sd=`/`wd=`/`rd=` lines, where pasted with the
  output, give xfersize, rdpct, seekpct and threads to the run definitions that name them.
- `tool_version` from `Vdbench distribution: vdbench50407` (console), `version` (flatfile).
- A damaged or cut line is reported as a warning (`line N: ...`) and costs only itself; numbers with thousands
  separators read. ParseError when no run is read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats._common import how_damaged, read_number
from kneepoint.ingest.records import IoRecord, ParsedRecords, add_line_warning
from kneepoint.ingest.textio import find_rare, size_to_bytes

NAME = "vdbench"
TITLE = "vdbench"
TOOLS = ("vdbench",)
HOST_KEYS: frozenset[str] = frozenset()  # (the hd= lines of a parameter file are not kept)
USER_KEYS: frozenset[str] = frozenset()
RESULT_KEY_PREFIXES: tuple[str, ...] = ("cpu.", "measured.")
RESULT_KEYS: tuple[str, ...] = ()

MAX_LINE = 4000
_HEAD = 65536  # detect() reads this much of a text

_TAG = re.compile(r"<[^<>]{0,300}>")
_DISTRIBUTION = re.compile(r"Vdbench distribution:\s*vdbench(?P<version>[0-9][0-9a-z.]{1,20})")
_STARTING = re.compile(
    r"Starting RD=(?P<rd>[^;\s]{1,100});\s*I/O rate:\s*(?P<rate>[^;]{1,60});(?:\s*elapsed=(?P<elapsed>\d{1,9});)?"
    r"(?:.*?For loops:\s*(?P<loops>.{0,400}))?$"
)
# A console or totals.html data line: time of day, interval number or `avg_2-5`, then the figures.
_DATA = re.compile(r"^(?P<tod>\d{2}:\d{2}:\d{2}\.\d{3})\s+(?P<interval>avg_\d{1,9}-\d{1,9}|\d{1,9})\s+(?P<values>.+)$")
_HEADER_START = re.compile(r"^(?:[A-Z][a-z]{2}\s+\d{1,2},\s+\d{4}\s+)?interval\s+i/o\s+MB/sec")
_PARAM = re.compile(r"^(?P<kind>sd|wd|rd|hd)=(?P<name>[^,\s]{1,100}),(?P<rest>.{0,2000})$")
_KEY_VALUE = re.compile(r"(?P<key>[a-z_]{1,30})=(?P<value>\([^)]{0,200}\)|[^,\s]{1,200})")
# Column layouts by the number of figures a data line has, for a line pasted without its two header lines.
_LAYOUTS = {
    13: (
        "i/o rate", "MB/sec 1024**2", "bytes i/o", "read pct", "resp time", "read resp", "write resp",
        "read max", "write max", "resp stddev", "queue depth", "cpu% sys+u", "cpu% sys",
    ),
    9: ("i/o rate", "MB/sec 1024**2", "bytes i/o", "read pct", "resp time", "resp max", "resp stddev",
        "cpu% sys+u", "cpu% sys"),
}  # fmt: skip
_NON_SLUG = re.compile(r"[^a-z0-9%]+")
_FLAT_COLUMNS = ["tod", "Run", "Interval"]  # a flatfile's header line starts with these


def detect(text: str) -> float:
    # Every file of unknown format passes through here: every vdbench output holds an underscore (`avg_`,
    # `read_resp`), which one memchr scan looks for before anything else.
    if text.find("_", 0, _HEAD) < 0:
        return 0.0
    head = text[:_HEAD]
    # vdbench's own words: its MB/sec header (`1024**2`), `Starting RD=` or the flatfile's column header.
    if find_rare(head, "1024**2", 4) >= 0 and "interval" in head:
        return 0.95
    if find_rare(head, "Starting RD=", 9) >= 0 and "avg_" in head:
        return 0.9
    if find_rare(head, "reqrate", 3) >= 0 and "bytes/io" in head and "Interval" in head:
        return 0.9
    if "Vdbench" in head or "vdbench" in head:
        return 0.4 if "avg_" in head else 0.0
    return 0.0


def parse(text: str) -> list[IoRecord]:
    return _Reader().read(text)


@dataclass(slots=True)
class _Run:
    """A run definition as the parameter lines and the `Starting RD=` line say."""

    name: str
    line: int
    params: dict[str, str] = field(default_factory=dict)


class _Reader:
    """Line dispatcher: the run being measured, the column layout in force, the parameter lines seen."""

    def __init__(self) -> None:
        self.records: list[IoRecord] = []
        self.warnings: list[str] = []
        self.version: str | None = None
        self.run: _Run | None = None
        self.columns: tuple[str, ...] | None = None
        self.pending_header: list[str] | None = None  # the first header line, waiting for its second
        self.flat: list[str] | None = None  # a flatfile's column names
        self.params: dict[str, dict[str, str]] = {}  # `wd=wd1` -> its key=value pairs (sd=, wd=, rd=)

    def warn(self, number: int, what: str) -> None:
        add_line_warning(self.warnings, number, what)

    def read(self, text: str) -> list[IoRecord]:
        for number, raw in enumerate(text.split("\n"), 1):
            if len(raw) > MAX_LINE:
                continue
            line = raw.strip()
            if "<" in line:  # totals.html / summary.html: the same lines inside tags
                line = _TAG.sub("", line).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").strip()
            if line:
                self.line(line, number)
        if self.records:
            return ParsedRecords(self.records, self.warnings)
        raise ParseError("no vdbench run result (avg_ line or flatfile avg row) found", self.first_line(text))

    @staticmethod
    def first_line(text: str) -> int:
        for number, line in enumerate(text.split("\n"), 1):
            if "avg_" in line or "Starting RD=" in line or "interval" in line:
                return number
        return 1

    def line(self, line: str, number: int) -> None:
        first = line[0]
        if first.isdigit():
            if m := _DATA.match(line):
                if m["interval"].startswith("avg_"):
                    self.average(m["values"], m["interval"], number, line)
            elif "Starting RD=" in line and (m := _STARTING.search(line)):
                self.start(m, number)
            elif self.flat is not None:
                self.flat_row(line, number)
            return
        if self.pending_header is not None:
            second = line.split()
            first_words = self.pending_header
            self.pending_header = None
            if len(second) == len(first_words):
                self.columns = tuple(f"{a} {b}" for a, b in zip(first_words, second, strict=True))
                return
        if _HEADER_START.match(line):
            words = line.split()
            self.pending_header = words[words.index("interval") + 1 :]
        elif first == "t" and line.split()[:3] == _FLAT_COLUMNS:
            self.flat = line.split()
        elif first == "V" and (m := _DISTRIBUTION.search(line)):
            self.version = m["version"]
        elif first in "swrh" and (m := _PARAM.match(line)):
            pairs = {k.lower(): v for k, v in _KEY_VALUE.findall(m["rest"])}
            self.params[f"{m['kind']}={m['name']}"] = pairs

    def start(self, m: re.Match[str], number: int) -> None:
        run = _Run(m["rd"], number)
        run.params["iorate"] = m["rate"].strip()
        if m["elapsed"]:
            run.params["elapsed"] = m["elapsed"]
        for key, value in _KEY_VALUE.findall(m["loops"] or ""):
            run.params[key.lower()] = value  # For loops: xfersize=4k threads=8 rdpct=70
        self.run = run

    # -- console / totals.html

    def average(self, values_text: str, interval: str, number: int, line: str) -> None:
        values = values_text.split()
        columns = self.columns if self.columns and len(self.columns) == len(values) else _LAYOUTS.get(len(values))
        if columns is None:
            how = how_damaged(line)
            self.warn(number, f"{how} avg_ line ({len(values)} figures): skipped")
            return
        figures = {name: _figure(v) for name, v in zip(columns, values, strict=True)}
        run = self.run
        name = run.name if run is not None else None
        if name is not None and name.lower().startswith(("format", "sd_format")):
            return  # the fill before the measured runs
        iops = figures.get("i/o rate")
        if iops is None or iops <= 0:
            if iops is None:
                self.warn(number, "avg_ line without a readable i/o rate: skipped")
            return
        maxima = [v for k in ("resp max", "read max", "write max") if (v := figures.get(k)) is not None]
        measured = {f"measured.{_slug(k)}": v for k, v in zip(columns, values, strict=True)}
        self.add(
            number,
            iops=iops,
            mib_s=figures.get("MB/sec 1024**2"),
            avg_bytes=figures.get("bytes i/o"),
            read_pct=figures.get("read pct"),
            latency_avg=figures.get("resp time"),
            latency_max=max(maxima) if maxima else None,
            interval=interval,
            params=dict(run.params) if run is not None else {},
            rd=name,
            metadata=measured,
        )

    # -- flatfile.html

    def flat_row(self, line: str, number: int) -> None:
        assert self.flat is not None
        values = line.split()
        if len(values) != len(self.flat):
            if len(values) > 2 and values[2].startswith("avg"):
                self.warn(number, f"{how_damaged(line)} flatfile avg row: skipped")
            return
        row = dict(zip(self.flat, values, strict=True))
        if not row.get("Interval", "").startswith("avg"):
            return
        rd = row.get("Run", "")
        if rd.lower().startswith(("format", "sd_format")):
            return
        iops = _figure(row.get("rate", ""))
        if iops is None or iops <= 0:
            return
        params = {k: row[k] for k in ("xfersize", "threads", "rdpct", "seekpct") if row.get(k) not in (None, "")}
        if version := row.get("version"):
            self.version = version.removeprefix("vdbench")
        maxima = [v for k in ("resp_max",) if (v := _figure(row.get(k, ""))) is not None]
        skip = {"tod", "Run", "Interval", "rate", "MB/sec", "bytes/io", "read%", "resp", "resp_max", "version"}
        self.add(
            number,
            iops=iops,
            mib_s=_figure(row.get("MB/sec", "")),
            avg_bytes=_figure(row.get("bytes/io", "")),
            read_pct=_figure(row.get("read%", "")),
            latency_avg=_figure(row.get("resp", "")),
            latency_max=maxima[0] if maxima else None,
            interval=row["Interval"],
            params=params,
            rd=rd,
            metadata={f"measured.{_slug(k)}": v for k, v in row.items() if k not in skip and k not in params},
        )

    # -- records

    def add(
        self,
        number: int,
        *,
        iops: float,
        mib_s: float | None,
        avg_bytes: float | None,
        read_pct: float | None,
        latency_avg: float | None,
        latency_max: float | None,
        interval: str,
        params: dict[str, str],
        rd: str | None,
        metadata: dict[str, str],
    ) -> None:
        params = self.definition(rd, params)
        inferred: list[str] = []
        block = _size(params.get("xfersize"))
        if block is None and avg_bytes:
            block = round(avg_bytes)  # the average transfer vdbench measured
            if "xfersize" not in params:
                inferred.append("block_size_bytes")
        rdpct = _figure(params.get("rdpct", ""))
        if read_pct is None:
            read_pct = rdpct if rdpct is not None else 100.0
            inferred.append("read_pct")
        read_pct = min(100.0, max(0.0, read_pct))
        operation = "read" if read_pct >= 100 else "write" if read_pct <= 0 else "mixed"
        seek = params.get("seekpct")
        if seek is None:
            pattern = "random"  # vdbench's seekpct=100
            inferred.append("pattern")
        else:
            pattern = "sequential" if seek.lower() in ("0", "seq", "sequential", "eof") else "random"
        threads = _count(params.get("threads"))
        queue_depth = 1 if threads is not None else None
        if threads is not None:
            inferred.append("queue_depth")  # one outstanding I/O per vdbench thread
        meta = {k: v for k, v in params.items()}
        if rd:
            meta["rd"] = rd
        meta["interval"] = interval
        meta.update(metadata)
        self.records.append(
            IoRecord(
                tool="vdbench",
                tool_version=self.version,
                run_index=len(self.records),
                source_line=number,
                pattern=pattern,  # type: ignore[arg-type]
                operation=operation,  # type: ignore[arg-type]
                read_pct=read_pct,
                direction="total" if operation == "mixed" else operation,  # type: ignore[arg-type]
                block_size_bytes=block,
                threads=threads,
                queue_depth=queue_depth,
                iops=iops,
                throughput=mib_s,
                throughput_unit="MiB/s",
                latency_unit="ms",
                latency_avg=latency_avg,
                latency_max=latency_max,
                duration_s=_figure(params.get("elapsed", "")),
                target=params.get("lun"),
                inferred=sorted(inferred),
                metadata=meta,
            )
        )

    def definition(self, rd: str | None, loops: dict[str, str]) -> dict[str, str]:
        """A run's parameters: its rd= line's, the wd= and sd= lines it names, then its For-loop values."""
        out: dict[str, str] = {}
        rd_params = self.params.get(f"rd={rd}", {}) if rd else {}
        wd_params = self.params.get(f"wd={rd_params.get('wd', '')}", {})
        if not wd_params and len([k for k in self.params if k.startswith("wd=")]) == 1:
            wd_params = next(v for k, v in self.params.items() if k.startswith("wd="))
        sd_params = self.params.get(f"sd={wd_params.get('sd', '')}", {})
        for source in (sd_params, wd_params, rd_params, loops):
            for key in ("lun", "xfersize", "rdpct", "seekpct", "threads", "elapsed", "iorate"):
                if key in source:
                    out[key] = source[key]
        return out


def _figure(text: str) -> float | None:
    """A figure as vdbench prints it (NaN and the like are none)."""
    value = read_number(text)
    return value


def _slug(name: str) -> str:
    return _NON_SLUG.sub("_", name.lower()).strip("_")


def _count(text: str | None) -> int | None:
    if text is None or not text.isdigit() or len(text) > 9:
        return None
    return int(text) or None


def _size(text: str | None) -> int | None:
    """`4k`, `1m`, `512` (vdbench sizes are binary); None for a distribution `(4k,50,8k,50)`."""
    if not text or text.startswith("("):
        return None
    try:
        size = size_to_bytes(text)
    except (ValueError, OverflowError):
        return None
    return size if 0 < size < 2**40 else None
