"""Kept change builds: the SQL of a change build, recorded from dbt once and run again without it.

A change build (ingest/build.py, kind "changes") sends the same SQL every time. The models read what changed from
tables (the build window, int_changed_files, kneepoint_changed_series and _disks, macros/build_scope.sql), never
from Jinja variables, and a change build's tests always read the changed rows only; so dbt compiles one warehouse's
change build, phase by phase, to the same statements whatever the change. The first change build of a warehouse
(and the first after any change to what decides the SQL) runs dbt and records every statement dbt sends (its
`SQLQuery` events); later ones send those statements themselves: no dbt import (~1.5 s), no per-node overhead
(~40 ms each for ~36 nodes). The SQL is dbt's, in dbt's order; nothing here writes a model.

    recorder = Recorder()                      # a dbt callback while dbt runs the phase
    save(folder, key, recorder.statements())   # after dbt succeeded
    replay(con, load(folder, key))              # later: the same statements, or NotAsRecorded -> let dbt run it

A new warehouse's first build (kind "full", no build state yet) is as fixed: the models are built from the raw
layer and none exists yet. Its recording is made once per machine, on an empty warehouse of its own whose name is
found nowhere else in dbt's SQL, and made a new warehouse's by putting that one's name in its place (`renamed`):
dbt writes the warehouse's name into its SQL, and only there. A first ingest then neither loads dbt (~75 MB) nor
pays its per-node costs (10,000 fio files: a 4 s build instead of 11 s).

A recording is keyed (by the caller) on everything that decides the SQL: the parsed project's files, dbt's and the
adapter's versions, the warehouse's engine and name, the raw layer's schema, the dbt arguments. Running it differs
from dbt only in what it does not do (logs, run_results). Anything unexpected hands the phase back to dbt: a
statement that fails (a relation renamed by hand, a half-finished build's leftovers) or a test that finds rows
(dbt then reports the failure its own way and skips what depends on it). The open transaction is rolled back first,
and a change build is idempotent over its window (that is also what makes a killed build safe to run again).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kneepoint.ingest.errors import OUT_OF_MEMORY

log = logging.getLogger(__name__)

_KEPT_FILES = 16
_BEGIN = ("BEGIN", "BEGIN TRANSACTION")
_END = ("COMMIT", "COMMIT TRANSACTION", "ROLLBACK", "ROLLBACK TRANSACTION")


@dataclass(frozen=True, slots=True)
class Step:
    """The statements of one dbt node (`model.kneepoint.fct_io_results`, `test.kneepoint....`), or of one run of
    dbt's own statements outside nodes (the relation cache, schemas, on-run-start), in the order dbt sent them."""

    name: str
    statements: tuple[str, ...]

    @property
    def node(self) -> str | None:
        return self.name if self.name.split(".", 1)[0] in ("model", "test", "operation", "snapshot", "seed") else None


class Recorder:
    """A dbt event callback that keeps the SQL dbt sends, grouped into Steps.

    dbt may run nodes on several threads (PostgreSQL: 4), so their statements interleave; each node's statements
    become one Step, placed where the node started. A node starts after its parents have finished, so that order
    respects the graph."""

    def __init__(self) -> None:
        self._steps: dict[str, list[str]] = {}
        self._outside = 0  # numbers the runs of statements outside nodes
        self._last: str | None = None
        self.replayable = True

    def __call__(self, event: Any) -> None:
        if event.info.name != "SQLQuery":
            return
        data = event.data
        node = data.node_info.unique_id if data.node_info and data.node_info.unique_id else None
        if node is not None and node.startswith("unit_test."):
            self.replayable = False  # dbt checks a unit test's result itself: not a statement's rows
        if node is None:
            if self._last is None or not self._last.startswith("dbt:"):
                self._outside += 1
            name = f"dbt:{self._outside}:{data.conn_name}"
        else:
            name = node
        self._last = name
        self._steps.setdefault(name, []).append(data.sql)

    def steps(self) -> list[Step]:
        return [Step(name, tuple(sql)) for name, sql in self._steps.items()]


def save(folder: Path, key: str, steps: list[Step]) -> None:
    """Keep a recording (written whole or not at all; the oldest beyond _KEPT_FILES go)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{key[:32]}.json"
    tmp = path.with_suffix(f".{os.getpid()}.part")
    tmp.write_text(json.dumps({"key": key, "steps": [[s.name, list(s.statements)] for s in steps]}))
    tmp.replace(path)
    for old in sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime)[:-_KEPT_FILES]:
        old.unlink(missing_ok=True)


def load(folder: Path, key: str) -> list[Step] | None:
    path = folder / f"{key[:32]}.json"
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("key") != key:
        return None
    return [Step(name, tuple(statements)) for name, statements in doc["steps"]]


def renamed(steps: list[Step], recorded_on: str, name: str) -> list[Step]:
    """A recording made on the warehouse named `recorded_on`, for the warehouse named `name`. dbt writes the
    warehouse's name into its SQL (relations as "name"."main"."model", its catalog queries, its connections'
    names); `recorded_on` is a name found nowhere else in it, so every occurrence is the warehouse's."""
    return [
        Step(s.name.replace(recorded_on, name), tuple(sql.replace(recorded_on, name) for sql in s.statements))
        for s in steps
    ]


class NotAsRecorded(Exception):
    """A phase did not go as recorded (see the module): dbt runs it. The message says why."""

    def __init__(self, why: str, out_of_memory: bool = False) -> None:
        super().__init__(why)
        self.out_of_memory = out_of_memory


def replay(con: Any, steps: list[Step], progress: Callable[[str], None] | None = None) -> dict[str, float]:
    """Send a recording's statements on `con` (a warehouse connection in autocommit, as ingest.warehouse.connect
    returns): the seconds per node, as dbt reports them. NotAsRecorded when it did not go as recorded, the open
    transaction rolled back."""
    node_seconds: dict[str, float] = {}
    nodes = {s.name: i for i, s in enumerate((s for s in steps if s.node and not s.name.startswith("operation.")), 1)}
    in_transaction = False
    try:
        for step in steps:
            started = time.perf_counter()
            if step.name in nodes and progress is not None:
                what = (
                    f"testing {_test_name(step)}" if step.name.startswith("test.") else f"building {_model_name(step)}"
                )
                _say(progress, f"{what} ({nodes[step.name]} of {len(nodes)})")
            for sql in step.statements:
                word = sql.strip().rstrip(";").upper()
                con.execute(sql)
                if word in _BEGIN:
                    in_transaction = True
                elif word in _END:
                    in_transaction = False
                elif step.name.startswith("test.") and _test_failed(con):
                    _roll_back(con, in_transaction)
                    raise NotAsRecorded(f"test {_test_name(step)} found rows")
            # dbt lets go of a node's connection at its end, rolling back what is open (a test's read).
            if in_transaction:
                con.execute("ROLLBACK")
                in_transaction = False
            if step.node:
                node_seconds[step.name] = round(time.perf_counter() - started, 4)
    except NotAsRecorded:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure: dbt runs the phase and says what is wrong
        _roll_back(con, in_transaction)
        raise NotAsRecorded(f"{step.name}: {exc}", out_of_memory=OUT_OF_MEMORY in str(exc)) from exc
    return node_seconds


def _say(progress: Callable[[str], None], text: str) -> None:
    try:
        progress(text)
    except Exception:  # noqa: BLE001 - showing progress is not the build (as for dbt's events)
        log.warning("build progress could not be shown", exc_info=True)


def _model_name(step: Step) -> str:
    return step.name.rsplit(".", 1)[-1]


def _test_name(step: Step) -> str:
    # test.kneepoint.unique_dim_files_file_id.e7617f0d2d -> unique_dim_files_file_id
    parts = step.name.split(".")
    return parts[2] if len(parts) > 2 else step.name


def _test_failed(con: Any) -> bool:
    """Whether the statement just sent was a dbt test's verdict that fails (`should_error`)."""
    names = [d[0] for d in (con.description or ())]
    if "should_error" not in names:
        return False
    row = con.fetchone()
    return bool(row and row[names.index("should_error")])


def _roll_back(con: Any, in_transaction: bool) -> None:
    if not in_transaction:
        return
    try:
        con.execute("ROLLBACK")
    except Exception:  # noqa: BLE001 - the connection is closed next; nothing was committed
        log.debug("rollback after a failed replay failed", exc_info=True)
