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


def test_warm_up_loads_dbt_and_the_project_and_changes_nothing(db: Path, capfd) -> None:
    """What the app does as it starts (ingest.build.warm_up): the parsed project kept for the first build, nothing
    printed, nothing built, and the file let go, so another process may write to it at once."""
    import subprocess
    import sys

    state = _count(db, "SELECT count(*) FROM kneepoint_build_state WHERE built_seq > 0")
    build._MANIFESTS.clear()
    build.warm_up(db)
    assert build._manifest_key(build.locate(db)) in build._MANIFESTS
    assert capfd.readouterr().out == ""
    assert _count(db, "SELECT count(*) FROM kneepoint_build_state WHERE built_seq > 0") == state
    other = subprocess.run(
        [sys.executable, "-c", f"import duckdb; duckdb.connect({str(db)!r}).execute('CHECKPOINT')"],
        capture_output=True,
        text=True,
    )
    assert other.returncode == 0, other.stderr
    _store(db, LATE, "late disk")
    assert build_models(db).kind == "changes"
