"""Crash safety: `kneepoint ingest` killed with SIGKILL at random moments (while storing, while dbt builds,
while DuckDB folds its log into the file). After every kill the warehouse opens, every file is stored whole or
not at all, `kneepoint build` passes, and rerunning the same command completes the ingest with no duplicates.

CI kills 1 ingest of 14 files at a random moment and 2 at chosen ones; KNEEPOINT_LONG=1 kills 20 of 200 (the
figures in the README)."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ingest.warehouse import ROW_TABLES, connect
from tests.helpers import ROOT
from tests.reliability.conftest import KNEEPOINT, size
from tests.reliability.inputs import expected_by_file_id, write_batch

FILES = size(14, 200)
KILLS = size(1, 20)
SEED = 20240521


@dataclass
class Run:
    """One `kneepoint ingest` in a subprocess, its output lines read as they come."""

    proc: subprocess.Popen
    started: float
    lines: list[str] = field(default_factory=list)

    @classmethod
    def start(cls, db: Path, folder: Path) -> Run:
        proc = subprocess.Popen(
            [*KNEEPOINT, "--db", str(db), "ingest", str(folder), "--disk", "crash test"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=ROOT,
        )
        run = cls(proc, time.monotonic())
        threading.Thread(target=run._read, daemon=True).start()
        return run

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def stored(self) -> int:
        return sum(line.startswith("added") for line in self.lines)


def rows_per_file(db: Path) -> tuple[dict[str, dict[str, int]], int, list[tuple[str, str]]]:
    """Rows of every stored file per raw table, the number of stored contents, and (sha256 column, sha256 of the
    stored bytes) of every file; opening is the first check (DuckDB replays its log of committed files)."""
    con = connect(db)
    try:
        out: dict[str, dict[str, int]] = {
            file_id: dict.fromkeys(ROW_TABLES, 0)
            for (file_id,) in con.execute("SELECT file_id FROM raw_files").fetchall()
        }
        for table in ROW_TABLES:
            for file_id, n in con.execute(f"SELECT file_id, count(*) FROM {table} GROUP BY file_id").fetchall():
                assert file_id in out, f"{table} holds rows of file {file_id}, which is not in raw_files"
                out[file_id][table] = n
        contents = con.execute("SELECT count(*) FROM raw_file_contents").fetchall()[0][0]
        hashes = con.execute(
            "SELECT f.sha256, sha256(c.content) FROM raw_files f JOIN raw_file_contents c USING (file_id)"
        ).fetchall()
    finally:
        con.close()
    return out, contents, hashes


def cli(db: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*KNEEPOINT, "--db", str(db), *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout
    )


def test_sigkill_at_random_moments_never_leaves_a_partial_file(tmp_path):
    folder = tmp_path / "in"
    paths = write_batch(folder, FILES)
    expected = expected_by_file_id(paths)
    assert len(expected) == FILES  # distinct bytes, so no file is a duplicate of another

    # An uninterrupted ingest first: its duration is the window the kills are spread over.
    calibration = Run.start(tmp_path / "calibration.duckdb", folder)
    assert calibration.proc.wait(timeout=1800) == 0, "\n".join(calibration.lines[-20:])
    full_s = time.monotonic() - calibration.started
    assert f"{FILES} file(s) added" in "\n".join(calibration.lines)

    rng = random.Random(SEED)
    trials: list[dict] = []
    attempt = 0
    while sum(t["killed"] for t in trials) < KILLS:
        attempt += 1
        assert attempt <= 2 * KILLS, f"the ingest kept finishing before its kill: {trials}"
        db = tmp_path / f"trial-{attempt}.duckdb"
        kill_after_s = rng.uniform(0.0, full_s)
        run = Run.start(db, folder)
        time.sleep(max(0.0, run.started + kill_after_s - time.monotonic()))
        killed = run.proc.poll() is None
        stored_before_kill = run.stored
        if killed:
            run.proc.send_signal(signal.SIGKILL)
        run.proc.wait(timeout=60)
        time.sleep(0.2)  # let the reader thread take the last lines
        if killed:
            assert run.proc.returncode == -signal.SIGKILL
        phase = (
            "finished before the kill"
            if not killed
            else "starting"
            if stored_before_kill == 0
            else "storing files"
            if stored_before_kill < FILES
            else "building models / closing"
        )
        trial = {"kill_after_s": round(kill_after_s, 2), "killed": killed, "phase": phase}

        # 1. The warehouse opens, and every file in it is whole: all its rows in every table, its bytes intact.
        stored, contents, hashes = rows_per_file(db)
        assert contents == len(stored)
        assert all(column == of_bytes for column, of_bytes in hashes)
        for file_id, rows in stored.items():
            assert rows == expected[file_id], f"trial {attempt}: file {file_id} is partial: {rows}"
        # The lines printed as `added` were committed (the log reached the disk before the line was printed).
        assert len(stored) >= stored_before_kill
        trial["files_stored_at_kill"] = len(stored)

        # 2. dbt build passes on what the kill left.
        build = cli(db, "build")
        assert build.returncode == 0, f"trial {attempt} ({phase}): {build.stdout}{build.stderr}"

        # 3. The same command again completes the ingest: the rest added, nothing twice.
        rerun = cli(db, "ingest", str(folder), "--disk", "crash test")
        assert rerun.returncode == 0, f"trial {attempt}: {rerun.stdout[-2000:]}{rerun.stderr}"
        assert f"{FILES - len(stored)} file(s) added" in rerun.stdout
        assert f"{len(stored)} already stored" in rerun.stdout
        final, contents, _ = rows_per_file(db)
        assert final == expected and contents == FILES
        con = connect(db, read_only=True)
        try:
            assert con.execute("SELECT count(*), count(DISTINCT sha256) FROM raw_files").fetchall() == [(FILES, FILES)]
            # The marts hold every file once (dbt's tests, among them assert_no_file_rows_twice, ran in the build).
            marts = con.execute("SELECT count(*) FROM dim_files").fetchall()[0][0]
        finally:
            con.close()
        if len(stored) < FILES:
            assert "models rebuilt" in rerun.stdout
        assert marts == FILES
        trials.append(trial)

    phases = sorted({t["phase"] for t in trials if t["killed"]})
    print(
        json.dumps(
            {"files": FILES, "uninterrupted_s": round(full_s, 1), "kills": KILLS, "phases": phases, "trials": trials}
        )
    )
    if KILLS >= 20:
        # Spread over the whole run, the kills hit both the storing and the later phases.
        assert "storing files" in phases and "building models / closing" in phases


@pytest.mark.parametrize("moment", ["after the first file", "during the build"])
def test_a_kill_at_a_chosen_moment(tmp_path, moment):
    """The two phases a random kill may miss in CI's short run, hit on purpose: right after a file is committed,
    and while dbt builds (its target folder, with partial-parse state, is reused by the next build)."""
    folder = tmp_path / "in"
    paths = write_batch(folder, 14)
    expected = expected_by_file_id(paths)
    db = tmp_path / "w.duckdb"
    run = Run.start(db, folder)
    deadline = time.monotonic() + 600
    wanted = 1 if moment == "after the first file" else len(paths)
    while run.stored < wanted and run.proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    if moment == "during the build":
        time.sleep(2.0)  # dbt has started: it parses the project and builds the first models
    assert run.proc.poll() is None, "\n".join(run.lines)
    run.proc.send_signal(signal.SIGKILL)
    run.proc.wait(timeout=60)

    stored, contents, _ = rows_per_file(db)
    assert contents == len(stored) >= wanted
    assert all(rows == expected[file_id] for file_id, rows in stored.items())
    build = cli(db, "build")
    assert build.returncode == 0, build.stdout + build.stderr
    rerun = cli(db, "ingest", str(folder), "--disk", "crash test")
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert rows_per_file(db)[0] == expected
