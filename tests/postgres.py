"""PostgreSQL for the team-warehouse tests (fixtures registered in tests/conftest.py).

The server: $KNEEPOINT_TEST_POSTGRES (an admin URL: a role that may create databases and roles; `.ci/run` starts
one and sets it), else a throwaway server this session starts itself (tests/postgres_server.py) where PostgreSQL is
installed. Without either the tests skip with the reason; KNEEPOINT_REQUIRE_POSTGRES=1 (set by CI) makes that a
failure, as KNEEPOINT_REQUIRE_CORPUS does for the corpus. Each test gets a database of its own, dropped after.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from kneepoint.ingest.postgres import Target
from tests import postgres_server


def _unavailable(reason: str) -> None:
    if os.environ.get("KNEEPOINT_REQUIRE_POSTGRES") == "1":
        pytest.fail(reason + "; KNEEPOINT_REQUIRE_POSTGRES=1 makes that a failure")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def postgres_admin() -> Iterator[str]:
    """The admin URL of a PostgreSQL server for this session."""
    if url := os.environ.get("KNEEPOINT_TEST_POSTGRES"):
        yield url
        return
    if postgres_server.binaries() is None:
        _unavailable("PostgreSQL is not installed (apt-get install postgresql, or set KNEEPOINT_TEST_POSTGRES)")
    # Outside pytest's own temporary folder, which only its user may enter: the server runs as another.
    base = Path(tempfile.mkdtemp(prefix="kneepoint-postgres-"))
    base.chmod(0o755)
    try:
        server = postgres_server.start(base / "server")
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        shutil.rmtree(base, ignore_errors=True)
        _unavailable(f"a throwaway PostgreSQL server did not start: {exc}")
    try:
        yield server.url
    finally:
        postgres_server.stop(server.pid)
        shutil.rmtree(base, ignore_errors=True)


def admin_execute(admin_url: str, *statements: str) -> None:
    import psycopg2

    con = psycopg2.connect(admin_url)
    con.autocommit = True
    try:
        with con.cursor() as cur:
            for sql in statements:
                cur.execute(sql)
    finally:
        con.close()


def database_url(admin_url: str, dbname: str, user: str | None = None, password: str | None = None) -> str:
    """The admin URL pointed at another database (and, if given, another role)."""
    admin = Target(admin_url)
    user = user or admin.user
    password = admin.password if password is None else password
    return f"postgresql://{user}:{password}@{admin.host}:{admin.port}/{dbname}"


@contextmanager
def new_database(admin_url: str) -> Iterator[str]:
    """A new, empty database on the server, dropped on exit: its URL, password included."""
    name = f"kp_test_{secrets.token_hex(6)}"
    admin_execute(admin_url, f"CREATE DATABASE {name}")
    try:
        yield database_url(admin_url, name)
    finally:
        admin_execute(admin_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def pg_url(postgres_admin: str) -> Iterator[str]:
    with new_database(postgres_admin) as url:
        yield url


@pytest.fixture
def pg_db(pg_url: str) -> Target:
    """The same database as a kneepoint warehouse location."""
    return Target(pg_url)


def password_of(url: str) -> str:
    return Target(url).password


def files_containing(folder: Path, text: str) -> list[Path]:
    """Files under `folder` whose bytes contain `text`."""
    needle = text.encode()
    return [p for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes()]
