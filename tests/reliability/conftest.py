"""Shared fixtures of the reliability tests: budgets (short in CI, long with KNEEPOINT_LONG=1), the command line as
a subprocess, and `kneepoint app` servers on private warehouses. The browser is tests/browser's (Debian's
chromium through Playwright)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kneepoint.app.web import uploads
from tests.browsing import _free_port
from tests.helpers import ROOT
from tests.reliability.inputs import (
    NAMED_SOURCES,
    hostile_file_names,
    hostile_labels,
    named_results,
    variant,
    zip_bytes,
)

LONG = os.environ.get("KNEEPOINT_LONG") == "1"
long_only = pytest.mark.skipif(not LONG, reason="long variant: KNEEPOINT_LONG=1")
KNEEPOINT = [sys.executable, "-m", "kneepoint.app.cli"]


def size(short: int, long: int) -> int:
    """A test's budget: `short` in CI, `long` with KNEEPOINT_LONG=1."""
    return long if LONG else short


def kneepoint_under_test(files_per_batch: int | None = None) -> list[str]:
    """The command line the crash tests kill (tests/reliability/cli_under_test.py): a recorded change build's
    statements traced and paced; with `files_per_batch`, the loader's batches cut to that many files."""
    batches = ["--batch-files", str(int(files_per_batch))] if files_per_batch else []
    return [sys.executable, str(Path(__file__).with_name("cli_under_test.py")), *batches]


def start_ingest(
    db: Path, folder: Path, disk: str, wait_s: float, *extra: str, env: dict[str, str] | None = None
) -> subprocess.Popen:
    """`kneepoint --db DB ingest FOLDER --disk DISK` started, waiting up to `wait_s` for a busy warehouse; `env`:
    more environment variables."""
    return subprocess.Popen(
        [*KNEEPOINT, "--db", str(db), "ingest", str(folder), "--disk", disk, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "KNEEPOINT_LOCK_WAIT_S": str(wait_s), **(env or {})},
    )


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 900) -> subprocess.CompletedProcess:
    """`kneepoint ARGS...` run to its end."""
    return subprocess.run(
        [*KNEEPOINT, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )


class AppServer:
    """`kneepoint app` on a free port, on its own warehouse; `url`, `db`, `pid` (the Streamlit process: the
    command execs into it, so it is the one holding the warehouse while the app stores)."""

    def __init__(self, db: Path, log: Path, env: dict[str, str]) -> None:
        self.db = db
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = open(log, "w")  # noqa: SIM115 - outlives this call: the server writes to it
        self.log_path = log
        self.proc = subprocess.Popen(
            # No --address: the default bind is what the loopback test checks.
            [*KNEEPOINT, "--db", str(db), "app", "--no-sample", "--port", str(self.port)],
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self.pid = self.proc.pid
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(self.url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("app did not start:\n" + log.read_text())
            time.sleep(0.2)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        self._log.close()


@pytest.fixture
def start_app(tmp_path) -> Iterator[Callable[..., AppServer]]:
    """Start app servers for one test: `start_app(db=None, **env)`; a new warehouse by default."""
    servers: list[AppServer] = []

    def start(db: Path | None = None, **env: str) -> AppServer:
        n = len(servers)
        server = AppServer(db or tmp_path / f"app{n}.duckdb", tmp_path / f"app{n}.log", env)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


class PathWatch:
    """Every file-system call of this process (audit events: open, mkdir, rename, remove, ...) whose path holds
    `marker`: what an upload would do if it built a path from the user's file name."""

    def __init__(self, marker: str) -> None:
        self.marker = marker
        self.on = False
        self.hits: list[tuple[str, str]] = []
        sys.addaudithook(self._hook)  # cannot be removed: it stays idle once `on` is False

    def _hook(self, event: str, args: tuple) -> None:
        if self.on and (event == "open" or event.startswith(("os.", "shutil."))):
            for a in args:
                if isinstance(a, str | bytes | Path) and self.marker in str(a):
                    self.hits.append((event, str(a)))


@pytest.fixture(scope="session")
def injected(tmp_path_factory) -> dict:
    """One warehouse: hostile names and labels through the CLI (`cli` set) and the app's upload path (`app` set,
    which also rebuilds the models once for both), with an audit of the paths the upload touched, and its
    `kneepoint report`. test_injection.py checks it; the browser test opens a copy in the app."""
    tmp = tmp_path_factory.mktemp("injection")
    db = tmp / "w.duckdb"
    folder = tmp / "cli"
    folder.mkdir()
    cli_files = named_results(hostile_file_names(), 0)
    for name, data in cli_files.items():
        (folder / name).write_bytes(data)
    cli_labels = hostile_labels("cli")
    proc = cli(
        "--db",
        str(db),
        "ingest",
        str(folder),
        "--disk",
        cli_labels["disk"],
        "--host",
        cli_labels["host"],
        *(a for t in cli_labels["tags"] for a in ("--tag", t)),
        "--notes",
        cli_labels["notes"],
        "--no-build",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr

    # Upload names that would land outside any folder, or on a Windows path, if a path were built from them.
    marker = f"kp{uuid.uuid4().hex[:12]}"
    climbing = [f"../../../../../../tmp/{marker}-up.txt", f"/tmp/{marker}-abs.txt", f"C:\\Temp\\{marker}-win.txt"]
    app_files = named_results([*hostile_file_names(), *climbing], 1)
    zipped = zip_bytes({f"../../{marker}-entry.txt": variant(NAMED_SOURCES[0].read_bytes(), 500)})
    app_labels = hostile_labels("app")
    watch = PathWatch(marker)
    watch.on = True
    try:
        previews = [p for name, data in app_files.items() for p in uploads.preview_upload(name, data)]
        previews += uploads.preview_upload(f"{marker}.zip", zipped)
        outcome = uploads.store_previews(db, previews, **app_labels)
    finally:
        watch.on = False
    report = tmp / "report.html"
    proc = cli("--db", str(db), "report", "--out", str(report))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {
        "db": db,
        "report": report,
        "cli_files": cli_files,
        "cli_labels": cli_labels,
        "app_files": {**app_files, f"{marker}.zip!../../{marker}-entry.txt": b""},
        "app_labels": app_labels,
        "outcome": outcome,
        "watch": watch,
        "marker": marker,
    }


def peak_rss_mb(command: list[str]) -> tuple[subprocess.CompletedProcess, float]:
    """Run `command` in a child; its peak resident memory, from a fresh grandparent so earlier children do not
    count (ru_maxrss of RUSAGE_CHILDREN is the largest child ever waited for)."""
    probe = (
        "import resource, subprocess, sys\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "sys.stdout.write(p.stdout); sys.stderr.write(p.stderr)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
        "sys.exit(p.returncode)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe, *command], capture_output=True, text=True, cwd=ROOT, timeout=600
    )
    *stderr, rss_kib = proc.stderr.rstrip("\n").split("\n")
    proc.stderr = "\n".join(stderr)
    return proc, int(rss_kib) / 1024
