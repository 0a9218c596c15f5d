"""DiskSpd XML output (`-Rxml`), DiskSpd 2.0.x to 2.2.

Input (2.0.21a, trimmed)::

    <Results>
       <System>
          <ComputerName>pkb-044ffc87-0</ComputerName>
          <Tool><Version>2.0.21a</Version><VersionDate>2018/9/21</VersionDate></Tool>
          <RunTime>2018/10/18 21:39:04 UTC</RunTime>
       </System>
       <Profile>
          <TimeSpans>
             <TimeSpan>
                <Duration>30</Duration>
                <ThreadCount>0</ThreadCount>
                <Targets>
                   <Target>
                      <Path>C:\\scratch\\testfile.dat</Path>
                      <BlockSize>65536</BlockSize>
                      <StrideSize>65536</StrideSize>
                      <RequestCount>2</RequestCount>
                      <WriteRatio>0</WriteRatio>
                      <ThreadsPerFile>4</ThreadsPerFile>
                   </Target>
                </Targets>
             </TimeSpan>
          </TimeSpans>
       </Profile>
       <TimeSpan>
          <TestTimeSeconds>30.02</TestTimeSeconds>
          <ThreadCount>4</ThreadCount>
          <Thread>
             <Id>0</Id>
             <Target>
                <Path>C:\\scratch\\testfile.dat</Path>
                <ReadBytes>1484062720</ReadBytes><ReadCount>22645</ReadCount>
                <WriteBytes>0</WriteBytes><WriteCount>0</WriteCount>
             </Target>
          </Thread>
          ... one <Thread> per thread
       </TimeSpan>
    </Results>

Records (normalized)::

    {"record": "io", "tool": "diskspd", "tool_version": "2.0.21a", "run_index": 0, "source_line": 1,
     "target": "C:\\\\scratch\\\\testfile.dat", "started_at": "2018-10-18T21:39:04+00:00",
     "pattern": "sequential", "operation": "read", "read_pct": 100.0, "direction": "read",
     "block_size_bytes": 65536, "threads": 4, "queue_depth": 2, "duration_s": 30.02,
     "iops": 3030.31, "throughput_bytes_per_s": 198594600.93, "latency_avg_ms": null, ...,
     "inferred": ["iops", "throughput_bytes_per_s"]}

Record mapping (as for the text output, see `ingest.formats.diskspd`):
- One run = one `<TimeSpan>` child of `<Results>` (the results of one timespan of one invocation); a file
  may hold several `<Results>` documents (a batch appending `-Rxml` outputs), with anything between them
  skipped. A timespan that reports `<Error>` (interrupted before measuring) yields nothing.
- Results come from the results `<TimeSpan>`, never the `<Profile>`'s: duration = `TestTimeSeconds`,
  threads = `ThreadCount`, I/O = the `ReadCount`/`ReadBytes` and `WriteCount`/`WriteBytes` of every
  `<Thread>/<Target>` summed. The XML prints no rates, so IOPS = I/Os / TestTimeSeconds and throughput
  = bytes / TestTimeSeconds (B/s), both listed in `inferred`.
- Parameters from the matching `<Profile>/<TimeSpans>/<TimeSpan>`: `BlockSize`, `WriteRatio` (operation,
  read_pct = 100 - WriteRatio), `<Random>` (random; `RandomRatio` kept as `random_pct`) or `<StrideSize>`
  (sequential), queue depth = `RequestCount` per thread per target (with a thread pool, `ThreadCount` > 0,
  the timespan's `RequestCount` if set, else the per-target counts summed, as every pool thread serves
  every target).
- Latency (ms, only with -L): averages from `<Latency>` (`AverageReadMilliseconds`, ...), min / p50 /
  p95 / p99 / p99.9 / max from its `<Bucket>` percentiles 0, 50, 95, 99, 99.9, 100; the whole percentile
  list is kept as a `share` histogram.
- Only each `<Results>...</Results>` span goes to the XML parser, so no DOCTYPE or entity declaration
  around it is ever read (no entity expansion).
- Reading: the bulk of a document, runs of `<Bucket>`, `<Thread>` (one `<Target>`) and `<CPU>` elements
  exactly as DiskSpd prints them (plain leaves, numbers as numbers), is read by regex and the rest is parsed
  as XML with one placeholder element per run; an element in any other shape is parsed as XML, and a run
  that is not where DiskSpd prints it (comment, CDATA, another element) has the whole document parsed. The
  records, and the error of a malformed document, are those of parsing it whole.
- `parse_document(text)`: parse(text) when the text is exactly one `<Results>` document (white space around
  it) without comments, CDATA, processing instructions or lines of text, in which another tool's output
  could hide; else None (also when parse would raise), for the registry to detect and check as usual.
- Metadata: `system.*` (System leaves), `input.*` (the profile timespan's leaves) and
  `input.target.N.*`, `timespan`, `results.*`, `cpu.*` (CpuUtilization Average), `total.*` / `read.*` /
  `write.*` sums, and with several targets `target.N.path` with its I/O counts.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from functools import lru_cache

from ingest.errors import ParseError
from ingest.formats.diskspd import FIELD_LABELS, PERCENTILE_LABELS, _share_histogram, _started_at
from ingest.records import IoRecord

NAME = "diskspd_xml"
TITLE = "DiskSpd XML"
TOOLS = ("diskspd",)
HOST_KEYS: frozenset[str] = frozenset({"computername"})
USER_KEYS: frozenset[str] = frozenset()
RESULT_KEY_PREFIXES: tuple[str, ...] = ("read.", "write.", "total.", "latency.", "cpu.", "results.")
RESULT_KEYS: tuple[str, ...] = ("timespan",)
TOOL = "diskspd"

# Record latency fields and the <Percentile> each one takes.
_LATENCY_POINTS = {field: PERCENTILE_LABELS[label] for field, label in FIELD_LABELS.items()}
_AVG_TAGS = {"read": "AverageReadMilliseconds", "write": "AverageWriteMilliseconds"}
# A <Percentile> value -> the record latency fields it gives (see _points_near).
_POINTS_NEAR_CACHE: dict[float, tuple[str, ...]] = {}
# A timespan's list of percentiles -> (bucket index, fields) of those that give a record field (see _near_points).
_NEAR_POINTS_CACHE: dict[tuple[float | None, ...], list[tuple[int, tuple[str, ...]]]] = {}
_NUMBER = re.compile(r"-?[0-9]{1,20}(?:\.[0-9]{1,12})?")
# Numbers repeat from bucket to bucket and run to run (every timespan lists the same percentiles).
_MEMO_MAX_CHARS = 40

_START, _END = "<Results>", "</Results>"
_HEAD = 200_000  # detect() reads this much of a text

# A <Bucket> as DiskSpd prints it: its percentile, read, write and total latency, each a number `_number` reads
# as itself, with nothing but XML white space between the tags. Such a bucket is well-formed by construction and
# means the same to every reader, so the fast path takes its values with this regex instead of building five XML
# elements per bucket (a -L run prints ~100 buckets per timespan: most of a document).
# Possessive (*+): a number or white space is never given back, as the "<" after it cannot be part of it; the
# regex engine then keeps no backtracking state (~20% faster).
_NUM = r"(-?+[0-9]{1,20}+(?:\.[0-9]{1,12}+)?+)"
_WS = "[ \t\n]*+"
_BUCKET = re.compile(
    f"<Bucket>{_WS}<Percentile>{_NUM}</Percentile>{_WS}"
    f"(?:<ReadMilliseconds>{_NUM}</ReadMilliseconds>{_WS})?"
    f"(?:<WriteMilliseconds>{_NUM}</WriteMilliseconds>{_WS})?"
    f"<TotalMilliseconds>{_NUM}</TotalMilliseconds>{_WS}</Bucket>"
)
# The per-CPU usage of a timespan (one <CPU> per processor) is read by no field, only its <Average> is: a run
# of <CPU> elements holding plain leaves only goes to the XML parser as one `_CPUS_TAG` element.
_LEAF_TEXT = "[\t\n !-%'-;=-\\\\^-~]*+"  # printable ASCII but < & ] (no markup, entity or "]]>")
_CPU = "<CPU>(?:{ws}<([A-Za-z_][A-Za-z0-9_.-]*+)>{text}</\\{g}>)*{ws}</CPU>"
_CPU_RUN = re.compile(
    _CPU.format(ws=_WS, text=_LEAF_TEXT, g=1) + f"(?:{_WS}" + _CPU.format(ws=_WS, text=_LEAF_TEXT, g=2) + ")*"
)
# A <Thread> as DiskSpd prints it: its <Id> and one <Target> with <Path>, BytesCount, FileSize, IOCount and the
# four counts the records read (each a count `_count` reads as itself), then any plain leaves (latency
# statistics). Every tag read comes before any other of its name, so the first of each is the one captured.
_COUNT_GROUP = "([0-9]{1,18}+)"
_THREAD = re.compile(
    f"<Thread>{_WS}<Id>({_LEAF_TEXT})</Id>{_WS}<Target>{_WS}<Path>({_LEAF_TEXT})</Path>{_WS}"
    f"<BytesCount>{_LEAF_TEXT}</BytesCount>{_WS}<FileSize>{_LEAF_TEXT}</FileSize>{_WS}"
    f"<IOCount>{_LEAF_TEXT}</IOCount>{_WS}<ReadBytes>{_COUNT_GROUP}</ReadBytes>{_WS}"
    f"<ReadCount>{_COUNT_GROUP}</ReadCount>{_WS}<WriteBytes>{_COUNT_GROUP}</WriteBytes>{_WS}"
    f"<WriteCount>{_COUNT_GROUP}</WriteCount>"
    f"(?:{_WS}<([A-Za-z_][A-Za-z0-9_.-]*+)>{_LEAF_TEXT}</\\7>)*{_WS}</Target>{_WS}</Thread>"
)
# The elements the fast path puts in place of a run of buckets or threads (its text is the run's index) or
# of CPUs.
_PLACEHOLDER = "kneepoint-"
_RUN_TAG = "kneepoint-buckets"
_THREADS_TAG = "kneepoint-threads"
_CPUS_TAG = "kneepoint-cpus"
# A line of a document that starts with text, not a tag (see parse_document).
_TEXT_LINE_START = re.compile(r"\n[ \t]*[^ \t<]")
_SPACE = re.compile(r"[ \t\r\n]*")

# Bucket columns: percentile text (stripped), read and write latency text (as `findtext` gives it), total
# latency text (stripped), and whether every value is a number as printed (the fast path's buckets).
_Buckets = tuple[list[str | None], list[str | None], list[str | None], list[str | None], bool]
# A run the fast path cut: per group of its pattern, the values (None where an optional group is not printed).
# Buckets: percentile, read, write, total text; threads: id, path, read bytes, read count, write bytes, write
# count (and the last trailing leaf's name).
_Run = list[list[str | None]]
_NO_BUCKETS: _Buckets = ([], [], [], [], True)
_COUNT_KEYS = ("ReadBytes", "ReadCount", "WriteBytes", "WriteCount")
_TARGET_TAGS = frozenset(("Path", *_COUNT_KEYS))
_TIMESPAN_TAGS = frozenset(("TestTimeSeconds", "ThreadCount", "RequestCount", "ProcCount"))
_LATENCY_TAGS = frozenset(
    ("AverageTotalMilliseconds", "ReadLatencyStdev", "WriteLatencyStdev", "LatencyStdev", *_AVG_TAGS.values())
)
_CPU_KEYS = (
    ("UsagePercent", "cpu.usage_pct"),
    ("UserPercent", "cpu.user_pct"),
    ("KernelPercent", "cpu.kernel_pct"),
    ("IdlePercent", "cpu.idle_pct"),
)
_CPU_TAGS = frozenset(tag for tag, _ in _CPU_KEYS)


def detect(text: str) -> float:
    # find() within the head instead of `in text[:200_000]`: no copy of the head. Another tool's text without "<"
    # costs one memchr scan (str.find of "<Results>" reads a large text ten times slower); with it, "<Results>" is
    # searched from the first "<".
    first = text.find("<", 0, _HEAD)
    if first < 0 or text.find(_START, first, _HEAD) < 0:
        return 0.0
    if text.find("<TestTimeSeconds>", 0, _HEAD) >= 0 or text.find("<TimeSpans>", 0, _HEAD) >= 0:
        return 0.95
    if text.find("<System>", 0, _HEAD) >= 0 and text.find("<Profile>", 0, _HEAD) >= 0:
        return 0.8
    return 0.0


def parse(text: str) -> list[IoRecord]:
    records: list[IoRecord] = []
    first_error: ParseError | None = None
    run_index = 0
    line, pos = 1, 0
    for start, doc in _documents(text):
        line += text.count("\n", pos, start)  # 1-based line of the document's start
        pos = start
        try:
            doc_records = _read_document(doc, line, run_index)
        except ParseError as exc:
            first_error = first_error or exc
            continue
        if doc_records:
            run_index = doc_records[-1].run_index + 1
            records.extend(doc_records)
    if not records:
        if first_error is not None:
            raise first_error
        start = text.find(_START)
        if start >= 0:
            raise ParseError(
                "DiskSpd XML <Results> document is never closed (output cut short?)", text.count("\n", 0, start) + 1
            )
        raise ParseError("no DiskSpd XML <Results> document found", 1)
    return records


def parse_document(text: str) -> list[IoRecord] | None:
    """parse(text) when `text` is one `<Results>` document and nothing else (white space around it), else None.

    Nothing of another tool can hide in such a text, so the registry reads it without detection or the check for
    a second tool. To keep that true, a document with a comment, CDATA section or processing instruction, or with
    a line that starts with text or ends in text (a multi-line text node), is None too, as is one parse would
    refuse (the registry's slow path then reports the error)."""
    start = 0 if text.startswith("<") else _SPACE.match(text).end()  # type: ignore[union-attr]
    if not text.startswith(_START, start):
        return None
    end = text.find(_END, start)
    if end < 0:
        return None
    end += len(_END)
    if _SPACE.match(text, end).end() != len(text):  # type: ignore[union-attr]
        return None  # something after the document: no copy of it to find out
    doc = text[start:end]
    if "<!" in doc or "<?" in doc or doc.count("\n") != doc.count(">\n") or _TEXT_LINE_START.search(doc):
        return None
    try:
        return _read_document(doc, text.count("\n", 0, start) + 1, 0) or None
    except ParseError:
        return None


def _documents(text: str) -> list[tuple[int, str]]:
    """Each `<Results>...</Results>` span with its offset; one pass, so a missing end tag costs nothing."""
    out: list[tuple[int, str]] = []
    pos = 0
    while (start := text.find(_START, pos)) >= 0:
        end = text.find(_END, start)
        if end < 0:
            break
        out.append((start, text[start : end + len(_END)]))
        pos = end + len(_END)
    return out


def _read_document(doc: str, line: int, first_run: int) -> list[IoRecord]:
    records = _fast_document(doc, line, first_run)
    if records is None:
        records = _document(_xml(doc, line), line, first_run, None, None)
    return records


def _fast_document(doc: str, line: int, first_run: int) -> list[IoRecord] | None:
    """The records of a document read with its bulk (runs of plain buckets, threads and CPUs, as DiskSpd prints
    them) cut out by regex and only the rest parsed as XML, or None when that cannot be sure to read the
    document as `_document(_xml(doc))` does.

    Each run of such elements separated by white space only becomes one placeholder element (`_RUN_TAG`,
    `_THREADS_TAG` with the run's index, `_CPUS_TAG`). A run is well-formed content by construction, so the
    document parses iff the rest does: a malformed document fails here as it does whole (and is then parsed
    whole for the error). A run that did not stand where the placeholder is read (the buckets of a results
    timespan's <Latency>, the threads of a results timespan, the CPUs of its <CpuUtilization>) but in a
    comment, CDATA or another element leaves fewer placeholders there than runs were cut: None."""
    if _PLACEHOLDER in doc:
        return None
    rest, runs = _cut_runs(doc, _BUCKET, _RUN_TAG)
    rest, thread_runs = _cut_runs(rest, _THREAD, _THREADS_TAG)
    rest, cpu_runs = _CPU_RUN.subn(f"<{_CPUS_TAG}/>", rest)
    if not (runs or thread_runs or cpu_runs):
        return None  # nothing to read faster
    try:
        root = ET.fromstring(rest)
    except (ET.ParseError, ValueError):
        return None
    placed = placed_threads = placed_cpus = 0
    for ts in root.findall("TimeSpan"):
        latency = ts.find("Latency")
        if latency is not None:
            placed += sum(1 for child in latency if child.tag == _RUN_TAG)
        placed_threads += sum(1 for child in ts if child.tag == _THREADS_TAG)
        for cpus in ts.findall("CpuUtilization"):
            placed_cpus += sum(1 for child in cpus if child.tag == _CPUS_TAG)
    if placed != len(runs) or placed_threads != len(thread_runs) or placed_cpus != cpu_runs:
        return None
    return _document(root, line, first_run, runs, thread_runs)


def _cut_runs(text: str, pattern: re.Pattern[str], tag: str) -> tuple[str, list[_Run]]:
    """`text` with each run of `pattern` matches (white space between them only) replaced by a `tag` element
    holding the run's index, and per run the values of each of the pattern's groups (a column per group)."""
    parts = pattern.split(text)  # text, then per match: its groups and the text after it
    step = pattern.groups + 1
    n = len(parts) // step
    if not n:
        return text, []
    texts = parts[0::step]
    columns = [parts[i::step] for i in range(1, step)]
    runs: list[_Run] = []
    pieces = [texts[0]]
    a = 0
    for b in (*_breaks(texts, n), n):
        pieces.append(f"<{tag}>{len(runs)}</{tag}>")
        pieces.append(texts[b])
        runs.append([column[a:b] for column in columns])
        a = b
    return "".join(pieces), runs


def _breaks(texts: list[str], n: int) -> list[int]:
    """The i in 1..n-1 where texts[i], between match i - 1 and match i, holds more than white space. In a run
    that text is the same indentation again and again: each distinct text is looked at once."""
    between = texts[1:n]
    found: list[int] = []
    for text in set(between):
        if text.strip(" \t\n"):
            i = -1
            for _ in range(between.count(text)):
                i = between.index(text, i + 1)
                found.append(i + 1)
    return sorted(found)


def _xml(doc: str, line: int) -> ET.Element:
    # Only the <Results> span is parsed: no DOCTYPE, so no entity a file could declare gets expanded.
    try:
        return ET.fromstring(doc)
    except ET.ParseError as exc:
        row = exc.position[0] if exc.position else 1
        raise ParseError(f"DiskSpd XML document malformed: {exc}", line + row - 1) from None
    except ValueError as exc:  # text the XML parser cannot take at all (e.g. lone surrogates)
        raise ParseError(f"DiskSpd XML document unreadable: {exc}", line) from None


def _document(
    root: ET.Element, line: int, first_run: int, runs: list[_Run] | None, thread_runs: list[_Run] | None
) -> list[IoRecord]:
    system = root.find("System")
    version_elem = _child_path(system, "Tool", "Version")
    version = None if version_elem is None else _strip(version_elem.text)
    system_meta: dict[str, str] = {}
    if system is not None:
        for child in system:
            if child.tag == "ProcessorTopology":
                continue
            for leaf_path, value in _leaves(child, child.tag):
                system_meta[f"system.{leaf_path}"] = value
    started_at = _started_at(_text(system, "RunTime"))
    profiles = [t for p in root.findall("Profile") for ts in p.findall("TimeSpans") for t in ts.findall("TimeSpan")]
    profile_meta: dict[str, str] = {}
    profile = root.find("Profile")
    if profile is not None:
        for child in profile:
            if child.tag != "TimeSpans" and len(child) == 0 and child.text:
                profile_meta[f"input.{child.tag}"] = child.text.strip()

    records: list[IoRecord] = []
    run = first_run
    for n, ts in enumerate(root.findall("TimeSpan")):
        spec = profiles[n] if n < len(profiles) else None
        ts_records = _timespan(ts, spec, n + 1, run, line, runs, thread_runs)
        for r in ts_records:
            r.tool_version = version
            r.started_at = started_at
            r.metadata.update(system_meta)
            r.metadata.update(profile_meta)
        if ts_records:
            records.extend(ts_records)
            run += 1
    return records


def _timespan(
    ts: ET.Element,
    spec: ET.Element | None,
    number: int,
    run_index: int,
    line: int,
    runs: list[_Run] | None,
    thread_runs: list[_Run] | None,
) -> list[IoRecord]:
    if ts.find("Error") is not None:
        return []
    ts_texts = _first_texts(ts, _TIMESPAN_TAGS)
    seconds = _number(_strip(ts_texts.get("TestTimeSeconds")))
    if not seconds or seconds <= 0:
        raise ParseError(f"DiskSpd XML timespan {number} has no TestTimeSeconds", line)
    threads = _count(ts_texts.get("ThreadCount"), 9)

    # Sum every thread's per-target counts; keep per-target sums in file order of first appearance.
    per_target: dict[str, dict[str, int]] = {}
    thread_ids: set[str] = set()
    for thread in ts:
        if thread.tag == "Thread":
            thread_ids.add(_text(thread, "Id") or str(len(thread_ids)))
            for tgt in thread.findall("Target"):
                found = _first_texts(tgt, _TARGET_TAGS)
                path = found.get("Path")
                sums = per_target.setdefault((path.strip() if path is not None else None) or "", {"threads": 0})
                sums["threads"] += 1
                for key in _COUNT_KEYS:
                    sums[key] = sums.get(key, 0) + (_count(found.get(key)) or 0)
        elif thread.tag == _THREADS_TAG and thread_runs is not None:
            # The same for a run of plain threads (one target each, every count printed as a count).
            ids, paths, *counts = thread_runs[int(thread.text or "")][:6]
            for thread_id, path, *values in zip(ids, paths, *counts, strict=True):
                thread_ids.add(thread_id.strip() or str(len(thread_ids)))  # type: ignore[union-attr]
                sums = per_target.setdefault(path.strip(), {"threads": 0})  # type: ignore[union-attr]
                sums["threads"] += 1
                for key, value in zip(_COUNT_KEYS, values, strict=True):
                    sums[key] = sums.get(key, 0) + int(value)  # type: ignore[arg-type]
    totals = {
        k: sum(t.get(k, 0) for t in per_target.values()) for k in ("ReadBytes", "ReadCount", "WriteBytes", "WriteCount")
    }

    inferred = {"iops", "throughput_bytes_per_s"}
    if threads is None:
        threads = len(thread_ids) or None
        inferred.add("threads")

    targets = [t for ts in spec.findall("Targets") for t in ts.findall("Target")] if spec is not None else []
    ratios = [_float(t, "WriteRatio") for t in targets]
    given = [r for r in ratios if r is not None and 0 <= r <= 100]
    if targets and len(given) == len(ratios) and len(set(given)) == 1:
        write_ratio = given[0]
    else:
        ios = totals["ReadCount"] + totals["WriteCount"]
        write_ratio = round(100.0 * totals["WriteCount"] / ios, 2) if ios else 0.0
        inferred |= {"operation", "read_pct"}
    operation = "read" if write_ratio == 0 else "write" if write_ratio == 100 else "mixed"

    kinds = {"random" if t.find("Random") is not None else "sequential" for t in targets}
    if kinds:
        pattern = "sequential" if kinds == {"sequential"} else "random"
    else:
        pattern = "sequential"  # DiskSpd's default
        inferred.add("pattern")

    blocks = {_int(t, "BlockSize", 9) for t in targets}
    block: int | None = blocks.pop() if len(blocks) == 1 else None

    queue_depth, qd_inferred = _queue_depth(spec, targets)
    if qd_inferred:
        inferred.add("queue_depth")

    latency = ts.find("Latency")
    lat_texts = _first_texts(latency, _LATENCY_TAGS) if latency is not None else {}
    buckets = _buckets(latency, runs)
    meta = _metadata(ts_texts, ts, spec, targets, number, seconds, per_target, totals, latency, lat_texts, buckets)
    paths = list(per_target) or [p for p in (_text(t, "Path") for t in targets) if p]
    target = ", ".join(paths) if paths else None

    records: list[IoRecord] = []
    pcts: list[float | None] | None = None
    near: list[tuple[int, tuple[str, ...]]] = []
    for direction, prefix in (("read", "Read"), ("write", "Write")):
        ios = totals[f"{prefix}Count"]
        if ios <= 0:
            continue
        nbytes = totals[f"{prefix}Bytes"]
        rec_inferred = set(inferred)
        rec_block = block
        if rec_block is None:
            rec_block = round(nbytes / ios)
            rec_inferred.add("block_size_bytes")
        if pcts is None:  # the same percentiles for both directions
            pcts = list(map(float, buckets[0])) if buckets[4] else [_number(p) for p in buckets[0]]  # type: ignore[arg-type]
            near = _near_points(pcts)
        lat, histogram = _latency(latency, lat_texts, buckets, pcts, near, direction)
        records.append(
            IoRecord(
                tool=TOOL,
                run_index=run_index,
                source_line=line,
                target=target,
                pattern=pattern,  # type: ignore[arg-type]
                operation=operation,  # type: ignore[arg-type]
                read_pct=100.0 - write_ratio,
                direction=direction,  # type: ignore[arg-type]
                block_size_bytes=rec_block,
                threads=threads,
                queue_depth=queue_depth,
                iops=ios / seconds,
                throughput=nbytes / seconds,
                throughput_unit="B/s",
                latency_unit="ms",
                duration_s=seconds,
                inferred=sorted(rec_inferred),
                metadata=meta,
                histogram=histogram,
                histogram_kind="share",
                **lat,
            )
        )
    return records


def _queue_depth(spec: ET.Element | None, targets: list[ET.Element]) -> tuple[int | None, bool]:
    if spec is None or not targets:
        return None, False
    pool_threads = _int(spec, "ThreadCount", 9) or 0
    pool_requests = _int(spec, "RequestCount", 9) or 0
    depths = [_int(t, "RequestCount", 9) for t in targets]
    if pool_threads > 0:
        if pool_requests > 0:
            return pool_requests, False
        if None in depths:
            return None, False
        return sum(d or 0 for d in depths), len(depths) > 1
    if None in depths:
        return None, False
    if len(set(depths)) == 1:
        return depths[0], False
    weights = [_int(t, "ThreadsPerFile", 9) or 1 for t in targets]
    return round(sum((d or 0) * w for d, w in zip(depths, weights, strict=True)) / sum(weights)), True


def _buckets(latency: ET.Element | None, runs: list[_Run] | None) -> _Buckets:
    """Every <Bucket> child of <Latency> in order, as columns (see `_Buckets`): a <Bucket> element as parsed,
    a run of them the fast path read (`_RUN_TAG`) from `runs`."""
    if latency is None:
        return _NO_BUCKETS
    pcts: list[str | None] = []
    reads: list[str | None] = []
    writes: list[str | None] = []
    totals: list[str | None] = []
    plain = True
    for child in latency:
        if child.tag == "Bucket":
            plain = False
            p = child.find("Percentile")
            t = child.find("TotalMilliseconds")
            pcts.append(None if p is None or p.text is None else p.text.strip())
            reads.append(child.findtext("ReadMilliseconds"))
            writes.append(child.findtext("WriteMilliseconds"))
            totals.append(None if t is None or t.text is None else t.text.strip())
        elif child.tag == _RUN_TAG and runs is not None:
            run = runs[int(child.text or "")]
            pcts += run[0]
            reads += run[1]
            writes += run[2]
            totals += run[3]
    return pcts, reads, writes, totals, plain


def _near_points(pcts: list[float | None]) -> list[tuple[int, tuple[str, ...]]]:
    """(bucket index, record latency fields) of the buckets whose percentile gives a record field; remembered
    per percentile list, which DiskSpd prints the same for every timespan."""
    key = tuple(pcts)
    found = _NEAR_POINTS_CACHE.get(key)
    if found is not None:
        return found
    found = []
    for i, p in enumerate(pcts):
        if p is not None:
            keys = _POINTS_NEAR_CACHE.get(p)
            if keys is None:
                keys = _points_near(p)
            if keys:
                found.append((i, keys))
    if len(_NEAR_POINTS_CACHE) < 64:
        _NEAR_POINTS_CACHE[key] = found
    return found


def _latency(
    latency: ET.Element | None,
    lat_texts: dict[str, str | None],
    buckets: _Buckets,
    pcts: list[float | None],
    near: list[tuple[int, tuple[str, ...]]],
    direction: str,
) -> tuple[dict[str, float | None], list[tuple[float, float]]]:
    lat: dict[str, float | None] = dict.fromkeys(_LATENCY_POINTS)
    lat["latency_avg"] = None
    if latency is None:
        return lat, []
    lat["latency_avg"] = _number(_strip(lat_texts.get(_AVG_TAGS[direction])))
    texts = buckets[1] if direction == "read" else buckets[2]
    values: list[float | None]
    values: list[float | None]
    # Fast-path numbers are printed numbers (`_number` of each is float()) and never empty: all() is true
    # exactly when every bucket has one, and then every percentile is a number too.
    whole = buckets[4] and all(texts)
    values = list(map(float, texts)) if whole else [_number(v.strip()) if v else None for v in texts]  # type: ignore[arg-type]
    # Later buckets win, as every bucket with both numbers sets the fields its percentile gives.
    for i, keys in near:
        v = values[i]
        if v is not None:
            for key in keys:
                lat[key] = v
    if whole:
        points = list(zip(pcts, values, strict=True))
    else:
        points = [(p, v) for p, v in zip(pcts, values, strict=True) if p is not None and v is not None]
    return lat, _share_histogram(sorted(points))  # type: ignore[arg-type]


def _points_near(p: float) -> tuple[str, ...]:
    """The record latency fields whose percentile `p` is (within 1e-9); remembered per value, as every
    timespan lists the same percentiles."""
    keys = tuple(key for key, point in _LATENCY_POINTS.items() if abs(p - point) < 1e-9)
    if len(_POINTS_NEAR_CACHE) < 4096:
        _POINTS_NEAR_CACHE[p] = keys
    return keys


def _metadata(
    ts_texts: dict[str, str | None],
    ts: ET.Element,
    spec: ET.Element | None,
    targets: list[ET.Element],
    number: int,
    seconds: float,
    per_target: dict[str, dict[str, int]],
    totals: dict[str, int],
    latency: ET.Element | None,
    lat_texts: dict[str, str | None],
    buckets: _Buckets,
) -> dict[str, str]:
    meta: dict[str, str] = {"timespan": str(number), "parameters_from": "profile" if spec is not None else "none"}
    if spec is not None:
        for child in spec:
            if child.tag != "Targets" and len(child) == 0 and child.text:
                meta[f"input.{child.tag}"] = child.text.strip()
        for idx, tgt in enumerate(targets, 1):
            for leaf_path, value in _leaves(tgt, ""):
                meta[f"input.target.{idx}.{leaf_path}"] = value
            ratio = _text(tgt, "RandomRatio")
            if ratio:
                meta[f"target.{idx}.random_pct"] = ratio
    meta["results.test_time_s"] = f"{seconds:.2f}"
    for key in ("ThreadCount", "RequestCount", "ProcCount"):
        value = ts_texts.get(key)
        if value is not None:
            meta[f"results.{key}"] = value.strip()
    avg = _child_path(ts, "CpuUtilization", "Average")
    if avg is not None:
        found = _first_texts(avg, _CPU_TAGS)
        for tag, key in _CPU_KEYS:
            value = found.get(tag)
            if value is not None:
                meta[key] = value.strip()
    for kind, (b, c) in {
        "read": (totals["ReadBytes"], totals["ReadCount"]),
        "write": (totals["WriteBytes"], totals["WriteCount"]),
        "total": (totals["ReadBytes"] + totals["WriteBytes"], totals["ReadCount"] + totals["WriteCount"]),
    }.items():
        meta[f"{kind}.bytes"] = str(b)
        meta[f"{kind}.ios"] = str(c)
    if latency is not None:
        for tag in ("AverageTotalMilliseconds", "ReadLatencyStdev", "WriteLatencyStdev", "LatencyStdev"):
            value = lat_texts.get(tag)
            if value is not None:
                meta[f"latency.{tag}"] = value.strip()
        pcts, totals_ms, plain = buckets[0], buckets[3], buckets[4]
        if plain:  # every percentile and total printed
            meta.update(zip(map(_total_key, pcts), totals_ms, strict=True))  # type: ignore[arg-type]
        else:
            for p, total in zip(pcts, totals_ms, strict=True):
                if p is not None and total is not None:
                    meta[_total_key(p)] = total
    if len(per_target) > 1:
        for idx, (path, sums) in enumerate(per_target.items(), 1):
            meta[f"target.{idx}.path"] = path
            meta[f"target.{idx}.threads"] = str(sums["threads"])
            for key in ("ReadBytes", "ReadCount", "WriteBytes", "WriteCount"):
                meta[f"target.{idx}.{key}"] = str(sums.get(key, 0))
    return meta


@lru_cache(maxsize=4096)
def _total_key(p: str) -> str:
    """The metadata key of a bucket's total latency; every timespan lists the same percentiles."""
    return f"total.latency_p{p}_ms"


def _leaves(elem: ET.Element, prefix: str) -> list[tuple[str, str]]:
    """(dotted path, text) of every leaf under `elem`, attributes included."""
    out: list[tuple[str, str]] = []
    for name, value in elem.attrib.items():
        out.append((f"{prefix}@{name}" if prefix else f"@{name}", value))
    if len(elem) == 0:
        if elem.text and elem.text.strip() and prefix:
            out.append((prefix, elem.text.strip()))
        return out
    for child in elem:
        path = f"{prefix}.{child.tag}" if prefix else child.tag
        if len(child) or child.attrib:
            out.extend(_leaves(child, path))
        elif child.text and (text := child.text.strip()):  # a plain leaf, the common case, without a call
            out.append((path, text))
    return out


def _first_texts(elem: ET.Element, tags: frozenset[str]) -> dict[str, str | None]:
    """The text of the first child of `elem` with each of `tags` (as `elem.find(tag).text`): one pass over
    the children instead of a find per tag."""
    found: dict[str, str | None] = {}
    for child in elem:
        tag = child.tag
        if tag in tags and tag not in found:
            found[tag] = child.text
    return found


def _count(text: str | None, digits: int = 18) -> int | None:
    """`_int` of an element's text."""
    if text is None:
        return None
    text = text.strip()
    return int(text) if (_COUNT_18 if digits == 18 else _count_pattern(digits)).fullmatch(text) else None


def _strip(text: str | None) -> str | None:
    """`_text` of an element's text."""
    return None if text is None else text.strip()


def _child_path(elem: ET.Element | None, tag: str, child_tag: str) -> ET.Element | None:
    """elem.find("tag/child_tag") without ElementPath: the first `child_tag` child of the `tag` children."""
    if elem is None:
        return None
    for parent in elem.findall(tag):
        found = parent.find(child_tag)
        if found is not None:
            return found
    return None


def _text(elem: ET.Element | None, path: str) -> str | None:
    if elem is None:
        return None
    found = elem.find(path)
    if found is None or found.text is None:
        return None
    return found.text.strip()


def _number(value: str | None) -> float | None:
    """A decimal number as DiskSpd prints it, else None."""
    if value is None:
        return None
    return _number_memo(value) if len(value) <= _MEMO_MAX_CHARS else _number_of(value)


def _number_of(value: str) -> float | None:
    return float(value) if _NUMBER.fullmatch(value) else None


_number_memo = lru_cache(maxsize=4096)(_number_of)


def _float(elem: ET.Element | None, path: str) -> float | None:
    return _number(_text(elem, path))


_COUNT_18 = re.compile("[0-9]{1,18}")


def _int(elem: ET.Element | None, path: str, digits: int = 18) -> int | None:
    """A count; threads and queue depths (`digits=9`) must fit the warehouse's 32-bit columns."""
    value = _text(elem, path)
    if value is None or not _count_pattern(digits).fullmatch(value):
        return None
    return int(value)


@lru_cache(maxsize=8)
def _count_pattern(digits: int) -> re.Pattern[str]:
    return re.compile(f"[0-9]{{1,{digits}}}")
