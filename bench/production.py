"""Production against the baseline at the size of a real counter log (issue 21): a week of Perfmon samples at 15 s
for 8 disks (40,320 samples x 8 disks x 6 counters, ~35 MB), ingested and drawn.

    production.ingest   `kneepoint ingest WEEK.csv --disk ... --host ...` into a copy of the sample warehouse (as
                        `./dev app` leaves it), a whole process: read, parse, store, the incremental build
    production.draw     what the "Production vs baseline" page does for that disk: its mart reads and both charts
                        (the figures as JSON, as Streamlit sends them), in one process, timed inside it

The log is logged on the sample's modelled P10 disk (its labels: the curve it is placed on). The tiny size (CI)
writes 6 hours for 2 disks.
"""

from __future__ import annotations

import shutil
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.harness import Spec

KNEEPOINT = str(Path(sys.executable).parent / "kneepoint")
DISK, HOST = "synthetic P10 (modelled)", "synthetic-sql01"
# (samples at 15 s, disks) per size
LOGS = {"full": (7 * 24 * 240, 8), "tiny": (6 * 240, 2)}


def chains(size: str, out_dir: Path) -> list[list[Spec]]:
    folder = out_dir / "production"
    run_db = folder / "run" / "warehouse.duckdb"
    samples, disks = LOGS[size]
    prepare = Spec(
        "production.prepare",
        "production_prepare",
        {"folder": str(folder), "samples": samples, "disks": disks},
        runs=1,
        warmup=0,
    )
    ingest = Spec(
        "production.ingest",
        cmd_for_run=lambda _run: [
            KNEEPOINT,
            "--db",
            str(run_db),
            "ingest",
            str(folder / "week.csv"),
            "--disk",
            DISK,
            "--host",
            HOST,
        ],  # fmt: skip
        before=lambda: _fresh_copy(folder / "sample", run_db.parent),
    )
    draw = Spec("production.draw", "production_draw", {"db": str(run_db)})
    return [[prepare, ingest, draw]]


def _fresh_copy(sample: Path, run: Path) -> None:
    """The sample warehouse as it was before the log was stored: every ingest run stores the same log anew."""
    shutil.rmtree(run, ignore_errors=True)
    shutil.copytree(sample, run, ignore=shutil.ignore_patterns("dbt-target"))


# --------------------------------------------------------------------------------------------- worker jobs


def job_prepare(args: dict[str, Any]) -> dict[str, Any]:
    """The sample warehouse (as `./dev app` makes it) and the counter log."""
    import os

    from kneepoint.app.sample import load_sample_if_empty
    from kneepoint.ingest.synth import perfmon_csv
    from kneepoint.ingest.synth.sqlio import P10

    folder = Path(args["folder"])
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "sample").mkdir(parents=True)
    os.environ["KNEEPOINT_DBT_TARGET"] = str(folder / "sample" / "dbt-target")
    t0 = time.perf_counter()
    load_sample_if_empty(folder / "sample" / "warehouse.duckdb")
    t1 = time.perf_counter()
    devices = [f"PhysicalDisk({i} {chr(ord('E') + i)}:)" for i in range(int(args["disks"]))]
    records = perfmon_csv.observe(
        P10, host=HOST.upper(), devices=devices, samples=int(args["samples"]), start=datetime(2026, 11, 23)
    )
    data = perfmon_csv.write(records).encode()
    (folder / "week.csv").write_bytes(data)
    return {
        "log_bytes": len(data),
        "intervals": len(records),
        "stages": {"sample_s": t1 - t0, "log_s": time.perf_counter() - t1},
    }


def job_draw(args: dict[str, Any]) -> dict[str, Any]:
    """The page's reads and charts for the log's disk, as app/web/views/production.py makes them."""
    t0 = time.perf_counter()
    import polars as pl

    from kneepoint.app import charts, queries
    from kneepoint.ingest.warehouse import locate

    db = locate(args["db"])
    t1 = time.perf_counter()
    disk = next(d for d in queries.observed_disks(db) if d.startswith(DISK))
    headroom = queries.headroom((disk,), db)
    intervals = queries.observed_intervals((disk,), db)
    series = queries.baseline_series(headroom)
    curves = [(s, queries.curve_points((disk,), s, db=db), queries.saturation((disk,), s, db=db)) for s in series]
    t2 = time.perf_counter()
    devices = charts.device_colors(headroom, charts.PALETTE[0])
    figures = [
        charts.production_curve_figure(points, saturation, intervals, headroom, None, devices)
        for _s, points, saturation in curves
    ]
    figures.append(charts.production_time_figure(intervals, headroom, charts.PALETTE[0], devices))
    sent = sum(len(f.to_json()) for f in figures)
    t3 = time.perf_counter()
    # a long log is read by each stretch's extremes (queries.observed_intervals): what was logged, what was drawn
    logged = (
        intervals.group_by("disk_key", intervals["host"].fill_null("").str.to_lowercase(), "device")
        .agg(intervals_logged=pl.col("device_intervals").first())["intervals_logged"]
        .sum()
        if not intervals.is_empty()
        else 0
    )
    return {
        "intervals": int(logged),
        "intervals_drawn": intervals.height,
        "figures": len(figures),
        "figure_json_bytes": sent,
        "stages": {"import_s": t1 - t0, "read_s": t2 - t1, "charts_s": t3 - t2, "draw_s": t3 - t1},
    }


# --------------------------------------------------------------------------------------------- summary


def summarize(m: dict[str, Any]) -> dict[str, Any]:
    ingest, draw, prepare = m.get("production.ingest"), m.get("production.draw"), m.get("production.prepare")
    if not (ingest and draw and prepare):
        return {}
    made = prepare["result"]
    return {
        "log_mb": round(made["log_bytes"] / 1e6, 1),
        "intervals": made["intervals"],
        "ingest_s": round(ingest["median"]["wall_s"], 2),
        "ingest_peak_mb": ingest["worst_peak_mb"],
        "draw_s": round(draw["median"]["stages"]["draw_s"], 2),
        "read_s": round(draw["median"]["stages"]["read_s"], 2),
        "charts_s": round(draw["median"]["stages"]["charts_s"], 2),
    }


def targets(production: dict[str, Any], add: Any) -> None:
    """Issue 21's: a 7-day counter log at 15 s for 8 disks ingests in under 10 s and draws in under 1 s."""
    if production:
        what = f"{production['log_mb']} MB counter log ({production['intervals']:,} intervals)"
        add(f"ingest of a {what}", "< 10 s", f"{production['ingest_s']} s", production["ingest_s"] < 10)
        add("its page drawn (reads and charts)", "< 1 s", f"{production['draw_s']} s", production["draw_s"] < 1)
