from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browsing import app_server, browser, page  # noqa: F401 - one browser for every folder
from tests.helpers import SAMPLE
from tests.postgres import pg_db, pg_url, postgres_admin  # noqa: F401 - one PostgreSQL server for every folder


@pytest.fixture(scope="session", autouse=True)
def private_dbt_target(tmp_path_factory) -> Iterator[None]:
    """dbt writes manifests to its target folder: keep test runs off ./target and off each other."""
    with pytest.MonkeyPatch.context() as mp:
        if "KNEEPOINT_DBT_TARGET" not in os.environ:
            mp.setenv("KNEEPOINT_DBT_TARGET", str(tmp_path_factory.mktemp("dbt-target")))
        yield


# The variables that steer kneepoint, dbt and libpq (a leaked KNEEPOINT_DB would send every later command to a
# stale warehouse). Libraries set others of their own when first imported (polars, streamlit): not a test's doing.
WATCHED = ("KNEEPOINT_", "DBT_", "PG")


@pytest.fixture(autouse=True)
def environment_left_as_found() -> Iterator[None]:
    """No test leaves those variables or the current folder changed for the next (monkeypatch undoes its own before
    this checks). A leak fails its test and is undone, so that it fails no other."""
    before, cwd = {k: v for k, v in os.environ.items() if k.startswith(WATCHED)}, os.getcwd()
    yield
    _builds_of_this_process_ended()
    after = {k: v for k, v in os.environ.items() if k.startswith(WATCHED)}
    leaked = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    moved = os.getcwd()
    for k in leaked:
        if k in before:
            os.environ[k] = before[k]
        else:
            del os.environ[k]
    os.chdir(cwd)
    assert not leaked, f"environment left changed: {leaked}"
    assert moved == cwd, f"current folder left changed: {moved} (was {cwd})"


def _builds_of_this_process_ended() -> None:
    """A build sets the warehouse's variables while it runs (ingest.build._warehouse_env, under FILE_CHANGE_LOCK):
    one still running in another thread (an AppTest script run past its run's timeout) is waited for, not taken
    for a leak."""
    import sys

    warehouse = sys.modules.get("kneepoint.ingest.warehouse")
    if warehouse is not None:
        assert warehouse.FILE_CHANGE_LOCK.acquire(timeout=300), "a build of this process did not end"
        warehouse.FILE_CHANGE_LOCK.release()


@pytest.fixture(autouse=True)
def app_warm_ups_end_with_their_test():
    """The app loads dbt for its warehouse in a background thread (uploads.warm_up_builds), with the warehouse's
    variables set while it runs: it ends before the next test sets its own."""
    yield
    import sys

    uploads = sys.modules.get("kneepoint.app.web.uploads")
    if uploads is not None:
        assert uploads.warm_ups_done(timeout_s=120), "the app's dbt warm-up did not end"


@pytest.fixture(scope="session")
def sample_warehouse(tmp_path_factory) -> Path:
    """A warehouse with the sample data loaded and the models built, made once per test session.

    Tests that change data copy it (`warehouse` fixture)."""
    from kneepoint.app.sample import load_sample_if_empty

    db = tmp_path_factory.mktemp("sample") / "warehouse.duckdb"
    assert load_sample_if_empty(db) > 0
    return db


@pytest.fixture
def warehouse(sample_warehouse: Path, tmp_path: Path, monkeypatch) -> Path:
    """A private copy of the sample warehouse, also set as KNEEPOINT_DB."""
    db = tmp_path / "warehouse.duckdb"
    shutil.copy(sample_warehouse, db)
    monkeypatch.setenv("KNEEPOINT_DB", str(db))
    return db


@pytest.fixture
def empty_db(tmp_path: Path, monkeypatch) -> Path:
    db = tmp_path / "empty.duckdb"
    monkeypatch.setenv("KNEEPOINT_DB", str(db))
    return db


@pytest.fixture
def sample_fio() -> list[Path]:
    return sorted((SAMPLE / "fio").glob("*.json"))
