"""Concurrency without a browser: sessions of one app process storing at once (Streamlit runs each session's
script on its own thread), and two processes wanting the warehouse at once (two `kneepoint ingest`s, or the CLI
while the app stores): each waits and succeeds, or fails with a clear "warehouse busy" naming the holder, and
no file is lost, stored twice or stored in part. The real-browser variants are in test_browser_reliability.py."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from app import uploads
from ingest.warehouse import connect, list_files
from tests.helpers import ROOT
from tests.reliability.conftest import KNEEPOINT, size
from tests.reliability.inputs import expected_by_file_id, variant, write_batch
from tests.reliability.test_crash_safety import rows_per_file

SESSIONS = 4
FILES_PER_SESSION = size(4, 14)


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


SCHEMA_RACE = (
    "ingest/warehouse.py connect: two threads opening a new warehouse both run CREATE TABLE IF NOT EXISTS and "
    "one fails with 'Catalog write-write conflict'; fix in the reliability report (a lock around the schema)."
)


@pytest.mark.parametrize(
    "warehouse",
    ["existing", pytest.param("new", marks=pytest.mark.xfail(strict=True, reason=SCHEMA_RACE))],
)
def test_four_sessions_store_at_once_in_one_app_process(tmp_path, warehouse):
    """`existing`: the app's usual state (it loads the sample data on first start); `new`: `--no-sample`."""
    db = tmp_path / "w.duckdb"
    if warehouse == "existing":
        connect(db).close()
    batches = distinct_batches(tmp_path, SESSIONS, FILES_PER_SESSION)
    previews = [
        [p for path in batch for p in uploads.preview_upload(path.name, path.read_bytes())] for batch in batches
    ]
    assert all(p.ok for batch in previews for p in batch)
    start = threading.Barrier(SESSIONS)
    outcomes: dict[int, uploads.StoreOutcome] = {}
    failures: dict[int, BaseException] = {}

    def session(i: int) -> None:
        start.wait()
        try:
            outcomes[i] = uploads.store_previews(db, previews[i], disk=f"session {i}", host=None, tags=[], notes=None)
        except BaseException as exc:  # noqa: BLE001 - reported below with the session's number
            failures[i] = exc

    threads = [threading.Thread(target=session, args=(i,)) for i in range(SESSIONS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=1800)
    assert not failures, failures
    for i, outcome in outcomes.items():
        assert len(outcome.added) == FILES_PER_SESSION and not outcome.errors, (i, outcome.report.outcomes)
        assert outcome.build is not None and outcome.build.success, (i, outcome.build)

    stored, contents, _ = rows_per_file(db)
    assert stored == expected_by_file_id([p for batch in batches for p in batch])
    assert contents == SESSIONS * FILES_PER_SESSION
    con = connect(db, read_only=True)
    try:
        disks = dict(con.execute("SELECT disk, count(*) FROM raw_files GROUP BY disk").fetchall())
        # The last build saw every session's files: the marts hold them all.
        in_marts = con.execute("SELECT count(*) FROM dim_files").fetchall()[0][0]
    finally:
        con.close()
    assert disks == {f"session {i}": FILES_PER_SESSION for i in range(SESSIONS)}
    assert in_marts == SESSIONS * FILES_PER_SESSION


def start_ingest(db: Path, folder: Path, disk: str, wait_s: float) -> subprocess.Popen:
    return subprocess.Popen(
        [*KNEEPOINT, "--db", str(db), "ingest", str(folder), "--disk", disk],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "KNEEPOINT_LOCK_WAIT_S": str(wait_s)},
    )


def wait_for_first_file(proc: subprocess.Popen) -> str:
    """Block until the ingest has stored its first file (it holds the warehouse from then on)."""
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first.startswith("added"), first + (proc.stderr.read() if proc.stderr else "")
    return first


def test_a_second_ingest_waits_for_the_first_and_both_land(tmp_path):
    db = tmp_path / "w.duckdb"
    a, b = distinct_batches(tmp_path, 2, FILES_PER_SESSION)
    first = start_ingest(db, a[0].parent, "first", wait_s=1800)
    wait_for_first_file(first)
    second = start_ingest(db, b[0].parent, "second", wait_s=1800)
    out_a, err_a = first.communicate(timeout=1800)
    out_b, err_b = second.communicate(timeout=1800)
    assert first.returncode == 0, err_a
    assert second.returncode == 0, err_b
    assert f"{FILES_PER_SESSION} file(s) added" in out_b and "models rebuilt" in out_b
    assert rows_per_file(db)[0] == expected_by_file_id(a + b)


def test_a_second_ingest_that_cannot_wait_fails_clearly_and_a_rerun_lands_it(tmp_path):
    db = tmp_path / "w.duckdb"
    a, b = distinct_batches(tmp_path, 2, FILES_PER_SESSION)
    first = start_ingest(db, a[0].parent, "first", wait_s=1800)
    wait_for_first_file(first)
    started = time.monotonic()
    second = start_ingest(db, b[0].parent, "second", wait_s=1)
    out_b, err_b = second.communicate(timeout=600)
    assert first.poll() is None, "the first ingest finished before the second asked: no contention was tested"
    assert second.returncode == 1
    assert err_b.startswith(f"kneepoint: warehouse busy: {db} is held by process {first.pid} ("), err_b
    assert "waited 1 s (KNEEPOINT_LOCK_WAIT_S)" in err_b and "Traceback" not in err_b
    assert out_b == "" and time.monotonic() - started < 120
    out_a, err_a = first.communicate(timeout=1800)
    assert first.returncode == 0, err_a

    again = start_ingest(db, b[0].parent, "second", wait_s=60)
    out_b, err_b = again.communicate(timeout=1800)
    assert again.returncode == 0, err_b
    assert rows_per_file(db)[0] == expected_by_file_id(a + b)
    con = connect(db, read_only=True)
    try:
        assert {f["disk"] for f in list_files(con)} == {"first", "second"}
    finally:
        con.close()


def test_the_cli_fails_clearly_while_an_app_upload_stores(tmp_path):
    """The app process storing holds the warehouse; a CLI ingest that cannot wait says so and names the app's
    process; the app's store completes, and the CLI's rerun lands its files."""
    db = tmp_path / "w.duckdb"
    a, b = distinct_batches(tmp_path, 2, FILES_PER_SESSION)
    previews = [p for path in a for p in uploads.preview_upload(path.name, path.read_bytes())]
    cli: list[subprocess.CompletedProcess] = []

    def on_file(_outcome) -> None:
        if not cli:  # the app's first file is committed and its connection open: the CLI asks now
            proc = start_ingest(db, b[0].parent, "cli", wait_s=0.5)
            out, err = proc.communicate(timeout=600)
            cli.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))

    stored = uploads.store_previews(db, previews, disk="app", host=None, tags=[], notes=None, on_file=on_file)
    assert len(stored.added) == FILES_PER_SESSION and stored.build is not None and stored.build.success
    (refused,) = cli
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.startswith(f"kneepoint: warehouse busy: {db} is held by process {os.getpid()} (")
    rerun = start_ingest(db, b[0].parent, "cli", wait_s=60)
    _, err = rerun.communicate(timeout=1800)
    assert rerun.returncode == 0, err
    assert rows_per_file(db)[0] == expected_by_file_id(a + b)


BUILD_GAP = (
    "app/uploads.store_previews stores (ingest_inputs closes its connection) and then builds: a CLI waiting "
    "for the warehouse takes it in between and dbt fails at once ('Could not set lock'), the upload ending "
    "'stored, but the model build failed'. Fix in the reliability report: build_models holds the warehouse "
    "through connect() (bounded wait, WarehouseBusy) for the whole build."
)


@pytest.mark.xfail(strict=True, reason=BUILD_GAP)
def test_an_app_build_waits_for_a_cli_ingest_that_got_in_first(tmp_path, monkeypatch):
    """The CLI takes the warehouse between the app's store and its build (where a waiting CLI gets it): the
    app's build waits for the CLI like any other connection, and both land."""
    from ingest import warehouse

    monkeypatch.setattr(warehouse, "LOCK_WAIT_S", 1800.0)
    db = tmp_path / "w.duckdb"
    a, b = distinct_batches(tmp_path, 2, FILES_PER_SESSION)
    previews = [p for path in a for p in uploads.preview_upload(path.name, path.read_bytes())]
    cli: list[subprocess.Popen] = []

    def on_build() -> None:
        cli.append(start_ingest(db, b[0].parent, "cli", wait_s=600))
        wait_for_first_file(cli[0])  # the CLI holds the warehouse now

    stored = uploads.store_previews(db, previews, disk="app", host=None, tags=[], notes=None, on_build=on_build)
    out, err = cli[0].communicate(timeout=1800)
    assert cli[0].returncode == 0, err
    assert stored.build is not None and stored.build.success, stored.build.failures
    assert rows_per_file(db)[0] == expected_by_file_id(a + b)
