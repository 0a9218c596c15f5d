"""Build the dbt project in-process (dbtRunner), against the warehouse the caller names.

dbt-duckdb opens the same DuckDB file; inside one process DuckDB hands it the same database instance,
so the caller may keep its own connection (and with it the file's write lock) open across the build.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ingest.units import PROJECT_ROOT

# dbtRunner is not safe to run twice at once in one process (Streamlit serves sessions on threads).
_BUILD_LOCK = threading.Lock()


@dataclass(slots=True)
class BuildResult:
    success: bool
    failures: list[str]

    def raise_for_failure(self) -> None:
        if not self.success:
            raise RuntimeError("dbt build failed:\n  " + "\n  ".join(self.failures or ["(no detail)"]))


def build_models(
    db: str | os.PathLike[str], select: list[str] | None = None, command: str | Sequence[str] = "build"
) -> BuildResult:
    """Run a dbt command (`build`, or e.g. `["docs", "generate"]`) against the warehouse `db`."""
    from dbt.cli.main import dbtRunner

    args = [
        *([command] if isinstance(command, str) else command),
        "--project-dir",
        str(PROJECT_ROOT),
        "--profiles-dir",
        str(PROJECT_ROOT),
        "--target-path",
        str(_target_path()),
        "--log-path",
        str(_target_path() / "logs"),
        "--quiet",
        "--no-use-colors",
    ]
    if select:
        args += ["--select", *select]
    with _BUILD_LOCK:
        old = os.environ.get("KNEEPOINT_DB")
        os.environ["KNEEPOINT_DB"] = str(Path(db).resolve())
        try:
            res = dbtRunner().invoke(args)
        finally:
            _release_duckdb()
            if old is None:
                os.environ.pop("KNEEPOINT_DB", None)
            else:
                os.environ["KNEEPOINT_DB"] = old
    failures: list[str] = []
    if res.exception is not None:
        failures.append(f"{type(res.exception).__name__}: {res.exception}")
    results = getattr(res.result, "results", None) or []
    for r in results:
        status = str(getattr(r, "status", ""))
        if status.lower() in ("error", "fail", "runtime error"):
            failures.append(f"{r.node.name}: {status}: {getattr(r, 'message', '')}")
    success = res.success and not failures
    if success and command == "build" and not select:
        _record_full_build(db)
    return BuildResult(success=success, failures=failures)


# When the last full build succeeded: a build killed half-way leaves the models behind the raw layer, and the next
# ingest finds that out here (models_behind) instead of believing them.
BUILD_STATE = "kneepoint_last_build"


def _record_full_build(db: str | os.PathLike[str]) -> None:
    from ingest.warehouse import connect

    con = connect(db)
    try:
        con.execute(f"CREATE OR REPLACE TABLE {BUILD_STATE} AS SELECT now() AS finished_at")
    finally:
        con.close()


def models_behind(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether files were stored after the last successful full build began to be needed (or there is none)."""
    try:
        return bool(
            con.execute(
                f"SELECT coalesce(max(f.ingested_at) > (SELECT max(finished_at) FROM {BUILD_STATE}), false) "
                "FROM raw_files f"
            ).fetchall()[0][0]
        )
    except duckdb.CatalogException:  # never built here (or built before this check existed)
        return bool(con.execute("SELECT count(*) > 0 FROM raw_files").fetchall()[0][0])


def _release_duckdb() -> None:
    """dbt-duckdb keeps its DuckDB instance (and the file's lock) open after the run; let go of it, so a
    long-lived process such as the app does not hold the warehouse after a build."""
    import gc

    from dbt.adapters.duckdb.connections import DuckDBConnectionManager

    with DuckDBConnectionManager._LOCK:
        env, DuckDBConnectionManager._ENV = DuckDBConnectionManager._ENV, None
    if env is not None:
        env.close()
    gc.collect()


def _target_path() -> Path:
    return Path(os.environ.get("KNEEPOINT_DBT_TARGET") or PROJECT_ROOT / "target")
