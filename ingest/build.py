"""Bring the models up to date with the raw layer: dbt, in-process (dbtRunner), against the warehouse the caller
names. Every change costs what it changes.

A build covers the changes committed before it started: it reads the newest change number (its cut-off) and
writes its window, the changes past the last build up to the cut-off, where the models read it
(kneepoint_build_window, macros/build_scope.sql). Files stored while it runs wait for the next build. Three
kinds of build:

    changes    the incremental models replace the rows of the changed files and recompute the series whose
               points moved; the tests that guard a change (tag change_guard) read only those rows
    full       every model rebuilt from the raw layer (dbt --full-refresh): a new warehouse, models whose
               definition changed (another kneepoint version), a model table gone, or `--full-refresh`
    none       nothing changed since the last build

`kneepoint build` runs every dbt test (and dbt's unit tests) over every row after bringing the models up to date.

One build runs at a time per warehouse (warehouse.building). On DuckDB a command waits for it: one process holds
the file, and its sessions' builds are short. On PostgreSQL many hosts upload at once and none waits for another's
build: a command whose build finds another running leaves its changes to that build, which, when done, builds
again while changes arrived meanwhile (at most MAX_ROUNDS times; what is left then waits for the next command).
The state says what the models were built up to and from which definition (kneepoint_build_state); it moves
only when a build succeeds, so a build killed half-way is done again, whole, by the next command.

dbt's fixed costs: the parsed project (its manifest) is kept in this process and pickled beside dbt's target
folder, keyed by the project's files, dbt's version and the warehouse, so a command neither re-parses the project
(~2 s) nor re-reads dbt's partial-parse file (~0.7 s). A change build's SQL is the same every time (the models read
what changed from tables): after dbt ran a warehouse's change build once, later ones send the SQL it recorded
without importing dbt (ingest/replay.py), and hand a phase back to dbt when anything does not go as recorded. So
does a new warehouse's first build, recorded once per machine on an empty warehouse (_first_build_recordings).
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
import re
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from kneepoint.ingest import __version__, formats, postgres, replay, schema
from kneepoint.ingest.errors import OUT_OF_MEMORY
from kneepoint.ingest.load_fits import refit_loads
from kneepoint.ingest.units import PROJECT_ROOT
from kneepoint.ingest.warehouse import (
    FILE_CHANGE_LOCK,
    Connection,
    Location,
    building,
    connect,
    insert_rows,
    is_postgres,
    latest_change,
    locate,
    transaction,
)

log = logging.getLogger(__name__)

# The files whose content decides what the models hold: a change to any of them rebuilds everything.
_DEFINITION = ("dbt_project.yml", "selectors.yml", "models", "macros", "ingest/analytics.py", "ingest/load_fits.py")
# What dbt parses (its manifest is kept until one of them changes).
_PARSED = ("dbt_project.yml", "selectors.yml", "profiles.yml", "models", "macros", "tests/dbt")
# The model tables an incremental build extends: one missing (deleted by hand, an older warehouse) means a full build.
_INCREMENTAL_MODELS = (
    "fct_io_results",
    "fct_latency_distribution",
    "fct_query_io",
    "fct_query_time",
    "fct_observed_intervals",
    "fct_observed_waits",
    "dim_files",
    "int_saturation_points",
    "int_saturation_thread_points",
    "mart_usl_fits",
    "kneepoint_usl_fits",
    "mart_saturation_points",
    "mart_saturation_by_threads",
    "mart_percentile_loads",
    "mart_unit_checks",
    "mart_production_vs_baseline",
    "mart_headroom",
    "mart_waits_vs_baseline",
    "fct_load_steps",
    "int_load_points",
    "mart_load_usl_fits",
    "kneepoint_load_usl_fits",
    "mart_load_saturation",
)

Progress = Callable[[str], None]
# Rounds a PostgreSQL build makes while others' changes keep arriving (module docstring).
MAX_ROUNDS = 5


@dataclass(slots=True)
class BuildResult:
    success: bool
    failures: list[str] = field(default_factory=list)
    kind: str = "none"  # "changes" | "full" | "none" | "elsewhere" (another command's build covers them)
    changes: int = 0  # changes the build covered (files stored, relabelled, deleted)
    seconds: float = 0.0
    node_seconds: dict[str, float] = field(default_factory=dict)  # dbt's own time per model and test
    left: int = 0  # changes that arrived meanwhile and wait for the next build (PostgreSQL, after MAX_ROUNDS)

    def then(self, later: BuildResult) -> BuildResult:
        """This build followed by another round of it (PostgreSQL: changes that arrived meanwhile)."""
        if later.kind in ("none", "elsewhere"):
            kind = self.kind
        else:
            kind = "full" if "full" in (self.kind, later.kind) else later.kind
        return BuildResult(
            self.success and later.success,
            self.failures + later.failures,
            kind,
            self.changes + later.changes,
            self.seconds + later.seconds,
            {**self.node_seconds, **later.node_seconds},
            later.left,
        )

    def raise_for_failure(self) -> None:
        if not self.success:
            raise RuntimeError("dbt build failed:\n  " + "\n  ".join(self.failures or ["(no detail)"]))


@dataclass(frozen=True, slots=True)
class _Plan:
    kind: str
    from_seq: int
    to_seq: int
    first: bool = False  # the warehouse's first build: what it holds came from the changes it builds


def build_models(
    db: Location | str | os.PathLike[str],
    full_refresh: bool = False,
    all_tests: bool = False,
    progress: Progress | None = None,
    wait: bool | None = None,
) -> BuildResult:
    """Bring the models of the warehouse `db` up to date with its raw layer (see the module's docstring).

    `all_tests`: run every dbt test over every row, as `kneepoint build` does; otherwise a change runs the tests
    that guard a change, over the rows it changed. `wait` for another command's build to end (default: on DuckDB,
    and for `all_tests` or `full_refresh`); otherwise leave the changes to it (kind "elsewhere"). The caller may
    hold its own connection to `db` (DuckDB shares the open database inside one process, so other processes stay
    out until the caller lets go)."""
    db = locate(db)
    if wait is None:
        wait = not is_postgres(db) or all_tests or full_refresh
    result = BuildResult(True, kind="none")
    for _ in range(MAX_ROUNDS if is_postgres(db) else 1):
        with building(db, wait) as held:
            if not held:
                return BuildResult(True, kind="elsewhere") if result.kind == "none" else result
            result = result.then(_build_once(db, full_refresh, all_tests, progress))
        # Let go first, then look: a change committed after this look finds the lock free and builds itself.
        if not result.success or not is_postgres(db) or not models_behind(db):
            return result
        full_refresh = all_tests = False
    result.left = _changes_left(db)
    return result


def _build_once(db: Location, full_refresh: bool, all_tests: bool, progress: Progress | None) -> BuildResult:
    started = time.perf_counter()
    with FILE_CHANGE_LOCK:
        con = connect(db)
        try:
            plan = _plan(con, full_refresh, cutoff=True)
            if plan.kind == "none" and not all_tests:
                return BuildResult(True, kind="none", seconds=time.perf_counter() - started)
            _open_window(con, plan, "all" if all_tests or plan.kind == "full" else "changed")
        finally:
            con.close()
        if plan.kind == "full":
            _say(progress, "rebuilding every model from the raw layer")
        elif plan.kind == "changes":
            _say(progress, f"building {_changes(plan)}")
        # Two dbt phases with the USL fits between them: the models that make the points, the fits (Python, the
        # same on every engine: a least-squares fit has no portable SQL), then the models that read them.
        args = ["build"] + (["--full-refresh"] if plan.kind == "full" else [])
        if all_tests:
            fitted_models = ["mart_usl_fits+", "mart_load_usl_fits+"]
            first, second = [*args, "--exclude", *fitted_models], [*args, "--select", *fitted_models]
        else:
            first, second = _CHANGE_PHASES
            if plan.kind == "full":
                first, second = FULL_BUILD_PHASES
        # A new warehouse's first build is its first ingest's (or import's, or upload's): bounded as theirs.
        new_warehouse = plan.first and not all_tests and not is_postgres(db)
        bounds = first_build_bounds() if new_warehouse else None
        # A change build's SQL is the same every time: after dbt ran it once it is sent again without dbt. So is a
        # new warehouse's first build, but for the warehouse's name: it sends what dbt sent for an empty one's.
        if plan.kind == "changes" and not all_tests:
            kept = [_change_recording(db, first), _change_recording(db, second)]
        elif new_warehouse:
            kept = _first_build_recordings(db, [first, second], bounds, progress)
        else:
            kept = [None, None]
        fits = _Fits(db, every_series=plan.kind == "full") if plan.kind != "none" else None
        try:
            run = _run_phase(db, first, progress, kept[0], fits, bounds)
        finally:
            if fits is not None:
                fits.wait()
        if not run.failures and fits is not None:
            fitted = fits.finish(progress)
            run = run.then(_run_phase(db, second, progress, kept[1], bounds=bounds))
            run.node_seconds["usl fits (ingest/analytics.py)"] = fitted
        elif not run.failures:
            run = run.then(run_dbt(db, second, progress, bounds=bounds))
        if not run.failures:
            _record_built(db, plan)
    return BuildResult(
        not run.failures,
        run.failures,
        plan.kind,
        plan.to_seq - plan.from_seq,
        seconds=time.perf_counter() - started,
        node_seconds=run.node_seconds,
    )


def _open_window(con: Connection, plan: _Plan, test_scope: str) -> None:
    """Tell the models what this build covers (macros/build_scope.sql) and which tools kneepoint reads."""
    with transaction(con):
        con.execute("DELETE FROM kneepoint_build_window")
        con.execute("INSERT INTO kneepoint_build_window VALUES (?, ?, ?)", [plan.from_seq, plan.to_seq, test_scope])
        if plan.kind == "full":
            con.execute("DELETE FROM kneepoint_changed_series")
            con.execute("DELETE FROM kneepoint_changed_disks")
        con.execute("DELETE FROM kneepoint_known_tools")
        con.execute("INSERT INTO kneepoint_known_tools SELECT unnest(?::VARCHAR[])", [formats.tools()])


def _changes_left(db: Location) -> int:
    con = connect(db)
    try:
        built = con.execute("SELECT coalesce(max(built_seq), 0) FROM kneepoint_build_state").fetchall()[0][0]
        return con.execute("SELECT count(*) FROM raw_file_changes WHERE change_seq > ?", [built]).fetchall()[0][0]
    finally:
        con.close()


def refit(db: Location, every_series: bool, progress: Progress | None = None) -> float:
    """Fit the USL and find the Kneedle knee of the series whose points this build changed (every series on a full
    refresh), into kneepoint_usl_fits, in one transaction; the seconds it took."""
    import pyarrow as pa

    from kneepoint.ingest.analytics import series_fits_many
    from kneepoint.ingest.schema import USL_FITS

    started = time.perf_counter()
    changed = "" if every_series else "WHERE series_id IN (SELECT series_id FROM kneepoint_changed_series)"
    key = ("series_id", "disk_key", "pattern", "operation", "read_pct", "block_size_bytes", "direction")
    con = connect(db)
    try:
        # Columns, not rows of Python tuples: at 10M fact rows the points are ~0.9M.
        points = con.sql(
            f"SELECT {', '.join(key)}, CAST(outstanding_io AS DOUBLE PRECISION) AS x, "
            "CAST(iops AS DOUBLE PRECISION) AS y "
            f"FROM int_saturation_points {changed} ORDER BY series_id, outstanding_io"
        ).to_arrow_table()
        ids = points.column("series_id").to_pylist()
        x, y = points.column("x").to_numpy(), points.column("y").to_numpy()
        starts = [i for i in range(len(ids)) if i == 0 or ids[i] != ids[i - 1]] + [len(ids)]
        series = [(x[a:b].tolist(), y[a:b].tolist()) for a, b in zip(starts, starts[1:], strict=False)]
        _say(progress, f"fitting the USL to {len(series)} series")
        fits = series_fits_many(series)
        firsts = points.take(starts[:-1]) if series else points.slice(0, 0)
        columns = {name: firsts.column(name) for name in key}
        columns["points"] = pa.array([len(loads) for loads, _ in series], pa.int64())
        for name in USL_FITS.column_names[len(key) + 1 :]:
            columns[name] = pa.array([f[name] for f in fits], USL_FITS.arrow_schema().field(name).type)
        rows = pa.table(columns, schema=USL_FITS.arrow_schema())
        with transaction(con):
            con.execute(f"DELETE FROM kneepoint_usl_fits {changed}")
            insert_rows(con, "kneepoint_usl_fits", rows)
    finally:
        con.close()
    return round(time.perf_counter() - started, 4)


class _Fits:
    """The fits between a build's two phases: the USL and Kneedle of the disks' series (refit) and of the load
    series (refit_loads). Where dbt runs the first phase, each starts on a thread of its own as soon as dbt has
    built the points it reads (a dbt event callback), and runs beside the rest of that phase, on the machine's
    other core (a full build at 1M fact rows: ~2 s of fits, about half of it saved). Where the phase was replayed
    (ingest/replay.py: no dbt, a change build's few series), they run after it."""

    def __init__(self, db: Location, every_series: bool) -> None:
        self._db, self._every_series = db, every_series
        # each fit, after the model whose points it reads
        self._after = {"model.kneepoint.int_saturation_points": refit, "model.kneepoint.int_load_points": refit_loads}
        self._threads: dict[str, threading.Thread] = {}
        self._seconds: dict[str, float] = {}
        self._errors: list[BaseException] = []

    def __call__(self, event: Any) -> None:
        """A dbt event callback: start a fit when the model it reads is built."""
        if event.info.name != "NodeFinished":
            return
        node = event.data.node_info
        if node.unique_id not in self._after or node.node_status != "success" or node.unique_id in self._threads:
            return
        thread = threading.Thread(target=self._fit, args=(node.unique_id, None), name="kneepoint-fits", daemon=True)
        self._threads[node.unique_id] = thread
        thread.start()

    def _fit(self, after: str, progress: Progress | None) -> None:
        try:
            self._seconds[after] = self._after[after](self._db, self._every_series, progress=progress)
        except BaseException as exc:  # noqa: BLE001 - raised again by finish(), on the build's thread
            self._errors.append(exc)

    def wait(self) -> None:
        """Wait for the fits started (whether the phase succeeded or not: none outlives the build)."""
        for thread in self._threads.values():
            thread.join()

    def finish(self, progress: Progress | None) -> float:
        """Run the fits not started yet, raise what a fit raised; the seconds all took."""
        self.wait()
        for after in self._after:
            if after not in self._threads:
                self._fit(after, progress)
        if self._errors:
            raise self._errors[0]
        return round(sum(self._seconds.values()), 4)


def run_model_tests(db: Location, select: list[str] | None = None) -> list[str]:
    """Run dbt's tests (those `select` names, else all) over every row of the built models; their failures."""
    with building(db):
        con = connect(db)
        try:
            con.execute("UPDATE kneepoint_build_window SET test_scope = 'all'")
        finally:
            con.close()
        return run_dbt(db, ["test", *(["--select", *select] if select else [])]).failures


def warm_up(db: Location | str | os.PathLike[str]) -> float:
    """Prepare now what the first build of a long-lived process (the app) would otherwise do while its user waits;
    the seconds it took. Where the warehouse's change builds have no recording yet (ingest/replay.py), record them:
    a change build of no change, through dbt (every model and guard runs over no rows; nothing in the warehouse
    changes), so that the first Store sends SQL only. Otherwise nothing is needed; and where the models are behind
    (their first build will record), load dbt's modules (~1.5 s of imports) and the parsed project with `dbt ls` of
    one model, the cheapest command that goes through dbt's whole set-up, which reads and writes no table."""
    db = locate(db)
    started = time.perf_counter()
    if _change_build_recorded(db):
        return 0.0
    if _record_change_build(db):
        return round(time.perf_counter() - started, 4)
    from dbt.cli.main import dbtRunner

    with FILE_CHANGE_LOCK, _warehouse_env(db):
        res = dbtRunner(manifest=_manifest(db)).invoke(
            ["ls", "--select", "dim_disks", "--resource-type", "model", *_common_args(db), "--log-level", "none"]
        )
        if not is_postgres(db):
            _release_duckdb(failed=not res.success)
    return round(time.perf_counter() - started, 4)


_CHANGE_PHASES = (["build", "--selector", "change_points"], ["build", "--selector", "change_fits"])
# A full refresh by a change (a new warehouse's first build, a schema or kneepoint upgrade), phase by phase.
FULL_BUILD_PHASES = (
    ["build", "--full-refresh", "--selector", "change_full_points"],
    ["build", "--full-refresh", "--selector", "change_full_fits"],
)


def _change_build_recorded(db: Location) -> bool:
    return all(_change_recording(db, args).steps() is not None for args in _CHANGE_PHASES)


def _record_change_build(db: Location) -> bool:
    """Run a change build of no change through dbt and record it (warm_up); False where the models are not built
    and current (their own build comes first), another build runs, or dbt failed."""
    with building(db, wait=False) as held:
        if not held:
            return False
        with FILE_CHANGE_LOCK:
            con = connect(db)
            try:
                if models_behind(con) or not _models_present(con):
                    return False
                plan = _plan(con, full_refresh=False, cutoff=True)
                with transaction(con):
                    con.execute("DELETE FROM kneepoint_build_window")
                    # from = to: the window holds no change
                    con.execute("INSERT INTO kneepoint_build_window VALUES (?, ?, 'changed')", [plan.to_seq] * 2)
            finally:
                con.close()
            return all(not _run_phase(db, args, None, _change_recording(db, args)).failures for args in _CHANGE_PHASES)


def models_behind(where: Connection | Location) -> bool:
    """Whether the models lag the raw layer: a change past the last build, another project definition, a model
    table missing, or never built (an empty warehouse needs no build)."""
    if isinstance(where, Connection):
        return _plan(where, full_refresh=False).kind != "none"
    con = connect(where, read_only=True)
    try:
        return _plan(con, full_refresh=False).kind != "none"
    finally:
        con.close()


def _plan(con: Connection, full_refresh: bool, cutoff: bool = False) -> _Plan:
    latest = latest_change(con, cutoff=cutoff)
    state = con.execute("SELECT built_seq, project_hash FROM kneepoint_build_state").fetchall()
    if state and not full_refresh and state[0][1] == project_hash() and _models_present(con):
        built = state[0][0]
        return _Plan("changes" if latest > built else "none", built, latest)
    if not state and latest == 0 and not full_refresh:
        return _Plan("none", 0, 0)  # nothing stored, nothing built: the first ingest builds
    return _Plan("full", 0, latest, first=not state)


def _models_present(con: Connection) -> bool:
    n = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() "
        "AND table_catalog = current_database() AND table_type = 'BASE TABLE' "
        "AND table_name IN (SELECT unnest(?::VARCHAR[]))",
        [list(_INCREMENTAL_MODELS)],
    ).fetchall()[0][0]
    return n == len(_INCREMENTAL_MODELS)


def _record_built(db: Location, plan: _Plan) -> None:
    """The build's work is done: its cut-off becomes the state, the series it recomputed are forgotten."""
    con = connect(db)
    try:
        with transaction(con):
            con.execute("DELETE FROM kneepoint_changed_series")
            con.execute("DELETE FROM kneepoint_changed_disks")
            con.execute("DELETE FROM kneepoint_build_state")
            con.execute(
                "INSERT INTO kneepoint_build_state VALUES (?, ?, ?)",
                [plan.to_seq, project_hash(), datetime.now(UTC)],
            )
    finally:
        con.close()


def _changes(plan: _Plan) -> str:
    n = plan.to_seq - plan.from_seq
    return f"{n} change{'s' if n != 1 else ''}"


def _say(progress: Progress | None, text: str) -> None:
    if progress is not None:
        progress(text)


def project_hash() -> str:
    """sha256 over the files that define the models (_DEFINITION) and kneepoint's version."""
    return _files_hash(_DEFINITION)


def _files_hash(names: tuple[str, ...]) -> str:
    h = hashlib.sha256(__version__.encode())
    for path in _files(names):
        h.update(str(path.relative_to(PROJECT_ROOT)).encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def _files(names: tuple[str, ...]) -> Iterator[Path]:
    for name in names:
        path = PROJECT_ROOT / name
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        elif path.is_file():
            yield path


# -- dbt -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DbtRun:
    failures: list[str]  # empty: success
    node_seconds: dict[str, float]  # dbt's own time per node (model, test) that ran

    def then(self, other: DbtRun) -> DbtRun:
        return DbtRun(self.failures + other.failures, {**self.node_seconds, **other.node_seconds})


@dataclass(frozen=True, slots=True)
class _Recording:
    """Where the SQL of one build phase is kept (ingest/replay.py), under which key, and, for a first build's, the
    name of the warehouse it was recorded on (`recorded_on`), which the warehouse's own name replaces."""

    folder: Path
    key: str
    recorded_on: str | None = None
    for_name: str | None = None

    def steps(self) -> list[replay.Step] | None:
        steps = replay.load(self.folder, self.key)
        if steps is None or self.recorded_on is None or self.for_name is None:
            return steps
        return replay.renamed(steps, self.recorded_on, self.for_name)


def _change_recording(db: Location, args: list[str]) -> _Recording:
    """A change build's phase, recorded on this warehouse."""
    return _Recording(target_path(db) / "kneepoint-replays", _replay_key(db, args))


def _run_phase(
    db: Location,
    args: list[str],
    progress: Progress | None,
    kept: _Recording | None,
    fits: _Fits | None = None,
    bounds: RunBounds | None = None,
) -> DbtRun:
    """One phase of a build: dbt, or the SQL dbt sent for the same phase before (`kept`, ingest/replay.py). A
    change build's is recorded whenever dbt runs it on this warehouse and succeeds; a first build's only on an
    empty warehouse of its own (_record_first_build). `fits` start while dbt runs the phase; `bounds`: see
    run_dbt."""
    also = [fits] if fits is not None else []
    if kept is None:
        return run_dbt(db, args, progress, also, bounds)
    steps = kept.steps()
    if steps is not None:
        out_of_memory = False
        con = connect(db)
        try:
            _session_settings(con, bounds)
            return DbtRun([], replay.replay(con, steps, progress))
        except replay.NotAsRecorded as exc:
            # A killed build's leftovers or a test that found rows are dbt's to handle and report.
            log.info("a recorded build phase did not go as recorded (%s): dbt runs it", exc)
            out_of_memory = exc.out_of_memory
        finally:
            try:
                if bounds is not None and bounds != change_build_bounds():
                    _session_settings(con)  # the bounds the warehouse keeps between builds (_bound_as_a_change_build)
            finally:
                con.close()
        if out_of_memory and bounds is not None:
            # Not these bounds again (run_dbt would try them first): the warehouse's size decides.
            planned = run_bounds(args, _records(db))
            _say_out_of_memory(progress, bounds, planned)
            bounds = None
    if kept.recorded_on is not None:
        return run_dbt(db, args, progress, also, bounds)  # recorded on another warehouse only
    recorder = replay.Recorder()
    run = run_dbt(db, args, progress, [recorder, *also], bounds)
    if not run.failures and recorder.replayable:
        replay.save(kept.folder, kept.key, recorder.steps())
    return run


# The name of the empty warehouse a first build is recorded on: found nowhere else in dbt's SQL, so that the
# recording is made another warehouse's by putting that one's name in its place (replay.renamed).
_FIRST_BUILD_WAREHOUSE = "kneepoint_first_build_recording"
# A warehouse name a first build's recording can take: dbt quotes it in SQL as "name" and 'name'.
_PLAIN_NAME = re.compile(r"[\w.\- ]+")


def first_builds_folder() -> Path:
    """Where first builds' recordings are kept: one set per machine (and kneepoint version), for every warehouse."""
    if explicit := os.environ.get("KNEEPOINT_DBT_TARGET"):
        return Path(explicit) / "kneepoint-first-builds"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kneepoint" / "dbt" / "first-builds"


def _first_build_recordings(
    db: Location, phases: list[list[str]], bounds: RunBounds | None, progress: Progress | None = None
) -> list[_Recording | None]:
    """The recordings of a new warehouse's first build, phase by phase: made now where this machine has none for
    this project yet (once: an empty warehouse built through dbt); None where they cannot be had (dbt then builds
    the warehouse itself)."""
    name = _catalog(db)
    if not _PLAIN_NAME.fullmatch(name):
        return [None] * len(phases)
    folder, keys = first_builds_folder(), _first_build_keys(phases)
    recordings = [_Recording(folder, key, _FIRST_BUILD_WAREHOUSE, name) for key in keys]
    if any(r.steps() is None for r in recordings):
        _say(progress, "recording a new warehouse's build, once for this kneepoint (dbt, on an empty warehouse)")
        if not _record_first_build(folder, phases, keys, bounds):
            return [None] * len(phases)
    return recordings


def _first_build_keys(phases: Sequence[list[str]]) -> list[str]:
    # The empty warehouse's, whatever folder it was made in (its name decides the SQL).
    return [_replay_key(first_builds_folder() / f"{_FIRST_BUILD_WAREHOUSE}.duckdb", args) for args in phases]


def prepare_first_builds() -> bool:
    """Record a new warehouse's first build now where this machine has no recording for this kneepoint yet, rather
    than in the first ingest that needs it: that ingest would load dbt (~75 MB) beside what it holds (25,400 small
    files into a new warehouse peaked at 365 MB recording, 271 MB sending the recording). `./dev setup` runs it.
    Whether the recordings are there."""
    folder, keys = first_builds_folder(), _first_build_keys(FULL_BUILD_PHASES)
    if all(replay.load(folder, key) is not None for key in keys):
        return True
    with FILE_CHANGE_LOCK:
        return _record_first_build(folder, list(FULL_BUILD_PHASES), keys, first_build_bounds())


def _catalog(db: Location) -> str:
    """The name DuckDB gives the warehouse's database (`w.1.duckdb`: `w`), which dbt writes into its SQL."""
    con = connect(db)
    try:
        return con.execute("SELECT current_database()").fetchall()[0][0]
    finally:
        con.close()


def _record_first_build(folder: Path, phases: list[list[str]], keys: list[str], bounds: RunBounds | None) -> bool:
    """Build an empty warehouse of its own through dbt (in a folder of this process: another may be making one
    too) and keep what dbt sent for each phase; whether every phase was kept. Its models read the raw layer
    only (and, in the second phase, the fits, which an empty warehouse has none of)."""
    scratch_folder = folder / f"making-{os.getpid()}-{threading.get_ident()}"
    scratch = scratch_folder / f"{_FIRST_BUILD_WAREHOUSE}.duckdb"
    shutil.rmtree(scratch_folder, ignore_errors=True)
    scratch_folder.mkdir(parents=True)
    try:
        con = connect(scratch)  # the raw layer, empty
        try:
            _open_window(con, _Plan("full", 0, 0, first=True), "all")
        finally:
            con.close()
        for args, key in zip(phases, keys, strict=True):
            recorder = replay.Recorder()
            run = run_dbt(scratch, args, callbacks=[recorder], bounds=bounds)
            if run.failures or not recorder.replayable:
                log.info("a first build could not be recorded (%s): dbt builds the warehouse", run.failures)
                return False
            replay.save(folder, key, recorder.steps())
        return True
    finally:
        shutil.rmtree(scratch_folder, ignore_errors=True)
        if not os.environ.get("KNEEPOINT_DBT_TARGET"):
            shutil.rmtree(target_path(scratch), ignore_errors=True)  # a folder of its own, named after its path


def _replay_key(db: Location, args: list[str]) -> str:
    """What decides a change build's SQL: the parsed project, dbt and its adapter, the warehouse's engine and name
    (_manifest_key), what the models are built from (project_hash), the raw layer's tables, the dbt arguments."""
    dialect = "postgres" if is_postgres(db) else "duckdb"
    h = hashlib.sha256()
    for part in (_manifest_key(db), project_hash(), schema.schema_hash(dialect), " ".join(args)):
        h.update(part.encode() + b"\0")
    return h.hexdigest()


def _session_settings(con: Connection, bounds: RunBounds | None = None) -> None:
    """The settings dbt's sessions run with (profiles.yml; on PostgreSQL, PGOPTIONS), on a replay's connection:
    DuckDB within `bounds`, a change build's unless told."""
    settings = _PG_SETTINGS if is_postgres(con) else _duckdb_settings(bounds or change_build_bounds())
    for name, value in settings.items():
        con.execute(f"SET {name} = '{value}'")


@cache
def _duckdb_settings(bounds: RunBounds) -> dict[str, str]:
    """profiles.yml's settings as a dbt run within `bounds` has them."""
    import yaml

    profiles = yaml.safe_load((PROJECT_ROOT / "profiles.yml").read_text())
    settings = profiles["kneepoint"]["outputs"]["local"].get("settings") or {}
    settings = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in settings.items()}
    return {**settings, "memory_limit": f"{bounds.memory_mb}MB", "threads": str(bounds.threads)}


@dataclass(frozen=True, slots=True)
class RunBounds:
    """What DuckDB may use during one dbt run (profiles.yml reads both): its memory bound and its threads."""

    memory_mb: int
    threads: int


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def change_build_bounds() -> RunBounds:
    return RunBounds(CHANGE_BUILD_MEMORY_MB, cores())


def first_build_bounds() -> RunBounds:
    """A new warehouse's first build (by its first ingest, import or upload), whatever its size: the command's
    memory stays bounded by its largest file, not by how many files it stored (run_dbt runs it again within
    run_bounds' if DuckDB runs out of memory within these)."""
    return RunBounds(SMALL_WHOLE_RUN_MEMORY_MB, threads=1)


def run_bounds(args: list[str], records: int) -> RunBounds:
    """DuckDB's bounds for the dbt run `args` over a warehouse of `records` runs and observed intervals.

    A change build reads the rows it changed: within CHANGE_BUILD_MEMORY_MB, on every core, one fio file into a
    warehouse of 10M fact rows builds in ~1.3 s and a 100 MB SQLIO log of 137,000 runs (3.4M histogram points) in
    seconds.

    A run over every row of a small warehouse (below WHOLE_RUN_FROM_RECORDS) is bounded lower, within
    SMALL_WHOLE_RUN_MEMORY_MB on one thread: DuckDB's hash tables and sorts are per thread, and what they hold adds
    to dbt's modules and parsed project, which only such a run loads in the process (~75 MB; change builds send
    dbt's recorded SQL). Into a new warehouse, for the whole ingest: a 20 MB SQLIO log of 27,384 runs, 319 MB
    (358 MB within 256 MB on two threads); 100 MB, 431 MB (499 MB); a week of Perfmon counters (322,560
    intervals), 346 MB (487 MB; 374 MB within 128 MB). The price is time where the warehouse is not new:
    `kneepoint build` of 450,000 runs took ~27 s instead of 17.7 s.

    A run over every row of a larger one sorts and joins whole tables, which spill to disk within that bound (1M
    fact rows: 29.1 s within 256 MB, 25.1 s within 4 GB; 10M: 274 s within 512 MB, 153 s within 4 GB): from
    WHOLE_RUN_FROM_RECORDS it may use a quarter of the machine's memory, within WHOLE_RUN_MEMORY_MB, on every
    core. (A new warehouse's first build is bounded as a small one's whatever its size: first_build_bounds.)"""
    if any(list(args) == phase for phase in _CHANGE_PHASES):
        return change_build_bounds()
    if records < WHOLE_RUN_FROM_RECORDS:
        return RunBounds(SMALL_WHOLE_RUN_MEMORY_MB, threads=1)
    low, high = WHOLE_RUN_MEMORY_MB
    try:
        machine_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows): the least
        return RunBounds(low, cores())
    return RunBounds(min(max(machine_mb // 4, low), high), cores())


def _records(db: Location) -> int:
    """The warehouse's runs and observed intervals, the rows its largest models grow with (DuckDB counts a table's
    rows from its metadata)."""
    con = connect(db)
    try:
        return con.execute(
            "SELECT (SELECT count(*) FROM raw_io_records) + (SELECT count(*) FROM raw_intervals)"
        ).fetchall()[0][0]
    finally:
        con.close()


def run_dbt(
    db: Location,
    args: list[str],
    progress: Progress | None = None,
    callbacks: list[Callable] | None = None,
    bounds: RunBounds | None = None,
) -> DbtRun:
    """Run one dbt command (`["build", ...]`, `["docs", "generate"]`) against `db` with the kept manifest;
    `callbacks`: more dbt event callbacks (a replay.Recorder, the build's _Fits). DuckDB runs within `bounds`
    (first_build_bounds) or else run_bounds'; if it runs out of memory within `bounds`, dbt runs the command again
    within run_bounds' (a full refresh is built again whole: its models read only the raw layer).

    dbtRunner is not safe to run twice at once in one process (Streamlit serves sessions on threads): callers
    hold FILE_CHANGE_LOCK, which build_models takes."""
    planned = change_build_bounds() if is_postgres(db) else run_bounds(args, _records(db))
    run = _invoke_dbt(db, args, bounds or planned, progress, callbacks)
    if bounds is not None and bounds != planned and any(OUT_OF_MEMORY in f for f in run.failures):
        _say_out_of_memory(progress, bounds, planned)
        run = _invoke_dbt(db, args, planned, progress, callbacks)
    return run


def _say_out_of_memory(progress: Progress | None, tried: RunBounds, next_bounds: RunBounds) -> None:
    _say(
        progress,
        f"DuckDB ran out of memory within {tried.memory_mb} MB: building again within {next_bounds.memory_mb} MB",
    )


def _invoke_dbt(
    db: Location, args: list[str], bounds: RunBounds, progress: Progress | None, callbacks: list[Callable] | None
) -> DbtRun:
    from dbt.cli.main import dbtRunner

    callbacks = [_progress_callback(progress), *(callbacks or [])]
    with FILE_CHANGE_LOCK, _warehouse_env(db, bounds):
        manifest = _manifest(db)
        # run_results.json and a 1 MB manifest.json after every build: nothing here reads them
        quiet = ["--no-write-json"] if args[0] in ("build", "test") else []
        res = dbtRunner(manifest=manifest, callbacks=callbacks).invoke([*args, *_common_args(db), *quiet])
        if not is_postgres(db):
            if bounds != change_build_bounds():
                _bound_as_a_change_build(db)
            _release_duckdb(failed=not res.success)
    failures: list[str] = []
    if res.exception is not None:
        failures.append(f"{type(res.exception).__name__}: {res.exception}")
    results = getattr(res.result, "results", None) or []
    for r in results:
        status = str(getattr(r, "status", ""))
        if status.lower() in ("error", "fail", "runtime error"):
            failures.append(f"{r.node.name}: {status}: {getattr(r, 'message', '')}")
    if not res.success and not failures:
        failures.append("dbt did not succeed (no detail)")
    seconds = {r.node.unique_id: round(float(r.execution_time or 0), 4) for r in results if hasattr(r, "node")}
    return DbtRun(failures, seconds)


def _common_args(db: Location) -> list[str]:
    target = target_path(db)
    return [
        "--target",
        "team" if is_postgres(db) else "local",
        "--project-dir",
        str(PROJECT_ROOT),
        "--profiles-dir",
        str(PROJECT_ROOT),
        "--target-path",
        str(target),
        "--log-path",
        str(target / "logs"),
        "--quiet",
        "--no-use-colors",
        "--no-send-anonymous-usage-stats",
        "--no-version-check",
    ]


def target_path(db: Location | str | os.PathLike[str]) -> Path:
    """dbt's target folder for this warehouse: $KNEEPOINT_DBT_TARGET, else a cache folder of the user's."""
    if explicit := os.environ.get("KNEEPOINT_DBT_TARGET"):
        return Path(explicit)
    db = locate(db)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    name = db.key if isinstance(db, postgres.Target) else str(db)
    return cache / "kneepoint" / "dbt" / hashlib.sha256(name.encode()).hexdigest()[:16]


# DuckDB's memory bound for dbt's sessions, in MB (run_bounds): a change build's, a small warehouse's run over every
# row, and the range of a run's over every row of a large warehouse (fct_latency_distribution needed 1500 MB
# at 10M fact rows; 4 GB built those as fast as 6 GB did). A change build within 128 MB at 10M fact rows: an
# ingest's 1.2-1.4 s (1.1-1.3 within 256 MB), a relabel's 2.2 s (2.3-2.8), a delete's 3.0 s (2.6); and an ingest
# with its build stays within twice its file + 300 MB (a week's Perfmon log, 35 MB, into the sample warehouse:
# 357-369 MB, target 370; 426 within 256 MB).
CHANGE_BUILD_MEMORY_MB = 128
SMALL_WHOLE_RUN_MEMORY_MB = 96
WHOLE_RUN_MEMORY_MB = (1500, 4096)
WHOLE_RUN_FROM_RECORDS = 500_000  # runs and observed intervals

# dbt's sessions on PostgreSQL (libpq passes them to the server): sorts and hashes of a build in memory, and no JIT
# compilation (it cost ~1 s per statement and paid off in none).
_PG_SETTINGS = {"work_mem": "256MB", "jit": "off"}


@contextmanager
def _warehouse_env(db: Location, bounds: RunBounds | None = None) -> Iterator[None]:
    """profiles.yml reads the warehouse from these variables (KNEEPOINT_DB: the DuckDB file, KNEEPOINT_DBT_MEMORY_MB
    and KNEEPOINT_DBT_DUCKDB_THREADS its bounds, a change build's unless told; KNEEPOINT_PG_*: the PostgreSQL server,
    set for the run only, in this process only); dbt sends nothing anywhere."""
    if isinstance(db, postgres.Target):
        values = {
            "KNEEPOINT_PG_HOST": db.host,
            "KNEEPOINT_PG_PORT": str(db.port),
            "KNEEPOINT_PG_USER": db.user,
            "KNEEPOINT_PG_PASSWORD": db.password,
            "KNEEPOINT_PG_DBNAME": db.dbname,
            "KNEEPOINT_PG_SCHEMA": postgres.SCHEMA,
            "KNEEPOINT_PG_SSLMODE": db.connect_kwargs().get("sslmode", "prefer"),
            "PGOPTIONS": " ".join(f"-c {k}={v}" for k, v in _PG_SETTINGS.items()),
        }
    else:
        bounds = bounds or change_build_bounds()
        values = {
            "KNEEPOINT_DB": str(Path(db).resolve()),
            "KNEEPOINT_DBT_MEMORY_MB": str(bounds.memory_mb),
            "KNEEPOINT_DBT_DUCKDB_THREADS": str(bounds.threads),
        }
    values["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "false"
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    # dbt logs this process's command line as its "invocation_command" (dbt.log): `kneepoint --db
    # postgresql://user:password@…` would put the password there. It sees the line masked.
    argv = sys.argv[:]
    sys.argv[:] = [postgres.mask(a) for a in argv]
    try:
        yield
    finally:
        sys.argv[:] = argv
        for k, v in saved.items():
            if os.environ.get(k) != values[k]:
                continue  # changed meanwhile by someone else (a test's monkeypatch undone): theirs now
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# Parsed projects of this process, by _manifest_key: the app builds many times, each without parsing.
_MANIFESTS: dict[str, Any] = {}
_KEPT_MANIFEST_FILES = 8


def _manifest(db: Location) -> Any:
    """The parsed project for this warehouse (dbt's nodes name the database after the warehouse file's stem), from
    this process, from the pickle a previous command left, or parsed now (dbt's partial parsing helps)."""
    from dbt.cli.main import dbtRunner

    key = _manifest_key(db)
    if key in _MANIFESTS:
        return _MANIFESTS[key]
    folder = target_path(db) / "kneepoint-manifests"
    path = folder / f"{key[:32]}.pickle"
    manifest = None
    if path.is_file():
        try:
            with open(path, "rb") as fh:
                stored_key, fields = pickle.load(fh)
            manifest = _manifest_from_fields(fields) if stored_key == key else None
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, ValueError, TypeError):
            manifest = None  # written by another dbt, or cut short: parse again
    if manifest is None:
        res = dbtRunner().invoke(["parse", *_common_args(db)])
        if not res.success or res.result is None:
            raise RuntimeError(f"dbt could not parse the project: {res.exception}")
        manifest = res.result
        _save_manifest(folder, path, key, manifest)
    _MANIFESTS.clear()  # one warehouse at a time in practice; a test session opens hundreds
    _MANIFESTS[key] = manifest
    return manifest


def _save_manifest(folder: Path, path: Path, key: str, manifest: Any) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.part")
    with open(tmp, "wb") as fh:
        pickle.dump((key, _manifest_fields(manifest)), fh, protocol=pickle.HIGHEST_PROTOCOL)
    tmp.replace(path)
    for old in sorted(folder.glob("*.pickle"), key=lambda p: p.stat().st_mtime)[:-_KEPT_MANIFEST_FILES]:
        old.unlink(missing_ok=True)


def _manifest_fields(manifest: Any) -> dict[str, Any]:
    """The manifest's content, without its lookups and lock (rebuilt on use). dbt 1.11's own Manifest.__reduce_ex__
    lists its fields out of order (it misses `fixtures`), so an unpickled Manifest holds lookups in the wrong
    fields: the manifest is pickled as its fields and made again from them."""
    import dataclasses

    return {f.name: getattr(manifest, f.name) for f in dataclasses.fields(manifest) if _kept_field(f)}


def _manifest_from_fields(fields: dict[str, Any]) -> Any:
    from dbt.contracts.graph.manifest import Manifest

    return Manifest(**fields)


def _kept_field(f: Any) -> bool:
    return f.init and not f.name.startswith("_")


def _manifest_key(db: Location) -> str:
    from importlib.metadata import version

    h = hashlib.sha256()
    # dbt names each node's database after the warehouse (dbt-duckdb: the file's stem; dbt-postgres: the
    # database) and writes that name into every node: a manifest fits any warehouse of the same name and engine.
    if isinstance(db, postgres.Target):
        parts = ("postgres", version("dbt-postgres"), db.dbname, postgres.SCHEMA)
    else:
        parts = ("duckdb", version("dbt-duckdb"), Path(db).stem)
    for part in (_files_hash(_PARSED), version("dbt-core"), *parts):
        h.update(part.encode() + b"\0")
    return h.hexdigest()


def _progress_callback(progress: Progress | None) -> Callable[[Any], None]:
    """dbt's events as `progress("building fct_io_results (3 of 22)")`. dbt calls it from its worker threads; what
    the caller does with it (a terminal line, a page's progress bar) must not fail the build, so its errors are
    dropped (logged)."""

    def on_event(event: Any) -> None:
        if progress is None or event.info.name != "LogStartLine":
            return
        data = event.data
        node = data.node_info.node_name if data.node_info else data.description
        verb = "testing" if data.description.startswith("test") else "building"
        try:
            progress(f"{verb} {node} ({data.index} of {data.total})")
        except Exception:  # noqa: BLE001 - showing progress is not the build
            log.warning("build progress could not be shown", exc_info=True)

    return on_event


def _bound_as_a_change_build(db: Location) -> None:
    """After a run over every row, bound DuckDB as a change build leaves it (its memory, every core): the database
    is this process's, shared with the caller's connections (the app's, which keep serving pages after the build)."""
    bounds = change_build_bounds()
    con = connect(db)
    try:
        con.execute(f"SET memory_limit = '{bounds.memory_mb}MB'")
        con.execute(f"SET threads = {bounds.threads}")
    finally:
        con.close()


def _release_duckdb(failed: bool) -> None:
    """dbt-duckdb keeps its DuckDB instance (and the file's lock) open after the run; let go of it, so a
    long-lived process such as the app does not hold the warehouse after a build. After a failure a traceback
    may still hold one of dbt's cursors: collected then (a full collection costs ~0.15 s beside the manifest)."""
    import gc

    from dbt.adapters.duckdb.connections import DuckDBConnectionManager

    with DuckDBConnectionManager._LOCK:
        env, DuckDBConnectionManager._ENV = DuckDBConnectionManager._ENV, None
    if env is not None:
        env.close()
    if failed:
        gc.collect()
