"""kneepoint sends nothing anywhere: dbt's anonymous usage tracking (an event was once queued for dbt's collector by
the in-process build) stays off on every path that runs dbt, and dbt_project.yml alone turns it off for dbt run by
hand in the project."""

from __future__ import annotations

import shutil
from pathlib import Path

from kneepoint.app.cli.main import main
from kneepoint.ingest import build
from kneepoint.ingest.build import build_models
from tests.helpers import ROOT
from tests.test_cli import FIO


def test_dbt_tracking_stays_off_on_every_path(sample_warehouse: Path, tmp_path: Path, monkeypatch) -> None:
    from dbt import tracking
    from dbt.cli.main import dbtRunner

    db = tmp_path / "w.duckdb"
    shutil.copy(sample_warehouse, db)
    # dbt's parse, no recorded change build: the warm-up's `dbt ls`, then a build through dbt
    monkeypatch.setenv("KNEEPOINT_DBT_TARGET", str(tmp_path / "target"))
    monkeypatch.setattr(build, "_MANIFESTS", {})
    monkeypatch.delenv("DBT_SEND_ANONYMOUS_USAGE_STATS", raising=False)
    turned_on: list[object] = []  # User.initialize: what dbt calls when tracking is on (it writes a cookie too)
    sent: list[object] = []
    monkeypatch.setattr(tracking.User, "initialize", lambda user: turned_on.append(user.cookie_dir))
    monkeypatch.setattr(tracking.tracker, "track", lambda event, *args, **kwargs: sent.append(event))
    monkeypatch.setattr(tracking.emitter, "input", lambda payload: sent.append(payload))

    changed = tmp_path / "changed.json"
    changed.write_bytes(FIO.read_bytes() + b"\n")  # another sha256, the same runs
    assert main(["--db", str(db), "ingest", str(changed), "--disk", "new", "--no-build"]) == 0
    assert build.warm_up(db) > 0  # models behind: dbt ls
    assert build_models(db).success
    build.warm_up(db)  # records the change build where the build did not
    assert build_models(db, full_refresh=True).success
    assert (turned_on, sent) == ([], [])
    assert tracking.active_user is not None and tracking.active_user.do_not_track

    # dbt by hand in the project, without kneepoint's flag or variable: dbt_project.yml's `flags:` keeps it off
    monkeypatch.setenv("KNEEPOINT_DB", str(db))
    by_hand = ["ls", "--select", "dim_disks", "--project-dir", str(ROOT), "--profiles-dir", str(ROOT),
               "--target-path", str(tmp_path / "by-hand"), "--log-level", "none"]  # fmt: skip
    assert dbtRunner().invoke(by_hand).success
    assert turned_on == [] and tracking.active_user.do_not_track
    # and this test would see tracking turned on: dbt's own flag does
    assert dbtRunner().invoke([*by_hand, "--send-anonymous-usage-stats"]).success
    assert turned_on
