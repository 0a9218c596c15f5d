"""The team's warehouse beside the embedded one: the same measurements on DuckDB and on PostgreSQL, in one run.

    team.<engine>.prepare     bench/rows.py's raw layer of N fact rows (1M at full size), made once
    team.<engine>.build       `kneepoint build --full-refresh` over it: every model and every dbt test
    team.<engine>.ingest      `kneepoint ingest ONE_FIO_FILE` into that warehouse (a new file every run)
    team.<engine>.uploaders   16 `kneepoint ingest FOLDER` processes started at once, each storing a folder of
                              new fio files and building with the cut-off; files stored per second of wall time

The PostgreSQL server: the one $KNEEPOINT_BENCH_POSTGRES names (a role allowed to CREATE DATABASE; each size gets
a database `kp_bench_team_<size>`, dropped and made again), else $KNEEPOINT_TEST_POSTGRES, else a throwaway server
started for the run (tests/postgres_server.py, fsync off) and stopped by its process id at the end. Without one,
only DuckDB is measured and the results say why. The password reaches the children as $PGPASSWORD, never in a
command line or a results file.

On DuckDB the 16 uploaders take turns at the file (one writer at a time): they wait for it as long as it takes
(KNEEPOINT_LOCK_WAIT_S), so the figure is what one file serializes, not a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.harness import Log, Spec, rows_label

KNEEPOINT = str(Path(sys.executable).parent / "kneepoint")
ROWS = {"full": 1_000_000, "tiny": 20_000}
# (processes, folders each stores one after another, fio files per folder)
UPLOADERS = {"full": (16, 2, 10), "tiny": (4, 1, 2)}
ENGINES = ("duckdb", "postgres")


@dataclass
class Server:
    """The PostgreSQL server of the run: its URL without the password, and how to stop it if the run started it."""

    url: str | None
    why_not: str = ""
    started_pid: int | None = None
    started_in: Path | None = None
    password: str = ""  # for the children's $PGPASSWORD only

    def database(self, name: str) -> str:
        from kneepoint.ingest.postgres import Target

        assert self.url is not None
        return str(Target(self.url.rsplit("/", 1)[0] + "/" + name))

    def stop(self) -> None:
        if self.started_pid is not None:
            from tests.postgres_server import stop

            stop(self.started_pid)
            self.started_pid = None
        if self.started_in is not None:  # its data directory holds every size's warehouse: gigabytes
            shutil.rmtree(self.started_in, ignore_errors=True)
            self.started_in = None


def server(log: Log) -> Server:
    """Find or start the PostgreSQL server of the run."""
    from kneepoint.ingest.postgres import Target

    url = os.environ.get("KNEEPOINT_BENCH_POSTGRES") or os.environ.get("KNEEPOINT_TEST_POSTGRES")
    pid = base = None
    if not url:
        from tests import postgres_server

        if postgres_server.binaries() is None:
            return Server(None, "PostgreSQL is not installed here (no initdb): only DuckDB was measured")
        base = Path(tempfile.mkdtemp(prefix="kp-bench-pg-"))
        base.chmod(0o755)  # the server runs as a non-root user
        started = postgres_server.start(base / "server")
        url, pid = started.url, started.pid
        log(f"team: started a throwaway PostgreSQL server (pid {pid})")
    target = Target(url)
    return Server(target.url_without_password(), started_pid=pid, started_in=base, password=target.password)


def new_database(url: str) -> None:
    """The database `url` names, empty (dropped first if a previous run left it); made from the server's
    `postgres` database."""
    import psycopg2

    from kneepoint.ingest.postgres import Target

    target = Target(url)
    name = target.dbname
    con = psycopg2.connect(**{**target.connect_kwargs(), "dbname": "postgres"})
    con.autocommit = True
    try:
        with con.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            cur.execute(f'CREATE DATABASE "{name}"')
    finally:
        con.close()


def chains(size: str, out_dir: Path, srv: Server, sample: Path) -> list[list[Spec]]:
    """One chain per engine (prepare, build, ingest, uploaders), DuckDB's first."""
    rows = ROWS[size]
    label = rows_label(rows)
    processes, folders, files = UPLOADERS[size]
    out = []
    for engine in ENGINES:
        if engine == "postgres" and srv.url is None:
            continue
        db = str(out_dir / f"team-{label}.duckdb") if engine == "duckdb" else srv.database(f"kp_bench_team_{label}")
        prefix = f"team.{engine}"
        out.append(
            [
                Spec(f"{prefix}.prepare", "team_prepare", {"db": db, "rows": rows}, runs=1, warmup=0),
                # No warm-up: dbt's partial parse is warm from the prepare's manifest; a full build is minutes.
                Spec(f"{prefix}.build", "build", {"db": db}, runs=3 if size == "full" else 1, warmup=0),
                Spec(f"{prefix}.ingest", cmd_for_run=_ingest(db, sample, out_dir / f"team-{engine}-ingest")),
                Spec(
                    f"{prefix}.uploaders",
                    "team_uploaders",
                    {
                        "db": db,
                        "sample": str(sample),
                        "folder": str(out_dir / f"team-{engine}-uploads"),
                        "processes": processes,
                        "folders": folders,
                        "files": files,
                    },
                    runs=1,
                    warmup=0,
                ),
            ]
        )
    return out


def _ingest(db: str, sample: Path, folder: Path):
    from bench.changes import new_fio_file

    def cmd(run: int) -> list[str]:
        path = new_fio_file(sample, folder / f"run-{run}.json", f"team-ingest-{run}")
        return [KNEEPOINT, "--db", db, "ingest", str(path), "--disk", "bench team"]

    return cmd


# --------------------------------------------------------------------------------------------- worker jobs


def job_prepare(args: dict[str, Any]) -> dict[str, Any]:
    """A new warehouse of `rows` fact rows: a DuckDB file, or a PostgreSQL database made afresh."""
    from bench.rows import make_rows
    from kneepoint.ingest.postgres import is_url
    from kneepoint.ingest.warehouse import locate

    db = args["db"]
    t0 = time.perf_counter()
    if is_url(db):
        new_database(db)
        with tempfile.TemporaryDirectory() as scratch:
            made = make_rows(locate(db), int(args["rows"]), Path(scratch) / "rows.duckdb")
    else:
        made = make_rows(locate(db), int(args["rows"]), Path(f"{db}.scratch"))
    return {"made": made, "stages": {"prepare_s": time.perf_counter() - t0}}


def job_uploaders(args: dict[str, Any]) -> dict[str, Any]:
    """`processes` uploaders at once, each running `kneepoint ingest FOLDER` for `folders` folders of `files` new
    fio files in turn (a host sending its sweeps), after a VACUUM of what the full builds before rewrote. Every
    file must land exactly once; then one `kneepoint build` runs every dbt test over the result."""
    from bench.changes import new_fio_file
    from kneepoint.ingest.warehouse import connect

    db, sample, base = args["db"], Path(args["sample"]), Path(args["folder"])
    processes, folders, files = int(args["processes"]), int(args["folders"]), int(args["files"])
    script = []
    for p in range(processes):
        commands = []
        for f in range(folders):
            folder = base / f"uploader-{p}" / f"sweep-{f}"
            for i in range(files):
                new_fio_file(sample, folder / f"{i}.json", f"team-upload-{p}-{f}-{i}")
            commands.append([KNEEPOINT, "--db", db, "ingest", str(folder), "--disk", f"uploader {p}"])
        script.append(commands)
    before = _stored_files(connect, db)
    vacuum_s = _vacuum(db)
    # The uploaders run as a user's commands do: dbt's folder is the one kneepoint keeps per warehouse (not the
    # harness's folder for this job), which the one-file ingests before them filled: hosts that have built this
    # warehouse before. A host's first build ever runs dbt once (~8 s on PostgreSQL at 1M fact rows) before its
    # builds send the recorded SQL; with an empty folder here that one build was measured: 13.8 files/s, not 23.
    env = {k: v for k, v in os.environ.items() if k != "KNEEPOINT_DBT_TARGET"} | {"KNEEPOINT_LOCK_WAIT_S": "3600"}
    t0 = time.perf_counter()
    # Each uploader is a shell running its commands one after another; all start at once.
    shells = [
        subprocess.Popen(
            ["sh", "-c", " && ".join(" ".join(_quote(a) for a in cmd) for cmd in commands)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for commands in script
    ]
    failed = []
    for shell in shells:
        _, err = shell.communicate()
        if shell.returncode:
            failed.append(err.decode(errors="replace")[-2000:])
    wall_s = time.perf_counter() - t0
    if failed:
        raise RuntimeError(f"{len(failed)} uploader(s) failed:\n" + "\n---\n".join(failed))
    stored = _stored_files(connect, db) - before
    expected = processes * folders * files
    if stored != expected:
        raise RuntimeError(f"{stored} files stored, {expected} sent")
    t1 = time.perf_counter()
    settle = subprocess.run([KNEEPOINT, "--db", db, "build"], env=env, capture_output=True, text=True)
    if settle.returncode:
        raise RuntimeError(f"the build after the uploads failed:\n{settle.stdout[-2000:]}{settle.stderr[-2000:]}")
    return {
        "files": expected,
        "processes": processes,
        "files_per_s": round(expected / wall_s, 2),
        "stages": {"uploads_s": wall_s, "settle_build_s": time.perf_counter() - t1},
        "vacuum_before_s": round(vacuum_s, 1),
    }


def _vacuum(db: str) -> float:
    """On PostgreSQL, VACUUM (ANALYZE) the database first: the full builds before this step rewrote millions of rows,
    and in the minutes after them the server's autovacuum does the same work, which would be measured as the
    uploaders' cost (9.0 files/s measured in its midst, 15.5 after it). A team's hosts upload long after the rare
    full rebuild. Its seconds."""
    import psycopg2

    from kneepoint.ingest.postgres import Target, is_url

    if not is_url(db):
        return 0.0
    t0 = time.perf_counter()
    con = psycopg2.connect(**Target(db).connect_kwargs())
    con.autocommit = True  # VACUUM runs outside a transaction
    try:
        with con.cursor() as cur:
            cur.execute("VACUUM (ANALYZE)")
    finally:
        con.close()
    return time.perf_counter() - t0


def _stored_files(connect: Any, db: str) -> int:
    con = connect(db, read_only=True)
    try:
        return con.execute("SELECT count(*) FROM raw_files").fetchone()[0]
    finally:
        con.close()


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)


# --------------------------------------------------------------------------------------------- summary


def summarize(m: dict[str, Any]) -> dict[str, Any]:
    """Per engine: the full build, the one-file ingest and the uploaders, medians (memory: the worst run)."""
    out: dict[str, Any] = {}
    for name, g in m.items():
        kind, engine, what = (name.split(".") + ["", ""])[:3]
        if kind != "team" or what == "prepare":
            continue
        med = g["median"]
        entry = {"wall_s": med["wall_s"], "cpu_s": med["cpu_s"], "worst_peak_mb": g["worst_peak_mb"]}
        entry["runs"] = g["runs_counted"]
        if what == "build":
            nodes = {k.removeprefix("dbt:"): v for k, v in med["stages"].items() if k.startswith("dbt:")}
            entry["slowest_nodes_s"] = dict(sorted(nodes.items(), key=lambda kv: -kv[1])[:8])
        if what == "uploaders":
            entry |= {k: g["result"][k] for k in ("files", "processes", "files_per_s")}
            entry["settle_build_s"] = round(med["stages"]["settle_build_s"], 2)
        out.setdefault(engine, {})[what] = entry
    return out


def targets(team: dict[str, Any], add: Any) -> None:
    """Issue 20's: PostgreSQL's full build within 3x DuckDB's, one-file ingest <= 3 s, 16 uploaders >= 20 files/s."""
    duck, pg = team.get("duckdb", {}), team.get("postgres", {})
    if "build" in duck and "build" in pg:
        ratio = pg["build"]["wall_s"] / duck["build"]["wall_s"]
        add(
            "PostgreSQL full build (every model and test) against DuckDB's, same rows",
            "<= 3x",
            f"{pg['build']['wall_s']:.1f} s vs {duck['build']['wall_s']:.1f} s ({ratio:.2f}x)",
            ratio <= 3,
        )
    for engine, figures in team.items():
        if "ingest" in figures:
            add(
                f"one-file ingest into the team-size warehouse ({engine})",
                "<= 3 s",
                f"{figures['ingest']['wall_s']:.2f} s",
                figures["ingest"]["wall_s"] <= 3,
            )
    if "uploaders" in pg:
        u = pg["uploaders"]
        add(
            f"{u['processes']} uploaders at once on PostgreSQL, builds with the cut-off",
            ">= 20 files/s",
            f"{u['files_per_s']} files/s ({u['files']} files)",
            u["files_per_s"] >= 20,
        )
