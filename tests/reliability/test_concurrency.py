"""Concurrency without a browser: two processes wanting the warehouse at once (two `kneepoint ingest`s, or the
command line while the app's process stores), and sessions of one app process storing at once (Streamlit runs
each session's script on its own thread). Each side waits and succeeds, or fails at once with a clear "warehouse
busy" naming the holder; no file is lost, stored twice or stored in part. A holder keeps the warehouse from its
first store to the end of its build, so a waiting process never slips in between and makes that build fail. The
real-browser variants are in test_browser_reliability.py."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import duckdb

from kneepoint.app import queries
from kneepoint.app.web import uploads
from kneepoint.ingest.warehouse import connect, list_files
from tests.reliability.conftest import long_only, start_ingest
from tests.reliability.inputs import expected_by_file_id, variant, write_batch
from tests.reliability.test_crash_safety import rows_per_file

FILES = 6


def distinct_batches(tmp_path: Path, n: int, files: int) -> list[list[Path]]:
    """`n` batches of `files` files, no two files (in any batch) the same bytes."""
    batches = []
    for b in range(n):
        folder = tmp_path / f"batch{b}"
        paths = write_batch(folder, files)
        for p in paths:  # batch b's variants differ from every other batch's
            p.write_bytes(variant(p.read_bytes(), 100 + b))
        batches.append(paths)
    return batches


def wait_for_first_file(proc: subprocess.Popen) -> str:
    """Block until the ingest has stored its first files (it holds the warehouse from before then to its exit)."""
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first.startswith("added"), first + (proc.stderr.read() if proc.stderr else "")
    return first


def assert_busy(proc: subprocess.Popen, db: Path, holder: int, wait_s: float) -> None:
    """`proc` gave up after its wait with the message that names the holder, and stored nothing."""
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 1, out + err
    assert err.splitlines()[-1].startswith(f"kneepoint: warehouse busy: {db} is held by process {holder} ("), err
    assert f"waited {wait_s:g} s (KNEEPOINT_LOCK_WAIT_S)" in err and "Traceback" not in err
    assert out == ""


def test_a_second_ingest_fails_clearly_or_waits_and_both_land(tmp_path):
    """The first ingest holds the warehouse through its build; a second that may wait 1 s says "warehouse busy"
    naming it; a third that may wait long enough waits for the first's whole command (had it slipped in between
    the first's store and build, that build would have failed on the lock), then stores."""
    db = tmp_path / "w.duckdb"
    a, b, c = distinct_batches(tmp_path, 3, FILES)
    # No recorded first build for it: dbt builds (seconds), so it still holds the warehouse when the second asks.
    first = start_ingest(db, a[0].parent, "first", 1800, env={"KNEEPOINT_DBT_TARGET": str(tmp_path / "dbt-target")})
    wait_for_first_file(first)
    refused = start_ingest(db, b[0].parent, "second", 1)
    waiting = start_ingest(db, c[0].parent, "third", 1800, "--no-build")
    assert_busy(refused, db, first.pid, 1)
    assert first.poll() is None, "the first ingest finished before the second asked: no contention was tested"
    out_a, err_a = first.communicate(timeout=1800)
    assert first.returncode == 0 and "models up to date" in out_a, err_a
    out_c, err_c = waiting.communicate(timeout=1800)
    assert waiting.returncode == 0, err_c
    assert f"{FILES} file(s) added" in out_c

    again = start_ingest(db, b[0].parent, "second", 60, "--no-build")
    _, err_b = again.communicate(timeout=1800)
    assert again.returncode == 0, err_b
    assert rows_per_file(db)[0] == expected_by_file_id(a + b + c)
    con = connect(db, read_only=True)
    try:
        assert {f["disk"] for f in list_files(con)} == {"first", "second", "third"}
    finally:
        con.close()


@long_only
def test_the_cli_waits_for_or_is_refused_by_an_app_store(tmp_path):
    """The app's process stores (uploads.store_previews, the upload page's call): a CLI ingest that may wait
    0.5 s while the app stores is refused and names the app's process; one started as the app begins its build
    waits for the build to end (it cannot slip in between and make it fail), then lands. CI runs the same
    against a real app server (test_browser_reliability.py); this one is a debugger's view of it."""
    db = tmp_path / "w.duckdb"
    a, b, c = distinct_batches(tmp_path, 3, FILES)
    previews = [p for path in a for p in uploads.preview_upload(path.name, path.read_bytes())]
    refused: list[subprocess.Popen] = []
    waiting: list[subprocess.Popen] = []

    def on_file(_outcome) -> None:
        if not refused:  # the app's first files are committed and it holds the warehouse: the CLI asks now
            refused.append(start_ingest(db, b[0].parent, "cli refused", 0.5))
            assert_busy(refused[0], db, os.getpid(), 0.5)

    def on_build() -> None:
        cli = start_ingest(db, c[0].parent, "cli waiting", 1800, "--no-build")
        waiting.append(cli)
        assert cli.stderr is not None
        # the CLI is up and waiting for the warehouse before the build starts
        assert cli.stderr.readline().startswith(f"kneepoint: waiting for {db}, held by process {os.getpid()} (")

    stored = uploads.store_previews(
        db, previews, disk="app", host=None, tags=[], notes=None, on_file=on_file, on_build=on_build
    )
    assert len(stored.added) == FILES and stored.build is not None and stored.build.success, stored.build
    (cli,) = waiting
    out, err = cli.communicate(timeout=1800)
    assert cli.returncode == 0, err
    assert out.startswith("added") and f"{FILES} file(s) added" in out
    # the waiting CLI stored its files after every file of the app's (the change log numbers them in commit order)
    con = connect(db, read_only=True)
    try:
        seqs = dict(con.execute("SELECT disk, list(stored_seq) FROM raw_files GROUP BY disk").fetchall())
    finally:
        con.close()
    assert max(seqs["app"]) < min(seqs["cli waiting"]), seqs

    rerun = start_ingest(db, b[0].parent, "cli refused", 60, "--no-build")
    _, err = rerun.communicate(timeout=1800)
    assert rerun.returncode == 0, err
    assert rows_per_file(db)[0] == expected_by_file_id(a + b + c)


@long_only
def test_four_sessions_store_at_once_in_one_app_process(tmp_path):
    """Four threads (Streamlit's sessions) store 14 files each into a new warehouse at once: all land, changes
    committed while a build runs share the next build (uploads.rebuild), the marts hold every file. CI runs four
    real browser sessions with a file each (test_browser_reliability.py)."""
    sessions, files = 4, 14
    db = tmp_path / "w.duckdb"  # new: the sessions race to create the raw layer too
    batches = distinct_batches(tmp_path, sessions, files)
    previews = [
        [p for path in batch for p in uploads.preview_upload(path.name, path.read_bytes())] for batch in batches
    ]
    assert all(p.ok for batch in previews for p in batch)
    start = threading.Barrier(sessions)
    outcomes: dict[int, uploads.StoreOutcome] = {}
    failures: dict[int, BaseException] = {}

    def session(i: int) -> None:
        start.wait()
        try:
            outcomes[i] = uploads.store_previews(db, previews[i], disk=f"session {i}", host=None, tags=[], notes=None)
        except BaseException as exc:  # noqa: BLE001 - reported below with the session's number
            failures[i] = exc

    threads = [threading.Thread(target=session, args=(i,)) for i in range(sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=1800)
    assert not failures, failures
    for i, outcome in outcomes.items():
        assert len(outcome.added) == files and not outcome.errors, (i, outcome.report.outcomes)
        # no build of its own where another session's build, started after this one's files committed, took them
        assert outcome.build is None or outcome.build.success, (i, outcome.build)
    assert any(outcome.build is not None for outcome in outcomes.values())

    stored, contents, _ = rows_per_file(db)
    assert stored == expected_by_file_id([p for batch in batches for p in batch])
    assert contents == sessions * files
    con = connect(db, read_only=True)
    try:
        disks = dict(con.execute("SELECT disk, count(*) FROM raw_files GROUP BY disk").fetchall())
        in_marts = con.execute("SELECT count(*) FROM dim_files").fetchall()[0][0]
    finally:
        con.close()
    assert disks == {f"session {i}": files for i in range(sessions)}
    assert in_marts == sessions * files  # the last build saw every session's files


# Threads of one process opening a new warehouse at once used to all create the raw layer and conflict in DuckDB's
# catalog ("Catalog write-write conflict"); ingest/warehouse.py connect now creates it under a process-wide lock.


def test_four_sessions_open_their_first_page_on_a_new_warehouse_at_once(tmp_path):
    """What the upload page reads first (queries.disk_labels), from four threads at once, on new warehouses (the
    file just made by the first connection, its raw layer not yet)."""
    for attempt in range(5):
        db = tmp_path / f"new-{attempt}.duckdb"
        duckdb.connect(str(db)).close()
        start = threading.Barrier(4)
        failures: list[BaseException] = []

        def session(db: Path = db, start: threading.Barrier = start, failures: list = failures) -> None:
            start.wait()
            try:
                assert queries.disk_labels(db) == []
            except BaseException as exc:  # noqa: BLE001 - raised below, on the test's thread
                failures.append(exc)

        threads = [threading.Thread(target=session) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        if failures:
            raise failures[0]
