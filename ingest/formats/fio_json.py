"""fio JSON output (`--output-format=json` and `json+`), fio 2.x to 3.x.

Input (fio-3.33, trimmed)::

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

    {"record": "io", "tool": "fio", "tool_version": "3.33", "run_index": 0, "source_line": 1,
     "pattern": "random", "operation": "read", "read_pct": 100, "direction": "read",
     "block_size_bytes": 4096, "threads": 1, "queue_depth": 1, "iops": 74958.76,
     "throughput_bytes_per_s": 307031082, "latency_avg_ms": 0.01315, "latency_p99_ms": 0.01984, ...}

Rules:
- Options: `job options` laid over `global options`; what neither names takes fio's documented default
  (bs 4k, iodepth 1, numjobs 1, rw read, rwmixread 50) and is listed in `inferred`.
- One record per job definition and direction with I/O. A `group_reporting` group is one entry already;
  clones of one job reported separately (same jobname and groupid) are combined: IOPS and bytes summed,
  mean latency weighted by I/O count, min/max over clones, percentiles merged from json+ bins (else null),
  `threads` = number of clones.
- Latency: mean/min/max of `lat` (submission + completion, what Little's law needs); percentiles of `lat`
  where fio printed them (`lat_percentiles=1`), else of `clat` (fio's default). fio 3 reports ns
  (`*_ns`), fio 2 µs (`clat`, `lat`). The basis is kept in the run metadata.
- Throughput: `bw_bytes` (B/s) where present, else `bw` (KiB/s).
- Text before, between and after JSON documents (notes, `fio: terminating on signal 2`, shell prompts) is
  skipped; every document in the file is read.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from ingest.errors import ParseError
from ingest.records import IoRecord
from ingest.textio import line_of, size_to_bytes

NAME = "fio_json"
TOOL = "fio"

_DOC_START = re.compile(r'^[ \t]*\{[ \t]*$|^[ \t]*\{\s*"fio version"', re.MULTILINE)
_RW = {
    # rw option -> (pattern, operation)
    "read": ("sequential", "read"),
    "write": ("sequential", "write"),
    "randread": ("random", "read"),
    "randwrite": ("random", "write"),
    "rw": ("sequential", "mixed"),
    "readwrite": ("sequential", "mixed"),
    "randrw": ("random", "mixed"),
}
_PCT_KEYS = {"p50": "50.000000", "p95": "95.000000", "p99": "99.000000", "p999": "99.900000"}
_PCT_POINTS = {"p50": 50.0, "p95": 95.0, "p99": 99.0, "p999": 99.9}


def detect(text: str) -> float:
    head = text[:65536]
    if '"fio version"' in head and '"jobs"' in text:
        return 0.95
    if '"jobs"' in head and '"jobname"' in head:
        return 0.7
    return 0.0


def parse(text: str) -> list[IoRecord]:
    records: list[IoRecord] = []
    run_index = 0
    decoder = json.JSONDecoder()
    pos = 0
    first_error: ParseError | None = None
    while True:
        m = _DOC_START.search(text, pos)
        if m is None:
            break
        start = text.index("{", m.start())
        try:
            doc, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            if first_error is None:
                first_error = ParseError(f"fio JSON document cut short or malformed: {exc.msg}", exc.lineno)
            pos = m.end()
            continue
        pos = end
        if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
            continue
        doc_records = _parse_document(doc, line_of(text, start), run_index)
        if doc_records:
            run_index = max(r.run_index for r in doc_records) + 1
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


def _started_at(doc: dict[str, Any], job: dict[str, Any]) -> str | None:
    if isinstance(job.get("job_start"), int | float) and job["job_start"] > 0:
        return datetime.fromtimestamp(job["job_start"] / 1000, UTC).isoformat()
    if isinstance(doc.get("timestamp"), int | float) and doc["timestamp"] > 0:
        return datetime.fromtimestamp(doc["timestamp"], UTC).isoformat()
    return None


def _parse_document(doc: dict[str, Any], line: int, first_run: int) -> list[IoRecord]:
    version = _version(doc)
    global_opts = doc.get("global options") or {}
    # Clones (numjobs without group_reporting) share jobname and groupid; keep file order.
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for job in doc["jobs"]:
        if not isinstance(job, dict):
            continue
        key = (str(job.get("jobname", "")), int(job.get("groupid", 0) or 0))
        groups.setdefault(key, []).append(job)

    records: list[IoRecord] = []
    for offset, clones in enumerate(groups.values()):
        opts = {**global_opts, **(clones[0].get("job options") or {})}
        run_records = _job_records(doc, clones, opts, version, line, first_run + offset)
        records.extend(run_records)
    return records


def _job_records(
    doc: dict[str, Any],
    clones: list[dict[str, Any]],
    opts: dict[str, Any],
    version: str | None,
    line: int,
    run_index: int,
) -> list[IoRecord]:
    inferred: list[str] = []
    rw = str(opts.get("rw", opts.get("readwrite", ""))).split(":")[0].strip().lower()
    if rw not in _RW:
        rw = "read"
        inferred += ["pattern", "operation"]
    pattern, operation = _RW[rw]

    read_pct = 100.0 if operation == "read" else 0.0
    if operation == "mixed":
        if "rwmixread" in opts:
            read_pct = float(opts["rwmixread"])
        elif "rwmixwrite" in opts:
            read_pct = 100.0 - float(opts["rwmixwrite"])
        else:
            read_pct = 50.0
            inferred.append("read_pct")

    bs_read, bs_write = _block_sizes(opts, inferred)
    queue_depth = _int_opt(opts, "iodepth", 1, inferred, "queue_depth")
    numjobs = _int_opt(opts, "numjobs", 1, inferred, "threads")
    # group_reporting folds clones into one entry; separate entries are counted.
    threads = numjobs if len(clones) == 1 else len(clones)

    metadata = {f"option.{k}": str(v) for k, v in sorted(opts.items())}
    metadata["jobname"] = str(clones[0].get("jobname", ""))
    if len(clones) > 1:
        metadata["combined_clones"] = str(len(clones))

    target = opts.get("filename") or opts.get("directory") or _disk_util_name(doc)
    records = []
    for direction in ("read", "write"):
        stats = [c.get(direction) for c in clones if isinstance(c.get(direction), dict)]
        if not stats or not any(_ios(s) > 0 for s in stats):
            continue
        rec = _direction_record(stats, direction)
        if rec is None:
            continue
        rec.update(
            tool="fio",
            tool_version=version,
            run_index=run_index,
            source_line=line,
            target=str(target) if target else None,
            started_at=_started_at(doc, clones[0]),
            pattern=pattern,
            operation=operation,
            read_pct=read_pct,
            direction=direction,
            block_size_bytes=bs_read if direction == "read" else bs_write,
            threads=threads,
            queue_depth=queue_depth,
            inferred=list(inferred),
            metadata=dict(metadata, latency_basis=rec.pop("latency_basis")),
        )
        records.append(IoRecord(**rec))
    return records


def _ios(stats: dict[str, Any]) -> float:
    if "total_ios" in stats:
        return float(stats["total_ios"] or 0)
    return float(stats.get("io_bytes") or stats.get("io_kbytes") or 0)


def _direction_record(stats: list[dict[str, Any]], direction: str) -> dict[str, Any] | None:
    iops = sum(float(s.get("iops") or 0) for s in stats)
    if all("bw_bytes" in s for s in stats):
        throughput, throughput_unit = sum(float(s["bw_bytes"]) for s in stats), "B/s"
    else:
        throughput, throughput_unit = sum(float(s.get("bw") or 0) for s in stats), "KiB/s"
    runtimes = [float(s.get("runtime") or 0) for s in stats]
    duration_s = max(runtimes) / 1000 if any(runtimes) else None

    ns = any("lat_ns" in s or "clat_ns" in s for s in stats)
    lat_key, clat_key, unit = ("lat_ns", "clat_ns", "ns") if ns else ("lat", "clat", "us")
    lats = [s.get(lat_key) or s.get(clat_key) or {} for s in stats]
    weights = [_ios(s) for s in stats]
    total_w = sum(weights) or 1.0
    avg = sum(float(lat.get("mean") or 0) * w for lat, w in zip(lats, weights, strict=True)) / total_w
    mins = [float(lat["min"]) for lat in lats if lat.get("min") is not None]
    maxs = [float(lat["max"]) for lat in lats if lat.get("max") is not None]

    # Percentiles: total latency where fio printed them, else completion latency.
    pct_source = lat_key if all("percentile" in (s.get(lat_key) or {}) for s in stats) else clat_key
    pct_blocks = [s.get(pct_source) or {} for s in stats]
    histogram = _merge_bins(pct_blocks)
    percentiles: dict[str, float | None]
    if len(stats) == 1 and "percentile" in pct_blocks[0]:
        pct = pct_blocks[0]["percentile"]
        percentiles = {k: _num(pct.get(v)) for k, v in _PCT_KEYS.items()}
    elif histogram:
        percentiles = {k: _percentile_from_bins(histogram, p) for k, p in _PCT_POINTS.items()}
    else:
        percentiles = dict.fromkeys(_PCT_KEYS)
    basis = "lat" if pct_source == lat_key else "clat"

    return {
        "iops": iops,
        "throughput": throughput,
        "throughput_unit": throughput_unit,
        "latency_unit": unit,
        "latency_avg": avg if any(lat.get("mean") is not None for lat in lats) else None,
        "latency_min": min(mins) if mins else None,
        "latency_max": max(maxs) if maxs else None,
        "latency_p50": percentiles["p50"],
        "latency_p95": percentiles["p95"],
        "latency_p99": percentiles["p99"],
        "latency_p999": percentiles["p999"],
        "duration_s": duration_s,
        "histogram": histogram,
        "histogram_kind": "count",
        "latency_basis": f"mean/min/max: {lat_key}; percentiles: {basis}{'_ns' if ns else ''}",
    }


def _merge_bins(blocks: list[dict[str, Any]]) -> list[tuple[float, float]]:
    merged: dict[float, float] = {}
    for block in blocks:
        bins = block.get("bins")
        if not isinstance(bins, dict):
            return []  # without bins in every clone, merged percentiles would be wrong
        for bound, count in bins.items():
            b = float(bound)
            merged[b] = merged.get(b, 0.0) + float(count)
    return sorted(merged.items())


def _percentile_from_bins(hist: list[tuple[float, float]], p: float) -> float | None:
    total = sum(c for _, c in hist)
    if total <= 0:
        return None
    need = total * p / 100.0
    acc = 0.0
    for bound, count in hist:
        acc += count
        if acc >= need:
            return bound
    return hist[-1][0]


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if f > 0 else None


def _int_opt(opts: dict[str, Any], key: str, default: int, inferred: list[str], field: str) -> int:
    if key in opts:
        try:
            return int(float(str(opts[key]).split(",")[0]))
        except ValueError:
            pass
    inferred.append(field)
    return default


def _block_sizes(opts: dict[str, Any], inferred: list[str]) -> tuple[int, int]:
    raw = opts.get("bs", opts.get("blocksize"))
    if raw is None:
        inferred.append("block_size_bytes")
        return 4096, 4096
    parts = str(raw).split(",")
    try:
        read = size_to_bytes(parts[0]) if parts[0] else 4096
        write = size_to_bytes(parts[1]) if len(parts) > 1 and parts[1] else read
    except ValueError:
        inferred.append("block_size_bytes")
        return 4096, 4096
    return read, write


def _disk_util_name(doc: dict[str, Any]) -> str | None:
    util = doc.get("disk_util")
    if isinstance(util, list) and util and isinstance(util[0], dict):
        name = util[0].get("name")
        return str(name) if name else None
    return None
