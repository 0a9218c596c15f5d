"""Crash safety: `kneepoint ingest` killed with SIGKILL while it stores and while dbt builds. After every kill the
warehouse opens, every file in it is whole (all its rows in every raw table, its bytes intact) or absent, no file
is there twice, the files printed as `added` are there, the parsing workers are gone, `dbt build` passes, and
rerunning the same command completes the ingest.

The loader commits files in batches (ingest/load.py); the runs here cut the batches to a few files so that a kill
can land between commits, as it does in a large ingest, and parse in two worker processes. CI kills one ingest
of 14 files while it stores and its rerun while it builds; KNEEPOINT_LONG=1 kills 20 ingests of 200 files at
random moments, half while they start or store, half while they build (the figures in the README)."""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from kneepoint.ingest.contents import original
from kneepoint.ingest.warehouse import ROW_TABLES, connect
from tests.browsing import ARTIFACTS
from tests.helpers import ROOT
from tests.reliability.cli_under_test import replay_trace
from tests.reliability.conftest import cli, kneepoint_under_test, long_only
from tests.reliability.inputs import expected_by_file_id, write_batch

SEED = 20240521
ADDED = re.compile(r"^added +(.+?): ")  # `added    PATH: format version, runs, records [file id]`
FILES_PER_BATCH = 4
WORKERS = "2"


@dataclass
class Run:
    """One `kneepoint ingest` in its own session (it and its parsing workers), its output read as it comes."""

    proc: subprocess.Popen
    started: float
    lines: list[tuple[float, str]] = field(default_factory=list)
    reader: threading.Thread | None = None

    @classmethod
    def start(cls, db: Path, folder: Path, files_per_batch: int = FILES_PER_BATCH) -> Run:
        proc = subprocess.Popen(
            [
                *kneepoint_under_test(files_per_batch),
                *("--db", str(db), "ingest", str(folder), "--disk", "crash test", "--workers", WORKERS),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=ROOT,
            start_new_session=True,
        )
        run = cls(proc, time.monotonic())
        run.reader = threading.Thread(target=run._read, daemon=True)
        run.reader.start()
        return run

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    @property
    def stored(self) -> int:
        return sum(line.startswith("added") for _, line in self.lines)

    @property
    def printed_sha256s(self) -> set[str]:
        """sha256 of the input bytes of every file printed as added (read from the path the line names)."""
        printed = [m[1] for _, line in self.lines if (m := ADDED.match(line))]
        assert len(printed) == self.stored, self.text()
        return {sha256_of(Path(path)) for path in printed}

    def wait_for(self, added: int, timeout: float = 600) -> None:
        """Until `added` files are printed as added, or the ingest has ended."""
        deadline = time.monotonic() + timeout
        while self.stored < added and self.proc.poll() is None:
            assert time.monotonic() < deadline, self.text()
            time.sleep(0.005)

    def kill(self) -> bool:
        """SIGKILL the ingest (not its workers: they must notice and go). False when it had already ended."""
        if self.proc.poll() is not None:
            return False
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=60)
        assert self.proc.returncode == -signal.SIGKILL
        leftovers = _wait_session_gone(self.proc.pid, timeout=15)
        if leftovers:
            os.killpg(self.proc.pid, signal.SIGKILL)
        assert not leftovers, f"processes of the killed ingest still running: {leftovers}"
        # every line the ingest printed is read once the pipe's last writer (it or a worker) is gone
        assert self.reader is not None
        self.reader.join(timeout=60)
        assert not self.reader.is_alive(), "its output never ended"
        return True

    def text(self) -> str:
        return "\n".join(line for _, line in self.lines[-30:])


class DbtProgress:
    """Steps of a build started since this was made: dbt's nodes (models and tests), read from dbt's debug log
    (ingest/build.py writes it under the dbt target folder), and the statements of a recorded change build, read
    from the trace the command line under test writes (tests/reliability/cli_under_test.py): a kill can then land
    inside the build however fast the machine is."""

    def __init__(self) -> None:
        dbt_log = Path(os.environ.get("KNEEPOINT_DBT_TARGET") or ROOT / "target") / "logs" / "dbt.log"
        self.logs = {dbt_log: b"Began running node ", replay_trace(): b"statement "}
        self.offsets = {log: log.stat().st_size if log.exists() else 0 for log in self.logs}

    def nodes_started(self) -> int:
        started = 0
        for log, marker in self.logs.items():
            if not log.exists():
                continue
            with open(log, "rb") as fh:
                if fh.seek(0, os.SEEK_END) < self.offsets[log]:  # dbt rotated its log
                    self.offsets[log] = 0
                fh.seek(self.offsets[log])
                started += fh.read().count(marker)
        return started

    def wait_for(self, nodes: int, proc: subprocess.Popen, timeout: float = 600) -> None:
        deadline = time.monotonic() + timeout
        while self.nodes_started() < nodes:
            assert proc.poll() is None, f"the build ended before {nodes} of its steps started"
            assert time.monotonic() < deadline
            time.sleep(0.01)


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _session_members(sid: int) -> list[str]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":  # fields after the name: state, ppid, pgrp, session
            out.append(stat.parent.name)
    return out


def _wait_session_gone(sid: int, timeout: float) -> list[str]:
    deadline = time.monotonic() + timeout
    while (members := _session_members(sid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return members


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
        stored_bytes = con.execute(
            "SELECT f.sha256, c.content, c.compression, f.size_bytes FROM raw_files f "
            "JOIN raw_file_contents c USING (file_id)"
        ).fetchall()
        # the sha256 of the bytes as the tool wrote them (the warehouse keeps them compressed)
        hashes = [(sha256, hashlib.sha256(original(*kept)).hexdigest()) for sha256, *kept in stored_bytes]
        files, distinct = con.execute("SELECT count(*), count(DISTINCT sha256) FROM raw_files").fetchall()[0]
    finally:
        con.close()
    assert files == distinct, "the same bytes stored twice"
    return out, contents, hashes


def assert_whole(db: Path, expected: dict[str, dict[str, int]], printed: set[str]) -> int:
    """Every stored file whole, every `printed` one (sha256 of the input bytes of the files printed as added)
    stored with those bytes; the number stored."""
    stored, contents, hashes = rows_per_file(db)
    assert contents == len(stored) == len(hashes)
    assert all(column == of_bytes for column, of_bytes in hashes)
    for file_id, rows in stored.items():
        assert rows == expected[file_id], f"file {file_id} is partial: {rows}, whole: {expected[file_id]}"
    # A file is printed as added after its batch committed; a kill between the commit and the print leaves
    # more stored than printed, never one printed but not stored.
    stored_bytes = {of_bytes for _, of_bytes in hashes}
    assert printed <= stored_bytes, f"printed as added but not stored: {sorted(printed - stored_bytes)}"
    return len(stored)


def assert_complete(db: Path, expected: dict[str, dict[str, int]]) -> None:
    """Every file stored once and whole, and the models hold every file once."""
    stored, contents, _ = rows_per_file(db)
    assert stored == expected and contents == len(expected)
    con = connect(db, read_only=True)
    try:
        # dbt's own tests (assert_no_file_rows_twice among them) ran in the build that made these.
        in_marts = con.execute("SELECT count(*), count(DISTINCT file_id) FROM dim_files").fetchall()[0]
    finally:
        con.close()
    assert in_marts == (len(expected), len(expected))


def test_kills_while_storing_and_while_building_then_a_rerun_completes(tmp_path):
    folder = tmp_path / "in"
    files = 14
    inputs = write_batch(folder, files)
    expected = expected_by_file_id(inputs)
    assert len(expected) == files  # distinct bytes: no file is a duplicate of another
    db = tmp_path / "w.duckdb"
    rng = random.Random(SEED)

    # 1. While storing: after the first batch committed, at a random moment within the next few batches.
    first = Run.start(db, folder)
    first.wait_for(1)
    time.sleep(rng.uniform(0.0, 0.3))
    assert first.kill(), "the ingest ended before its kill:\n" + first.text()
    stored = assert_whole(db, expected, first.printed_sha256s)

    # 2. While dbt builds: the rerun stores the rest, then builds; killed after a random number of the build's
    # models and tests (~30) have started (a `kneepoint build` when the first run had stored everything).
    progress = DbtProgress()
    if stored < files:
        second = Run.start(db, folder)
        second.wait_for(files - stored)
        assert second.proc.poll() is None, "the rerun ended before its build:\n" + second.text()
        assert second.stored == files - stored, second.text()
    else:
        second = None
        build = subprocess.Popen(
            [*kneepoint_under_test(FILES_PER_BATCH), "--db", str(db), "build"], cwd=ROOT, start_new_session=True
        )
    progress.wait_for(rng.randint(1, 20), second.proc if second is not None else build)
    if second is not None:
        assert second.kill(), "the build ended before its kill:\n" + second.text()
    else:
        assert build.poll() is None, "the build ended before its kill"
        os.killpg(build.pid, signal.SIGKILL)
        build.wait(timeout=60)
    assert assert_whole(db, expected, {sha256_of(p) for p in inputs}) == files

    # 3. The same command again: nothing stored twice, nothing to add. It rebuilds only if the models are behind;
    # so `kneepoint build` brings the models up to date, on what the kills left.
    rerun = cli("--db", str(db), "ingest", str(folder), "--disk", "crash test")
    assert rerun.returncode == 0, rerun.stdout[-2000:] + rerun.stderr
    assert f"0 file(s) added, 0 record(s); {files} already stored" in rerun.stdout
    built = cli("--db", str(db), "build")
    assert built.returncode == 0, built.stdout + built.stderr
    assert_complete(db, expected)


# A rerun after a kill during the build used to add nothing and not rebuild; the warehouse now records the last
# full build, and an ingest that finds files stored after it builds even when it adds nothing.


def test_a_rerun_after_a_kill_during_the_build_rebuilds_the_models(tmp_path):
    folder = tmp_path / "in"
    write_batch(folder, 4)
    db = tmp_path / "w.duckdb"
    progress = DbtProgress()
    run = Run.start(db, folder)
    progress.wait_for(1, run.proc)  # the build has begun: no model of this warehouse is built yet
    assert run.kill(), run.text()
    rerun = cli("--db", str(db), "ingest", str(folder), "--disk", "crash test")
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "models up to date" in rerun.stdout


@long_only
def test_sigkill_at_random_moments_during_200_files(tmp_path):
    """20 kills at random moments of an ingest of 200 files (batches of 8): half while it starts and stores
    (uniform up to when an uninterrupted run printed its last file), half while it builds (uniform over the
    rest of that run), so that the short storing phase gets its share."""
    files, kills, files_per_batch = 200, 20, 8
    folder = tmp_path / "in"
    expected = expected_by_file_id(write_batch(folder, files))
    assert len(expected) == files

    calibration = Run.start(tmp_path / "calibration.duckdb", folder, files_per_batch)
    assert calibration.proc.wait(timeout=3600) == 0, calibration.text()
    full_s = time.monotonic() - calibration.started
    stored_by_s = calibration.lines[-1][0] - calibration.started  # the summary line: after the build
    first_added_s = min(t for t, line in calibration.lines if line.startswith("added")) - calibration.started
    last_added_s = max(t for t, line in calibration.lines if line.startswith("added")) - calibration.started
    assert f"{files} file(s) added" in calibration.text()

    rng = random.Random(SEED)
    trials: list[dict] = []
    attempt = 0
    while sum(t["killed"] for t in trials) < kills:
        attempt += 1
        assert attempt <= 2 * kills, f"the ingest kept finishing before its kill: {trials}"
        db = tmp_path / f"trial-{attempt}.duckdb"
        kill_after_s = rng.uniform(0.0, last_added_s) if attempt % 2 else rng.uniform(last_added_s, full_s)
        run = Run.start(db, folder, files_per_batch)
        time.sleep(max(0.0, run.started + kill_after_s - time.monotonic()))
        printed = run.stored
        killed = run.kill()
        phase = (
            "finished before the kill"
            if not killed
            else "starting"
            if printed == 0
            else "storing files"
            if printed < files
            else "building models"
        )
        stored = assert_whole(db, expected, run.printed_sha256s)
        built = cli("--db", str(db), "build")
        assert built.returncode == 0, f"trial {attempt} ({phase}): {built.stdout}{built.stderr}"
        rerun = cli("--db", str(db), "ingest", str(folder), "--disk", "crash test")
        assert rerun.returncode == 0, f"trial {attempt}: {rerun.stdout[-2000:]}{rerun.stderr}"
        assert f"{files - stored} file(s) added" in rerun.stdout and f"{stored} already stored" in rerun.stdout
        if stored == files:  # nothing added: the rerun does not rebuild; the build above holds every file
            assert "models up to date" not in rerun.stdout
        else:
            assert "models up to date" in rerun.stdout
        assert_complete(db, expected)
        trials.append(
            {
                "kill_after_s": round(kill_after_s, 2),
                "killed": killed,
                "phase": phase,
                "printed_added": printed,
                "stored_at_kill": stored,
            }
        )

    figures = {
        "files": files,
        "files_per_batch": files_per_batch,
        "workers": int(WORKERS),
        "uninterrupted_s": round(full_s, 1),
        "first_file_stored_s": round(first_added_s, 1),
        "last_file_stored_s": round(last_added_s, 1),
        "ingest_and_build_s": round(stored_by_s, 1),
        "kills": kills,
        "attempts": attempt,
        "phases": {p: sum(t["phase"] == p for t in trials) for p in sorted({t["phase"] for t in trials})},
        "stored_more_than_printed": sum(t["stored_at_kill"] > t["printed_added"] for t in trials if t["killed"]),
        "trials": trials,
    }
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "reliability-crash-safety.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures))
    # Spread over the whole run, the kills hit both the storing and the building.
    assert figures["phases"].get("storing files") and figures["phases"].get("building models"), figures["phases"]


# --- changes other than ingest: killed during their build, completed by whatever command comes next -------------


def _built_sample(tmp_path: Path) -> Path:
    db = tmp_path / "w.duckdb"
    sample = [str(p) for p in sorted((ROOT / "sample_data").glob("*/*")) if p.suffix in (".txt", ".json")]
    done = cli("--db", str(db), "ingest", *sample, "--disk", "before")
    assert done.returncode == 0, done.stdout + done.stderr
    return db


def _kill_during_build(db: Path, *command: str, nodes: int) -> None:
    """`kneepoint --db DB COMMAND`, SIGKILLed once `nodes` of its build's dbt nodes have started."""
    progress = DbtProgress()
    proc = subprocess.Popen(
        [*kneepoint_under_test(), "--db", str(db), *command],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
        start_new_session=True,
    )
    progress.wait_for(nodes, proc)
    assert proc.poll() is None, "the command ended before its kill"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)


def _in_models(db: Path, sql: str, params: list) -> int:
    con = connect(db, read_only=True)
    try:
        return con.execute(sql, params).fetchall()[0][0]
    finally:
        con.close()


def test_a_delete_killed_during_its_build_is_completed_by_the_next_command(tmp_path):
    """The file is gone from the raw layer when the kill lands; the next read command (`kneepoint files`) finishes
    the build, so no mart, report or export still shows the deleted file's rows."""
    db = _built_sample(tmp_path)
    file_id = _in_models(db, "SELECT min(file_id) FROM dim_files WHERE file_name LIKE 'randread%'", [])
    _kill_during_build(db, "delete", file_id, "--yes", nodes=random.Random(SEED).randint(1, 8))
    again = cli("--db", str(db), "delete", file_id, "--yes")
    assert again.returncode == 1 and "no stored file" in again.stderr  # deleted: only its build was cut short
    listed = cli("--db", str(db), "files")
    assert listed.returncode == 0, listed.stderr
    for mart in ("fct_io_results", "dim_files", "fct_latency_distribution"):
        assert _in_models(db, f"SELECT count(*) FROM {mart} WHERE file_id = ?", [file_id]) == 0, mart


def test_a_relabel_killed_during_its_build_is_completed_by_the_next_command(tmp_path):
    db = _built_sample(tmp_path)
    file_id = _in_models(db, "SELECT min(file_id) FROM dim_files WHERE file_name LIKE 'randread%'", [])
    _kill_during_build(db, "relabel", file_id, "--disk", "after", nodes=random.Random(SEED + 1).randint(1, 8))
    report = cli("--db", str(db), "saturation", "--json")
    assert report.returncode == 0, report.stderr
    disks = {row["disk"] for row in json.loads(report.stdout)}
    assert disks == {"before", "after"}, disks
    assert _in_models(db, "SELECT count(*) FROM fct_io_results WHERE file_id = ? AND disk <> 'after'", [file_id]) == 0
    assert _in_models(db, "SELECT count(*) FROM dim_files WHERE disk = 'after'", []) == 1


def test_an_import_killed_during_its_build_is_completed_by_running_it_again(tmp_path):
    """Imported files keep the ingest time they had; the change log still says they are new to this warehouse."""
    source = _built_sample(tmp_path)
    bundle = tmp_path / "b.zip"
    assert cli("--db", str(source), "export", "--out", str(bundle)).returncode == 0
    db = tmp_path / "vendor.duckdb"
    _kill_during_build(db, "import", str(bundle), nodes=random.Random(SEED + 2).randint(1, 12))
    again = cli("--db", str(db), "import", str(bundle))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "0 file(s) added" in again.stdout and "models up to date" in again.stdout
    series = json.loads(cli("--db", str(db), "saturation", "--json").stdout)
    expected = json.loads(cli("--db", str(source), "saturation", "--json").stdout)
    assert len(series) == len(expected) > 2
