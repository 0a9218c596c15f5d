"""Mutation check: small wrong changes to the product, each of which some test must catch.

python -m bench.mutations [--only NAME ...] [--list] [--keep]

The checkout's committed state is cloned into a scratch folder with its own `./dev setup`; each mutation replaces
one exact text in one file there, runs the few tests that should catch it, and is reverted (`git checkout -- .`).
A mutation that its tests still pass "survives": a wrong answer no test would see. First the selected tests run
once unmutated (a test that already fails would make every mutation look caught). Prints a Markdown table
(mutation, caught by, seconds); exits 1 when a mutation survives or its old text is no longer in its file.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True, slots=True)
class Mutation:
    name: str
    file: str  # relative to the checkout
    old: str  # must occur exactly once in the file
    new: str
    tests: tuple[str, ...]  # pytest node ids or files that should fail


_SATURATION_BUILD = "tests/test_saturation.py::test_kneepoint_build_runs_the_rules_unit_tests"
_RANGE_BRANCHES = "tests/test_dbt_tests_fire.py::test_every_range_check_finds_its_planted_row"

MUTATIONS: tuple[Mutation, ...] = (
    Mutation(
        "saturation rule <= becomes <",
        "macros/saturation.sql",
        "coalesce(best_throughput_beyond <= (1 + {{ tolerance }})",
        "coalesce(best_throughput_beyond < (1 + {{ tolerance }})",
        ("tests/test_saturation.py::test_saturation_point_per_series[exactly the tolerance]", _SATURATION_BUILD),
    ),
    Mutation(
        "Little's law upper bound 1.25 becomes 1.5",
        "dbt_project.yml",
        "littles_law_ratio_max: 1.25",
        "littles_law_ratio_max: 1.5",
        (_SATURATION_BUILD,),
    ),
    Mutation(
        "Little's law lower bound 0.8 becomes 0.7",
        "dbt_project.yml",
        "littles_law_ratio_min: 0.8",
        "littles_law_ratio_min: 0.7",
        (_SATURATION_BUILD,),
    ),
    Mutation(
        "$KNEEPOINT_DB beats --db",
        "ingest/warehouse.py",
        'where = explicit or os.environ.get("KNEEPOINT_DB") or DEFAULT_DB',
        'where = os.environ.get("KNEEPOINT_DB") or explicit or DEFAULT_DB',
        ("tests/test_cli.py::test_db_flag_beats_the_environment_beats_the_current_folder",),
    ),
    Mutation(
        "unit check tolerance 2 % becomes 20 %",
        "dbt_project.yml",
        "unit_check_tolerance: 0.02",
        "unit_check_tolerance: 0.2",
        (_SATURATION_BUILD,),
    ),
    Mutation(
        "KiB/s factor 1024 becomes 1000",
        "dbt_project.yml",
        '"KiB/s": 1024',
        '"KiB/s": 1000',
        ("tests/parsers/test_golden.py",),  # the records' bytes per second, as `kneepoint parse` prints them
    ),
    Mutation(
        "best run per load: the lowest IOPS instead of the highest",
        "macros/saturation.sql",
        "'lower_iops': -iops",
        "'lower_iops': iops",
        ("tests/test_saturation.py::test_saturation_figures_come_from_the_kept_run",),
    ),
    Mutation(
        "USL fit: the coherency term's sign",
        "ingest/analytics.py",
        "denominator = 1 + p[:, 1:2] * (x - 1) + p[:, 2:3] * x * (x - 1)",
        "denominator = 1 + p[:, 1:2] * (x - 1) - p[:, 2:3] * x * (x - 1)",
        ("tests/test_analytics.py::test_usl_recovers_exact_parameters",),
    ),
    Mutation(
        "fio JSON parser drops p99 latency",
        "ingest/formats/fio_json.py",
        '"latency_p99": p99,',
        '"latency_p99": None,',
        ("tests/parsers/test_fio_json.py",),
    ),
    Mutation(
        "STATISTICS IO, Spanish 2005-2016: logical and physical reads' words swapped",
        "ingest/formats/sqlstats.py",
        """                "Recuento de exámenes",
                "lecturas lógicas",
                "lecturas físicas",""",
        """                "Recuento de exámenes",
                "lecturas físicas",
                "lecturas lógicas",""",
        # the writer-derived tests read back whatever the table says: texts not written from it must catch it
        ("tests/parsers/test_sqlstats_languages.py", "tests/parsers/test_sqlstats.py"),
    ),
    Mutation(
        "delete leaves a raw table's rows",
        "ingest/warehouse.py",
        """        for table in RAW_TABLES:
            delete_rows(con, table, file_id)""",
        """        for table in RAW_TABLES[1:]:
            delete_rows(con, table, file_id)""",
        ("tests/test_warehouse.py::test_delete_removes_every_row_of_the_file_and_the_bytes_can_come_back",),
    ),
    Mutation(
        "range test: threads below 1 no longer checked",
        "tests/dbt/assert_io_results_in_range.sql",
        "from io_results where threads < 1",
        "from io_results where false",
        (_RANGE_BRANCHES,),
    ),
    Mutation(
        "range test: latencies' order no longer checked at p99 <= p99.9",
        "tests/dbt/assert_io_results_in_range.sql",
        "       or latency_p99_ms > latency_p999_ms\n",
        "",
        (_RANGE_BRANCHES,),
    ),
)


@dataclass(slots=True)
class Outcome:
    mutation: Mutation
    caught_by: list[str]
    seconds: float
    note: str = ""


def _run(cmd: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess[str]:
    # The scratch copy's own warehouse and dbt target: none of the caller's (conftest gives each run its own).
    env = {k: v for k, v in os.environ.items() if k not in ("KNEEPOINT_DB", "KNEEPOINT_DBT_TARGET")}
    return subprocess.run(cmd, cwd=cwd, text=True, capture_output=True, env=env, **kw)


def _pytest(scratch: Path, tests: tuple[str, ...]) -> tuple[int, list[str], str]:
    """Run `tests` in the scratch copy: the exit code, the failing test ids, the output's tail."""
    cmd = [str(scratch / ".venv/bin/python"), "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", *tests]
    done = _run(cmd, scratch)
    failed = re.findall(r"^(?:FAILED|ERROR) (.+?)(?: - .*)?$", done.stdout, re.M)
    return done.returncode, failed, "\n".join(done.stdout.splitlines()[-15:])


def _apply(scratch: Path, m: Mutation) -> str | None:
    """Apply the mutation; the reason it cannot be applied, else None."""
    path = scratch / m.file
    text = path.read_text(encoding="utf-8")
    if text.count(m.old) != 1:
        return f"old text found {text.count(m.old)} times in {m.file} (stale mutation)"
    path.write_text(text.replace(m.old, m.new), encoding="utf-8")
    return None


def check(mutations: list[Mutation], scratch: Path) -> list[Outcome]:
    outcomes = []
    for m in mutations:
        started = time.perf_counter()
        reason = _apply(scratch, m)
        if reason is not None:
            outcomes.append(Outcome(m, [], 0.0, reason))
            continue
        try:
            print(f"mutation: {m.name} ...", file=sys.stderr, flush=True)
            code, failed, tail = _pytest(scratch, m.tests)
        finally:
            _run(["git", "checkout", "--", "."], scratch, check=True)
        note = "" if code in (0, 1) else f"pytest exit {code}:\n{tail}"
        outcomes.append(Outcome(m, failed, time.perf_counter() - started, note))
    return outcomes


def table(outcomes: list[Outcome]) -> str:
    lines = ["| mutation | caught by | s |", "|---|---|---|"]
    for o in outcomes:
        caught = ", ".join(f"`{t}`" for t in o.caught_by) or ("**survived**" if not o.note else "not run")
        lines.append(f"| {o.mutation.name} | {caught} | {o.seconds:.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.mutations", description=__doc__.split("\n\n")[0])
    p.add_argument("--only", action="append", metavar="NAME", help="a mutation whose name contains NAME (repeatable)")
    p.add_argument("--list", action="store_true", help="list the mutations and their tests, run nothing")
    p.add_argument("--keep", action="store_true", help="keep the scratch copy (its path is printed)")
    args = p.parse_args(argv)
    chosen = [m for m in MUTATIONS if not args.only or any(o.lower() in m.name.lower() for o in args.only)]
    if not chosen:
        p.error(f"no mutation matches {args.only}; --list shows them")
    if args.list:
        for m in chosen:
            print(f"{m.name}\n    {m.file}\n    " + "\n    ".join(m.tests))
        return 0
    scratch_root = Path(tempfile.mkdtemp(prefix="kneepoint-mutations-"))
    scratch = scratch_root / "kneepoint"
    _run(["git", "clone", "--quiet", str(PROJECT_ROOT), str(scratch)], PROJECT_ROOT, check=True)
    setup = _run(["./dev", "setup"], scratch)
    if setup.returncode != 0:
        print(setup.stdout + setup.stderr, file=sys.stderr)
        return 2
    # Unmutated first: every selected test must pass, or a mutation's failure would prove nothing.
    baseline = tuple(dict.fromkeys(t for m in chosen for t in m.tests))
    print(f"scratch copy: {scratch}\nunmutated run of {len(baseline)} test selections ...", file=sys.stderr)
    code, failed, tail = _pytest(scratch, baseline)
    if code != 0:
        print(f"the unmutated tests fail ({', '.join(failed) or 'exit ' + str(code)}):\n{tail}", file=sys.stderr)
        return 2
    outcomes = check(chosen, scratch)
    print(table(outcomes))
    for o in outcomes:
        if o.note:
            print(f"\n{o.mutation.name}: {o.note}", file=sys.stderr)
    if not args.keep:
        _run(["rm", "-rf", str(scratch_root)], PROJECT_ROOT)
    return 1 if any(not o.caught_by for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
