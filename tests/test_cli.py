"""The command line's contract: which warehouse it uses, what it refuses before touching anything, and what it prints
of the users' labels. In-process (main()), each test on its own warehouses, the environment restored by monkeypatch."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from kneepoint.app.cli.main import main
from kneepoint.ingest.warehouse import connect, list_files
from tests.helpers import SAMPLE

FIO = SAMPLE / "fio" / "randread-4k-jobs1.json"
SQLIO = SAMPLE / "sqlio" / "synthetic-p10-sweep.txt"
# What a terminal would act on rather than show: escape sequences (colour, window title), CR, the bell, bidi overrides.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def stored_names(db: Path) -> list[str]:
    con = connect(db, read_only=True)
    try:
        return [f["name"] for f in list_files(con)]
    finally:
        con.close()


@pytest.fixture
def three_warehouses(tmp_path: Path, monkeypatch) -> dict[str, Path]:
    """--db, $KNEEPOINT_DB and ./warehouse.duckdb, each holding a file the others do not."""
    places = {"flag": tmp_path / "flag.duckdb", "env": tmp_path / "env.duckdb", "cwd": tmp_path / "warehouse.duckdb"}
    for (name, db), path in zip(places.items(), (FIO, SQLIO, SAMPLE / "fio" / "seqread-128k-jobs1.json"), strict=True):
        assert main(["--db", str(db), "ingest", str(path), "--disk", name, "--no-build"]) == 0
    monkeypatch.chdir(tmp_path)
    return places


def _listed(capsys) -> set[str]:
    return {f["disk"] for f in json.loads(capsys.readouterr().out)}


def test_db_flag_beats_the_environment_beats_the_current_folder(three_warehouses, monkeypatch, capsys):
    capsys.readouterr()
    monkeypatch.setenv("KNEEPOINT_DB", str(three_warehouses["env"]))
    assert main(["--db", str(three_warehouses["flag"]), "files", "--json"]) == 0
    assert _listed(capsys) == {"flag"}
    # after the flag was used, the environment is as it was: the next command in this process is not steered
    assert os.environ["KNEEPOINT_DB"] == str(three_warehouses["env"])
    assert main(["files", "--json"]) == 0
    assert _listed(capsys) == {"env"}
    monkeypatch.delenv("KNEEPOINT_DB")
    assert main(["files", "--json"]) == 0
    assert _listed(capsys) == {"cwd"}


def test_the_app_finds_its_warehouse_in_the_same_order(three_warehouses, monkeypatch):
    """`kneepoint app` hands its pages the warehouse it resolved (KNEEPOINT_DB of the Streamlit process, which it
    execs into); the pages resolve it as the command line does (queries.current_db), with no --db of their own."""
    from kneepoint.app import queries

    started: list[dict[str, str]] = []
    monkeypatch.setattr(os, "execve", lambda _path, _argv, env: started.append(env))

    def app_warehouse(*flag: str) -> Path:
        assert main([*flag, "app", "--no-sample"]) == 0
        with monkeypatch.context() as page_process:
            page_process.setenv("KNEEPOINT_DB", started.pop()["KNEEPOINT_DB"])
            return queries.current_db()

    monkeypatch.setenv("KNEEPOINT_DB", str(three_warehouses["env"]))
    assert app_warehouse("--db", str(three_warehouses["flag"])) == three_warehouses["flag"]
    assert app_warehouse() == three_warehouses["env"]
    monkeypatch.delenv("KNEEPOINT_DB")
    assert app_warehouse() == three_warehouses["cwd"]
    # and a page process started without the variable reads ./warehouse.duckdb
    assert queries.current_db() == three_warehouses["cwd"]


def test_the_flag_after_the_command_counts_too(three_warehouses, monkeypatch, capsys):
    capsys.readouterr()
    monkeypatch.setenv("KNEEPOINT_DB", str(three_warehouses["env"]))
    assert main(["files", "--json", "--db", str(three_warehouses["flag"])]) == 0
    assert _listed(capsys) == {"flag"}


READS = [["files"], ["saturation"], ["headroom"], ["report", "--out", "r.html"], ["export", "--out", "b.zip"],
         ["images", "--out", "images"]]  # fmt: skip


@pytest.mark.parametrize("command", READS)
def test_a_read_command_on_a_missing_warehouse_says_so(command, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    missing = tmp_path / "nowhere.duckdb"
    assert main(["--db", str(missing), *command]) == 1
    assert f"no warehouse at {missing}" in capsys.readouterr().err
    assert not missing.exists()
    assert list(tmp_path.iterdir()) == []  # nothing written either


def test_a_read_command_on_a_postgresql_database_without_a_warehouse_says_so(pg_url, tmp_path, monkeypatch, capsys):
    import psycopg2

    monkeypatch.chdir(tmp_path)
    for command in READS:
        assert main(["--db", pg_url, *command]) == 1, command
        assert "kneepoint: no warehouse at postgresql://" in capsys.readouterr().err
    unreachable = "postgresql://kneepoint@127.0.0.1:9/nowhere"  # nothing listens on port 9
    for command in READS:
        assert main(["--db", unreachable, *command]) == 1, command
        assert f"kneepoint: cannot reach the warehouse {unreachable}: " in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    con = psycopg2.connect(pg_url)
    try:
        with con.cursor() as cur:  # nothing created in the database
            cur.execute("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                        "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')")  # fmt: skip
            assert cur.fetchone()[0] == 0
    finally:
        con.close()


def test_labels_past_their_limits_are_refused_before_anything_is_stored(tmp_path, capsys):
    db = tmp_path / "w.duckdb"
    assert main(["--db", str(db), "ingest", str(FIO), "--disk", "L" * 130_000]) == 2
    assert "the disk label is 130,000 characters long; the limit is 200" in capsys.readouterr().err
    assert not db.exists()
    assert main(["--db", str(db), "ingest", str(FIO), "--disk", "ok", "--notes", "n" * 10_001, "--no-build"]) == 2
    assert main(["--db", str(db), "ingest", str(FIO), "--disk", "ok", "--no-build"]) == 0
    file_id = json.loads(_files_json(db, capsys))[0]["file_id"]
    assert main(["--db", str(db), "relabel", file_id, "--host", "H" * 201]) == 2
    assert "the host label is 201 characters long" in capsys.readouterr().err
    assert json.loads(_files_json(db, capsys))[0]["host"] is None


def _files_json(db: Path, capsys) -> str:
    capsys.readouterr()
    assert main(["--db", str(db), "files", "--json"]) == 0
    return capsys.readouterr().out


HOSTILE = "\x1b[31mRED\x1b[0m\x1b]0;pwned\x07\rover\u202eevil"


def test_labels_reach_the_terminal_escaped(tmp_path, capsys):
    db = tmp_path / "w.duckdb"
    assert main(["--db", str(db), "ingest", str(FIO), "--disk", HOSTILE, "--host", HOSTILE]) == 0
    printed = capsys.readouterr().out
    for command in (["files"], ["saturation"], ["report", "--out", str(tmp_path / "r.html")]):
        assert main(["--db", str(db), *command]) == 0
        out = capsys.readouterr()
        printed += out.out + out.err
    assert not CONTROL.search(printed), CONTROL.findall(printed)
    assert "\\x1b[31mRED" in printed and "\\u202eevil" in printed  # shown, as escapes
    # stored as typed, and --json is escaped by JSON itself
    assert json.loads(_files_json(db, capsys))[0]["disk"] == HOSTILE


def test_a_command_stores_without_importing_pandas_and_pyarrow_still_reaches_it(tmp_path):
    """The command line spares pyarrow's import of pandas (warehouse.arrow_without_pandas, before any command): an
    ingest and a build run without it, and a pyarrow call that needs pandas afterwards still imports it."""
    import subprocess
    import sys

    fio_files = [str(p) for p in sorted((SAMPLE / "fio").glob("*.json"))]
    script = (
        "import sys\n"
        "from kneepoint.app.cli.main import main\n"
        f"code = main(['--db', {str(tmp_path / 'w.duckdb')!r}, 'ingest', *{fio_files!r}, '--disk', 'd'])\n"
        "assert code == 0, code\n"
        "assert 'pandas' not in sys.modules, 'pandas was imported'\n"
        "import pyarrow as pa\n"
        "frame = pa.table({'iops': [1.5, None]}).to_pandas()\n"
        "assert frame['iops'].iloc[0] == 1.5\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
