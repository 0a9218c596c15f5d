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
- Only each `<Results>...</Results>` span goes to the XML parser (ElementTree), so no DOCTYPE or entity declaration
  around it is ever read (no entity expansion). A malformed document among others, or one never closed at the
  end, is reported as a warning (`line N: ...`) beside the records of the rest.
- `parse_document(text)`: parse(text) when the text is `<Results>` documents and nothing else (white space, an
  XML declaration and one-line comments around and between them, as a batch script saving `-Rxml` outputs
  writes them), none with comments, CDATA, processing instructions or lines of text inside, in which another
  tool's output could hide; else None (also when parse would refuse a document), for the registry to detect and
  check as usual.
- Metadata: `system.*` (System leaves), `input.*` (the profile timespan's leaves) and
  `input.target.N.*`, `timespan`, `results.*`, `cpu.*` (CpuUtilization Average), `total.*` / `read.*` /
  `write.*` sums, and with several targets `target.N.path` with its I/O counts.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats._common import (
    LATENCY_FIELD_ROWS,
    PERCENTILE_LABELS,
    diskspd_start_time,
    share_histogram,
)
from kneepoint.ingest.records import IoRecord, ParsedRecords, line_warning

NAME = "diskspd_xml"
TITLE = "DiskSpd XML"
TOOLS = ("diskspd",)
HOST_KEYS: frozenset[str] = frozenset({"computername"})  # system.ComputerName
USER_KEYS: frozenset[str] = frozenset()
RESULT_KEY_PREFIXES: tuple[str, ...] = ("read.", "write.", "total.", "latency.", "cpu.", "results.")
RESULT_KEYS: tuple[str, ...] = ("timespan",)
TOOL = "diskspd"

# Record latency fields and the <Percentile> each one takes.
_LATENCY_POINTS = {field: PERCENTILE_LABELS[label] for field, label in LATENCY_FIELD_ROWS.items()}
_LATENCY_POINT_VALUES = frozenset(_LATENCY_POINTS.values())
_AVG_TAGS = {"read": "AverageReadMilliseconds", "write": "AverageWriteMilliseconds"}
_NUMBER = re.compile(r"-?[0-9]{1,20}(?:\.[0-9]{1,12})?")
_PADDED_NUMBER = re.compile(r"\s*+-?[0-9]{1,20}(?:\.[0-9]{1,12})?\s*+")  # _NUMBER with white space around
# Counts; threads and queue depths (9 digits) must fit the warehouse's 32-bit columns.
_COUNT = {18: re.compile("[0-9]{1,18}"), 9: re.compile("[0-9]{1,9}")}

_START, _END = "<Results>", "</Results>"
_HEAD = 200_000  # detect() reads this much of a text
# A line end of a document that text stands before or after, not a tag (see parse_document): a newline that is not
# preceded by '>', or whose next line starts with text.
_TEXT_AT_LINE_END = re.compile(r"\n(?:(?<!>\n)|[ \t]*+[^ \t<])")
_SPACE = re.compile(r"[ \t\r\n]*")
# What may stand before a document read whole: an XML declaration and one-line comments, each on its own line.
_PROLOGUE = re.compile(r"(?:(?:<\?xml[^\n<>]{0,200}\?>|<!--[^\n]{0,2000}?-->)[ \t\r]*\n[ \t\r\n]*)*")

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
    # Searched within the head without copying it; a text without "<" (most other tools' outputs) is refused by
    # one scan for that character.
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
    skipped: list[ParseError] = []
    run_index = 0
    line, pos = 1, 0
    read: _Read = {}
    for start, doc in _documents(text):
        line += text.count("\n", pos, start)  # 1-based line of the document's start
        pos = start
        try:
            doc_records = _document(_xml(doc, line), line, run_index, read)
        except ParseError as exc:
            skipped.append(exc)
            continue
        if doc_records:
            run_index = doc_records[-1].run_index + 1
            records.extend(doc_records)
    if records:
        # A damaged document costs only itself: the others are kept and it is reported.
        warnings = [line_warning(exc.line, f"{exc.reason}: that document is skipped") for exc in skipped]
        last_end = text.rfind(_END)
        if (cut := text.find(_START, last_end + len(_END) if last_end >= 0 else 0)) >= 0:
            cut_line = text.count("\n", 0, cut) + 1
            warnings.append(line_warning(cut_line, "DiskSpd XML <Results> document never closed (output cut short?)"))
        return ParsedRecords(records, warnings)
    first_error = skipped[0] if skipped else None
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
    """parse(text) when `text` is `<Results>` documents and nothing else, else None. Around and between them
    only white space, an XML declaration and comments, each of these on a line of its own (as a script saving the
    outputs may write them).

    Nothing of another tool can hide in such a text (no tool's output fits on one line), so the registry reads it
    without detection or the check for a second tool. To keep that true, a document with a comment, CDATA section
    or processing instruction inside, or with a line that starts with text or ends in text (a multi-line text
    node), gives None too, as does one that parse would refuse (the registry then reads the text the usual way and
    reports the error)."""
    start = _gap_end(text, 0)
    if not text.startswith(_START, start) or text.find(_START, 0, start) >= 0:
        return None
    records: list[IoRecord] = []
    read: _Read = {}
    line = text.count("\n", 0, start) + 1
    while True:
        end = text.find(_END, start)
        if end < 0:
            return None
        end += len(_END)
        doc = text[start:end]
        # (a one-character scan first: CPython 3.11 looks for a two-character literal several times slower)
        if ("!" in doc and "<!" in doc) or ("?" in doc and "<?" in doc) or _TEXT_AT_LINE_END.search(doc):
            return None
        try:
            doc_records = _document(_xml(doc, line), line, records[-1].run_index + 1 if records else 0, read)
        except ParseError:
            return None
        records.extend(doc_records)
        gap_end = _gap_end(text, end)
        if gap_end == len(text):
            return records or None
        if not text.startswith(_START, gap_end) or text.find(_START, end, gap_end) >= 0:
            return None  # text after the document, or a comment that names one (parse would start one there)
        line += text.count("\n", start, gap_end)
        start = gap_end


def _gap_end(text: str, pos: int) -> int:
    """Where the white space, XML declaration and one-line comments from `pos` on end."""
    pos = pos if text.startswith("<", pos) else _SPACE.match(text, pos).end()  # type: ignore[union-attr]
    if text.startswith(("<!--", "<?xml"), pos):
        pos = _PROLOGUE.match(text, pos).end()  # type: ignore[union-attr]
    return pos


def _documents(text: str) -> list[tuple[int, str]]:
    """Each `<Results>...</Results>` span with its offset."""
    out: list[tuple[int, str]] = []
    pos = 0
    while (start := text.find(_START, pos)) >= 0:
        end = text.find(_END, start)
        if end < 0:
            break
        out.append((start, text[start : end + len(_END)]))
        pos = end + len(_END)
    return out


def _xml(doc: str, line: int) -> ET.Element:
    # Only the <Results> span is parsed: no DOCTYPE, so no entity a file could declare gets expanded.
    try:
        return ET.fromstring(doc)
    except ET.ParseError as exc:
        row = exc.position[0] if exc.position else 1
        raise ParseError(f"DiskSpd XML document malformed: {exc}", line + row - 1) from None
    except ValueError as exc:  # text the XML parser cannot take at all (e.g. lone surrogates)
        raise ParseError(f"DiskSpd XML document unreadable: {exc}", line) from None


# Percentile lists read in this parse: every timespan of a file lists the same ones. The texts of a list -> their
# numbers, and the buckets that give record latency fields (index, the fields), in order.
_Read = dict[tuple[str | None, ...], tuple[list[float | None], list[tuple[int, tuple[str, ...]]]]]


def _document(root: ET.Element, line: int, first_run: int, read: _Read) -> list[IoRecord]:
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
    started_at = diskspd_start_time(_text(system, "RunTime"))
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
        ts_records = _timespan(ts, spec, n + 1, run, line, read)
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
    ts: ET.Element, spec: ET.Element | None, number: int, run_index: int, line: int, read: _Read
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
    for thread in ts.findall("Thread"):
        thread_ids.add(_text(thread, "Id") or str(len(thread_ids)))
        for tgt in thread.findall("Target"):
            found = _first_texts(tgt, _TARGET_TAGS)
            path = found.get("Path")
            sums = per_target.setdefault((path.strip() if path is not None else None) or "", {"threads": 0})
            sums["threads"] += 1
            for key in _COUNT_KEYS:
                sums[key] = sums.get(key, 0) + (_count(found.get(key)) or 0)
    totals = {key: sum(t.get(key, 0) for t in per_target.values()) for key in _COUNT_KEYS}

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
    buckets = _buckets(latency)
    meta = _metadata(ts_texts, ts, spec, targets, number, seconds, per_target, totals, latency, lat_texts, buckets)
    paths = list(per_target) or [p for p in (_text(t, "Path") for t in targets) if p]
    target = ", ".join(paths) if paths else None
    # The same percentiles for both directions, and the record fields each gives.
    key = tuple(buckets[0])
    if key not in read:
        numbers = [_number(p) for p in key]
        read[key] = numbers, [(i, fields) for i, p in enumerate(numbers) if (fields := _fields_at(p))]
    percentiles, slots = read[key]

    records: list[IoRecord] = []
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
        lat, histogram = _latency(latency, lat_texts, buckets, percentiles, slots, direction)
        records.append(
            IoRecord(
                tool=TOOL,
                run_index=run_index,
                source_line=line,
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
                target=target,
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


# Every <Bucket> of a <Latency> in order, as columns: percentile text (stripped), read and write latency text (as
# printed, or None), total latency text (stripped).
_Buckets = tuple[list[str | None], list[str | None], list[str | None], list[str | None]]


def _buckets(latency: ET.Element | None) -> _Buckets:
    if latency is None:
        return [], [], [], []
    buckets = latency.findall("Bucket")
    # Column by column (a hundred buckets a timespan). findtext gives "" for an element without text, None for
    # none: both are no value.
    pcts = [p.strip() if p else None for p in [b.findtext("Percentile") for b in buckets]]
    reads = [b.findtext("ReadMilliseconds") for b in buckets]
    writes = [b.findtext("WriteMilliseconds") for b in buckets]
    totals = [t.strip() if t else None for t in [b.findtext("TotalMilliseconds") for b in buckets]]
    return pcts, reads, writes, totals


def _latency(
    latency: ET.Element | None,
    lat_texts: dict[str, str | None],
    buckets: _Buckets,
    percentiles: list[float | None],
    slots: list[tuple[int, tuple[str, ...]]],
    direction: str,
) -> tuple[dict[str, float | None], list[tuple[float, float]]]:
    lat: dict[str, float | None] = dict.fromkeys(_LATENCY_POINTS)
    lat["latency_avg"] = None
    if latency is None:
        return lat, []
    lat["latency_avg"] = _number(_strip(lat_texts.get(_AVG_TAGS[direction])))
    texts = buckets[1] if direction == "read" else buckets[2]
    # (float() ignores the white space around a number that strip() would remove)
    values = [float(text) if text and _PADDED_NUMBER.fullmatch(text) else None for text in texts]
    for i, fields in slots:  # in bucket order: later buckets win
        if (value := values[i]) is not None:
            for key in fields:
                lat[key] = value
    points = [(p, v) for p, v in zip(percentiles, values, strict=True) if p is not None and v is not None]
    return lat, share_histogram(sorted(points))


def _fields_at(p: float | None) -> tuple[str, ...]:
    """The record latency fields a bucket's percentile gives (within 1e-9 of theirs; such a one rounds to it)."""
    if p is None or round(p, 6) not in _LATENCY_POINT_VALUES:
        return ()
    return tuple(key for key, point in _LATENCY_POINTS.items() if abs(p - point) < 1e-9)


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
        for p, total in zip(buckets[0], buckets[3], strict=True):
            if p is not None and total is not None:
                meta[f"total.latency_p{p}_ms"] = total
    if len(per_target) > 1:
        for idx, (path, sums) in enumerate(per_target.items(), 1):
            meta[f"target.{idx}.path"] = path
            meta[f"target.{idx}.threads"] = str(sums["threads"])
            for key in _COUNT_KEYS:
                meta[f"target.{idx}.{key}"] = str(sums.get(key, 0))
    return meta


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
        elif child.text and (text := child.text.strip()):
            out.append((path, text))
    return out


def _first_texts(elem: ET.Element, tags: frozenset[str]) -> dict[str, str | None]:
    """The text of the first child of `elem` with each of `tags` (`elem.find(tag).text`), in one pass."""
    found: dict[str, str | None] = {}
    for child in elem:
        tag = child.tag
        if tag in tags and tag not in found:
            found[tag] = child.text
    return found


def _child_path(elem: ET.Element | None, tag: str, child_tag: str) -> ET.Element | None:
    """elem.find("tag/child_tag"): the first `child_tag` child of the `tag` children."""
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


def _strip(text: str | None) -> str | None:
    return None if text is None else text.strip()


def _number(value: str | None) -> float | None:
    """A decimal number as DiskSpd prints it, else None."""
    return float(value) if value is not None and _NUMBER.fullmatch(value) else None


def _float(elem: ET.Element | None, path: str) -> float | None:
    return _number(_text(elem, path))


def _count(text: str | None, digits: int = 18) -> int | None:
    """A count of at most `digits` digits in an element's text."""
    if text is None:
        return None
    text = text.strip()
    return int(text) if _COUNT[digits].fullmatch(text) else None


def _int(elem: ET.Element | None, path: str, digits: int = 18) -> int | None:
    return _count(_text(elem, path), digits)
