"""The `kneepoint` command line as the crash tests run it (tests/reliability/conftest.py kneepoint_under_test):

    python tests/reliability/cli_under_test.py [--batch-files N] KNEEPOINT-ARGS...

`--batch-files N` cuts the loader's batches to N files (ingest/load.py BATCH_FILES): a few dozen files then commit
many times, so a kill can land between commits, as it does in a large ingest.

A recorded change build (ingest/replay.py) sends its SQL in well under a second, so a kill aimed at it would
miss. Here each statement it sends is first written to REPLAY_TRACE (beside dbt's log, which the tests read for
dbt's nodes) and followed by a pause: a kill then lands between two statements, inside or between transactions, as
it lands between two dbt nodes."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

PAUSE_S = 0.02


def replay_trace() -> Path:
    """Where the traced statements go: the dbt target folder's logs (the tests set KNEEPOINT_DBT_TARGET)."""
    return (
        Path(os.environ.get("KNEEPOINT_DBT_TARGET") or Path(__file__).parents[2] / "target")
        / "logs"
        / "replay-trace.log"
    )


class _Traced:
    def __init__(self, con: Any, trace: Any) -> None:
        self._con = con
        self._trace = trace

    def execute(self, sql: str, *args: Any) -> Any:
        self._trace.write(f"statement {' '.join(sql.split())[:120]}\n")
        self._trace.flush()
        result = self._con.execute(sql, *args)
        time.sleep(PAUSE_S)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)


def _trace_replays() -> None:
    from kneepoint.ingest import replay

    real = replay.replay

    def traced(con: Any, steps: Any, progress: Any = None) -> Any:
        replay_trace().parent.mkdir(parents=True, exist_ok=True)
        with open(replay_trace(), "a") as trace:
            return real(_Traced(con, trace), steps, progress)

    replay.replay = traced


def main() -> int:
    args = sys.argv[1:]
    if args[:1] == ["--batch-files"]:
        import kneepoint.ingest.load as load

        if not hasattr(load, "BATCH_FILES"):
            sys.exit("kneepoint.ingest.load.BATCH_FILES is gone: update tests/reliability/cli_under_test.py")
        load.BATCH_FILES = int(args[1])
        args = args[2:]
    _trace_replays()
    from kneepoint.app.cli.main import main as kneepoint

    sys.argv = ["kneepoint", *args]
    return kneepoint()


if __name__ == "__main__":
    sys.exit(main())
