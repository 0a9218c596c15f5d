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
TOOL = "diskspd"

# Record latency fields and the <Percentile> each one takes.
_LATENCY_POINTS = {field: PERCENTILE_LABELS[label] for field, label in FIELD_LABELS.items()}
_AVG_TAGS = {"read": "AverageReadMilliseconds", "write": "AverageWriteMilliseconds"}
# A <Percentile> value -> the record latency fields it gives (see _points_near).
_POINTS_NEAR_CACHE: dict[float, tuple[str, ...]] = {}
_NUMBER = re.compile(r"-?[0-9]{1,20}(?:\.[0-9]{1,12})?")
# Numbers repeat from bucket to bucket and run to run (every timespan lists the same percentiles).
_MEMO_MAX_CHARS = 40


def detect(text: str) -> float:
    head = text[:200_000]
    if "<Results>" not in head:
        return 0.0
    if "<TestTimeSeconds>" in head or "<TimeSpans>" in head:
        return 0.95
    if "<System>" in head and "<Profile>" in head:
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
            root = _xml(doc, line)
            doc_records = _document(root, line, run_index)
        except ParseError as exc:
            first_error = first_error or exc
            continue
        if doc_records:
            run_index = doc_records[-1].run_index + 1
            records.extend(doc_records)
    if not records:
        if first_error is not None:
            raise first_error
        start = text.find("<Results>")
        if start >= 0:
            raise ParseError(
                "DiskSpd XML <Results> document is never closed (output cut short?)", text.count("\n", 0, start) + 1
            )
        raise ParseError("no DiskSpd XML <Results> document found", 1)
    return records


def _documents(text: str) -> list[tuple[int, str]]:
    """Each `<Results>...</Results>` span with its offset; one pass, so a missing end tag costs nothing."""
    out: list[tuple[int, str]] = []
    pos = 0
    while (start := text.find("<Results>", pos)) >= 0:
        end = text.find("</Results>", start)
        if end < 0:
            break
        out.append((start, text[start : end + len("</Results>")]))
        pos = end + len("</Results>")
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


def _document(root: ET.Element, line: int, first_run: int) -> list[IoRecord]:
    system = root.find("System")
    version = _text(system, "Tool/Version")
    system_meta: dict[str, str] = {}
    if system is not None:
        for child in system:
            if child.tag == "ProcessorTopology":
                continue
            for leaf_path, value in _leaves(child, child.tag):
                system_meta[f"system.{leaf_path}"] = value
    started_at = _started_at(_text(system, "RunTime"))
    profiles = root.findall("Profile/TimeSpans/TimeSpan")
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
        ts_records = _timespan(ts, spec, n + 1, run, line)
        for r in ts_records:
            r.tool_version = version
            r.started_at = started_at
            r.metadata.update(system_meta)
            r.metadata.update(profile_meta)
        if ts_records:
            records.extend(ts_records)
            run += 1
    return records


def _timespan(ts: ET.Element, spec: ET.Element | None, number: int, run_index: int, line: int) -> list[IoRecord]:
    if ts.find("Error") is not None:
        return []
    seconds = _float(ts, "TestTimeSeconds")
    if not seconds or seconds <= 0:
        raise ParseError(f"DiskSpd XML timespan {number} has no TestTimeSeconds", line)
    threads = _int(ts, "ThreadCount", 9)

    # Sum every thread's per-target counts; keep per-target sums in file order of first appearance.
    per_target: dict[str, dict[str, int]] = {}
    thread_ids: set[str] = set()
    for thread in ts.findall("Thread"):
        thread_ids.add(_text(thread, "Id") or str(len(thread_ids)))
        for tgt in thread.findall("Target"):
            path = _text(tgt, "Path") or ""
            sums = per_target.setdefault(path, {"threads": 0})
            sums["threads"] += 1
            for key in ("ReadBytes", "ReadCount", "WriteBytes", "WriteCount"):
                sums[key] = sums.get(key, 0) + (_int(tgt, key) or 0)
    totals = {
        k: sum(t.get(k, 0) for t in per_target.values()) for k in ("ReadBytes", "ReadCount", "WriteBytes", "WriteCount")
    }

    inferred = {"iops", "throughput_bytes_per_s"}
    if threads is None:
        threads = len(thread_ids) or None
        inferred.add("threads")

    targets = spec.findall("Targets/Target") if spec is not None else []
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
    buckets = _buckets(latency, totals["ReadCount"] > 0, totals["WriteCount"] > 0)
    meta = _metadata(ts, spec, targets, number, seconds, per_target, totals, latency, buckets)
    paths = list(per_target) or [p for p in (_text(t, "Path") for t in targets) if p]

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
        lat, histogram = _latency(latency, buckets, direction)
        records.append(
            IoRecord(
                tool=TOOL,
                run_index=run_index,
                source_line=line,
                target=", ".join(paths) if paths else None,
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


def _buckets(
    latency: ET.Element | None, read: bool, write: bool
) -> list[tuple[str | None, str | None, str | None, str | None]]:
    """Every <Bucket> once: its percentile and total latency as `_text` reads them, and the read and write
    latency text as printed (`findtext`: "" for an empty element), of the directions with I/O only."""
    if latency is None:
        return []
    out = []
    for bucket in latency.findall("Bucket"):
        p = bucket.find("Percentile")
        t = bucket.find("TotalMilliseconds")
        out.append(
            (
                None if p is None or p.text is None else p.text.strip(),
                bucket.findtext("ReadMilliseconds") if read else None,
                bucket.findtext("WriteMilliseconds") if write else None,
                None if t is None or t.text is None else t.text.strip(),
            )
        )
    return out


def _latency(
    latency: ET.Element | None, buckets: list[tuple[str | None, str | None, str | None, str | None]], direction: str
) -> tuple[dict[str, float | None], list[tuple[float, float]]]:
    lat: dict[str, float | None] = dict.fromkeys(_LATENCY_POINTS)
    lat["latency_avg"] = None
    if latency is None:
        return lat, []
    lat["latency_avg"] = _float(latency, _AVG_TAGS[direction])
    column = 1 if direction == "read" else 2
    points: list[tuple[float, float]] = []
    for bucket in buckets:
        p = _number(bucket[0])
        value = bucket[column]
        v = _number(value.strip()) if value else None
        if p is None or v is None:
            continue
        points.append((p, v))
        keys = _POINTS_NEAR_CACHE.get(p)
        if keys is None:
            keys = _points_near(p)
        for key in keys:
            lat[key] = v
    return lat, _share_histogram(sorted(points))  # = percentile_histogram(points): every point has a latency


def _points_near(p: float) -> tuple[str, ...]:
    """The record latency fields whose percentile `p` is (within 1e-9); remembered per value, as every
    timespan lists the same percentiles."""
    keys = tuple(key for key, point in _LATENCY_POINTS.items() if abs(p - point) < 1e-9)
    if len(_POINTS_NEAR_CACHE) < 4096:
        _POINTS_NEAR_CACHE[p] = keys
    return keys


def _metadata(
    ts: ET.Element,
    spec: ET.Element | None,
    targets: list[ET.Element],
    number: int,
    seconds: float,
    per_target: dict[str, dict[str, int]],
    totals: dict[str, int],
    latency: ET.Element | None,
    buckets: list[tuple[str | None, str | None, str | None, str | None]],
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
        value = _text(ts, key)
        if value is not None:
            meta[f"results.{key}"] = value
    avg = ts.find("CpuUtilization/Average")
    if avg is not None:
        for tag, key in (
            ("UsagePercent", "usage_pct"),
            ("UserPercent", "user_pct"),
            ("KernelPercent", "kernel_pct"),
            ("IdlePercent", "idle_pct"),
        ):
            value = _text(avg, tag)
            if value is not None:
                meta[f"cpu.{key}"] = value
    for kind, (b, c) in {
        "read": (totals["ReadBytes"], totals["ReadCount"]),
        "write": (totals["WriteBytes"], totals["WriteCount"]),
        "total": (totals["ReadBytes"] + totals["WriteBytes"], totals["ReadCount"] + totals["WriteCount"]),
    }.items():
        meta[f"{kind}.bytes"] = str(b)
        meta[f"{kind}.ios"] = str(c)
    if latency is not None:
        for tag in ("AverageTotalMilliseconds", "ReadLatencyStdev", "WriteLatencyStdev", "LatencyStdev"):
            value = _text(latency, tag)
            if value is not None:
                meta[f"latency.{tag}"] = value
        for p, _, _, total in buckets:
            if p is not None and total is not None:
                meta[f"total.latency_p{p}_ms"] = total
    if len(per_target) > 1:
        for idx, (path, sums) in enumerate(per_target.items(), 1):
            meta[f"target.{idx}.path"] = path
            meta[f"target.{idx}.threads"] = str(sums["threads"])
            for key in ("ReadBytes", "ReadCount", "WriteBytes", "WriteCount"):
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
        out.extend(_leaves(child, f"{prefix}.{child.tag}" if prefix else child.tag))
    return out


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


def _int(elem: ET.Element | None, path: str, digits: int = 18) -> int | None:
    """A count; threads and queue depths (`digits=9`) must fit the warehouse's 32-bit columns."""
    value = _text(elem, path)
    if value is None or not _count_pattern(digits).fullmatch(value):
        return None
    return int(value)


@lru_cache(maxsize=8)
def _count_pattern(digits: int) -> re.Pattern[str]:
    return re.compile(f"[0-9]{{1,{digits}}}")
