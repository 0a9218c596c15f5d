"""Writer: records -> fio terse version 3 lines (`--minimal`), as fio 3.x prints them (see ingest/formats/fio_terse.py
for the field order). One line per run; latencies in us, I/O in KiB, bandwidth in KiB/s, from figures made as fio
makes them (ingest.synth.fio_json.DirectionFigures)."""

from __future__ import annotations

from collections.abc import Iterable

from kneepoint.ingest.records import IoRecord
from kneepoint.ingest.synth.fio_json import PERCENTILES, DirectionFigures, runs, rw_option

_DEPTHS = (1, 2, 4, 8, 16, 32, 64)


def write(records: Iterable[IoRecord], *, version: str | None = None, disk: str | None = "vda") -> str:
    lines = []
    for run in runs(records):
        first = run[0]
        fio = version or first.tool_version or "3.33"
        name = first.metadata.get("jobname") or f"{rw_option(first)}-qd{first.queue_depth or 1}"
        by_dir = {r.direction: DirectionFigures.of(r) for r in run}
        fields = ["3", f"fio-{fio}", name, "0", "0"]
        for direction in ("read", "write"):
            fields += _direction(by_dir.get(direction))
        qd = max(1, first.queue_depth or 1)
        depth = min((d for d in _DEPTHS if d >= qd), default=64)
        fields += ["1.234567%", "3.456789%", "1234", "0", "56"]
        fields += [f"{100.0 if d == depth else 0.0:.1f}%" for d in _DEPTHS]
        fields += ["0.00%"] * 22
        if disk:
            fields += [disk, "1000", "1000", "0", "0", "100", "100", "200", "90.00%"]
        lines.append(";".join(fields))
    return "\n".join(lines) + "\n"


def _direction(fig: DirectionFigures | None) -> list[str]:
    if fig is None:
        zeros = ["0", "0", "0", "0"] + ["0", "0", "0.000000", "0.000000"] * 2
        return zeros + ["0%=0"] * 20 + ["0", "0", "0.000000", "0.000000", "0", "0", "0.000000%", "0.000000", "0.000000"]
    kib = fig.io_bytes >> 10
    bw = round(kib * 1000 / fig.runtime_ms)
    iops = round(fig.total_ios * 1000 / fig.runtime_ms)
    lo, hi, mean = fig.lat_min / 1000, fig.lat_max / 1000, fig.lat_mean / 1000
    slat = fig.slat_mean / 1000
    out = [str(kib), str(bw), str(iops), str(fig.runtime_ms)]
    out += [str(int(slat / 2)), str(int(slat * 4)), f"{slat:.6f}", f"{slat / 3:.6f}"]
    out += [str(int(lo)), str(int(hi)), f"{mean - slat:.6f}", f"{mean / 2:.6f}"]
    pct = [f"{p:.6f}%={int(fig.model.quantile(p) / 1000)}" for p in PERCENTILES]
    out += pct + ["0%=0"] * (20 - len(pct))
    out += [str(int(lo)), str(int(hi)), f"{mean:.6f}", f"{mean / 2:.6f}"]
    out += [str(int(bw * 0.9)), str(int(bw * 1.1)), "100.000000%", f"{bw:.6f}", f"{bw / 20:.6f}"]
    return out
