"""`python -m bench` (`./dev bench`): the full benchmark. Subcommands:

python -m bench [run] [--size full|tiny] [--runs N] [--warmup N]
                      [--only parse,anchors,ingest,rows,changes,team,app,production] [--rows 1000000,10000000]
                      [--no-fioplot] [--concurrency N] [--out DIR] [--results-dir DIR]
                      (team: $KNEEPOINT_BENCH_POSTGRES names a PostgreSQL server, else a throwaway one is started)
python -m bench generate [--size full|tiny] [--out DIR]
python -m bench table RESULTS.json      # the tables of BENCHMARKS.md (Markdown)
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path
from typing import Any

from bench.generate import SIZES, generate
from bench.harness import BENCH_DIR, STAGES, log, run


def main(argv: list[str] | None = None) -> int:
    # `kill PID` ends the run through its `finally`s, which stop the PostgreSQL server it started (a server in its
    # own session outlives a run killed outright).
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("-"):
        argv.insert(0, "run")
    p = argparse.ArgumentParser(prog="python -m bench", description="kneepoint's benchmarks")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="generate the corpus if needed, measure, write a results JSON")
    r.add_argument("--size", choices=sorted(SIZES), default="full")
    r.add_argument("--runs", type=int, help="counted runs per measurement (default: 5 at full size, 1 at tiny)")
    r.add_argument("--warmup", type=int, help="uncounted runs first (default: 1 at full size, 0 at tiny)")
    r.add_argument("--only", help=f"comma-separated stages of {','.join(STAGES)} (default: all)")
    r.add_argument("--rows", help="fact row counts of the model timings' and the changes' warehouses, comma-separated")
    r.add_argument("--no-fioplot", action="store_true", help="skip the fio-plot anchor (needs PyPI access once)")
    r.add_argument(
        "--concurrency",
        type=int,
        help="measurements at once (default: 1 at full size; 2 at tiny, whose timings mean nothing)",
    )
    r.add_argument("--out", type=Path, default=BENCH_DIR / "out", help="generated files and scratch warehouses")
    r.add_argument("--results-dir", type=Path, default=BENCH_DIR / "results")

    g = sub.add_parser("generate", help="only write the corpus")
    g.add_argument("--size", choices=sorted(SIZES), default="full")
    g.add_argument("--out", type=Path, default=BENCH_DIR / "out")

    t = sub.add_parser("table", help="print a results file as the README's Markdown table")
    t.add_argument("results", type=Path)

    args = p.parse_args(argv)
    if args.command == "generate":
        generate(args.out.resolve() / "corpus", SIZES[args.size], log=log)
        return 0
    if args.command == "table":
        print(table(json.loads(args.results.read_text())))
        return 0
    full = args.size == "full"
    stages = tuple(s.strip() for s in args.only.split(",")) if args.only else STAGES
    unknown = set(stages) - set(STAGES)
    if unknown:
        p.error(f"unknown stage(s) {', '.join(sorted(unknown))}; known: {', '.join(STAGES)}")
    rows = [int(x) for x in args.rows.split(",")] if args.rows else None
    path = run(
        args.size,
        args.out,
        args.results_dir,
        runs=args.runs or (5 if full else 1),
        warmup=args.warmup if args.warmup is not None else (1 if full else 0),
        stages=stages,
        fioplot=not args.no_fioplot,
        row_sizes=rows,
        concurrency=args.concurrency,
    )
    results = json.loads(path.read_text())
    print(table(results))
    for failure in results.get("failures", []):
        print(f"FAILED: {failure.splitlines()[0]}", file=sys.stderr)
    return 1 if results.get("failures") else 0


def _fmt(v: Any, unit: str = "") -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        v = f"{v:,.2f}" if v < 100 else f"{v:,.0f}"
    elif isinstance(v, int):
        v = f"{v:,}"
    return f"{v}{unit}"


def _ratio(seconds: float | None, base: float | None) -> str:
    return f"{seconds / base:.2f}x" if seconds and base else "–"


def table(res: dict[str, Any]) -> str:
    """Markdown: machine, parse throughput per format, fio anchors, ingest, model timings, targets, notes, failures."""
    s, mach = res["summary"], res["machine"]
    disk = mach.get("disk", {})
    disk_text = ", ".join(
        str(x)
        for x in (
            disk.get("model") or disk.get("device"),
            f"{disk['size_gb']} GB" if disk.get("size_gb") else None,
            disk.get("filesystem"),
        )
        if x
    )
    n_at_once = res.get("concurrent_measurements", 1)
    concurrent = f"; {n_at_once} measurements at once: timings not comparable" if n_at_once > 1 else ""
    lines = [
        f"Run {res['started_at']} ({res['size']} size, median of {res['runs_per_measurement']} runs after "
        f"{res['warmup_runs']} warm-up{concurrent}), commit {str(res['code']['commit'])[:10]}"
        f"{' + uncommitted changes' if res['code']['uncommitted_changes'] else ''}. Machine: {mach['cpu']}, "
        f"{mach['usable_cpus']} cores, {mach['memory_gib']} GiB, disk {disk_text or '?'}, {mach.get('os', '?')}, "
        f"Python {mach['python']}, DuckDB {mach['packages']['duckdb']}, dbt-core {mach['packages']['dbt-core']}; "
        f"load average {mach['load_avg_at_start'][0]} at start, {mach.get('load_avg_at_end', ['?'])[0]} at end.",
    ]
    if s["parse"]:
        lines += [
            "",
            "| parse (1 process) | files | MB | records | files/s | MB/s | MB/s, format given "
            "| detection alone, MB/s |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for fmt, p in sorted(s["parse"].items()):
            lines.append(
                f"| {fmt} | {_fmt(p['files'])} | {_fmt(p['mb'])} | {_fmt(p['records'])} | {_fmt(p['files_per_s'])} "
                f"| {_fmt(p['mb_per_s'])} | {_fmt(p.get('known_format_mb_per_s'))} "
                f"| {_fmt(p.get('detect_all_mb_per_s'))} |"
            )
    skipped = [f"{f} ({c['skipped']})" for f, c in res["corpus"].items() if c.get("skipped")]
    if skipped:
        lines += ["", "Not generated: " + "; ".join(skipped) + "."]
    a = s.get("anchors", {})
    if a:
        lines += ["", "| fio JSON, same files | seconds | vs kneepoint read + parse |", "|---|---:|---:|"]
        base = a.get("kneepoint_read_parse_s")
        rows = [("kneepoint: read + parse (1 process)", "kneepoint_read_parse_s")]
        rows += [(f"kneepoint ingest, {w} worker(s), no dbt build", f"kneepoint_ingest_w{w}_s") for w in (1, 2)]
        rows += [
            ("bare loop: read + json.loads + append", "json_loads_read_loads_s"),
            (f"fio-plot {a.get('fioplot_version') or ''} JSON import (4 rw passes)".replace("  ", " "), "fioplot_s"),
            ("DuckDB read_json, schema auto-detected", "duckdb_auto_s"),
            ("DuckDB read_json, maximum_depth = 2", "duckdb_depth2_s"),
            ("DuckDB read_json_objects", "duckdb_objects_s"),
        ]
        for label, key in rows:
            if key not in a:
                continue
            if a[key] is None:
                error = a.get(key.removesuffix("_s"), {}).get("error", "failed")
                lines.append(f"| {label} | failed: {error[:90]} | – |")
                continue
            lines.append(f"| {label} | {_fmt(a[key])} | {_ratio(a[key], base)} |")
    if s["ingest"]:
        lines += [
            "",
            "| ingest end to end | files | wall s | CPU s | peak MB (tree) | read s | parse wait s | store s "
            "| dbt build s | files/s |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name, i in s["ingest"].items():
            st = i["stages"]
            build = st.get("build_s") if i["built"] else None
            lines.append(
                f"| {name.removeprefix('ingest.')} | {_fmt(i['files'])} | {_fmt(i['wall_s'])} | {_fmt(i['cpu_s'])} "
                f"| {_fmt(i['worst_peak_mb'])} | {_fmt(st.get('read_s'))} | {_fmt(st.get('parse_s'))} "
                f"| {_fmt(st.get('store_s'))} | {_fmt(build)} | {_fmt(i['files_per_s'])} |"
            )
    if s["rows"]:
        lines += [
            "",
            "| fact rows | dbt build s (runs) | of which saturation marts s "
            "| curve 1 disk ms (cold) | curve 5 disks ms | saturation read ms | build peak MB |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for label, r in s["rows"].items():
            b, c = r.get("build", {}), r.get("curve", {})
            lines.append(
                f"| {label} | {_fmt(b.get('wall_s'))} ({b.get('runs', '–')}) | {_fmt(b.get('saturation_marts_s'))} "
                f"| {_fmt(c.get('one_disk_ms'))} ({_fmt(c.get('one_disk_cold_ms'))}) | {_fmt(c.get('five_disks_ms'))} "
                f"| {_fmt(c.get('saturation_ms'))} | {_fmt(b.get('tree_peak_mb') or b.get('max_rss_mb'))} |"
            )
    if s.get("changes"):
        lines += ["", "| change (whole command) | warehouse | wall s | CPU s | peak MB |", "|---|---|---:|---:|---:|"]
        for label, changes in s["changes"].items():
            for what, c in changes.items():
                lines.append(
                    f"| kneepoint {what} | {label} | {_fmt(c['wall_s'])} | {_fmt(c['cpu_s'])} "
                    f"| {_fmt(c['worst_peak_mb'])} |"
                )
    if s.get("team"):
        lines += [
            "",
            "| engine | full build s | one-file ingest s | uploaders | files | files/s | build after uploads s |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for engine, t in s["team"].items():
            b, i, u = t.get("build", {}), t.get("ingest", {}), t.get("uploaders", {})
            lines.append(
                f"| {engine} | {_fmt(b.get('wall_s'))} | {_fmt(i.get('wall_s'))} | {_fmt(u.get('processes'))} "
                f"| {_fmt(u.get('files'))} | {_fmt(u.get('files_per_s'))} | {_fmt(u.get('settle_build_s'))} |"
            )
    if s.get("app"):
        lines += ["", "| in the app, Store → chart | store s | chart s | total s |", "|---|---:|---:|---:|"]
        for kind, a_ in s["app"].items():
            lines.append(f"| {kind} | {_fmt(a_['store_s'])} | {_fmt(a_['chart_s'])} | {_fmt(a_['store_to_chart_s'])} |")
    if p := s.get("production"):
        lines += ["", "| counter log | MB | intervals | ingest s | ingest peak MB | page reads s | page charts s |"]
        lines += ["|---|---:|---:|---:|---:|---:|---:|"]
        lines.append(
            f"| Perfmon CSV | {_fmt(p['log_mb'])} | {_fmt(p['intervals'])} | {_fmt(p['ingest_s'])} "
            f"| {_fmt(p['ingest_peak_mb'])} | {_fmt(p['read_s'])} | {_fmt(p['charts_s'])} |"
        )
    if res["targets"]:
        lines += ["", "| target | goal | measured | met |", "|---|---|---|---|"]
        for t in res["targets"]:
            met = {True: "yes", False: "**no**", None: "–"}[t["met"]]
            lines.append(f"| {t['target']} | {t['goal']} | {t['measured']} | {met} |")
    if res.get("notes"):
        lines += [""] + [f"- {n}" for n in res["notes"]]
    if res.get("failures"):
        lines += ["", "Failed measurements (their chains stopped there):"]
        lines += [f"- {f.splitlines()[0]}" for f in res["failures"]]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
