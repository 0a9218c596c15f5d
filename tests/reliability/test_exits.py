"""How commands end: with their documented exit code and nothing native in their last breath (an abort at exit once
ended 1 failing import in 89, and the app once died on SIGTERM with `FATAL: exception not rethrown`); and a command
whose reader stops reading does not keep the warehouse from everyone else while it waits to print."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from kneepoint.ingest.warehouse import connect
from tests.helpers import ROOT
from tests.reliability.conftest import KNEEPOINT, cli, size
from tests.reliability.inputs import write_batch

NATIVE = ("terminate called", "FATAL", "Traceback", "leaked", "Aborted", "core dumped")


def test_failing_commands_exit_with_their_code_every_time(tmp_path):
    not_a_zip = tmp_path / "notes.zip"
    not_a_zip.write_text("not a zip")
    db = tmp_path / "w.duckdb"
    for _ in range(size(10, 100)):
        proc = cli("--db", str(db), "import", str(not_a_zip))
        assert proc.returncode == 2, proc.stderr
        assert not any(word in proc.stderr for word in NATIVE), proc.stderr
        assert proc.stderr.strip() == f"kneepoint import: {not_a_zip.name}: not a zip file (File is not a zip file)"


def test_the_app_stops_on_sigterm_without_a_native_error(start_app):
    for _ in range(size(2, 5)):
        app = start_app()
        app.proc.send_signal(signal.SIGTERM)
        app.proc.wait(timeout=60)
        assert app.proc.returncode in (0, -signal.SIGTERM), app.proc.returncode
        log = Path(app.log_path).read_text()
        assert not any(word in log for word in NATIVE), log[-3000:]


def test_a_reader_that_stops_reading_does_not_hold_the_warehouse(tmp_path):
    """`kneepoint ingest ... | less` with the pager left open: once the files are stored and built, the warehouse is
    let go, though the command still waits to write its last lines."""
    folder = tmp_path / "in"
    # long names, so that the lines printed overfill the pipe (64 KiB) long before the end
    for path in write_batch(folder, 250):
        path.rename(path.with_name(f"{'x' * 200}-{path.name}"))
    db = tmp_path / "w.duckdb"
    proc = subprocess.Popen(
        [*KNEEPOINT, "--db", str(db), "ingest", str(folder), "--disk", "piped"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 600
        while True:  # a bounded wait for the warehouse: the command must let go of it while still blocked
            assert proc.poll() is None, "the command ended: its output did not fill the pipe"
            try:
                con = connect(db, read_only=True, wait_s=0)
            except Exception:  # noqa: BLE001 - busy (or not created yet): the command still works
                assert time.monotonic() < deadline, "the warehouse was never let go"
                time.sleep(0.2)
                continue
            try:
                if con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'dim_files'").fetchall()[0][0]:
                    break  # stored and built, and another process could open it
            finally:
                con.close()
        assert proc.poll() is None  # still waiting to write
    finally:
        out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert b"models up to date" in out
    assert len(out) > 65536  # more than a pipe holds: the command had to wait for the reader
