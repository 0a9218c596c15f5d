"""ingest/build.py: what a build covers (its cut-off), when it is incremental and when it rebuilds everything, and
that dbt sends nothing anywhere."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import duckdb
import pytest

from kneepoint.ingest import build
from kneepoint.ingest.build import build_models, models_behind
from kneepoint.ingest.formats import parse_bytes
from kneepoint.ingest.warehouse import connect, store_file
from tests.helpers import SAMPLE

LATE = SAMPLE / "fio" / "seqread-128k-jobs4.json"


def _store(db: Path, path: Path, disk: str) -> str:
    """A sample file with a newline more: bytes the sample warehouse does not hold yet."""
    import hashlib

    data = path.read_bytes() + b"\n"
    con = connect(db)
    try:
        return store_file(con, path.name, data, hashlib.sha256(data).hexdigest(), parse_bytes(data), disk=disk).file_id
    finally:
        con.close()


def _count(db: Path, sql: str) -> int:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()[0][0]
    finally:
        con.close()


@pytest.fixture
def db(sample_warehouse: Path, tmp_path: Path) -> Path:
    path = tmp_path / "w.duckdb"
    shutil.copy(sample_warehouse, path)
    return path


def test_a_file_stored_while_a_build_runs_waits_for_the_next_build(db: Path) -> None:
    """The build read its cut-off before the file committed: none of the file's rows is in any model of that build
    (half of them would fail dbt's tests), the state says the models are behind, the next build takes it."""
    first = _store(db, SAMPLE / "fio" / "seqread-128k-jobs1.json", "before")  # something for the build to do
    stored: list[str] = []

    def meanwhile(step: str) -> None:
        if not stored and step.startswith("building fct_io_results"):
            # another session of this process commits a file while dbt builds
            thread = threading.Thread(target=lambda: stored.append(_store(db, LATE, "during")))
            thread.start()
            thread.join()

    result = build_models(db, progress=meanwhile)
    assert result.success and result.kind == "changes", result.failures
    (late,) = stored
    for mart in ("fct_io_results", "dim_files", "fct_latency_distribution"):
        assert _count(db, f"SELECT count(*) FROM {mart} WHERE file_id = '{late}'") == 0, mart
    assert _count(db, f"SELECT count(*) FROM dim_files WHERE file_id = '{first}'") == 1
    con = connect(db)
    try:
        assert models_behind(con)
    finally:
        con.close()
    again = build_models(db)
    assert again.success and again.kind == "changes" and again.changes == 1
    assert _count(db, f"SELECT count(*) FROM dim_files WHERE file_id = '{late}'") == 1


def test_nothing_changed_nothing_built(db: Path) -> None:
    result = build_models(db)
    assert result.success and result.kind == "none"


def test_another_model_definition_rebuilds_everything(db: Path, monkeypatch) -> None:
    monkeypatch.setattr(build, "project_hash", lambda: "a later kneepoint's models")
    con = connect(db)
    try:
        assert models_behind(con)
    finally:
        con.close()
    result = build_models(db)
    assert result.success and result.kind == "full"


def test_a_model_table_gone_rebuilds_everything(db: Path) -> None:
    con = connect(db)
    try:
        con.execute("DROP TABLE mart_usl_fits")
    finally:
        con.close()
    result = build_models(db)
    assert result.success and result.kind == "full"
    assert _count(db, "SELECT count(*) FROM mart_usl_fits") > 0


def test_dbt_sends_nothing_anywhere(db: Path, monkeypatch) -> None:
    from dbt import tracking

    sent: list[object] = []
    monkeypatch.setattr(tracking.emitter, "input", lambda payload: sent.append(payload))
    monkeypatch.delenv("DBT_SEND_ANONYMOUS_USAGE_STATS", raising=False)
    result = build_models(db, full_refresh=True)
    assert result.success
    assert tracking.active_user is not None and tracking.active_user.do_not_track
    assert sent == []


def test_warm_up_records_the_change_build_and_changes_nothing(db: Path, capfd, monkeypatch, tmp_path) -> None:
    """What the app does as it starts (ingest.build.warm_up): the warehouse's change build recorded (a change
    build of no change), nothing printed, no mart row changed, and the file let go, so another process may write to
    it at once; the first Store then builds without dbt."""
    import subprocess
    import sys

    monkeypatch.setenv("KNEEPOINT_DBT_TARGET", str(tmp_path / "own-target"))  # no recording from other tests
    state = _count(db, "SELECT max(built_seq) FROM kneepoint_build_state")
    marts = _marts(db)
    assert not build._change_build_recorded(build.locate(db))
    assert build.warm_up(db) > 0
    assert build._change_build_recorded(build.locate(db))
    assert build.warm_up(db) == 0.0  # nothing left to prepare
    assert capfd.readouterr().out == ""
    assert _count(db, "SELECT max(built_seq) FROM kneepoint_build_state") == state
    assert _marts(db) == marts
    other = subprocess.run(
        [sys.executable, "-c", f"import duckdb; duckdb.connect({str(db)!r}).execute('CHECKPOINT')"],
        capture_output=True,
        text=True,
    )
    assert other.returncode == 0, other.stderr
    _store(db, LATE, "late disk")
    real_run_dbt = build.run_dbt
    monkeypatch.setattr(build, "run_dbt", _no_dbt)
    assert build_models(db).kind == "changes"
    monkeypatch.setattr(build, "run_dbt", real_run_dbt)
    _equal_to_a_full_refresh(db, tmp_path)


def test_warm_up_of_a_warehouse_whose_models_are_behind_loads_dbt(db: Path, monkeypatch, tmp_path) -> None:
    """Models behind their raw layer: the next build (a Store's) records; the warm-up loads dbt and the project."""
    monkeypatch.setenv("KNEEPOINT_DBT_TARGET", str(tmp_path / "own-target"))
    _store(db, LATE, "late disk")
    build._MANIFESTS.clear()
    build.warm_up(db)
    assert build._manifest_key(build.locate(db)) in build._MANIFESTS
    assert not build._change_build_recorded(build.locate(db))
    assert build_models(db).kind == "changes"
    assert build._change_build_recorded(build.locate(db))


# -- kept change builds (ingest/replay.py) ---------------------------------------------------------------------------


def _marts(db: Path) -> dict[str, list[tuple]]:
    from tests.test_incremental import MARTS

    con = duckdb.connect(str(db), read_only=True)
    try:
        return {m: con.execute(f"SELECT * FROM {m} ORDER BY ALL").fetchall() for m in MARTS}
    finally:
        con.close()


def _equal_to_a_full_refresh(db: Path, tmp_path: Path) -> None:
    from tests.test_incremental import differences

    copy = tmp_path / "full" / "w.duckdb"
    copy.parent.mkdir()
    shutil.copy(db, copy)
    assert build_models(copy, full_refresh=True).success
    assert not differences(_marts(db), _marts(copy))


def _no_dbt(*args, **kwargs):
    raise AssertionError("dbt ran where the recorded change build should have")


def test_a_change_build_runs_dbt_once_then_sends_the_sql_it_recorded(db: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("KNEEPOINT_DBT_TARGET", str(tmp_path / "own-target"))  # no recording from other tests
    _store(db, LATE, disk="recorded")
    first = build_models(db)
    assert first.success and first.kind == "changes"
    recorded = list((build.target_path(db) / "kneepoint-replays").glob("*.json"))
    assert len(recorded) == 2  # the two phases, before and after the USL fits

    # A relabel moves the file's rows between two series, and another file arrives: dbt is not needed for either.
    real_run_dbt = build.run_dbt
    monkeypatch.setattr(build, "run_dbt", _no_dbt)
    file_id = _store(db, SAMPLE / "fio" / "randread-4k-jobs4.json", disk="replayed")
    con = connect(db)
    try:
        from kneepoint.ingest.warehouse import relabel_file

        relabel_file(con, file_id, disk="relabelled")
    finally:
        con.close()
    said: list[str] = []
    second = build_models(db, progress=said.append)
    assert second.success and second.kind == "changes" and second.changes == 2
    assert "building fct_io_results" in " ".join(said) and "testing assert_no_file_rows_twice" in " ".join(said)
    assert _count(db, "SELECT count(*) FROM dim_disks WHERE disk = 'relabelled'") == 1
    monkeypatch.setattr(build, "run_dbt", real_run_dbt)
    _equal_to_a_full_refresh(db, tmp_path)


def _leave_a_table(db: Path, name: str) -> None:
    """What a build killed half-way leaves: a table of that name."""
    con = connect(db)
    try:
        con.execute(f"CREATE TABLE {name} AS SELECT 1 AS leftover")
    finally:
        con.close()


def _dbt_runs(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The arguments of each dbt run from now on."""
    ran: list[list[str]] = []
    real = build.run_dbt
    monkeypatch.setattr(build, "run_dbt", lambda db, args, *a, **k: ran.append(args) or real(db, args, *a, **k))
    return ran


def test_a_recorded_build_that_no_longer_fits_hands_its_phase_to_dbt(db: Path, monkeypatch) -> None:
    _store(db, LATE, disk="recorded")
    assert build_models(db).success
    # What a build killed between creating a table and renaming it leaves: the recorded SQL cannot create it again.
    _leave_a_table(db, "dim_disks__dbt_tmp")
    ran = _dbt_runs(monkeypatch)
    _store(db, SAMPLE / "fio" / "randread-4k-jobs4.json", disk="replayed")
    result = build_models(db)
    assert result.success and result.kind == "changes"
    assert ran and "change_points" in ran[0]  # dbt ran the phase the leftover broke
    assert _count(db, "SELECT count(*) FROM dim_disks WHERE disk = 'replayed'") == 1


def test_a_test_that_fails_in_a_recorded_build_is_reported_by_dbt(db: Path) -> None:
    _store(db, LATE, disk="recorded")
    assert build_models(db).success
    file_id = _store(db, SAMPLE / "fio" / "randread-4k-jobs4.json", disk="replayed")
    con = connect(db)
    try:  # a unit no table converts: the change's guard finds it
        con.execute("UPDATE raw_io_records SET throughput_unit = 'MB/min' WHERE file_id = ?", [file_id])
    finally:
        con.close()
    result = build_models(db)
    assert not result.success
    assert any(f.startswith("assert_units_known") for f in result.failures), result.failures


def test_a_run_over_every_row_is_bounded_for_memory_in_a_small_warehouse_and_for_speed_in_a_large_one() -> None:
    change, full = build._CHANGE_PHASES[0], ["build", "--full-refresh"]
    large = build.WHOLE_RUN_FROM_RECORDS
    change_build = build.change_build_bounds()
    assert change_build == build.RunBounds(build.CHANGE_BUILD_MEMORY_MB, build.cores())
    assert build.run_bounds(change, large * 10) == change_build
    assert build.run_bounds(full, large - 1) == build.RunBounds(build.SMALL_WHOLE_RUN_MEMORY_MB, threads=1)
    bounds = build.run_bounds(full, large)
    assert bounds.memory_mb >= build.WHOLE_RUN_MEMORY_MB[0] > build.CHANGE_BUILD_MEMORY_MB
    assert bounds.threads == build.cores()


def _bounds_of_each_dbt_run(monkeypatch: pytest.MonkeyPatch) -> list[build.RunBounds]:
    """The bounds DuckDB gets in each dbt run from now on, in order."""
    seen: list[build.RunBounds] = []
    invoke = build._invoke_dbt

    def spied(db: object, args: list[str], bounds: build.RunBounds, *rest: object) -> build.DbtRun:
        seen.append(bounds)
        return invoke(db, args, bounds, *rest)

    monkeypatch.setattr(build, "_invoke_dbt", spied)
    return seen


def _settings_of_each_replay(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """DuckDB's memory limit and threads in each recorded phase sent without dbt from now on, in order."""
    seen: list[tuple[str, int]] = []
    send = build.replay.replay

    def spied(con: duckdb.DuckDBPyConnection, *args: object, **kwargs: object) -> object:
        seen.append(_duckdb_bounds(con))
        return send(con, *args, **kwargs)

    monkeypatch.setattr(build.replay, "replay", spied)
    return seen


def _as_duckdb_shows(bounds: build.RunBounds) -> tuple[str, int]:
    con = duckdb.connect()
    try:
        con.execute(f"SET memory_limit = '{bounds.memory_mb}MB'")
        con.execute(f"SET threads = {bounds.threads}")
        return _duckdb_bounds(con)
    finally:
        con.close()


def test_a_new_warehouses_first_build_is_bounded_as_its_ingest_whatever_its_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first build is the first ingest's (or import's, or upload's): however many files that stored, it runs
    within first_build_bounds, so the command's memory does not grow with them (a 25,400-file first ingest peaked at
    ~1 GB within a large warehouse's bounds). `kneepoint build` afterwards takes the bounds of the warehouse's size."""
    monkeypatch.setenv("KNEEPOINT_DBT_TARGET", str(tmp_path / "own-target"))  # no recording from other tests
    monkeypatch.setattr(build, "WHOLE_RUN_FROM_RECORDS", 0)  # this small warehouse counts as large
    large = build.run_bounds(["build", "--full-refresh"], 0)
    assert large != build.first_build_bounds()
    db = tmp_path / "new.duckdb"
    _store(db, LATE, "a new disk")
    seen = _bounds_of_each_dbt_run(monkeypatch)
    replayed = _settings_of_each_replay(monkeypatch)
    result = build_models(db)
    assert result.success and result.kind == "full", result.failures
    # both phases: dbt, recording them on an empty warehouse; then this one's, sent without dbt
    assert seen == [build.first_build_bounds()] * 2
    assert replayed == [_as_duckdb_shows(build.first_build_bounds())] * 2
    seen.clear()
    build_models(db, full_refresh=True, all_tests=True).raise_for_failure()
    assert seen and set(seen) == {large}


def test_a_first_build_that_runs_out_of_memory_runs_again_within_the_warehouses_bounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Some warehouse's first build may need more than first_build_bounds: the dbt run that DuckDB could not fit
    runs again within the bounds of the warehouse's size, and the build succeeds (saying why it took longer)."""
    monkeypatch.setenv("KNEEPOINT_DBT_TARGET", str(tmp_path / "own-target"))
    seen, large = _first_build_within(tmp_path, monkeypatch, memory_mb=1)
    assert seen[:2] == [build.RunBounds(memory_mb=1, threads=1), large]


def test_a_replayed_first_build_that_runs_out_of_memory_goes_to_dbt_within_the_warehouses_bounds_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first build sent as recorded (no dbt) that DuckDB cannot fit within first_build_bounds is built by dbt
    within the bounds of the warehouse's size, not within the same bounds first (a run bound to fail), and says so."""
    monkeypatch.setenv("KNEEPOINT_DBT_TARGET", str(tmp_path / "own-target"))
    recorded = tmp_path / "recorded.duckdb"
    _store(recorded, LATE, "the first warehouse")
    assert build_models(recorded).success  # records this machine's first builds, within the usual bounds
    seen, large = _first_build_within(tmp_path, monkeypatch, memory_mb=2)
    assert seen and set(seen) == {large}, seen


def _first_build_within(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, memory_mb: int
) -> tuple[list[build.RunBounds], build.RunBounds]:
    """A new warehouse's first build with first_build_bounds lowered to `memory_mb`, the warehouse counted as
    large: checks that it succeeds and says it ran out of memory; the bounds of each dbt run, and a large
    warehouse's."""
    monkeypatch.setattr(build, "WHOLE_RUN_FROM_RECORDS", 0)
    monkeypatch.setattr(build, "first_build_bounds", lambda: build.RunBounds(memory_mb=memory_mb, threads=1))
    large = build.run_bounds(["build", "--full-refresh"], 0)
    db = tmp_path / "new.duckdb"
    file_id = _store(db, LATE, "a new disk")
    seen = _bounds_of_each_dbt_run(monkeypatch)
    said: list[str] = []
    result = build_models(db, progress=said.append)
    assert result.success and result.kind == "full", result.failures
    out_of_memory = f"ran out of memory within {memory_mb} MB: building again within {large.memory_mb} MB"
    assert any(out_of_memory in s for s in said), said
    assert _count(db, f"SELECT count(*) FROM dim_files WHERE file_id = '{file_id}'") == 1
    assert not models_behind(db)
    return seen, large


def _duckdb_bounds(con: duckdb.DuckDBPyConnection) -> tuple[str, int]:
    return con.execute("SELECT current_setting('memory_limit'), current_setting('threads')").fetchall()[0]


@pytest.mark.parametrize("large", [True, False], ids=["large warehouse", "small warehouse"])
def test_a_full_build_leaves_duckdb_bounded_as_a_change_build_does(
    db: Path, monkeypatch: pytest.MonkeyPatch, large: bool
) -> None:
    """A run over every row is bounded otherwise than a change build (run_bounds: more memory in a large warehouse,
    one thread in a small one); the database is the process's, shared with the caller's connections (the app's), so
    afterwards it is bounded as a change build leaves it."""
    if large:
        monkeypatch.setattr(build, "WHOLE_RUN_FROM_RECORDS", 0)  # this small warehouse counts as large
    bounds = build.change_build_bounds()
    assert build.run_bounds(["build", "--full-refresh"], 0) != bounds
    change_build = duckdb.connect()
    change_build.execute(f"SET memory_limit = '{bounds.memory_mb}MB'")
    change_build.execute(f"SET threads = {bounds.threads}")
    held = connect(db)  # the app's connection: the same DuckDB database as dbt's sessions
    try:
        build_models(db, full_refresh=True, all_tests=True).raise_for_failure()
        after = _duckdb_bounds(held)
    finally:
        held.close()
    assert after == _duckdb_bounds(change_build)


def test_a_fit_that_fails_on_its_thread_fails_the_build(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The USL fits run on a thread beside dbt's first phase (_Fits): what a fit raises reaches the build's caller,
    and the models stay behind, so the next command builds again."""

    def failing_refit(*args: object, **kwargs: object) -> float:
        raise RuntimeError("the fit failed")

    _store(db, LATE, "a new disk")
    monkeypatch.setattr(build, "refit", failing_refit)
    with pytest.raises(RuntimeError, match="the fit failed"):
        build_models(db, all_tests=True)  # through dbt: the fits start on their thread
    assert not any(t.name == "kneepoint-fits" for t in threading.enumerate())
    assert models_behind(db)
    monkeypatch.undo()
    build_models(db).raise_for_failure()
    assert not models_behind(db)


# -- a new warehouse's first build, recorded once per machine --------------------------------------------------------


def _models(db: Path) -> dict[str, list[tuple]]:
    """Every table and view dbt built, row by row."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        names = [
            n
            for (n,) in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_name NOT LIKE 'raw\\_%' ESCAPE '\\' "
                "AND table_name NOT LIKE 'kneepoint\\_%' ESCAPE '\\' ORDER BY table_name"
            ).fetchall()
        ]
        return {n: con.execute(f'SELECT * FROM "{n}" ORDER BY ALL').fetchall() for n in names}
    finally:
        con.close()


def _recording_dbt(monkeypatch: pytest.MonkeyPatch) -> list[build.replay.Recorder]:
    """A recorder beside each dbt run from now on."""
    recorders: list[build.replay.Recorder] = []
    run_dbt = build.run_dbt

    def recorded(db, args, progress=None, callbacks=None, bounds=None):
        recorders.append(build.replay.Recorder())
        return run_dbt(db, args, progress, [*(callbacks or []), recorders[-1]], bounds)

    monkeypatch.setattr(build, "run_dbt", recorded)
    return recorders


def test_a_new_warehouses_first_build_sends_what_dbt_would_without_dbt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first build of a new warehouse is recorded once, on an empty warehouse of its own, and sent to every new
    warehouse with that one's name in its place: statement for statement what dbt sends for it, and the same
    models. The warehouse is named `fio`, a word the models' SQL holds: only the name dbt writes is replaced."""
    monkeypatch.setenv("KNEEPOINT_DBT_TARGET", str(tmp_path / "own-target"))
    paths = [SAMPLE / "fio" / "seqread-128k-jobs1.json", LATE, SAMPLE / "sqlio" / "synthetic-p10-sweep.txt"]
    by_dbt, replayed = tmp_path / "by-dbt" / "fio.duckdb", tmp_path / "replayed" / "fio.duckdb"
    third = tmp_path / "third" / "warehouse.of.2026.duckdb"
    by_dbt.parent.mkdir()
    for path in paths:
        _store(by_dbt, path, "a new disk")
    for db in (replayed, third):  # the same raw layer, stored at the same moment
        db.parent.mkdir()
        shutil.copy(by_dbt, db)

    # dbt builds the first warehouse itself, as it did before first builds were recorded
    with monkeypatch.context() as m:
        m.setattr(build, "_first_build_recordings", lambda db, phases, *_: [None] * len(phases))
        recorders = _recording_dbt(m)
        assert build_models(by_dbt).success
    dbt_sent = [step.statements for r in recorders for step in r.steps()]

    # the second: dbt builds an empty warehouse and records it, then this one's build is sent without dbt
    assert build_models(replayed).success
    kept = build._first_build_recordings(build.locate(replayed), _first_build_phases(), None)
    assert all(r is not None and r.recorded_on == build._FIRST_BUILD_WAREHOUSE for r in kept)
    sent = [step.statements for r in kept for step in r.steps()]
    assert sent == dbt_sent
    assert _models(replayed) == _models(by_dbt)

    # a third new warehouse, whose database DuckDB names after its file's first dotted part: no dbt at all
    monkeypatch.setattr(build, "run_dbt", _no_dbt)
    result = build_models(third)
    assert result.success and result.kind == "full"
    assert not models_behind(third)
    assert _models(third) == _models(by_dbt)


def _first_build_phases() -> list[list[str]]:
    args = ["build", "--full-refresh"]
    return [[*args, "--selector", "change_full_points"], [*args, "--selector", "change_full_fits"]]


def test_first_builds_recorded_ahead_spare_the_first_ingest_dbt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`./dev setup` records a new warehouse's first build (prepare_first_builds): the first ingest of this machine
    then sends it without loading dbt; recorded already, nothing is done again."""
    monkeypatch.setenv("KNEEPOINT_DBT_TARGET", str(tmp_path / "own-target"))
    assert build.prepare_first_builds()
    recorded = {p.name: p.stat().st_mtime_ns for p in build.first_builds_folder().glob("*.json")}
    assert len(recorded) == 2
    monkeypatch.setattr(build, "run_dbt", _no_dbt)
    assert build.prepare_first_builds()  # there: no dbt run
    assert {p.name: p.stat().st_mtime_ns for p in build.first_builds_folder().glob("*.json")} == recorded
    db = tmp_path / "first.duckdb"
    file_id = _store(db, LATE, "a new disk")
    said: list[str] = []
    result = build_models(db, progress=said.append)
    assert result.success and result.kind == "full", result.failures
    assert not any("recording" in s for s in said), said
    assert _count(db, f"SELECT count(*) FROM dim_files WHERE file_id = '{file_id}'") == 1


def test_a_first_build_that_does_not_go_as_recorded_is_built_by_dbt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a first build killed half-way leaves (a model's table, no build state): the recorded SQL cannot create
    it again, so dbt builds the warehouse, and the recording, made on an empty warehouse, stays as it was."""
    monkeypatch.setenv("KNEEPOINT_DBT_TARGET", str(tmp_path / "own-target"))
    first = tmp_path / "first.duckdb"
    _store(first, LATE, "a new disk")
    assert build_models(first).success  # records
    folder = build.first_builds_folder()
    recorded = {p.name: p.read_bytes() for p in folder.glob("*.json")}
    assert len(recorded) == 2

    db = tmp_path / "killed.duckdb"
    _store(db, LATE, "a new disk")
    _leave_a_table(db, "dim_disks")
    ran = _dbt_runs(monkeypatch)
    result = build_models(db)
    assert result.success and result.kind == "full", result.failures
    assert ran and "change_full_points" in ran[0]
    assert _count(db, "SELECT count(*) FROM dim_disks WHERE disk = 'a new disk'") == 1
    assert {p.name: p.read_bytes() for p in folder.glob("*.json")} == recorded


def test_a_warehouse_whose_name_sql_would_have_to_escape_is_built_by_dbt(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("KNEEPOINT_DBT_TARGET", str(tmp_path / "own-target"))
    for name in ("it's.duckdb", 'a "quoted" one.duckdb'):
        assert build._first_build_recordings(tmp_path / name, _first_build_phases(), None) == [None, None]
    assert not build.first_builds_folder().exists()  # nothing was made for them
