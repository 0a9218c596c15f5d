"""fio's terse (minimal) output (`--minimal`, `--output-format=terse`), terse versions 2, 3, 4 and 5: one line of
`;`-separated fields per job (or `group_reporting` group), alone or beside fio's normal text or JSON.

Input (terse version 3, fio-3.7; 130 fields, cut here after the read side's bandwidth and the write side's first)::

    3;fio-3.7;my_perf;0;0;108759296;1812503;28320;60005;1;707;20.805113;8.930855;232;11885;4494.007157;108.520682;
    1.000000%=4292;5.000000%=4358;...;50.000000%=4489;...;95.000000%=4685;99.000000%=4751;99.500000%=4816;
    99.900000%=4947;99.950000%=5013;99.990000%=6062;0%=0;0%=0;0%=0;259;11915;4515.545253;108.518330;444800;460800;
    24.998278%;453094.533333;1156.494563;0;0;0;0;...

Records (normalized)::

    {"record": "io", "tool": "fio", "tool_version": "3.7", "run_index": 0, "source_line": 1, "pattern": "sequential",
     "operation": "read", "read_pct": 100.0, "direction": "read", "block_size_bytes": 4096, "threads": 1,
     "queue_depth": 64, "duration_s": 60.005, "iops": 28320.0, "throughput_bytes_per_s": 1856003072.0,
     "latency_avg_ms": 4.5155, "latency_min_ms": 0.259, "latency_max_ms": 11.915, "latency_p50_ms": 4.489,
     "latency_p99_ms": 4.751, "inferred": ["pattern", "operation", "block_size_bytes", "queue_depth", "threads"], ...}

Field order (fio's HOWTO, "Terse output", and `show_thread_status_terse_all` in fio's stat.c):

    terse version; fio version [v3 and later]; jobname; groupid; error;
    per direction, READ, WRITE, then TRIM [all but version 3]:
        total I/O (KiB); bandwidth (KiB/s); IOPS; runtime (ms);
        submission latency min, max, mean, stdev (us); completion latency min, max, mean, stdev (us);
        20 completion latency percentiles `P%=us` (unused ones `0%=0`); total latency min, max, mean, stdev (us);
        bandwidth min, max, aggregate percentage of total, mean, stdev (KiB/s);
        [v5] bandwidth samples; IOPS min, max, mean, stdev, samples;
    CPU user, system, context switches, major faults, minor faults;
    I/O depths <=1, 2, 4, 8, 16, 32, >=64; latency shares in us <=2 ... 1000 (10); in ms <=2 ... >=2000 (12);
    [v3 and later] per disk: name, read ios, write ios, read merges, write merges, read ticks, write ticks, time in
    queue, utilization; then error count and first error (continue_on_error), the description.

Rules:
- One run per line, one record per direction that did I/O (IOPS or I/O above 0).
- IOPS, bandwidth (KiB/s), runtime and latencies (total latency's mean/min/max, in us) as printed; percentiles p50,
  p95, p99, p99.9 from the completion latency list (fio's default), basis in `latency_basis`.
- A terse line says nothing of the job's options: the operation comes from the directions with I/O, the pattern
  from the job name (`rand...` random, else fio's default sequential), the block size from bytes / I/Os (snapped to
  a power of two or 512 bytes), the queue depth from the busiest I/O depth bucket, threads 1 (a `group_reporting`
  line of several jobs is not told apart from one job's); all listed in `inferred`. A mixed job's read_pct is the
  measured share of I/Os. The first disk's name is the target.
- Lines that are not terse (fio's notes, the normal text or JSON beside it, shell prompts) are skipped. A terse
  line cut short or damaged (a field that is no number where one belongs) is a warning `line N: ...` and the
  file's other lines are kept; a file without one readable terse line raises ParseError.
- The same run in two formats is counted once: a file whose fio JSON (`--output-format=json,terse`) holds every
  job of its terse lines is left to fio_json (a ParseError here); fio_text stands down for terse lines the same
  way (`--output-format=terse,normal`).
"""

from __future__ import annotations

import re

from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats import fio_json
from kneepoint.ingest.formats._common import first_content_line, snap_block_size
from kneepoint.ingest.records import IoRecord, ParsedRecords, line_warning

NAME = "fio_terse"
TITLE = "fio terse"
TOOLS = ("fio",)
HOST_KEYS: frozenset[str] = frozenset()
USER_KEYS: frozenset[str] = frozenset()
RESULT_KEY_PREFIXES: tuple[str, ...] = ()
RESULT_KEYS: tuple[str, ...] = ()
TOOL = "fio"

# A terse line's start: its version, then (v3+) fio's version, or (v2) the job name.
_START = re.compile(r"[ \t]*(?:(?P<v>[345]);fio-(?P<fio>[^;\s]{1,40});|2;(?!fio-))")
_DIRECTION_FIELDS = {2: 41, 3: 41, 4: 41, 5: 47}
_DIRECTIONS = {
    2: ("read", "write", "trim"),
    3: ("read", "write"),
    4: ("read", "write", "trim"),
    5: ("read", "write", "trim"),
}
_TAIL_FIELDS = 5 + 7 + 10 + 12  # CPU, I/O depths, latency shares in us and in ms
_DEPTHS = (1, 2, 4, 8, 16, 32, 64)
_PCT_KEYS = {"50.000000": "p50", "95.000000": "p95", "99.000000": "p99", "99.900000": "p999"}
# Fewer `;` than the shortest terse line (version 3 without disks) mean a line that is no terse line.
_MIN_SEPARATORS = 5 + 2 * 41 + _TAIL_FIELDS - 1


def detect(text: str) -> float:
    head = text[:65536]
    if ";" not in head:
        return 0.0  # one memchr: most other tools' outputs hold no `;`
    for line in _candidates(head):
        if line.count(";") >= _MIN_SEPARATORS:
            # Above fio text's 0.9 (a file of terse and normal text is read here), below fio JSON's 0.95 beside a
            # JSON document (the complete copy of the same jobs, which fio_json reads).
            return 0.94 if '"fio version"' in head else 0.96
    return 0.0


def _candidates(text: str) -> list[str]:
    """Lines that start like a terse line."""
    out = []
    for start in _line_starts(text, ";"):
        end = text.find("\n", start)
        line = text[start : end if end >= 0 else len(text)]
        if _START.match(line):
            out.append(line)
    return out


def _line_starts(text: str, literal: str) -> list[int]:
    starts, i = [], text.find(literal)
    while i >= 0:
        start = text.rfind("\n", 0, i) + 1
        starts.append(start)
        end = text.find("\n", i)
        if end < 0:
            break
        i = text.find(literal, end)
    return starts


def parse(text: str) -> ParsedRecords:
    records: list[IoRecord] = []
    warnings: list[str] = []
    first_damage: ParseError | None = None
    for lineno, raw in enumerate(text.split("\n"), 1):
        if not (m := _START.match(raw)) or raw.count(";") < 20:
            continue
        try:
            line_records = _line_records(raw.strip(), m, lineno, len({r.run_index for r in records}))
        except ParseError as exc:
            first_damage = first_damage or exc
            warnings.append(line_warning(exc.line, exc.reason))
            continue
        records.extend(line_records)
    if not records:
        if first_damage is not None:
            raise first_damage
        raise ParseError("no fio terse line found (`3;fio-3.x;jobname;...` from --minimal)", first_content_line(text))
    if '"fio version"' in text:
        _stand_down_for_json(text, records)
    return ParsedRecords(records, warnings)


def _stand_down_for_json(text: str, records: list[IoRecord]) -> None:
    """`--output-format=json,terse` writes the same jobs twice: the JSON is the complete copy."""
    try:
        json_records = fio_json.parse(text)
    except ParseError:
        return
    if {r.metadata.get("jobname") for r in records} <= {r.metadata.get("jobname") for r in json_records}:
        raise ParseError(
            "fio's terse output beside its JSON output of the same jobs: read the file as fio_json",
            min(r.source_line for r in json_records),
        )


def _line_records(line: str, m: re.Match[str], lineno: int, run_index: int) -> list[IoRecord]:
    fields = line.split(";")
    version = int(m["v"] or 2)
    head = 4 if version == 2 else 5
    directions = _DIRECTIONS[version]
    width = _DIRECTION_FIELDS[version]
    tail_at = head + width * len(directions)
    if len(fields) < tail_at + _TAIL_FIELDS:
        raise ParseError(
            f"fio terse line cut short: {len(fields)} fields, a version {version} line has at least "
            f"{tail_at + _TAIL_FIELDS}",
            lineno,
        )
    jobname, groupid, error = fields[head - 3 : head]
    depths = [_share(v, lineno) for v in fields[tail_at + 5 : tail_at + 12]]
    # The busiest I/O depth bucket: what the job kept in flight most of the time.
    queue_depth = max(zip(depths, _DEPTHS, strict=True))[1] if any(depths) else 1
    disks_at = tail_at + _TAIL_FIELDS
    target = fields[disks_at] if version >= 3 and len(fields) >= disks_at + 9 and fields[disks_at] else None

    active = []
    for index, key in enumerate(directions):
        part = fields[head + index * width : head + (index + 1) * width]
        io_kib, bw_kib, iops, runtime = (_number(v, lineno) for v in part[:4])
        if key != "trim" and (iops > 0 or io_kib > 0):
            active.append((key, part, io_kib, bw_kib, iops, runtime))
    if not active:
        return []
    keys = {key for key, *_ in active}
    operation = "mixed" if len(keys) > 1 else active[0][0]
    pattern = "random" if "rand" in jobname.lower() else "sequential"
    read_pct = 100.0 if operation == "read" else 0.0
    if operation == "mixed":
        ios = {key: iops * runtime for key, _p, _k, _b, iops, runtime in active}
        read_pct = round(100.0 * ios["read"] / (ios["read"] + ios["write"]), 1) if sum(ios.values()) else 50.0
    inferred = ["pattern", "operation", "block_size_bytes", "queue_depth", "threads"]
    if operation == "mixed":
        inferred.append("read_pct")
    metadata = {"jobname": jobname, "groupid": groupid, "terse_version": str(version), "latency_basis": ""}
    if error.strip() not in ("", "0"):
        metadata["error"] = error.strip()

    records = []
    for key, part, io_kib, bw_kib, iops, runtime in active:
        lat_min, lat_max, lat_mean = (_number(v, lineno) for v in part[32:35])
        percentiles = _percentiles(part[12:32], lineno)
        ios = iops * runtime / 1000
        block = snap_block_size(io_kib * 1024 / ios) if ios > 0 and io_kib > 0 else None
        if block is None and iops > 0 and bw_kib > 0:
            block = snap_block_size(bw_kib * 1024 / iops)
        records.append(
            IoRecord(
                tool=TOOL,
                tool_version=m["fio"],
                run_index=run_index,
                source_line=lineno,
                target=target,
                pattern=pattern,  # type: ignore[arg-type]
                operation=operation,  # type: ignore[arg-type]
                read_pct=read_pct,
                direction=key,  # type: ignore[arg-type]
                block_size_bytes=block or 4096,
                threads=1,
                queue_depth=queue_depth,
                iops=iops,
                throughput=bw_kib,
                throughput_unit="KiB/s",
                latency_unit="us",
                latency_avg=lat_mean if lat_max > 0 else None,
                latency_min=lat_min if lat_max > 0 else None,
                latency_max=lat_max if lat_max > 0 else None,
                latency_p50=percentiles.get("p50"),
                latency_p95=percentiles.get("p95"),
                latency_p99=percentiles.get("p99"),
                latency_p999=percentiles.get("p999"),
                duration_s=runtime / 1000 if runtime > 0 else None,
                inferred=list(inferred),
                metadata=dict(metadata, latency_basis="mean/min/max: lat; percentiles: clat"),
            )
        )
    return records


def _number(value: str, lineno: int) -> float:
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if number != number or number in (float("inf"), float("-inf")) or number < 0:
        raise ParseError(f"fio terse field {value[:40]!r} is not a number", lineno)
    return number


def _share(value: str, lineno: int) -> float:
    return _number(value.strip().removesuffix("%"), lineno)


def _percentiles(entries: list[str], lineno: int) -> dict[str, float]:
    """`50.000000%=4489` entries -> {"p50": 4489.0, ...}; unused entries `0%=0` and empty values are left out."""
    out = {}
    for entry in entries:
        point, sep, value = entry.partition("%=")
        if not sep:
            raise ParseError(f"fio terse percentile {entry[:40]!r} is not `P%=value`", lineno)
        if (key := _PCT_KEYS.get(point.strip())) is not None and (number := _number(value, lineno)) > 0:
            out[key] = number
    return out
