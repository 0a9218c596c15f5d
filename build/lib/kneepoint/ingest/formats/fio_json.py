"""fio JSON output (`--output-format=json` and `json+`), fio 2.x to 3.x.

Input (fio-3.33, trimmed)::

    note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1
    {
      "fio version" : "fio-3.33",
      "timestamp" : 1763683969,
      "global options" : { "rw" : "randread", "bs" : "4k", "numjobs" : "1", "ioengine" : "libaio" },
      "jobs" : [
        {
          "jobname" : "randread-4k-qd1",
          "job options" : { "name" : "randread-4k-qd1", "iodepth" : "1" },
          "read" : { "io_bytes" : 1228005376, "bw_bytes" : 307031082, "iops" : 74958.76, "runtime" : 4001,
                     "total_ios" : 299910,
                     "clat_ns" : { "mean" : 12400.2, "percentile" : { "99.000000" : 19840 },
                                   "bins" : { "241" : 2, "251" : 2 } },
                     "lat_ns" : { "min" : 9200, "max" : 735771, "mean" : 13153.13 } },
          "write" : { "io_bytes" : 0, ... }
        }
      ]
    }

Records (normalized)::

    {"record": "io", "tool": "fio", "tool_version": "3.33", "run_index": 0, "source_line": 10,
     "pattern": "random", "operation": "read", "read_pct": 100, "direction": "read",
     "block_size_bytes": 4096, "threads": 1, "queue_depth": 1, "iops": 74958.76,
     "throughput_bytes_per_s": 307031082, "latency_avg_ms": 0.01315, "latency_p99_ms": 0.01984, ...}

Rules:
- Options: `job options` laid over `global options`; what neither names takes fio's documented default
  (bs 4k, iodepth 1, numjobs 1, rw read, rwmixread 50) and is listed in `inferred`. The queue depth
  falls back on `latency_depth` (fio 3 prints the job's iodepth there) before the default.
- fio 2.1.4 prints no options at all. Then the operation comes from the directions that did I/O, the
  pattern from the job name (`rand...` random, else fio's default sequential), the block size from
  bytes / I/Os (or KiB/s / IOPS), snapped to a power of two within 2 % else to 512 bytes, and the queue
  depth from the busiest `iodepth_level` bucket (`>=64` gives 64); all listed in `inferred`.
- Synchronous engines (sync, psync, pvsync, ...) run at queue depth 1 whatever iodepth says: with
  iodepth > 1 the record gets queue depth 1 (inferred) and keeps the asked depth in metadata
  (`queue_depth_asked`). fio's note `... queue depth will be capped at 1` before a document does the
  same for its jobs whose engine is synchronous or not printed.
- One record per job definition and direction with I/O (`read`, `write`; `mixed` with
  unified_rw_reporting gives direction `total`). A `group_reporting` group is one entry already; clones
  of one job reported separately (same jobname and groupid) are combined: IOPS and bytes summed, mean
  latency weighted by I/O count, min/max over clones, percentiles merged from json+ bins (else null),
  `threads` = number of clones.
- Latency: mean/min/max of `lat` (submission + completion, what Little's law needs); percentiles of `lat`
  where fio printed them (`lat_percentiles=1`), else of `clat` (fio's default). fio 3 reports ns
  (`*_ns`), fio 2 µs (`clat`, `lat`). The basis is kept in the run metadata. json+ bins are kept as the
  `count` histogram (fio 3: keyed by bucket value; fio 2: keyed by bucket index, converted). Without
  bins, a single-direction job keeps fio's `latency_ns/us/ms` shares (completion latency, percent of
  I/Os per bucket) as a `share` histogram; the open `>=2000` ms bucket is bounded by the max latency.
- Throughput: `bw_bytes` (B/s) where present, else `bw` (KiB/s).
- `source_line` is the line of the job's `"jobname"` (of its first clone).
- Text before, between and after JSON documents (notes, `fio: terminating on signal 2`, shell prompts) is
  skipped; every document in the file is read. A file that is one document and nothing else is read by
  `parse_document`, which gives the same records without the registry's detection of every other format.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import repeat
from operator import itemgetter
from typing import Any

from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats._common import CAPPED_NOTE, FIO_RW, SYNC_ENGINES, snap_block_size
from kneepoint.ingest.records import IoRecord
from kneepoint.ingest.textio import size_to_bytes

NAME = "fio_json"
TITLE = "fio JSON"
TOOLS = ("fio",)
HOST_KEYS: frozenset[str] = frozenset()
USER_KEYS: frozenset[str] = frozenset()
RESULT_KEY_PREFIXES: tuple[str, ...] = ()
RESULT_KEYS: tuple[str, ...] = ()
TOOL = "fio"

_DOC_START = re.compile(r'^[ \t]*\{[ \t]*$|^[ \t]*\{\s*"fio version"', re.MULTILINE)
_DECODER = json.JSONDecoder()
_LEAD = re.compile(r"[ \t\n]*(\{)")  # a document's opening brace after blank lines only
_DIRECTIONS = (("read", "read"), ("write", "write"), ("mixed", "total"))
_PCT_KEYS = {"p50": "50.000000", "p95": "95.000000", "p99": "99.000000", "p999": "99.900000"}
_PCT_POINTS = {"p50": 50.0, "p95": 95.0, "p99": 99.0, "p999": 99.9}
_BIG = 1 << 62
_DEPTH_LEVELS = {"1": 1, "2": 2, "4": 4, "8": 8, "16": 16, "32": 32, ">=64": 64}


def _plat_idx_to_val(idx: int, bits: int = 6, val: int = 64) -> int:
    """fio's stat.c: the value a latency bucket index stands for (the middle of the bucket)."""
    if idx < (val << 1):
        return idx
    error_bits = (idx >> bits) - 1
    base = 1 << (error_bits + bits)
    return int(base + (idx % val + 0.5) * (1 << error_bits))


# json+ bins are keyed by fio's bucket values, a fixed set: each key is looked up here rather than read as a
# number (json+ prints hundreds of bins per job).
_BIN_BOUNDS: dict[str, float] = {str(v): float(v) for v in map(_plat_idx_to_val, range(29 * 64))}


def detect(text: str) -> float:
    head = text[:65536]
    if '"' not in head:
        return 0.0  # one memchr: most other tools' texts hold no double quote at all
    if '"fio version"' in head and '"jobs"' in text:
        return 0.95
    if '"jobs"' in head and '"jobname"' in head:
        return 0.7
    return 0.0


def parse_document(text: str) -> list[IoRecord] | None:
    """parse(text) when the text is one fio JSON document and nothing else (whitespace around it): another
    tool's output cannot hide in it, so the registry skips detection and the mixed-output check. None when the
    text is anything else, or when the document cannot be read (the registry's parse then says why)."""
    lead = _LEAD.match(text)
    if lead is None:
        return None
    start = lead.start(1)
    if not _DOC_START.match(text, text.rfind("\n", 0, start) + 1):
        return None  # not where parse() would see a document start
    try:
        doc, end = _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    tail = text[end:]
    if (tail and not tail.isspace()) or not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
        return None
    return _parse_document(doc, text, start, end, _LineCounter(text), 0, capped_note=False) or None


def parse(text: str) -> list[IoRecord]:
    records: list[IoRecord] = []
    run_index = 0
    pos = 0
    gap_start = 0  # end of the previous document: notes in between belong to the next one
    lines = _LineCounter(text)
    first_error: ParseError | None = None
    while True:
        m = _DOC_START.search(text, pos)
        if m is None:
            break
        start = text.index("{", m.start())
        try:
            doc, end = _DECODER.raw_decode(text, start)
        except RecursionError:
            raise ParseError("JSON nests too deeply to read", text.count("\n", 0, start) + 1) from None
        except json.JSONDecodeError as exc:
            if first_error is None:
                first_error = ParseError(f"fio JSON document cut short or malformed: {exc.msg}", exc.lineno)
            pos = m.end()
            continue
        pos = end
        if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
            continue
        capped_note = text.find(CAPPED_NOTE, gap_start, start) >= 0
        gap_start = end
        doc_records = _parse_document(doc, text, start, end, lines, run_index, capped_note)
        if doc_records:
            run_index = doc_records[-1].run_index + 1
            records.extend(doc_records)
    if not records:
        if first_error is not None:
            raise first_error
        raise ParseError("no fio JSON document with jobs found", 1)
    return records


def _version(doc: dict[str, Any]) -> str | None:
    v = doc.get("fio version")
    if not isinstance(v, str):
        return None
    return v.removeprefix("fio-")


def _doc_started_at(doc: dict[str, Any]) -> str | None:
    stamp = doc.get("timestamp")
    if isinstance(stamp, int | float) and 0 < stamp < 1e11:
        return datetime.fromtimestamp(stamp, UTC).isoformat()
    return None


def _job_started_at(job: dict[str, Any], doc_default: str | None) -> str | None:
    start = job.get("job_start")  # fio >= 3.30: ms since the epoch
    if isinstance(start, int | float) and 0 < start < 1e14:
        return datetime.fromtimestamp(start / 1000, UTC).isoformat()
    return doc_default


@dataclass(slots=True)
class _DocContext:
    """What every job of one document shares."""

    version: str | None
    global_opts: dict[str, Any]
    global_meta: dict[str, str]
    started_at: str | None
    disk: str | None
    capped_note: bool


class _LineCounter:
    """Line numbers of positions met in increasing order: each stretch of text is counted once."""

    __slots__ = ("text", "pos", "line")

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.line = 1

    def at(self, target: int) -> int:
        if target > self.pos:
            self.line += self.text.count("\n", self.pos, target)
            self.pos = target
        return self.line


def _parse_document(
    doc: dict[str, Any], text: str, start: int, end: int, lines: _LineCounter, first_run: int, capped_note: bool
) -> list[IoRecord]:
    global_opts = doc.get("global options")
    if not isinstance(global_opts, dict):
        global_opts = {}
    ctx = _DocContext(
        version=_version(doc),
        global_opts=global_opts,
        global_meta={f"option.{k}": str(v) for k, v in global_opts.items()},
        started_at=_doc_started_at(doc),
        disk=_disk_util_name(doc),
        capped_note=capped_note,
    )
    # Clones (numjobs without group_reporting) share jobname and groupid; keep file order.
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    job_lines: dict[tuple[str, int], int] = {}
    doc_line = lines.at(start)
    for job in doc["jobs"]:
        if not isinstance(job, dict):
            continue
        job_line = doc_line
        if "jobname" in job:
            at = text.find('"jobname"', lines.pos + 1, end)
            if at >= 0:
                job_line = lines.at(at)
        key = (str(job.get("jobname", "")), _int(job.get("groupid"), 0))
        groups.setdefault(key, []).append(job)
        job_lines.setdefault(key, job_line)

    records: list[IoRecord] = []
    for offset, (key, clones) in enumerate(groups.items()):
        records.extend(_job_records(ctx, clones, job_lines[key], first_run + offset))
    return records


def _job_records(ctx: _DocContext, clones: list[dict[str, Any]], line: int, run_index: int) -> list[IoRecord]:
    # Per direction: the clones' stats blocks, where the direction did I/O.
    active: list[tuple[str, str, list[dict[str, Any]]]] = []
    for key, direction in _DIRECTIONS:
        stats = [s for c in clones if isinstance(s := c.get(key), dict)]
        if stats and any(_ios(s) > 0 for s in stats):
            if key == "mixed" and active:
                continue  # unified_rw_reporting=both: read and write are there already
            active.append((key, direction, stats))
    if not active:
        return []

    job_opts = clones[0].get("job options")
    has_options = bool(ctx.global_opts) or isinstance(job_opts, dict)
    metadata = dict(ctx.global_meta)
    if isinstance(job_opts, dict):
        opts = {**ctx.global_opts, **job_opts}
        for k, v in job_opts.items():
            metadata[f"option.{k}"] = str(v)
    else:
        opts = ctx.global_opts
    inferred: list[str] = []
    jobname = str(clones[0].get("jobname", ""))
    metadata["jobname"] = jobname
    if len(clones) > 1:
        metadata["combined_clones"] = str(len(clones))

    pattern, operation = _pattern_operation(opts, has_options, jobname, active, inferred)
    read_pct = _read_pct(opts, operation, active, inferred)
    bs_read, bs_write = _block_sizes(opts, has_options, active, inferred)
    queue_depth = _queue_depth(opts, has_options, clones, inferred, metadata, ctx.capped_note)
    # Separate entries are counted; a group_reporting entry says numjobs.
    threads = len(clones) if len(clones) > 1 else _int_opt(opts, "numjobs", 1, inferred, "threads")

    target = opts.get("filename") or opts.get("directory") or ctx.disk
    started_at = _job_started_at(clones[0], ctx.started_at)
    records = []
    for _key, direction, stats in active:
        rec = _direction_record(stats)
        if not rec["histogram"] and len(active) == 1:
            # No json+ bins: fio's latency_ns/us/ms shares (the job's completion latencies).
            rec["histogram"] = _share_histogram(clones, rec["latency_unit"], rec["latency_max"])
            if rec["histogram"]:
                rec["histogram_kind"] = "share"
        records.append(
            IoRecord(
                tool=TOOL,
                tool_version=ctx.version,
                run_index=run_index,
                source_line=line,
                target=str(target) if target else None,
                started_at=started_at,
                pattern=pattern,  # type: ignore[arg-type]
                operation=operation,  # type: ignore[arg-type]
                read_pct=read_pct,
                direction=direction,  # type: ignore[arg-type]
                block_size_bytes=bs_write if direction == "write" else bs_read,
                threads=threads,
                queue_depth=queue_depth,
                inferred=list(inferred),
                metadata=dict(metadata, latency_basis=rec.pop("latency_basis")),
                **rec,
            )
        )
    return records


def _pattern_operation(
    opts: dict[str, Any],
    has_options: bool,
    jobname: str,
    active: list[tuple[str, str, list[dict[str, Any]]]],
    inferred: list[str],
) -> tuple[str, str]:
    raw = opts.get("rw", opts.get("readwrite"))
    rw = str(raw).split(":")[0].strip().lower() if raw is not None else ""
    if rw in FIO_RW:
        return FIO_RW[rw]
    # No (known) rw: what the job did tells the operation; fio's default rw=read is sequential.
    keys = {key for key, _d, _s in active}
    operation = "mixed" if len(keys) > 1 or "mixed" in keys else ("write" if "write" in keys else "read")
    pattern = "random" if not has_options and "rand" in jobname.lower() else "sequential"
    inferred += ["pattern", "operation"]
    return pattern, operation


def _read_pct(
    opts: dict[str, Any], operation: str, active: list[tuple[str, str, list[dict[str, Any]]]], inferred: list[str]
) -> float:
    if operation != "mixed":
        return 100.0 if operation == "read" else 0.0
    for key, sign in (("rwmixread", 1), ("rwmixwrite", -1)):
        if key in opts:
            pct = _float(str(opts[key]).split(",")[0])
            if pct is not None and 0 <= pct <= 100:
                return pct if sign > 0 else 100.0 - pct
    inferred.append("read_pct")
    ios = {key: sum(_ios(s) for s in stats) for key, _d, stats in active}
    total = ios.get("read", 0.0) + ios.get("write", 0.0)
    if total > 0 and "rw" not in opts and "readwrite" not in opts:
        return round(100.0 * ios.get("read", 0.0) / total, 1)  # no options printed: the measured mix
    return 50.0


def _queue_depth(
    opts: dict[str, Any],
    has_options: bool,
    clones: list[dict[str, Any]],
    inferred: list[str],
    metadata: dict[str, str],
    capped_note: bool,
) -> int:
    asked = _int(str(opts["iodepth"]).split(",")[0], 0) if "iodepth" in opts else 0
    if asked < 1:
        asked = _int(clones[0].get("latency_depth"), 0)
    if asked < 1 and not has_options:
        asked = _busiest_depth_level(clones[0].get("iodepth_level"))
        if asked:
            inferred.append("queue_depth")
    if asked < 1:
        inferred.append("queue_depth")
        return 1
    engine = str(opts.get("ioengine", "")).strip().lower()
    sync = engine in SYNC_ENGINES
    if asked > 1 and (sync or (capped_note and (not engine or sync))):
        metadata["queue_depth_asked"] = str(asked)
        metadata["queue_depth_capped"] = f"synchronous engine {engine}" if sync else "fio note: capped at 1"
        if "queue_depth" not in inferred:
            inferred.append("queue_depth")
        return 1
    return asked


def _busiest_depth_level(levels: Any) -> int:
    if not isinstance(levels, dict):
        return 0
    best, best_share = 0, 0.0
    for key, depth in _DEPTH_LEVELS.items():
        share = _float(levels.get(key))
        if share is not None and share > best_share:
            best, best_share = depth, share
    return best


def _ios(stats: dict[str, Any]) -> float:
    """I/O count (the clones' weight); before fio 2.18 only bytes (KiB in fio 2) are there."""
    for key in ("total_ios", "io_bytes", "io_kbytes"):
        v = _float(stats.get(key))
        if v is not None:
            return v
    return 0.0


def _direction_record(stats: list[dict[str, Any]]) -> dict[str, Any]:
    ns = "lat_ns" in stats[0] or "clat_ns" in stats[0]
    lat_key, clat_key, unit = ("lat_ns", "clat_ns", "ns") if ns else ("lat", "clat", "us")
    if len(stats) == 1:
        s = stats[0]
        iops = _float(s.get("iops")) or 0.0
        bw_bytes = _float(s.get("bw_bytes"))
        if bw_bytes is not None:
            throughput, throughput_unit = bw_bytes, "B/s"
        else:
            throughput, throughput_unit = _float(s.get("bw")) or 0.0, "KiB/s"
        runtime_ms = _float(s.get("runtime")) or 0.0
        lat = _dict(s.get(lat_key)) or _dict(s.get(clat_key))
        avg = _float(lat.get("mean"))
        lat_min = _float(lat.get("min"))
        lat_max = _float(lat.get("max"))
    else:
        iops = sum(_float(s.get("iops")) or 0.0 for s in stats)
        if all(_float(s.get("bw_bytes")) is not None for s in stats):
            throughput, throughput_unit = sum(_float(s.get("bw_bytes")) or 0.0 for s in stats), "B/s"
        else:
            throughput, throughput_unit = sum(_float(s.get("bw")) or 0.0 for s in stats), "KiB/s"
        runtime_ms = max(_float(s.get("runtime")) or 0.0 for s in stats)
        avg, lat_min, lat_max = _combined_latency(stats, lat_key, clat_key)

    # Percentiles: total latency where fio printed them, else completion latency.
    pct_source = lat_key if all("percentile" in _dict(s.get(lat_key)) for s in stats) else clat_key
    pct_blocks = [_dict(s.get(pct_source)) for s in stats]
    histogram = _histogram(pct_blocks)
    pct = pct_blocks[0].get("percentile")
    if len(stats) == 1 and type(pct) is dict:
        p50, p95, p99, p999 = (_positive(pct.get(key)) for key in _PCT_KEYS.values())
    elif histogram:
        p50, p95, p99, p999 = _percentiles_from_bins(histogram).values()
    else:
        p50 = p95 = p99 = p999 = None
    basis = "lat" if pct_source == lat_key else "clat"

    return {
        "iops": iops,
        "throughput": throughput,
        "throughput_unit": throughput_unit,
        "latency_unit": unit,
        "latency_avg": avg,
        "latency_min": lat_min,
        "latency_max": lat_max,
        "latency_p50": p50,
        "latency_p95": p95,
        "latency_p99": p99,
        "latency_p999": p999,
        "duration_s": runtime_ms / 1000 if runtime_ms > 0 else None,
        "histogram": histogram,
        "histogram_kind": "count",
        "latency_basis": f"mean/min/max: {lat_key}; percentiles: {basis}{'_ns' if ns else ''}",
    }


def _combined_latency(
    stats: list[dict[str, Any]], lat_key: str, clat_key: str
) -> tuple[float | None, float | None, float | None]:
    """Clones: mean weighted by I/O count, min and max over all."""
    lats = [_dict(s.get(lat_key)) or _dict(s.get(clat_key)) for s in stats]
    weights = [_ios(s) for s in stats]
    total_w = sum(weights) or 1.0
    means = [_float(lat.get("mean")) for lat in lats]
    avg = None
    if any(m is not None for m in means):
        avg = sum((m or 0.0) * w for m, w in zip(means, weights, strict=True)) / total_w
    mins = [v for lat in lats if (v := _float(lat.get("min"))) is not None]
    maxs = [v for lat in lats if (v := _float(lat.get("max"))) is not None]
    return avg, (min(mins) if mins else None), (max(maxs) if maxs else None)


# fio's latency distribution blocks (percent of I/Os per bucket) and their bucket bounds in ns.
_SHARE_BLOCKS = (("latency_ns", 1.0), ("latency_us", 1e3), ("latency_ms", 1e6))
_SHARE_BOUNDS = {
    f"{prefix}{b}": float(b) for b in (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000) for prefix in ("", ">=")
}


def _share_histogram(clones: list[dict[str, Any]], unit: str, top: float | None) -> list[tuple[float, float]]:
    """Percent of I/Os per fio latency bucket (upper bound in `unit`); clones weighted by I/O count.
    The open `>=2000` ms bucket is bounded by the max latency."""
    per_unit = 1.0 if unit == "ns" else 1e3
    if len(clones) == 1:
        return _clone_shares(clones[0], per_unit, top) or []
    weights = [sum(_ios(s) for k in ("read", "write", "mixed") if isinstance(s := c.get(k), dict)) for c in clones]
    total_w = sum(weights)
    if total_w <= 0:
        return []
    merged: dict[float, float] = {}
    for clone, w in zip(clones, weights, strict=True):
        shares = _clone_shares(clone, per_unit, top)
        if not shares:
            return []
        for bound, share in shares:
            merged[bound] = merged.get(bound, 0.0) + share * w / total_w
    return sorted(merged.items())


def _clone_shares(clone: dict[str, Any], per_unit: float, top: float | None) -> list[tuple[float, float]] | None:
    # fio writes the buckets in increasing order, ns then us then ms: no sorting needed.
    out: list[tuple[float, float]] = []
    for key, factor in _SHARE_BLOCKS:
        block = clone.get(key)
        if type(block) is not dict:
            continue
        scale = factor / per_unit
        for bound_text, value in block.items():
            if not value:
                continue  # most buckets are empty
            share = _float(value)
            bound = _SHARE_BOUNDS.get(bound_text)
            if share is None or bound is None:
                return None
            if share > 0:
                upper = bound * scale
                out.append((max(upper, top or 0.0) if bound_text[0] == ">" else upper, share))
    return out


def _histogram(blocks: list[dict[str, Any]]) -> list[tuple[float, float]]:
    if len(blocks) == 1:
        return _bins(blocks[0])
    raw = [b.get("bins") for b in blocks]
    if not all(type(r) is dict and r for r in raw):
        return []  # without bins in every clone, merged percentiles would be wrong
    if not any("FIO_IO_U_PLAT_NR" in r for r in raw):
        try:
            # Clones share most buckets: each key's counts added up.
            keys = sorted(set().union(*raw), key=_BIN_BOUNDS.__getitem__)
            counts = list(map(sum, zip(*(list(map(r.get, keys, repeat(0))) for r in raw), strict=True)))
            if len(keys) > 1 and _valid_total(sum(counts)):
                return list(zip(itemgetter(*keys)(_BIN_BOUNDS), counts, strict=True))
        except (KeyError, TypeError):
            pass
    merged: dict[float, float] = {}
    for block in blocks:
        bins = _bins(block)
        if not bins:
            return []
        for bound, count in bins:
            merged[bound] = merged.get(bound, 0) + count
    return sorted(merged.items())


def _valid_total(total: Any) -> bool:
    """A bin count total fit to store: a positive finite number."""
    if type(total) is int:
        return 0 < total < 1 << 62
    return type(total) is float and total - total == 0 and total > 0


def _bins(block: dict[str, Any]) -> list[tuple[float, float]]:
    bins = block.get("bins")
    if not isinstance(bins, dict) or not bins:
        return []
    try:
        # Counts must be numbers (sum() raises TypeError otherwise) adding up to a count fit to store.
        if not _valid_total(sum(bins.values())):
            return []
    except TypeError:
        return []
    if "FIO_IO_U_PLAT_NR" in bins:
        return _indexed_bins(bins)
    if len(bins) > 1:
        try:
            # One C-level lookup of every key; fio writes bins in ascending order of value.
            return list(zip(itemgetter(*bins)(_BIN_BOUNDS), bins.values(), strict=True))
        except KeyError:
            pass
    out = []
    for key, count in bins.items():
        bound = _float(key)
        if bound is None:
            return []
        out.append((bound, count))
    return sorted(out)


def _indexed_bins(bins: dict[str, Any]) -> list[tuple[float, float]]:
    """fio 2.x json+: bins keyed by bucket index, with the bucket layout alongside."""
    bits = _int(bins.get("FIO_IO_U_PLAT_BITS"), 6)
    val = _int(bins.get("FIO_IO_U_PLAT_VAL"), 64)
    if not 1 <= bits <= 16 or val != 1 << bits:
        return []
    out = []
    for key, count in bins.items():
        if key.startswith("FIO_") or not count:
            continue
        idx = _int(key, -1)
        if not 0 <= idx < 1 << 16:
            return []
        out.append((float(_plat_idx_to_val(idx, bits, val)), count))
    return sorted(out)


def _percentiles_from_bins(hist: list[tuple[float, float]]) -> dict[str, float | None]:
    """fio's own rule: the first bucket where the running count reaches p % of all I/Os."""
    total = sum(c for _, c in hist)
    out: dict[str, float | None] = dict.fromkeys(_PCT_POINTS)
    if total <= 0:
        return out
    points = sorted(_PCT_POINTS.items(), key=lambda kv: kv[1])
    i = 0
    acc = 0.0
    for bound, count in hist:
        acc += count
        while i < len(points) and acc >= total * points[i][1] / 100.0:
            out[points[i][0]] = bound
            i += 1
        if i == len(points):
            break
    for key, _p in points[i:]:
        out[key] = hist[-1][0]
    return out


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _float(v: Any) -> float | None:
    """A finite number from a JSON value (fio prints some as strings), else None."""
    t = type(v)
    if t is float:
        return v if v - v == 0 else None  # inf - inf and nan - nan are nan
    if t is int:
        return float(v) if -_BIG < v < _BIG else None
    if t is str and len(v) < 40:
        try:
            f = float(v)
        except ValueError:
            return None
        return f if f - f == 0 else None
    return None


def _positive(v: Any) -> float | None:
    f = _float(v)
    return f if f is not None and f > 0 else None


def _int(v: Any, default: int) -> int:
    f = _float(v)
    return int(f) if f is not None and abs(f) < 1 << 62 else default


def _int_opt(opts: dict[str, Any], key: str, default: int, inferred: list[str], field: str) -> int:
    if key in opts:
        value = _int(str(opts[key]).split(",")[0], 0)
        if value > 0:
            return value
    inferred.append(field)
    return default


def _block_sizes(
    opts: dict[str, Any],
    has_options: bool,
    active: list[tuple[str, str, list[dict[str, Any]]]],
    inferred: list[str],
) -> tuple[int, int]:
    raw = opts.get("bs", opts.get("blocksize"))
    if raw is not None:
        parts = str(raw).split(",")
        try:
            read = size_to_bytes(parts[0]) if parts[0].strip() else 4096
            write = size_to_bytes(parts[1]) if len(parts) > 1 and parts[1].strip() else read
            if 0 < read < 1 << 40 and 0 < write < 1 << 40:
                return read, write
        except ValueError:
            pass
    inferred.append("block_size_bytes")
    variable = any(k in opts for k in ("bsrange", "blocksize_range", "bssplit"))
    if has_options and not variable:
        return 4096, 4096  # fio's default bs
    # No options printed (fio 2.1.4) or a block size range: what the job moved per I/O.
    measured = {key: derived_block_size(stats) for key, _d, stats in active}
    read = measured.get("read") or measured.get("mixed") or measured.get("write") or 4096
    write = measured.get("write") or read
    return read, write


def derived_block_size(stats: list[dict[str, Any]]) -> int | None:
    """Bytes per I/O from bytes / I/Os, or KiB/s / IOPS, snapped to what a block size can be."""
    kib = all("io_kbytes" not in s for s in stats)  # fio 2 names KiB `io_bytes`
    moved = sum(_float(s.get("io_bytes")) or 0.0 for s in stats) * (1024 if kib else 1)
    ios = sum(_float(s.get("total_ios")) or 0.0 for s in stats)
    if moved > 0 and ios > 0:
        return snap_block_size(moved / ios)
    bw_kib = sum(_float(s.get("bw")) or 0.0 for s in stats)
    iops = sum(_float(s.get("iops")) or 0.0 for s in stats)
    if bw_kib > 0 and iops > 0:
        return snap_block_size(bw_kib * 1024 / iops)
    return None


def _disk_util_name(doc: dict[str, Any]) -> str | None:
    util = doc.get("disk_util")
    if isinstance(util, list) and util and isinstance(util[0], dict):
        name = util[0].get("name")
        return str(name) if name else None
    return None
