"""fio's normal text output (`--output-format=normal`, the default), fio 2.x and 3.x.

Input (fio-3.19, trimmed)::

    random-read-4KB-8Thread: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, \
ioengine=posixaio, iodepth=1
    ...
    fio-3.19
    Starting 8 processes

    random-read-4KB-8Thread: (groupid=0, jobs=8): err= 0: pid=15451: Wed Dec 30 10:31:06 2020
      read: IOPS=59.6k, BW=233MiB/s (244MB/s)(2328MiB/10001msec)
        clat (nsec): min=291, max=11807k, avg=133490.72, stdev=230961.49
         lat (usec): min=4, max=11809, avg=133.92, stdev=231.02
        clat percentiles (usec):
         |  1.00th=[   59],  5.00th=[   69], 10.00th=[   92], 20.00th=[  111],
         | 50.00th=[  125], 95.00th=[  163], 99.00th=[  194], 99.90th=[ 2057],
      lat (usec)   : 2=0.01%, 10=0.01%, 20=0.01%, 50=0.08%, 100=14.43%
      IO depths    : 1=100.0%, 2=0.0%, 4=0.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%
         issued rwts: total=595942,0,0,0 short=0,0,0,0 dropped=0,0,0,0
         latency   : target=0, window=0, percentile=100.00%, depth=1

    Run status group 0 (all jobs):
       READ: bw=233MiB/s (244MB/s), 233MiB/s-233MiB/s (244MB/s-244MB/s), io=2328MiB (2441MB), run=10001-10001msec

fio 2.x prints the direction line as ``read : io=32708KB, bw=557417B/s, iops=136, runt= 60086msec`` and
``issued    : total=r=8177/w=8200/d=0``.

Records (normalized)::

    {"record": "io", "tool": "fio", "tool_version": "3.19", "run_index": 0, "source_line": 12,
     "pattern": "random", "operation": "read", "read_pct": 100.0, "direction": "read",
     "block_size_bytes": 4096, "threads": 8, "queue_depth": 1, "duration_s": 10.001, "iops": 59588.04,
     "throughput_bytes_per_s": 244318208, "latency_avg_ms": 0.13392, "latency_min_ms": 0.004,
     "latency_max_ms": 11.809, "latency_p50_ms": 0.125, "latency_p99_ms": 0.194, ...}

Rules:
- One run = one job result block (`name: (groupid=G, jobs=N): err= ...`), one record per direction with
  I/O (`read`, `write`; `mixed` under unified_rw_reporting gives direction `total`; trim is skipped).
  Blocks of one job reported per clone (numjobs without group_reporting: same name and group id within
  one fio invocation) are combined: IOPS and throughput summed, mean latency weighted by I/O count,
  min/max over clones, percentiles null (text has no bins to merge), threads = the clones' `jobs=`.
- The job header line (`name: (g=G): rw=..., bs=..., ioengine=..., iodepth=...`) gives pattern,
  operation, block size, engine and asked queue depth; it is matched to blocks by name and group. A
  `...` line under it (numjobs > 1) is noted; threads come from the block's `jobs=N`.
- Without a header (a pasted block): the queue depth from `latency : ... depth=N` (fio prints the
  iodepth there), else the busiest `IO depths` bucket; the operation from the directions with I/O; the
  pattern from the job name (`rand...`), else fio's default sequential; the block size from bytes /
  I/Os snapped to a power of two or 512 bytes; all listed in `inferred`. A mixed job's read_pct is the
  measured share of read I/Os (fio prints no rwmixread), rounded to a whole percent, inferred.
- Queue depth capped: a synchronous engine (sync, psync, ...) or fio's note `... queue depth will be
  capped at 1` (for jobs whose engine is synchronous or unknown) or, with no engine known, `IO depths :
  1=100.0%` under an iodepth above 1: queue depth 1 (inferred), the asked one in `queue_depth_asked`.
- IOPS: issued I/Os x 1000 / runtime (fio's own formula, before it rounds to `59.6k`), else as printed.
- Throughput: the `BW=` value in the unit printed (3.x: `233MiB/s`; fio 2.x's `KB/s`, `MB/s` are
  binary, so KiB/s, MiB/s). Where the binary and decimal figures disagree (fio 3.0's num2str carry
  bug printed `11.0MiB/s (12.6MB/s)`), the one that matches io / runtime wins.
- Latency: mean/min/max of the `lat` line (else `clat`), in its unit (nsec -> ns, usec -> us, msec ->
  ms); percentiles of `lat` where printed, else `clat`, converted to that unit. The `lat (usec)   :
  250=84.91%` distribution becomes a `share` histogram (completion latency, fio's own buckets; the
  open `>=2000` ms bucket is bounded by the max latency) on single-direction jobs.
- Several fio invocations in one file (header lines, `fio-X`, `Starting N processes` after results, or
  blocks after `Run status group`) are separate; notes, `Jobs: ...` progress lines, `Laying out IO
  file`, shell prompts and blank lines are skipped. `Disk stats` names the target device.
- Text next to fio's JSON of the same jobs (`--output-format=normal,json`) is left to fio_json (a
  ParseError here), since the JSON is the complete copy.
- fio 2.0.x: its version printed as a bare number (`2.0.8`), `slat (usec): min=3 , max=214 , avg= 6.83` (a space
  before each comma), both directions of a mixed job each with its own latency unit (`clat (msec)` under read,
  `clat (usec)` under write), `bw=583462B/s` and `KB/s`.
- A `group_reporting` block's `jobs=N` is every job fio merged into the group (numjobs of every job section in it):
  `threads`. Each run is checked against Little's law (IOPS x mean latency against threads x queue depth, far
  outside 0.25x..1.5x): a warning `line N: ...` where they disagree.
- Terse lines beside the text of the same jobs (`--output-format=terse,normal`) are left to fio_terse (a
  ParseError here), so no result is counted twice.
- started_at stays empty: fio prints the time it reported, not when the job started (kept as
  `reported_at`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from types import ModuleType

from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats import fio_json, fio_terse
from kneepoint.ingest.formats._common import (
    CAPPED_NOTE,
    FIO_RW,
    SYNC_ENGINES,
    first_content_line,
    littles_law_warning,
    snap_block_size,
)
from kneepoint.ingest.records import IoRecord, ParsedRecords
from kneepoint.ingest.textio import size_to_bytes

NAME = "fio_text"
TITLE = "fio text"
TOOLS = ("fio",)
# fio's text output names no host or user; its results are the records themselves.
HOST_KEYS: frozenset[str] = frozenset()
USER_KEYS: frozenset[str] = frozenset()
RESULT_KEY_PREFIXES: tuple[str, ...] = ()
RESULT_KEYS: tuple[str, ...] = ()
TOOL = "fio"

_NUM = r"[0-9]{1,20}(?:\.[0-9]{1,12}|)"
_HEADER = re.compile(r"^(?P<name>.{0,512}?): \(g=(?P<g>[0-9]{1,9})\): rw=(?P<rw>[a-z]{1,16}),\s*(?P<rest>.*)$")
_RESULT = re.compile(
    r"^(?P<name>.{0,512}?): \(groupid=(?P<g>[0-9]{1,9}), jobs=(?P<jobs>[0-9]{1,9})\): "
    r"err=\s*(?P<err>-?[0-9]{1,9})(?P<rest>.*)$"
)
_VERSION = re.compile(r"^fio[- ]v?([0-9]{1,3}\.[0-9]{1,3}[0-9A-Za-z.+_-]{0,40})\s*$")
_BARE_VERSION = re.compile(r"^(2\.[0-9]{1,2}\.[0-9]{1,2}(?:-[0-9A-Za-z.+_-]{1,40})?)$")  # fio 2.0.x: `2.0.8` alone
_STARTING = re.compile(r"^Starting ([0-9]{1,9}) (?:process|thread)")


_DIR3 = re.compile(
    rf"^(?P<dir>read|write|trim|mixed)\s*: IOPS=(?P<iops>{_NUM})(?P<ik>[kMGTPE]?), "
    rf"BW=(?P<bw>{_NUM})(?P<bwp>[kKMGTPE]?i?)(?P<bwu>B|bit)/s"
    rf"(?: \((?P<bw2>{_NUM})(?P<bwp2>[kKMGTPE]?i?)(?P<bwu2>B|bit)/s\))?"
    rf"(?:\((?P<io>{_NUM})(?P<iop>[kKMGTPE]?i?)B/(?P<run>[0-9]{{1,12}})msec\))?"
)
_DIR2 = re.compile(
    rf"^(?P<dir>read|write|trim|mixed)\s*: io=(?P<io>{_NUM})(?P<iop>[KMGTPE]?i?)B, "
    rf"bw=(?P<bw>{_NUM})(?P<bwp>[KMGTPE]?i?)(?P<bwu>B|bit)/s, "
    rf"iops=\s*(?P<iops>{_NUM})(?P<ik>[KMGTPE]?)\s*, runt=\s*(?P<run>[0-9]{{1,12}})\s*msec"
)
_LAT_STAT = re.compile(
    rf"^(?P<kind>slat|clat|lat)\s+\((?P<unit>nsec|usec|msec)\)\s*:\s*min=\s*(?P<min>{_NUM})(?P<mink>[kKMG]?)\s*,"
    rf"\s*max=\s*(?P<max>{_NUM})(?P<maxk>[kKMG]?)\s*,\s*avg=\s*(?P<avg>{_NUM})"
)
_PCT_HEAD = re.compile(r"^(?P<kind>[a-z ]{1,40}?) percentiles \((?P<unit>nsec|usec|msec)\)\s*:")
_PCT_ENTRY = re.compile(r"([0-9]{1,3}(?:\.[0-9]{1,6})?)th=\[\s*([0-9]{1,20})\]")
_LAT_DIST = re.compile(r"^lat \((?P<unit>nsec|usec|msec)\)\s*:\s*(?P<entries>(?:>=)?[0-9].*)$")
_DIST_ENTRY = re.compile(r"(>=|)([0-9]{1,9})=([0-9]{1,3}(?:\.[0-9]{1,4}|))%")
_ISSUED3 = re.compile(r"^issued rwts?\s*: total=([0-9]{1,20}),([0-9]{1,20})")
_ISSUED2 = re.compile(r"^issued\s*: total=r=([0-9]{1,20})/w=([0-9]{1,20})")
_DEPTH = re.compile(r"^latency\s*: target=.{0,80}depth=([0-9]{1,9})")
_IO_DEPTHS = re.compile(r"^IO depths\s*:\s*(.*)$")
_DEPTH_ENTRY = re.compile(r"(>=)?([0-9]{1,4})=([0-9]{1,3}(?:\.[0-9]{1,4})?)%")
_DISK = re.compile(r"^(\S{1,128}): ios=[0-9]")
_SZ = r"[0-9][^\s,/-]{0,23}"
_BS3 = re.compile(rf"bs=\(R\) ({_SZ})-({_SZ}), \(W\) ({_SZ})-({_SZ})(?P<seqrand>, bs_is_seq_rand)?")
_BS2 = re.compile(rf"bs(?P<seqrand>\(seq/rand\))?=({_SZ})-({_SZ})/({_SZ})-({_SZ})")
_BS1 = re.compile(r"bs=([0-9]{1,12})-([0-9]{1,12})")
_BS_TEXT = re.compile(r"bs(?:\(seq/rand\))?=(.{1,200}?),? ioengine=")
_ENGINE = re.compile(r"ioengine=([^,\s]{1,64})")
_IODEPTH = re.compile(r"iodepth=([0-9]{1,9})")

_SI = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_NS = {"nsec": 1.0, "usec": 1e3, "msec": 1e6}
_UNIT = {"nsec": "ns", "usec": "us", "msec": "ms"}
_PCT_KEYS = {"50.00": "p50", "95.00": "p95", "99.00": "p99", "99.90": "p999"}
_POW = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}
# Throughput units a record may carry (dbt_project.yml), by power of the prefix.
_BINARY_UNITS = ("B/s", "KiB/s", "MiB/s", "GiB/s")
_DECIMAL_UNITS = ("B/s", "kB/s", "MB/s", "GB/s")
_UNIT_BYTES = {"B/s": 1, "KiB/s": 1024, "MiB/s": 1024**2, "GiB/s": 1024**3, "kB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9}


@dataclass(slots=True)
class _Header:
    name: str
    groupid: int
    rw: str
    line: int
    bs_read: tuple[int, int] | None = None
    bs_write: tuple[int, int] | None = None
    bs_text: str | None = None
    seq_rand: bool = False
    ioengine: str | None = None
    iodepth: int | None = None
    clones_hint: bool = False  # a `...` line: numjobs > 1


@dataclass(slots=True)
class _Direction:
    iops: float | None = None
    throughput: float | None = None
    throughput_unit: str = "B/s"
    io_bytes: float | None = None
    runtime_ms: float | None = None
    lat: dict[str, tuple[str, float | None, float | None, float | None]] = field(default_factory=dict)
    pct: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)  # kind: unit, {"99.90": "2057"}
    bw_note: str | None = None


@dataclass(slots=True)
class _Block:
    name: str
    groupid: int
    jobs: int
    line: int
    error: int = 0
    pasted: bool = False  # no `name: (groupid=...)` line: jobs= unknown
    reported_at: str | None = None
    dirs: dict[str, _Direction] = field(default_factory=dict)
    lat_dist: list[tuple[str, str]] = field(default_factory=list)  # `lat (unit) : entries`, read by _histogram
    issued: tuple[int, int] | None = None
    depth: int | None = None
    io_depths: list[str] = field(default_factory=list)  # the `IO depths :` entries, read by _io_depths


@dataclass(slots=True)
class _Invocation:
    headers: dict[tuple[str, int], _Header] = field(default_factory=dict)
    blocks: list[_Block] = field(default_factory=list)
    version: str | None = None
    processes: int | None = None
    capped_note: bool = False
    finished: bool = False  # `Run status group` or `Disk stats` seen: no more job blocks
    disk: str | None = None


def detect(text: str) -> float:
    # Every file of unknown format passes through here. Each pattern below needs one of the literals `: (g`,
    # `: IOPS=`, `: io=` (another tool's text lacks them: one scan decides), and holds "=" at most 10 characters
    # after the literal's ":", so the literal is searched from just before the first "=" (many tools print none).
    first_equals = text.find("=", 0, 65536)
    if first_equals < 0 or _LITERALS.search(text, first_equals - 10 if first_equals > 10 else 0, 65536) is None:
        return 0.0
    head = text[:65536]
    if '"fio version"' in head and '"jobs"' in head and "(groupid=" not in head:
        return 0.0  # fio JSON
    has_result = _RESULT_SEARCH.search(head) is not None
    has_dir = _starts_line(_DIR_SEARCH, head, _DIR_LEAD)
    has_header = _HEADER_SEARCH.search(head) is not None
    if has_result and has_dir:
        return 0.9
    if has_header and (has_dir or _starts_line(_VERSION_SEARCH, head)):
        return 0.8
    if has_dir:
        return 0.6
    return 0.0


_LITERALS = re.compile(r": (?:\(g|IOPS=|io=)")
_RESULT_SEARCH = re.compile(r": \(groupid=[0-9]{1,9}, jobs=[0-9]{1,9}\): err=")
_HEADER_SEARCH = re.compile(r": \(g=[0-9]{1,9}\): rw=[a-z]{1,16}, ")
# Searched from their first literal, then checked to start a line: a MULTILINE `^` in front would make
# Python's re attempt a match at every character of a large file of another tool.
_DIR_SEARCH = re.compile(r"(?:read|write|mixed)\s?: (?:IOPS=[0-9.]{1,24}[kMG]?, BW=|io=[0-9.]{1,24}[KMGTP]?i?B, bw=)")
_DIR_LEAD = re.compile(r"\s{0,16}")
_VERSION_SEARCH = re.compile(r"fio-[0-9]{1,3}\.[0-9]")


def _starts_line(pattern: re.Pattern[str], text: str, lead: re.Pattern[str] | None = None) -> bool:
    """Whether `pattern` matches somewhere with nothing (or only `lead`) before it on its line."""
    for m in pattern.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1
        if start == m.start() or (lead is not None and lead.fullmatch(text, start, m.start())):
            return True
    return False


def parse(text: str) -> ParsedRecords:
    invocations = _Reader().read(text)
    if "{" in text and '"fio version"' in text:  # (a one-character needle is found at memchr's pace)
        _refuse_copy(text, invocations, fio_json, "normal,json")
    if ";fio-" in text:
        _refuse_copy(text, invocations, fio_terse, "terse,normal")
    records: list[IoRecord] = []
    warnings: list[str] = []
    run_index = 0
    for inv in invocations:
        groups: dict[tuple[str, int], list[_Block]] = {}
        for block in inv.blocks:
            groups.setdefault((block.name, block.groupid), []).append(block)
        for (name, groupid), blocks in groups.items():
            header = inv.headers.get((name, groupid)) or _header_by_name(inv, name)
            recs = _records(inv, header, blocks, run_index)
            if recs:
                records.extend(recs)
                run_index += 1
                if warning := littles_law_warning(recs):
                    warnings.append(warning)
    if not records:
        raise ParseError(
            "no fio result found (a `name: (groupid=...)` block with read/write lines)", first_content_line(text)
        )
    return ParsedRecords(records, warnings)


def _refuse_copy(text: str, invocations: list[_Invocation], other: ModuleType, option: str) -> None:
    """`--output-format=normal,json` (or `terse,normal`) writes the same jobs twice: the other format's reader
    (`other`) reads the complete copy, and the text stands down, so one result is never counted twice. Text of
    other jobs is a separate run and is kept."""
    try:
        copies = other.parse(text)
    except ParseError:
        return
    names = {r.metadata.get("jobname") for r in copies}
    blocks = [b for inv in invocations for b in inv.blocks]
    if blocks and all(b.name in names for b in blocks):
        raise ParseError(
            f"fio's text output beside its {other.TITLE.removeprefix('fio ')} output of the same jobs "
            f"(--output-format={option}): read the file as {other.NAME}",
            min(r.source_line for r in copies),
        )


def _header_by_name(inv: _Invocation, name: str) -> _Header | None:
    found = [h for (n, _g), h in inv.headers.items() if n == name]
    if len(found) == 1:
        return found[0]
    if not name and len(inv.headers) == 1:
        return next(iter(inv.headers.values()))
    return None


# ------------------------------------------------------------------------------------------------ reading


# ------------------------------------------------------------------------------------------------ reading


class _Reader:
    """The line dispatcher: the fio invocation, job block and direction being read."""

    def __init__(self) -> None:
        self.invocations: list[_Invocation] = [_Invocation()]
        self.block: _Block | None = None
        self.direction: _Direction | None = None
        self.percentiles: dict[str, str] | None = None  # the percentile table whose `|` lines follow
        self.last_header: _Header | None = None
        self.in_disk_stats = False

    @property
    def inv(self) -> _Invocation:
        return self.invocations[-1]

    def read(self, text: str) -> list[_Invocation]:
        for lineno, raw in enumerate(text.split("\n"), 1):
            line = raw.strip()
            if line and len(line) <= 4096:  # (a longer line is no fio output)
                self.line(line, lineno)
        return [inv for inv in self.invocations if inv.blocks]

    def new_invocation(self) -> _Invocation:
        self.block = self.direction = self.percentiles = None
        self.invocations.append(_Invocation())
        return self.invocations[-1]

    def line(self, line: str, lineno: int) -> None:
        """One stripped line. Each pattern is tried on the lines that can hold it (their first character, a literal
        they need), in this order: it decides what a line that fits several patterns is."""
        lead = line[0]
        if lead == "|":  # the percentile table's entries
            if self.percentiles is not None:
                self.percentile_entries(line)
            return
        self.percentiles = None
        job_line = "(g" in line  # `name: (groupid=...` and `name: (g=...` both hold it
        if job_line and "(groupid=" in line and (m := _RESULT.match(line)):
            self.job_result(m, lineno)
        elif lead in "rwtm" and (m := _DIR3.match(line) or _DIR2.match(line)):
            self.direction_line(m, lineno)
        elif lead in "scl" and (m := _LAT_STAT.match(line)):
            if self.direction is not None and m["kind"] != "slat":  # submission latency is in no record
                self.direction.lat[m["kind"]] = (
                    m["unit"],
                    _scaled(m["min"], m["mink"]),
                    _scaled(m["max"], m["maxk"]),
                    float(m["avg"]),
                )
        elif " percentiles (" in line and (m := _PCT_HEAD.match(line)):
            if self.direction is not None and m["kind"] in ("clat", "lat", "slat"):
                self.percentiles = {}
                self.direction.pct[m["kind"]] = (m["unit"], self.percentiles)
                self.percentile_entries(line)
        elif self.block is not None and self.block_line(self.block, line, lead):
            pass
        elif job_line and (m := _HEADER.match(line)):
            self.job_header(m, lineno)
        elif line == "...":  # under a header: numjobs > 1
            if self.last_header is not None and not self.inv.blocks:
                self.last_header.clones_hint = True
        else:
            self.invocation_line(line, lead)

    def percentile_entries(self, line: str) -> None:
        assert self.percentiles is not None
        for p, v in _PCT_ENTRY.findall(line):
            self.percentiles[_pct_key(p)] = v

    def job_result(self, m: re.Match[str], lineno: int) -> None:
        """`name: (groupid=G, jobs=N): err= 0: ...`: a job block starts."""
        inv = self.new_invocation() if self.inv.finished else self.inv
        self.block = _block_of(*m.group("name", "g", "jobs", "err", "rest"), lineno)
        inv.blocks.append(self.block)
        self.direction = None
        self.in_disk_stats = False

    def direction_line(self, m: re.Match[str], lineno: int) -> None:
        """`read: IOPS=...` (fio 3) or `read : io=...` (fio 2): a direction's section starts."""
        block = self.block
        if block is None or self.inv.finished:
            inv = self.new_invocation() if self.inv.finished else self.inv
            block = self.block = _Block(name="", groupid=0, jobs=1, line=lineno, pasted=True)  # no block line
            inv.blocks.append(block)
        self.direction = _direction(m)
        if m["dir"] != "trim" and m["dir"] not in block.dirs:
            block.dirs[m["dir"]] = self.direction

    @staticmethod
    def block_line(block: _Block, line: str, lead: str) -> bool:
        """A job's latency distribution, issued I/Os, latency depth or IO depths line: whether `line` was one."""
        if lead == "l" and "min=" not in line and (m := _LAT_DIST.match(line)):
            block.lat_dist.append((m["unit"], m["entries"]))
        elif lead == "i" and (m := _ISSUED3.match(line) or _ISSUED2.match(line)):
            block.issued = (int(m[1]), int(m[2]))
        elif lead == "l" and (m := _DEPTH.match(line)):
            block.depth = int(m[1])
        elif lead == "I" and (m := _IO_DEPTHS.match(line)):
            block.io_depths.append(m[1])
        else:
            return False
        return True

    def job_header(self, m: re.Match[str], lineno: int) -> None:
        """`name: (g=G): rw=..., bs=..., ioengine=..., iodepth=...`: a job's options, before its results."""
        inv = self.new_invocation() if self.inv.blocks else self.inv
        header = self.last_header = _header(m, lineno)
        inv.headers.setdefault((header.name, header.groupid), header)
        self.in_disk_stats = False

    def invocation_line(self, line: str, lead: str) -> None:
        """fio's version, `Starting N processes`, its capped-depth note, the group summaries and disk stats."""
        inv = self.inv
        if (lead == "f" and (m := _VERSION.match(line))) or (lead == "2" and (m := _BARE_VERSION.match(line))):
            if inv.blocks:
                inv = self.new_invocation()
            inv.version = m[1]
        elif lead == "S" and (m := _STARTING.match(line)):
            if inv.blocks:
                inv = self.new_invocation()
            inv.processes = sum(int(n) for n in re.findall(r"([0-9]{1,9}) (?:process|thread)", line))
        elif CAPPED_NOTE in line:
            inv.capped_note = True
        elif lead == "R" and line.startswith("Run status group"):
            inv.finished = True  # group summaries follow: no more job blocks of this invocation
            self.block = self.direction = None
        elif lead == "D" and line.startswith("Disk stats"):
            inv.finished = True
            self.block = self.direction = None
            self.in_disk_stats = True
        elif self.in_disk_stats and inv.disk is None and (m := _DISK.match(line)):
            inv.disk = m[1]


def _block_of(name: str, groupid: str, jobs: str, error: str, rest: str, lineno: int) -> _Block:
    """The block a `name: (groupid=G, jobs=N): err= 0: pid=1: <date>` line starts."""
    if "]" in name:  # glued to a `Jobs: ...[eta 00m:00s]` progress line
        name = name.rsplit("]", 1)[1].strip()
    reported_at = None
    _, pid, after = rest.partition(": pid=")
    if pid:
        _, colon, after = after.partition(": ")
        if colon:
            reported_at = after.strip() or None
    return _Block(name, int(groupid), max(1, int(jobs)), lineno, int(error), False, reported_at)


def _io_depths(block: _Block) -> dict[int, float]:
    """The `IO depths : 1=0.1%, 2=0.1%, 4=100.0%, ...` shares, read only when the queue depth needs them."""
    shares: dict[int, float] = {}
    for entries in block.io_depths:
        for _open, depth, share in _DEPTH_ENTRY.findall(entries):
            shares[int(depth)] = float(share)
    return shares


def _pct_key(p: str) -> str:
    return f"{float(p):.2f}"


def _scaled(number: str, suffix: str) -> float:
    return float(number) * _SI[suffix]


_Range = tuple[int, int] | None
# A direction's latency lines, kind -> (unit, min, max, avg); its percentile tables, kind -> (unit, {point: value}).
_Lat = dict[str, tuple[str, float | None, float | None, float | None]]
_Pct = dict[str, tuple[str, dict[str, str]]]


def _header(m: re.Match[str], lineno: int) -> _Header:
    name, groupid, rw, rest = m.group("name", "g", "rw", "rest")
    return _Header(name, int(groupid), rw, lineno, *_job_options(rest))


def _job_options(rest: str) -> tuple[_Range, _Range, str | None, bool, str | None, int | None]:
    """(read and write block size ranges, the bs text, bs_is_seq_rand, ioengine, iodepth) of a header line."""
    bs_read = bs_write = None
    seq_rand = False
    if b3 := _BS3.search(rest):
        bs_read = _size_range(b3[1], b3[2], decimal_prefixes=True)
        bs_write = _size_range(b3[3], b3[4], decimal_prefixes=True)
        seq_rand = b3["seqrand"] is not None
    elif b2 := _BS2.search(rest):
        bs_read = _size_range(b2[2], b2[3], decimal_prefixes=False)
        bs_write = _size_range(b2[4], b2[5], decimal_prefixes=False)
        seq_rand = b2["seqrand"] is not None
    elif b1 := _BS1.search(rest):
        bs_read = bs_write = _size_range(b1[1], b1[2], decimal_prefixes=False)
    t = _BS_TEXT.search(rest)
    e = _ENGINE.search(rest)
    d = _IODEPTH.search(rest)
    return bs_read, bs_write, t[1] if t else None, seq_rand, e[1] if e else None, int(d[1]) if d else None


def _size_range(low: str, high: str, decimal_prefixes: bool) -> tuple[int, int] | None:
    try:
        return _size(low, decimal_prefixes), _size(high, decimal_prefixes)
    except ValueError:
        return None


def _size(value: str, decimal_prefixes: bool) -> int:
    """fio 3 prints `4096B`, `128KiB`, `16.0KiB` (or `131kB` under kb_base=1000); fio 2 `4K`, `1M` (binary)."""
    if decimal_prefixes and re.fullmatch(r"[0-9.]+[kKMGTP]B", value):
        size = size_to_bytes(value, base=1000)
        snapped = snap_block_size(size)
        if snapped and abs(snapped - size) <= 0.005 * size:
            return snapped  # rounded binary size printed in decimal units
        return size
    size = size_to_bytes(value)
    if size <= 0 or size > 1 << 40:
        raise ValueError(value)
    return size


def _direction(m: re.Match[str], lat: _Lat | None = None, pct: _Pct | None = None) -> _Direction:
    """The direction a `_DIR3` or `_DIR2` match reads (with the section's latency figures and percentiles)."""
    lat = {} if lat is None else lat
    pct = {} if pct is None else pct
    if m.re is _DIR2:
        iops, ik, bw, bwp, bwu, io, iop, run = m.group("iops", "ik", "bw", "bwp", "bwu", "io", "iop", "run")
        return _direction_of(True, iops, ik, bw, bwp, bwu, None, None, None, io, iop, run, lat, pct)
    return _direction_of(
        False, *m.group("iops", "ik", "bw", "bwp", "bwu", "bw2", "bwp2", "bwu2", "io", "iop", "run"), lat, pct
    )


def _direction_of(
    fio2: bool,
    iops: str,
    ik: str,
    bw: str,
    bwp: str,
    bwu: str,
    bw2: str | None,
    bwp2: str | None,
    bwu2: str | None,
    io: str | None,
    iop: str | None,
    run: str | None,
    lat: _Lat,
    pct: _Pct,
) -> _Direction:
    """A direction line's figures (fio 3's groups in `_DIR3` order; fio 2's line has no second BW)."""
    runtime_ms = float(run) if run else None
    io_bytes = float(io) * _BYTES[iop, fio2] if io else None
    tput, unit, bps = _rate(float(bw), bwp, bwu, fio2)
    note = None
    if bw2:
        tput2, unit2, bps2 = _rate(float(bw2), bwp2, bwu2, False)  # type: ignore[arg-type]
        if bps > 0 and bps2 > 0 and abs(bps / bps2 - 1) > 0.02 and io_bytes and runtime_ms:
            # The two figures disagree beyond rounding: trust the one io / runtime agrees with.
            measured = io_bytes * 1000 / runtime_ms
            if abs(bps2 - measured) < abs(bps - measured):
                note = f"BW={bw}{bwp}{bwu}/s disagrees with io/runtime; used {bw2}"
                tput, unit = tput2, unit2
    return _Direction(float(iops) * _SI[ik], tput, unit, io_bytes, runtime_ms, lat, pct, note)


def _prefix(prefix: str, fio2: bool) -> tuple[int, int]:
    """(power, base) of a printed prefix (`Ki`, `k`, `M`, ...). fio 2's K/M/G are binary."""
    return _POW[prefix.rstrip("i").upper()], 1024 if fio2 or prefix.endswith("i") else 1000


# The prefixes the patterns take (`[kKMGTPE]?i?`).
_PREFIXES = [p + i for p in ("", *"kKMGTPE") for i in ("", "i")]
# (prefix, fio2): bytes per unit
_BYTES = {(p, fio2): base**power for p in _PREFIXES for fio2 in (False, True) for power, base in [_prefix(p, fio2)]}


def _rate_spec(prefix: str, unit: str, fio2: bool) -> tuple[bool, int, str, int]:
    """(bits, factor to the record unit, record unit, factor to bytes/s) of a printed rate unit."""
    power, base = _prefix(prefix, fio2)
    names = _BINARY_UNITS if base == 1024 else _DECIMAL_UNITS
    if power < len(names):
        return unit == "bit", 1, names[power], base**power
    return unit == "bit", base ** (power - len(names) + 1), names[-1], base**power  # TiB/s and up: in GiB/s


_RATES = {(p, u, fio2): _rate_spec(p, u, fio2) for p in _PREFIXES for u in ("B", "bit") for fio2 in (False, True)}


def _rate(value: float, prefix: str, unit: str, fio2: bool) -> tuple[float, str, float]:
    """(throughput in a record unit, that unit, bytes/s)."""
    bits, factor, name, to_bytes = _RATES[prefix, unit, fio2]
    if bits:
        value /= 8
    return value * factor, name, value * to_bytes


# ------------------------------------------------------------------------------------------------ records


def _records(inv: _Invocation, header: _Header | None, blocks: list[_Block], run_index: int) -> list[IoRecord]:
    first = blocks[0]
    one = len(blocks) == 1
    if one:
        first_dirs = first.dirs
        active = [(key, [first_dirs[key]]) for key in ("read", "write", "mixed") if key in first_dirs]
    else:
        active = [(key, [b.dirs[key] for b in blocks if key in b.dirs]) for key in ("read", "write", "mixed")]
        active = [(key, dirs) for key, dirs in active if dirs]
    if not active:
        return []
    if len(active) > 1:
        active = [(k, d) for k, d in active if k != "mixed"]
    inferred: list[str] = []
    metadata: dict[str, str] = {"jobname": first.name, "groupid": str(first.groupid)}
    if not one:
        metadata["combined_clones"] = str(len(blocks))
    if inv.processes:
        metadata["processes"] = str(inv.processes)
    if first.reported_at:
        metadata["reported_at"] = first.reported_at
    if first.error if one else any([b.error for b in blocks]):
        metadata["error"] = ",".join(str(b.error) for b in blocks)

    if header is not None and header.rw in FIO_RW:
        pattern, operation = FIO_RW[header.rw]
        metadata["rw"] = header.rw
        metadata["header_line"] = str(header.line)
    else:
        keys = {k for k, _ in active}
        operation = "mixed" if len(keys) > 1 or "mixed" in keys else ("write" if "write" in keys else "read")
        pattern = "random" if "rand" in first.name.lower() else "sequential"
        inferred += ["pattern", "operation"]
    read_pct = _read_pct(operation, blocks, active, inferred)
    bs_read, bs_write = _block_sizes(header, pattern, blocks, active, inferred, metadata)
    queue_depth = _queue_depth(inv, header, blocks, inferred, metadata)
    threads = first.jobs if one else sum([b.jobs for b in blocks])
    if first.pasted:
        inferred.append("threads")
    if header is not None:
        if header.ioengine:
            metadata["ioengine"] = header.ioengine
        if header.clones_hint:
            metadata["numjobs_gt_1"] = "true"

    records = []
    for key, dirs in active:
        if len(dirs) == 1:
            figures = _single(key, dirs[0], first if one else next(b for b in blocks if key in b.dirs))
        else:
            figures = _combine(key, dirs, blocks)
        iops, tput, tput_unit, lat_unit, avg, lo, hi, p50, p95, p99, p999, duration, basis, note, rounded = figures
        # a job's latency distribution covers all its directions: kept on single-direction jobs only
        hist = _histogram(blocks, lat_unit, hi) if len(active) == 1 else []
        meta = metadata.copy() if len(active) > 1 else metadata  # (one direction: its own)
        meta["latency_basis"] = basis
        if note:
            meta["bw_note"] = note
        if rounded:
            meta["iops_from"] = "printed (rounded)"
        records.append(
            IoRecord(
                tool=TOOL,
                run_index=run_index,
                source_line=first.line,
                pattern=pattern,  # type: ignore[arg-type]
                operation=operation,  # type: ignore[arg-type]
                read_pct=read_pct,
                direction="total" if key == "mixed" else key,  # type: ignore[arg-type]
                block_size_bytes=bs_write if key == "write" else bs_read,
                threads=threads,
                queue_depth=queue_depth,
                iops=iops,
                throughput=tput,
                throughput_unit=tput_unit,  # type: ignore[arg-type]
                latency_unit=lat_unit,
                latency_avg=avg,
                latency_min=lo,
                latency_max=hi,
                latency_p50=p50,
                latency_p95=p95,
                latency_p99=p99,
                latency_p999=p999,
                duration_s=duration,
                tool_version=inv.version,
                target=inv.disk,
                inferred=inferred.copy(),
                metadata=meta,
                histogram=hist,
                histogram_kind="share",
            )
        )
    return records


def _read_pct(
    operation: str, blocks: list[_Block], active: list[tuple[str, list[_Direction]]], inferred: list[str]
) -> float:
    if operation != "mixed":
        return 100.0 if operation == "read" else 0.0
    inferred.append("read_pct")
    reads = writes = 0.0
    for b in blocks:
        if b.issued:
            reads += b.issued[0]
            writes += b.issued[1]
    if reads + writes <= 0:
        dirs = dict(active)
        reads = sum(d.iops or 0 for d in dirs.get("read", []))
        writes = sum(d.iops or 0 for d in dirs.get("write", []))
    if reads + writes <= 0:
        return 50.0  # fio's default rwmixread
    return float(round(100 * reads / (reads + writes)))


def _block_sizes(
    header: _Header | None,
    pattern: str,
    blocks: list[_Block],
    active: list[tuple[str, list[_Direction]]],
    inferred: list[str],
    metadata: dict[str, str],
) -> tuple[int | None, int | None]:
    dirs = dict(active)
    out: dict[str, int | None] = {}
    for key, index in (("read", 0), ("write", 1)):
        fixed = None
        if header is not None:
            if header.bs_text:
                metadata["bs"] = header.bs_text
            rng = header.bs_read if key == "read" else header.bs_write
            if header.seq_rand:  # (R) is the sequential size, (W) the random one
                rng = header.bs_read if pattern == "sequential" else header.bs_write
            if rng and rng[0] == rng[1]:
                fixed = rng[0]
        if fixed is None:
            own = dirs.get(key)
            fixed = _measured_block_size(blocks, own or dirs.get("mixed") or [], index if own else None)
            if fixed is not None and "block_size_bytes" not in inferred:
                inferred.append("block_size_bytes")
        out[key] = fixed
    if out["read"] is None and out["write"] is None:
        if "block_size_bytes" not in inferred:
            inferred.append("block_size_bytes")
        return 4096, 4096  # fio's default bs
    return out["read"] or out["write"], out["write"] or out["read"]


def _measured_block_size(blocks: list[_Block], dirs: list[_Direction], index: int | None) -> int | None:
    moved = sum(d.io_bytes or 0 for d in dirs)
    ios = sum((b.issued[index] if index is not None else sum(b.issued)) for b in blocks if b.issued)
    if moved > 0 and ios > 0:
        return snap_block_size(moved / ios)
    bps = sum(_bps(d) for d in dirs)
    iops = sum(d.iops or 0 for d in dirs)
    if bps > 0 and iops > 0:
        return snap_block_size(bps / iops)
    return None


def _bps(d: _Direction) -> float:
    return (d.throughput or 0.0) * _UNIT_BYTES[d.throughput_unit]


def _queue_depth(
    inv: _Invocation, header: _Header | None, blocks: list[_Block], inferred: list[str], metadata: dict[str, str]
) -> int:
    first = blocks[0]
    asked = header.iodepth if header is not None and header.iodepth else first.depth
    if not asked:
        busiest = max(_io_depths(first).items(), key=lambda kv: kv[1], default=None)
        inferred.append("queue_depth")
        return busiest[0] if busiest and busiest[1] > 0 else 1
    engine = (header.ioengine or "").lower() if header is not None else ""
    sync = engine in SYNC_ENGINES
    reason = None
    if asked > 1:
        if sync:
            reason = f"synchronous engine {engine}"
        elif inv.capped_note and not engine:
            reason = "fio note: capped at 1"
        elif not engine and _io_depths(first).get(1, 0.0) >= 99.95:
            reason = "IO depths: 1=100%"
    if reason:
        metadata["queue_depth_asked"] = str(asked)
        metadata["queue_depth_capped"] = reason
        inferred.append("queue_depth")
        return 1
    if header is None or not header.iodepth:
        metadata["queue_depth_from"] = "latency depth line"
    return asked


_ISSUED_INDEX = {"read": 0, "write": 1}  # in `issued rwts: total=reads,writes,...`


def _combine(key: str, dirs: list[_Direction], blocks: list[_Block]) -> _Figures:
    """One direction over two clones or more (`_single` takes a job without): sums, I/O-weighted mean latency,
    min/max over all. Returns the record's figures, which latencies they are, the BW note and whether an IOPS
    figure is fio's rounded one."""
    index = _ISSUED_INDEX.get(key)
    iops_list: list[float] = []
    weights: list[float] = []
    rounded = False
    for d, b in zip(dirs, [b for b in blocks if key in b.dirs], strict=True):
        ios = None
        if b.issued is not None:
            ios = b.issued[index] if index is not None else sum(b.issued)
        exact = ios * 1000 / d.runtime_ms if ios and d.runtime_ms else None
        printed = d.iops or 0.0
        # fio rounds the printed IOPS to 3-4 figures; issued / runtime is its exact figure.
        if exact is not None and (printed == 0 or abs(exact / printed - 1) < 0.06):
            iops_list.append(exact)
        else:
            iops_list.append(printed)
            rounded = True
        weights.append(float(ios) if ios else printed)

    # One pass over the clones (loops, not generators: most jobs have one).
    unit: str | None = dirs[0].throughput_unit
    kind = "lat"  # mean/min/max of `lat` when every clone printed it, else of `clat`
    every_clat = True
    runtimes = []
    for d in dirs:
        if d.throughput_unit != unit:
            unit = None
        if "lat" not in d.lat:
            kind = "clat"
        if "clat" not in d.lat:
            every_clat = False
        if d.runtime_ms:
            runtimes.append(d.runtime_ms)
    if unit is not None:
        throughput = sum([d.throughput or 0 for d in dirs])
    else:
        throughput, unit = sum([_bps(d) for d in dirs]), "B/s"

    lat_unit = None
    for d in dirs:
        if kind in d.lat:
            lat_unit = d.lat[kind][0]
            break
    else:
        lat_unit = next((d.pct[k][0] for d in dirs for k in ("lat", "clat") if k in d.pct), None)
    avg = lo = hi = None
    if lat_unit is not None and (kind == "lat" or every_clat):
        conv = [_NS[d.lat[kind][0]] / _NS[lat_unit] for d in dirs]
        total_w = sum(weights)
        avgs = [d.lat[kind][3] * c for d, c in zip(dirs, conv, strict=True)]
        if len(avgs) > 1 and total_w > 0:
            avg = sum(a * w for a, w in zip(avgs, weights, strict=True)) / total_w
        else:
            avg = avgs[0]
        mins = [v * c for d, c in zip(dirs, conv, strict=True) if (v := d.lat[kind][1]) is not None]
        maxs = [v * c for d, c in zip(dirs, conv, strict=True) if (v := d.lat[kind][2]) is not None]
        lo = min(mins) if mins else None
        hi = max(maxs) if maxs else None

    basis = _BASIS[kind, None]  # percentiles: text has no bins to merge
    note = None
    for d in dirs:
        if d.bw_note:
            note = d.bw_note
            break
    return (
        sum(iops_list),
        throughput,
        unit,
        _UNIT.get(lat_unit or "", "ms"),
        avg,
        lo,
        hi,
        None,
        None,
        None,
        None,
        max(runtimes) / 1000 if runtimes else None,
        basis,
        note,
        rounded,
    )


def _single(key: str, d: _Direction, b: _Block) -> _Figures:
    """`_combine` of a job without clones (most jobs): the same figures, without the sums."""
    ios = None
    if b.issued is not None:
        ios = b.issued[_ISSUED_INDEX[key]] if key in _ISSUED_INDEX else sum(b.issued)
    exact = ios * 1000 / d.runtime_ms if ios and d.runtime_ms else None
    printed = d.iops or 0.0
    rounded = not (exact is not None and (printed == 0 or abs(exact / printed - 1) < 0.06))
    lat = d.lat
    kind = "lat" if "lat" in lat else "clat"
    stat = lat.get(kind)
    pct = d.pct
    if stat is not None:
        lat_unit: str | None = stat[0]
    else:
        lat_unit = next((pct[k][0] for k in ("lat", "clat") if k in pct), None)
    p50 = p95 = p99 = p999 = pct_kind = None
    if lat_unit is not None:
        pct_kind = "lat" if "lat" in pct else ("clat" if "clat" in pct else None)
        if pct_kind:
            p_unit, values = pct[pct_kind]
            p_ns, lat_ns = _NS[p_unit], _NS[lat_unit]
            if (v := values.get("50.00")) is not None:
                p50 = float(v) * p_ns / lat_ns
            if (v := values.get("95.00")) is not None:
                p95 = float(v) * p_ns / lat_ns
            if (v := values.get("99.00")) is not None:
                p99 = float(v) * p_ns / lat_ns
            if (v := values.get("99.90")) is not None:
                p999 = float(v) * p_ns / lat_ns
    return (
        printed if rounded else exact,
        d.throughput or 0,
        d.throughput_unit,
        _UNIT.get(lat_unit or "", "ms"),
        stat[3] if stat else None,
        stat[1] if stat else None,
        stat[2] if stat else None,
        p50,
        p95,
        p99,
        p999,
        d.runtime_ms / 1000 if d.runtime_ms else None,
        _BASIS[kind, pct_kind],
        d.bw_note or None,
        rounded,
    )


# (iops, throughput, its unit, latency unit, avg, min, max, p50, p95, p99, p99.9, duration, which latencies they
# are, the BW note, whether the IOPS figure is fio's rounded one)
_Figures = tuple[
    float | None,
    float,
    str | None,
    str,
    float | None,
    float | None,
    float | None,
    float | None,
    float | None,
    float | None,
    float | None,
    float | None,
    str,
    str | None,
    bool,
]
_BASIS = {
    (kind, pct_kind): f"mean/min/max: {kind}; percentiles: {pct_kind or 'none (clones combined)'}"
    for kind in ("lat", "clat")
    for pct_kind in ("lat", "clat", None)
}


_UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6}  # _NS by the record's unit


def _histogram(blocks: list[_Block], latency_unit: str, top: float | None) -> list[tuple[float, float]]:
    """The job's latency distribution (percent of I/Os per bucket) in the record's unit (`top`: its max
    latency); clones are weighted by their I/O count. The open `>=` bucket ends at the max latency."""
    unit_ns = _UNIT_NS[latency_unit]
    merged: dict[float, float] = {}
    weights = [float(sum(b.issued)) if b.issued and sum(b.issued) > 0 else 1.0 for b in blocks]
    total_w = sum(weights)
    for block, weight in zip(blocks, weights, strict=True):
        entries = [
            (open_, float(bound) * _NS[unit] / unit_ns, float(share))
            for unit, text in block.lat_dist
            for open_, bound, share in _DIST_ENTRY.findall(text)
        ]
        if not entries:
            return []  # a clone without a distribution: no merged one
        for open_, upper, share in entries:
            if open_:
                upper = max(upper, float(top)) if isinstance(top, float) else upper * 2
            merged[upper] = merged.get(upper, 0.0) + share * weight / total_w
    return [(bound, round(share, 4)) for bound, share in sorted(merged.items()) if math.isfinite(bound)]
