"""The app keeps a DuckDB warehouse open for the length of one page run (app/web/uploads.kept_open): the page's
reads share the open database, another process gets the file between two page runs, and where nothing can be
kept the page reads as before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kneepoint.app import queries
from kneepoint.app.web.uploads import kept_open
from kneepoint.ingest.load import ingest_inputs
from kneepoint.ingest.sources import iter_paths
from tests.helpers import SAMPLE

FIO = SAMPLE / "fio" / "randread-4k-jobs1.json"
# Another process opening the file for writing, as `kneepoint ingest` in a shell does.
OPEN_ELSEWHERE = "import duckdb, sys\nduckdb.connect(sys.argv[1]).close()\n"


def _open_from_another_process(db: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", OPEN_ELSEWHERE, str(db)], capture_output=True, text=True)


def test_a_page_run_keeps_the_file_and_lets_go_of_it_after(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_inputs(db, iter_paths([FIO]), disk="d", build=False)
    with kept_open(db):
        assert queries.tables(db) >= {"raw_files"}  # a read inside the page run shares the open database
        held = _open_from_another_process(db)
        assert held.returncode != 0 and "lock" in held.stderr.lower(), held.stderr
    assert _open_from_another_process(db).returncode == 0


def test_no_warehouse_is_made_by_a_page_run(tmp_path):
    db = tmp_path / "none.duckdb"
    with kept_open(db):
        assert queries.tables(db) == frozenset()
    assert not db.exists()


def test_a_warehouse_another_process_holds_is_read_as_before(tmp_path):
    """Nothing kept, nothing raised: the page's reads then wait for the file, or say it is busy, as they did."""
    db = tmp_path / "w.duckdb"
    ingest_inputs(db, iter_paths([FIO]), disk="d", build=False)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys\nc = duckdb.connect(sys.argv[1])\nprint('held', flush=True)\n"
         "sys.stdin.read()\n", str(db)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        with kept_open(db):
            pass
    finally:
        holder.communicate("")
    with kept_open(db):
        assert "raw_files" in queries.tables(db)
