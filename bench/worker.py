"""One measurement in a fresh process: `python -m bench.worker JOB ARGS_PATH RESULT_PATH` (both JSON files).

The harness starts one of these per run and takes wall time, CPU time and peak RSS of the whole process from
outside (os.wait4); inside, each job times its stages and writes them, with counts, to RESULT_PATH as JSON.
Jobs call kneepoint's public functions the way `kneepoint ingest`, `kneepoint build` and the app do.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

Result = dict[str, Any]


def _clock() -> float:
    return time.perf_counter()


def _peak_rss_mb() -> float:
    """This process's peak RSS so far (the harness sees the whole run's; this splits it by stage)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


# --------------------------------------------------------------------------------------------- parsing


def job_parse(args: Result) -> Result:
    """Read a format's files into memory, then parse each the way ingest does (`formats.parse_bytes`: decode,
    detect, parse, the mixed-output check). In one process: one core. Two more passes split the cost: parsing
    with the format given (`--format`: no detection) and the detection alone (`formats.detect_all`)."""
    from kneepoint.ingest import formats
    from kneepoint.ingest.errors import ParseError
    from kneepoint.ingest.textio import decode

    paths = [Path(p) for p in args["paths"]]
    fmt = args["format"]
    t0 = _clock()
    blobs = [(str(p), p.read_bytes()) for p in paths]
    read_s = _clock() - t0
    # Once-per-process costs (the parser modules' imports, their lazy imports and compiled patterns) are not
    # parse throughput: one untimed parse of the first file pays them.
    if blobs:
        with contextlib.suppress(ParseError):
            formats.parse_bytes(blobs[0][1], blobs[0][0])
    t1 = _clock()
    records = errors = wrong_format = 0
    for name, data in blobs:
        try:
            parsed = formats.parse_bytes(data, name)
        except ParseError:
            errors += 1
            continue
        records += len(parsed.records)
        wrong_format += parsed.format != fmt
    t2 = _clock()
    for name, data in blobs:
        with contextlib.suppress(ParseError):
            formats.parse_bytes(data, name, fmt)
    t3 = _clock()
    texts = [decode(data)[0] for _, data in blobs]
    t4 = _clock()
    for text in texts:
        formats.detect_all(text)
    t5 = _clock()
    return {
        "files": len(blobs),
        "bytes": sum(len(d) for _, d in blobs),
        "records": records,
        "errors": errors,
        "wrong_format": wrong_format,
        "stages": {"read_s": read_s, "parse_s": t2 - t1, "parse_known_format_s": t3 - t2, "detect_all_s": t5 - t4},
    }


def job_json_floor(args: Result) -> Result:
    """The Python floor for fio JSON: read each file, json.loads it, append the dict. The read and the loads
    are timed apart, like job_parse's stages, so parse and floor compare stage for stage."""
    paths = [Path(p) for p in args["paths"]]
    t0 = _clock()
    blobs = [p.read_bytes() for p in paths]
    t1 = _clock()
    docs: list[dict[str, Any]] = []
    for data in blobs:
        docs.append(json.loads(data))
    t2 = _clock()
    return {
        "files": len(docs),
        "bytes": sum(len(b) for b in blobs),
        "jobs": sum(len(d.get("jobs", [])) for d in docs),
        "stages": {"read_s": t1 - t0, "loads_s": t2 - t1},
    }


# DuckDB's JSON readers, from the most to the least work per document. `auto` is read_json's default schema
# detection: fio's json+ bins (a different set of keys per job) make that a struct of thousands of fields.
DUCKDB_JSON_VARIANTS = {
    "auto": "read_json(?)",
    "depth2": "read_json(?, maximum_depth = 2)",  # top-level keys typed, `jobs` and below kept as JSON
    "objects": "read_json_objects(?)",  # each document read and validated, kept as JSON
}


def job_duckdb_read_json(args: Result) -> Result:
    """DuckDB's own JSON reader over the fio folder, every document into a table. Memory is capped (the
    machine is shared, and `auto` would take it all); a reader that fails reports its error."""
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET threads = {args.get('threads', os.cpu_count() or 2)}")
    con.execute(f"SET memory_limit = '{args.get('memory_limit', '4GB')}'")
    reader = DUCKDB_JSON_VARIANTS[args["variant"]]
    t0 = _clock()
    try:
        con.execute(f"CREATE TABLE fio AS SELECT * FROM {reader}", [args["glob"]])
    except duckdb.Error as exc:
        return {"variant": args["variant"], "error": str(exc).splitlines()[0], "stages": {"read_json_s": _clock() - t0}}
    t1 = _clock()
    rows = con.execute("SELECT count(*) FROM fio").fetchall()[0][0]
    columns = len(con.execute("DESCRIBE fio").fetchall())
    con.close()
    return {"variant": args["variant"], "files": rows, "columns": columns, "stages": {"read_json_s": t1 - t0}}


# --------------------------------------------------------------------------------------------- ingest


def _timed(items: Iterable[Any], stages: dict[str, float]) -> Iterator[Any]:
    """`items`, adding the time spent producing each (reading the file: `iter_paths`) to stages["read_s"], and
    keeping the largest input's size in stages["largest_file_bytes"] (the memory target is relative to it)."""
    it = iter(items)
    while True:
        t = _clock()
        try:
            item = next(it)
        except StopIteration:
            return
        finally:
            stages["read_s"] += _clock() - t
        stages["largest_file_bytes"] = max(stages.get("largest_file_bytes", 0), len(getattr(item, "data", b"")))
        yield item


def job_ingest(args: Result) -> Result:
    """kneepoint's ingest as users run it: `ingest_inputs` over each disk's folder with its labels and `workers`
    (`kneepoint ingest DIR --disk L --host H`), the last folder's call with the dbt build. The stage times are
    the product's own (`IngestReport.timings`: parse_s, the time the main process waited for parsed files;
    store_s; build_s) summed over the folders, plus read_s, the time the main process spent reading the files."""
    from kneepoint.ingest.load import ingest_inputs
    from kneepoint.ingest.sources import iter_paths

    db, groups, workers = args["db"], args["groups"], args["workers"]
    build = args.get("build", True)
    stages: dict[str, float] = {"read_s": 0.0}
    outcomes: dict[str, int] = {}
    records = 0
    rss_before_build = 0.0

    def progress(_outcome: Any) -> None:
        nonlocal rss_before_build
        rss_before_build = _peak_rss_mb()  # after the last file, the build starts

    built: Result | None = None
    t0 = _clock()
    for i, group in enumerate(groups):
        last = i == len(groups) - 1
        report = ingest_inputs(
            db,
            _timed(iter_paths([group["path"]]), stages),
            disk=group["disk"],
            host=group["host"],
            build=build and last,
            progress=progress,
            workers=workers,
        )
        if report.aborted:
            raise RuntimeError(f"ingest of {group['path']} aborted: {report.aborted}")
        for stage, seconds in report.timings.items():
            stages[stage] = stages.get(stage, 0.0) + seconds
        for o in report.outcomes:
            outcomes[o.status] = outcomes.get(o.status, 0) + 1
            records += o.records
        if build and last:
            if report.build is None:
                raise RuntimeError("ingest_inputs(build=True) added files but did not build the models")
            report.build.raise_for_failure()
            built = {"nodes": report.build.node_seconds}
    stages["ingest_s"] = _clock() - t0 - stages.get("build_s", 0.0)
    largest = stages.pop("largest_file_bytes", 0)
    return {
        "workers": workers,
        "largest_file_mb": round(largest / 2**20, 3),
        "outcomes": outcomes,
        "records": records,
        "stages": stages,
        "build": built,
        "peak_rss_mb_before_build": rss_before_build,
        "raw_rows": _raw_rows(db),
    }


# --------------------------------------------------------------------------------------------- models


def _raw_rows(db: str) -> dict[str, int]:
    from kneepoint.ingest.warehouse import connect, row_counts

    con = connect(db)
    try:
        return row_counts(con)
    finally:
        con.close()


def _build(db: str, select: list[str] | None = None, command: str = "build") -> Result:
    """A full build with every test (`kneepoint build --full-refresh`), or one dbt command over selected nodes."""
    from kneepoint.ingest.build import build_models, run_dbt

    if command == "build" and not select:
        result = build_models(db, full_refresh=True, all_tests=True)
        result.raise_for_failure()
        return {"nodes": result.node_seconds}
    run = run_dbt(db, [command, *(["--select", *select] if select else [])])
    if run.failures:
        raise RuntimeError("dbt failed:\n  " + "\n  ".join(run.failures))
    return {"nodes": run.node_seconds}


def job_build(args: Result) -> Result:
    """`kneepoint build`: the whole dbt project (models and tests) over an existing raw layer."""
    t0 = _clock()
    build = _build(args["db"], args.get("select"), args.get("command", "build"))
    stages = {"build_s": _clock() - t0}
    # dbt's own time per model and test, so the harness takes medians of each over the runs.
    stages.update({f"dbt:{node.split('.', 2)[-1]}": seconds for node, seconds in build["nodes"].items()})
    return {"stages": stages, "build": build}


def job_make_rows(args: Result) -> Result:
    from bench.rows import make_rows_db

    t0 = _clock()
    made = make_rows_db(Path(args["db"]), int(args["rows"]))
    return {"made": made, "stages": {"make_rows_s": _clock() - t0}}


def job_curve(args: Result) -> Result:
    """The app's curve read (app.queries.curve_points) at scale: for the disks with the most runs of the busiest
    series, one disk and five disks at a time; the first call of the process is the cold one."""
    import duckdb

    from kneepoint.app import queries

    db = Path(args["db"])
    con = duckdb.connect(str(db), read_only=True)
    key = "pattern, operation, read_pct, block_size_bytes, direction"
    busiest = con.execute(f"SELECT {key} FROM fct_io_results GROUP BY ALL ORDER BY count(*) DESC LIMIT 1").fetchall()
    disks = con.execute(
        f"""
        SELECT disk_key FROM fct_io_results WHERE ({key}) = (?, ?, ?, ?, ?)
        GROUP BY disk_key ORDER BY count(*) DESC, disk_key LIMIT 5
        """,
        list(busiest[0]),
    ).fetchall()
    fact_rows = con.execute("SELECT count(*) FROM fct_io_results").fetchall()[0][0]
    con.close()
    series = queries.Series(*busiest[0])
    one, five = [disks[0][0]], [d[0] for d in disks]
    timings: dict[str, list[float]] = {"one_disk_ms": [], "five_disks_ms": [], "saturation_ms": []}
    points = 0
    for _ in range(int(args.get("repeat", 7))):
        t = _clock()
        points = len(queries.curve_points(one, series, db=db))
        timings["one_disk_ms"].append((_clock() - t) * 1000)
        t = _clock()
        queries.curve_points(five, series, db=db)
        timings["five_disks_ms"].append((_clock() - t) * 1000)
        t = _clock()
        queries.saturation(five, series, db=db)
        timings["saturation_ms"].append((_clock() - t) * 1000)
    stages = {k: statistics.median(v[1:] or v) for k, v in timings.items()}
    stages.update({k.replace("_ms", "_cold_ms"): v[0] for k, v in timings.items()})
    return {"fact_rows": fact_rows, "points_one_disk": points, "disks": len(five), "timings": timings, "stages": stages}


def job_prepare_changes(args: Result) -> Result:
    """The warehouse the changes stage changes: one fio file ingested, or `rows` fact rows (bench/rows.py) and a
    full build, as a user's warehouse is after its first ingest."""
    import shutil

    from kneepoint.ingest.build import build_models
    from kneepoint.ingest.load import ingest_inputs
    from kneepoint.ingest.sources import iter_paths

    db = Path(args["db"])
    for path in (db, Path(f"{db}.wal")):
        path.unlink(missing_ok=True)
    shutil.rmtree(args["files"], ignore_errors=True)
    t0 = _clock()
    if args["rows"]:
        from bench.rows import make_rows_db

        make_rows_db(db, int(args["rows"]))
        build_models(db, full_refresh=True).raise_for_failure()
    else:
        report = ingest_inputs(db, iter_paths([args["file"]]), disk="bench changes")
        assert report.build is not None
        report.build.raise_for_failure()
    return {"stages": {"prepare_s": _clock() - t0}}


def job_app_prepare(args: Result) -> Result:
    from bench.app import job_prepare

    return job_prepare(args)


def job_app_store_chart(args: Result) -> Result:
    from bench.app import job_store_chart

    return job_store_chart(args)


def job_production_prepare(args: Result) -> Result:
    from bench.production import job_prepare

    return job_prepare(args)


def job_production_draw(args: Result) -> Result:
    from bench.production import job_draw

    return job_draw(args)


def job_team_prepare(args: Result) -> Result:
    from bench.team import job_prepare

    return job_prepare(args)


def job_team_uploaders(args: Result) -> Result:
    from bench.team import job_uploaders

    return job_uploaders(args)


JOBS: dict[str, Callable[[Result], Result]] = {
    "prepare_changes": job_prepare_changes,
    "parse": job_parse,
    "json_floor": job_json_floor,
    "duckdb_read_json": job_duckdb_read_json,
    "ingest": job_ingest,
    "build": job_build,
    "make_rows": job_make_rows,
    "curve": job_curve,
    "app_prepare": job_app_prepare,
    "app_store_chart": job_app_store_chart,
    "production_prepare": job_production_prepare,
    "production_draw": job_production_draw,
    "team_prepare": job_team_prepare,
    "team_uploaders": job_team_uploaders,
}


def _reap_helpers() -> None:
    """Stop and wait for multiprocessing's forkserver (the parent of an ingest pool's workers) and resource
    tracker. Their CPU time, the workers' included, then counts in this process's children's rusage, which the
    harness reads with os.wait4; left running, they would exit unwaited and their CPU time go uncounted."""
    from multiprocessing import forkserver, resource_tracker

    for helper in (forkserver._forkserver, resource_tracker._resource_tracker):
        stop = getattr(helper, "_stop", None)  # private API (3.8+); without it, CPU time is undercounted
        if stop is not None:
            with contextlib.suppress(OSError, ChildProcessError):
                stop()


def main(argv: list[str]) -> int:
    job, args_path, result_path = argv
    result = JOBS[job](json.loads(Path(args_path).read_text()))
    _reap_helpers()
    Path(result_path).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
