"""`python -m bench` (`./dev bench`): the full benchmark. Subcommands:

python -m bench [run] [--size full|tiny] [--runs N] [--warmup N] [--only parse,anchors,ingest,parallel,rows]
                      [--rows 1000000,10000000] [--no-fioplot] [--out DIR] [--results-dir DIR]
python -m bench generate [--size full|tiny] [--out DIR]
python -m bench table RESULTS.json      # the README's Benchmarks table (Markdown)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench.generate import SIZES, generate
from bench.harness import BENCH_DIR, STAGES, log, run


def main(argv: list[str] | None = None) -> int:
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
    r.add_argument("--rows", help="fact row counts for the model timings, comma-separated")
    r.add_argument("--no-fioplot", action="store_true", help="skip the fio-plot anchor (needs PyPI access once)")
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
    )
    print(table(json.loads(path.read_text())))
    return 0


def _fmt(v: Any, unit: str = "") -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        v = f"{v:,.2f}" if v < 100 else f"{v:,.0f}"
    elif isinstance(v, int):
        v = f"{v:,}"
    return f"{v}{unit}"


def table(res: dict[str, Any]) -> str:
    """Markdown: machine, parse throughput per format, fio anchors, ingest, model timings, targets."""
    s, mach = res["summary"], res["machine"]
    lines = [
        f"Run {res['started_at']} ({res['size']} size, median of {res['runs_per_measurement']} runs, "
        f"{res['warmup_runs']} warm-up), commit {str(res['code']['commit'])[:10]}"
        f"{' + uncommitted changes' if res['code']['uncommitted_changes'] else ''}. Machine: {mach['cpu']}, "
        f"{mach['usable_cpus']} cores, {mach['memory_gib']} GiB, Python {mach['python']}, "
        f"DuckDB {mach['packages']['duckdb']}, dbt-core {mach['packages']['dbt-core']}; "
        f"load average {mach['load_avg_at_start'][0]} at start, {mach.get('load_avg_at_end', ['?'])[0]} at end.",
        "",
        "| parse (1 process) | files | MB | records | files/s | MB/s | MB/s, format given | detection alone, MB/s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for fmt, p in sorted(s["parse"].items()):
        lines.append(
            f"| {fmt} | {_fmt(p['files'])} | {_fmt(p['mb'])} | {_fmt(p['records'])} | {_fmt(p['files_per_s'])} "
            f"| {_fmt(p['mb_per_s'])} | {_fmt(p.get('known_format_mb_per_s'))} | {_fmt(p.get('detect_all_mb_per_s'))} |"
        )
    skipped = [f"{f} ({c['skipped']})" for f, c in res["corpus"].items() if c.get("skipped")]
    if skipped:
        lines += ["", "Not generated: " + "; ".join(skipped) + "."]
    a = s.get("anchors", {})
    if a:
        lines += ["", "| fio JSON, same files | seconds | vs kneepoint |", "|---|---:|---:|"]
        base = a.get("kneepoint_read_parse_s")
        for label, key in (
            ("kneepoint: read + parse_bytes", "kneepoint_read_parse_s"),
            ("bare loop: read + json.loads + append", "json_loads_read_loads_s"),
            ("fio-plot JSON import (4 rw passes)", "fioplot_s"),
            ("DuckDB read_json, schema auto-detected (2 threads, 4 GB)", "duckdb_auto_s"),
            ("DuckDB read_json, maximum_depth = 2", "duckdb_depth2_s"),
            ("DuckDB read_json_objects", "duckdb_objects_s"),
        ):
            if key not in a:
                continue
            if a[key] is None:
                error = a.get(key.removesuffix("_s"), {}).get("error", "failed")
                lines.append(f"| {label} | failed: {error[:90]} | – |")
                continue
            ratio = f"{a[key] / base:.2f}x" if base else "–"
            lines.append(f"| {label} | {_fmt(a[key])} | {ratio} |")
    if s["ingest"]:
        lines += [
            "",
            "| ingest end to end | files | wall s | CPU s | peak RSS MB | read s | parse s | store s | dbt build s |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name, i in s["ingest"].items():
            st = i["stages"]
            parse = st.get("parse_s", st.get("wait_s"))
            lines.append(
                f"| {name} | {_fmt(i['files'])} | {_fmt(i['wall_s'])} | {_fmt(i['cpu_s'])} | {_fmt(i['max_rss_mb'])} "
                f"| {_fmt(st.get('read_s'))} | {_fmt(parse)} | {_fmt(st.get('store_s'))} | {_fmt(st.get('build_s'))} |"
            )
    if s["rows"]:
        lines += [
            "",
            "| fact rows | dbt build s | saturation marts s "
            "| curve 1 disk ms (cold) | curve 5 disks ms | build RSS MB |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for label, r in s["rows"].items():
            b, sat, c = r.get("build", {}), r.get("saturation", {}), r.get("curve", {})
            lines.append(
                f"| {label} | {_fmt(b.get('wall_s'))} | {_fmt(sat.get('wall_s'))} | {_fmt(c.get('one_disk_ms'))} "
                f"({_fmt(c.get('one_disk_cold_ms'))}) | {_fmt(c.get('five_disks_ms'))} | {_fmt(b.get('max_rss_mb'))} |"
            )
    if res["targets"]:
        lines += ["", "| target | goal | measured | met |", "|---|---|---:|---|"]
        for t in res["targets"]:
            met = {True: "yes", False: "**no**", None: "–"}[t["met"]]
            lines.append(f"| {t['target']} | {t['goal']} | {t['measured']} | {met} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
