"""The team warehouse on PostgreSQL: the same pipeline, the same answers as DuckDB, many uploaders at once, bundles
and warehouse files moved between the engines, and a password never shown.

Needs a PostgreSQL server (tests/postgres.py: skipped without one, a failure under KNEEPOINT_REQUIRE_POSTGRES=1).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
from datetime import datetime
from pathlib import Path

import pytest

from kneepoint.app.cli.saturation import saturation_rows
from kneepoint.app.sample import sample_sets
from kneepoint.app.sharing.bundle import export_bundle, import_bundle, mart_names
from kneepoint.ingest import postgres, warehouse
from kneepoint.ingest.build import build_models, run_model_tests
from kneepoint.ingest.errors import DatabaseError
from kneepoint.ingest.load import ingest_inputs
from kneepoint.ingest.sources import iter_paths
from kneepoint.ingest.warehouse import connect, file_content, list_files, locate
from tests.helpers import ROOT, SAMPLE, corpus_dir
from tests.observed import observed_logs, store_observed
from tests.postgres import admin_execute, database_url, files_containing, new_database, password_of

# Columns that say when a row was made, not what it holds: they differ between two warehouses made apart.
WHEN_MADE = {"changed_at", "finished_at", "stored_seq"}
CORPUS_DISKS = {
    "fio": "corpus fio",
    "diskspd": "corpus diskspd",
    "sqlio": "corpus sqlio",
    "crystaldiskmark": "corpus cdm",
    "sqlstats": "corpus sql",
}


def _ingest_everything(db) -> int:
    """The sample data (with its labels) and the real-world corpus (one disk per tool), without a build."""
    added = 0
    for s in sample_sets():
        folder = SAMPLE / s["folder"]
        files = sorted(p for p in folder.iterdir() if p.suffix in tuple(s["suffixes"]))
        report = ingest_inputs(
            db, iter_paths(files), disk=s["disk"], host=s.get("host"), tags=s.get("tags", []),
            notes=s.get("notes"), build=False, workers=1,
        )  # fmt: skip
        added += len(report.added)
    corpus = corpus_dir()
    for folder, disk in CORPUS_DISKS.items():
        files = sorted(p for p in (corpus / folder).iterdir() if p.is_file())
        report = ingest_inputs(db, iter_paths(files), disk=disk, host="corpus-host", build=False, workers=1)
        added += len(report.added)
    # Observed production load on two benchmarked disks (stored as records: no reader is needed for the models).
    con = connect(db)
    try:
        for n, records in enumerate(observed_logs()):
            for disk, host in (("synthetic P10 (modelled)", "synthetic-sql01"), ("corpus fio", "corpus-host")):
                store_observed(con, records, disk=disk, host=host, name=f"log{n}.csv", variant=disk)
    finally:
        con.close()
    return added


def _rows(db, sql: str) -> tuple[list[str], list[tuple]]:
    con = connect(db, read_only=True)
    try:
        cur = con.execute(sql)
        names = [d[0] for d in cur.description]
        return names, cur.fetchall()
    finally:
        con.close()


def _normal(value):
    """A value as both engines' rows can be compared: numbers as floats, lists as tuples, times in UTC."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list | tuple):
        return tuple(_normal(v) for v in value)
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    return value


def _close(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _sort_key(row: tuple) -> tuple:
    # Floats rounded for the order only (the comparison itself is to 1e-9): rows that differ in the 12th digit
    # must still line up.
    return tuple((v is None, round(v, 6) if isinstance(v, float) else repr(v)) for v in row)


def assert_same_rows(name: str, duck: tuple[list[str], list[tuple]], pg: tuple[list[str], list[tuple]]) -> None:
    (duck_names, duck_rows), (pg_names, pg_rows) = duck, pg
    assert duck_names == pg_names, f"{name}: the columns differ"
    keep = [i for i, n in enumerate(duck_names) if n not in WHEN_MADE]
    d = sorted((tuple(_normal(r[i]) for i in keep) for r in duck_rows), key=_sort_key)
    p = sorted((tuple(_normal(r[i]) for i in keep) for r in pg_rows), key=_sort_key)
    assert len(d) == len(p), f"{name}: {len(d)} rows on DuckDB, {len(p)} on PostgreSQL"
    for a, b in zip(d, p, strict=True):
        differing = [duck_names[keep[i]] for i, (x, y) in enumerate(zip(a, b, strict=True)) if not _close(x, y)]
        assert not differing, f"{name}: columns {differing} differ:\n  DuckDB     {a}\n  PostgreSQL {b}"


@pytest.fixture(scope="module")
def both_engines(postgres_admin, tmp_path_factory):
    """The sample data and the corpus in a DuckDB file and a PostgreSQL database, each built with every test."""
    duck = tmp_path_factory.mktemp("engines") / "warehouse.duckdb"
    with new_database(postgres_admin) as url:
        pg = locate(url)
        for db in (duck, pg):
            assert _ingest_everything(db) > 40
            # One ingest time in both: the models' times (first seen, last seen) then compare too.
            con = connect(db)
            try:
                con.execute("UPDATE raw_files SET ingested_at = CAST('2026-11-27 12:00:00+00' AS TIMESTAMPTZ)")
            finally:
                con.close()
            result = build_models(db, all_tests=True)
            assert result.success, result.failures
        yield duck, pg


def _models() -> list[str]:
    """Every model of the project (staging, intermediate, marts), by name."""
    return sorted(p.stem for p in (ROOT / "models").rglob("*.sql"))


def test_every_model_is_the_same_on_both_engines(both_engines):
    duck, pg = both_engines
    models = _models()
    assert set(mart_names()) <= set(models) and len(models) >= 20
    # int_changed_files and stg_file_changes read the window of the build that ran last: empty after a build.
    for model in models:
        assert_same_rows(model, _rows(duck, f"SELECT * FROM {model}"), _rows(pg, f"SELECT * FROM {model}"))
    # The raw layer too (the same bytes, labels and parsed values), and the USL fits (the same Python on both).
    for table in (*warehouse.RAW_TABLES, "kneepoint_usl_fits"):
        assert_same_rows(table, _rows(duck, f"SELECT * FROM {table}"), _rows(pg, f"SELECT * FROM {table}"))


@pytest.mark.parametrize("tolerance", [0.0, 0.02, 0.25])
def test_the_saturation_rule_at_any_tolerance_is_the_same_on_both_engines(both_engines, tolerance):
    duck, pg = both_engines
    for by_threads in (False, True):
        d, p = saturation_rows(duck, tolerance, by_threads), saturation_rows(pg, tolerance, by_threads)
        assert d, "the sample data has saturation rows"
        # disk and load series (series_kind) have keys of their own
        names = sorted({n for r in d + p for n in r})
        assert_same_rows(
            f"saturation rule at {tolerance}",
            (names, [tuple(r.get(n) for n in names) for r in d]),
            (names, [tuple(r.get(n) for n in names) for r in p]),
        )


def test_the_usl_fits_agree_within_a_millionth(both_engines):
    duck, pg = both_engines
    sql = "SELECT series_id, usl_lambda_iops, usl_sigma, usl_kappa FROM mart_usl_fits WHERE usl_fitted ORDER BY 1"
    d, p = _rows(duck, sql)[1], _rows(pg, sql)[1]
    assert len(d) == len(p) > 5
    for a, b in zip(d, p, strict=True):
        assert a[0] == b[0]
        for x, y in zip(a[1:], b[1:], strict=True):
            assert math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-12)


# -- the raw layer: one transaction per file, sha256 unique, lineage ------------------------------------------


def test_a_file_is_stored_once_with_its_lineage(pg_db, sample_fio):
    first = ingest_inputs(pg_db, iter_paths(sample_fio[:2]), disk="P10", host="sql01", tags=["a"], build=False)
    again = ingest_inputs(pg_db, iter_paths(sample_fio[:2]), disk="other", build=False)
    assert [o.status for o in first.outcomes] == ["added", "added"]
    assert [o.status for o in again.outcomes] == ["duplicate", "duplicate"]
    con = connect(pg_db)
    try:
        files = list_files(con)
        assert [(f["name"], f["disk"], f["host"], f["tags"]) for f in files] == [
            (p.name, "P10", "sql01", ["a"]) for p in sample_fio[:2]
        ]
        assert file_content(con, files[0]["file_id"]) == (sample_fio[0].name, sample_fio[0].read_bytes())
        compression = con.execute("SELECT DISTINCT compression FROM raw_file_contents").fetchall()
        assert compression == [("zstd",)]
        changes = con.execute("SELECT change FROM raw_file_changes ORDER BY change_seq").fetchall()
        assert changes == [("stored",), ("stored",)]
    finally:
        con.close()


def test_relabel_delete_and_incremental_builds_match_a_full_refresh(pg_db, sample_fio):
    ingest_inputs(pg_db, iter_paths(sample_fio[:4]), disk="A")
    ingest_inputs(pg_db, iter_paths(sample_fio[4:7]), disk="B", host="h")
    con = connect(pg_db)
    try:
        ids = [f["file_id"] for f in list_files(con)]
        warehouse.relabel_file(con, ids[0], disk="B", host="h")
        warehouse.delete_file(con, ids[5])
    finally:
        con.close()
    result = build_models(pg_db, all_tests=True)
    assert result.success and result.kind == "changes", result
    incremental = {m: _rows(pg_db, f"SELECT * FROM {m}") for m in mart_names()}
    result = build_models(pg_db, full_refresh=True, all_tests=True)
    assert result.success and result.kind == "full", result
    for m in mart_names():
        assert_same_rows(m, incremental[m], _rows(pg_db, f"SELECT * FROM {m}"))


def test_the_latency_point_tests_fire_on_postgresql(pg_db, sample_fio):
    """The latency curves' tests have a PostgreSQL body of their own (a repeated key grouped by value; each point set
    read once): a repeated point and a percentile past 100 are each found (passing is the build)."""
    ingest_inputs(pg_db, iter_paths(sample_fio[:2]), disk="A")
    assert build_models(pg_db, all_tests=True).success
    con = connect(pg_db)
    try:
        con.execute("INSERT INTO fct_latency_distribution SELECT * FROM fct_latency_distribution LIMIT 1")
        con.execute(
            "UPDATE fct_latency_distribution SET percentile = 150 WHERE (io_result_id, point_index) = "
            "(SELECT io_result_id, max(point_index) FROM fct_latency_distribution GROUP BY 1 ORDER BY 1 LIMIT 1)"
        )
    finally:
        con.close()
    failures = run_model_tests(pg_db, ["test_name:unique_by_hash", "assert_latency_distribution_is_a_curve"])
    for failed in ("unique_fct_latency_distribution_point", "assert_latency_distribution_is_a_curve"):
        assert any(failed in f for f in failures), failures


# -- many uploaders ----------------------------------------------------------------------------------------------


def _kneepoint(*args: str, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kneepoint.app.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )


def _distinct_fio_files(folder: Path, n: int) -> list[Path]:
    """`n` fio files with different bytes (the sample sweep, each with a job name of its own)."""
    out = []
    sources = sorted((SAMPLE / "fio").glob("*.json"))
    for i in range(n):
        doc = json.loads(sources[i % len(sources)].read_text())
        doc["jobs"][0]["jobname"] = f"upload-{i}"
        path = folder / f"upload-{i:02d}.json"
        path.write_text(json.dumps(doc))
        out.append(path)
    return out


def test_sixteen_uploaders_at_once_store_every_file_exactly_once(pg_url, tmp_path):
    """16 command-line uploaders (two of them with the same file) at once: every file lands once, each command's
    build passes its dbt tests while the others keep storing, and no command waits for another's whole build."""
    files = _distinct_fio_files(tmp_path, 15)
    uploads = [*files, files[0]]  # the 16th uploads the 1st one's file again, at the same moment
    results: list[subprocess.CompletedProcess | None] = [None] * len(uploads)
    start = threading.Barrier(len(uploads))

    def upload(i: int) -> None:
        start.wait()
        results[i] = _kneepoint("--db", pg_url, "ingest", str(uploads[i]), "--disk", f"disk {i % 4}")

    threads = [threading.Thread(target=upload, args=(i,)) for i in range(len(uploads))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        assert r is not None and r.returncode == 0, (r.stdout, r.stderr) if r else "no result"
    outputs = "\n".join(r.stdout for r in results if r)
    # Some command built, and at least one left its change to a build already running instead of waiting for it.
    assert "built in" in outputs or "every model rebuilt" in outputs
    assert "covers these changes" in outputs
    con = connect(pg_url)
    try:
        stored = con.execute("SELECT name, count(*) FROM raw_files GROUP BY name ORDER BY name").fetchall()
        assert stored == [(f.name, 1) for f in files]
        assert con.execute("SELECT count(*) FROM raw_file_changes").fetchone()[0] == len(files)
    finally:
        con.close()
    # Everything the uploads stored is built, and every test over every row passes.
    final = _kneepoint("--db", pg_url, "build")
    assert final.returncode == 0, final.stderr
    assert _rows(pg_url, "SELECT count(DISTINCT file_id) FROM fct_io_results")[1] == [(len(files),)]


def test_app_sessions_uploading_at_once_on_one_server(pg_db, tmp_path):
    """Streamlit serves each session on a thread of one process: 8 sessions storing at once."""
    from kneepoint.app.web.uploads import preview_upload, store_previews

    files = _distinct_fio_files(tmp_path, 8)
    errors: list[BaseException] = []
    start = threading.Barrier(len(files))

    def session(path: Path) -> None:
        try:
            start.wait()
            previews = preview_upload(path.name, path.read_bytes())
            outcome = store_previews(pg_db, previews, disk="app disk", host=None, tags=[], notes=None)
            assert len(outcome.added) == 1 and (outcome.build is None or outcome.build.success)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=session, args=(f,)) for f in files]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert _rows(pg_db, "SELECT count(*) FROM raw_files")[1] == [(len(files),)]
    assert build_models(pg_db, all_tests=True).success


# -- moving and merging ----------------------------------------------------------------------------------------


def _files(db) -> list[tuple]:
    return _rows(db, "SELECT file_id, name, sha256, disk, host, tags, notes, format, tool_version FROM raw_files")[1]


def test_a_bundle_moves_from_duckdb_to_postgresql_and_back(pg_db, tmp_path, sample_fio):
    laptop = tmp_path / "laptop.duckdb"
    ingest_inputs(laptop, iter_paths(sample_fio[:3]), disk="P10", host="sql01", tags=["t"], notes="laptop")
    bundle = export_bundle(laptop, tmp_path / "laptop.zip").path
    result = import_bundle(pg_db, bundle)
    assert len(result.added) == 3 and not result.errors and result.build_failures == []
    assert sorted(_files(pg_db)) == sorted(_files(laptop))
    back = export_bundle(pg_db, tmp_path / "team.zip").path
    returned = tmp_path / "returned.duckdb"
    assert len(import_bundle(returned, back).added) == 3
    assert sorted(_files(returned)) == sorted(_files(laptop))
    for m in mart_names():
        assert_same_rows(m, _rows(laptop, f"SELECT * FROM {m}"), _rows(returned, f"SELECT * FROM {m}"))


def test_two_teams_bundles_with_overlapping_files_merge_without_duplicates(pg_db, tmp_path, sample_fio):
    team_a, team_b = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    ingest_inputs(team_a, iter_paths(sample_fio[:4]), disk="A")
    ingest_inputs(team_b, iter_paths(sample_fio[2:6]), disk="B")
    a = import_bundle(pg_db, export_bundle(team_a, tmp_path / "a.zip").path)
    b = import_bundle(pg_db, export_bundle(team_b, tmp_path / "b.zip").path)
    assert (len(a.added), len(a.duplicates)) == (4, 0)
    assert (len(b.added), len(b.duplicates)) == (2, 2)  # the two files team A had already sent
    names = _rows(pg_db, "SELECT sha256, count(*) FROM raw_files GROUP BY sha256")[1]
    assert len(names) == 6 and all(n == 1 for _, n in names)
    assert build_models(pg_db, all_tests=True).success


def test_import_of_a_whole_duckdb_warehouse_file(pg_url, tmp_path, sample_fio):
    laptop = tmp_path / "laptop.duckdb"
    ingest_inputs(laptop, iter_paths(sample_fio[:5]), disk="P10", host="sql01")
    done = _kneepoint("--db", pg_url, "import", str(laptop))
    assert done.returncode == 0, done.stderr
    assert "5 file(s) added" in done.stdout
    assert sorted(_files(pg_url)) == sorted(_files(laptop))
    for m in mart_names():
        assert_same_rows(m, _rows(laptop, f"SELECT * FROM {m}"), _rows(pg_url, f"SELECT * FROM {m}"))
    again = _kneepoint("--db", pg_url, "import", str(laptop))
    assert "0 file(s) added; 5 already stored" in again.stdout


# -- safe on a shared server -----------------------------------------------------------------------------------


def test_the_password_is_never_shown_stored_or_reported(pg_url, tmp_path, sample_fio):
    secret = password_of(pg_url)
    assert len(secret) >= 12
    target_dir = tmp_path / "dbt-target"
    env = {"KNEEPOINT_DBT_TARGET": str(target_dir)}
    runs = [
        _kneepoint("--db", pg_url, "ingest", *map(str, sample_fio[:3]), "--disk", "P10", env=env),
        _kneepoint("--db", pg_url, "files", env=env),
        _kneepoint("--db", pg_url, "build", env=env),
        _kneepoint("--db", pg_url, "saturation", env=env),
        _kneepoint("--db", pg_url, "report", "--out", str(tmp_path / "report.html"), env=env),
        _kneepoint("--db", pg_url, "export", "--out", str(tmp_path / "bundle.zip"), env=env),
        # a wrong password and a server that is not there: the messages name the server, not the secret
        _kneepoint("--db", pg_url.replace(secret, secret[::-1]), "files", env=env),
        _kneepoint("--db", pg_url.replace(str(postgres.Target(pg_url).port), "1"), "files", env=env),
    ]
    for r in runs[:6]:
        assert r.returncode == 0, r.stderr
    for r in runs[6:]:
        assert r.returncode != 0
        assert "kneepoint:" in r.stderr and "127.0.0.1" in r.stderr
    for r in runs:
        assert secret not in r.stdout + r.stderr
        assert secret[::-1] not in r.stdout + r.stderr
    assert "postgresql://kneepoint@127.0.0.1" in runs[2].stdout  # the warehouse named, without its password
    # Not in dbt's folder (logs, compiled SQL, the kept manifest), the report, the bundle, nor the warehouse.
    assert files_containing(target_dir, secret) == []
    assert files_containing(tmp_path, secret) == []
    con = connect(pg_url)
    try:
        tables = con.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND data_type IN ('text', 'character varying')"
        ).fetchall()
        for table, column in tables:
            hits = con.execute(f"SELECT count(*) FROM {table} WHERE {column} LIKE ?", [f"%{secret}%"]).fetchone()
            assert hits == (0,), f"{table}.{column}"
    finally:
        con.close()


def test_a_closed_connections_session_serves_the_next_one_with_nothing_left_of_its_use(pg_db):
    """A command opens several connections in turn; their sessions are reused, reset: a lock, a setting or an open
    transaction of one user never reaches the next, and a read-only session is never handed to a writer."""
    first = connect(pg_db)
    backend = first.execute("SELECT pg_backend_pid()").fetchone()[0]
    first.execute("SELECT pg_advisory_lock(?)", [warehouse.BUILD_LOCK_KEY])
    first.execute("SET work_mem = '1MB'")
    first.execute("BEGIN")
    first.execute("CREATE TABLE left_open (x int)")
    first.close()
    assert first.closed
    with pytest.raises(DatabaseError, match="closed"):
        first.execute("SELECT 1")

    second = connect(pg_db)
    try:
        assert second.execute("SELECT pg_backend_pid()").fetchone()[0] == backend  # reused, not a new session
        assert second.execute("SHOW work_mem").fetchone()[0] != "1MB"
        assert second.execute("SELECT to_regclass('left_open')").fetchone()[0] is None  # rolled back
        assert second.execute("SHOW search_path").fetchone()[0] == postgres.SCHEMA  # the session's own settings
        other = postgres.Connection(pg_db)  # another session: the build lock is free
        try:
            assert other.execute("SELECT pg_try_advisory_lock(?)", [warehouse.BUILD_LOCK_KEY]).fetchone()[0]
        finally:
            other.close()
    finally:
        second.close()

    reader = connect(pg_db, read_only=True)
    read_only_backend = reader.execute("SELECT pg_backend_pid()").fetchone()[0]
    reader.close()
    writers = [connect(pg_db) for _ in range(3)]  # more than the idle read-write sessions
    try:
        assert read_only_backend not in [w.execute("SELECT pg_backend_pid()").fetchone()[0] for w in writers]
        writers[-1].execute("CREATE TABLE written (x int)")
    finally:
        for w in writers:
            w.close()


def test_a_location_prints_without_its_password():
    target = postgres.Target("postgresql://team:s3cr%40t@db.example:6432/perf?sslmode=require")
    assert str(target) == "postgresql://team@db.example:6432/perf"
    assert "s3cr" not in repr(target) and "s3cr" not in target.url_without_password()
    assert target.url_without_password() == "postgresql://team@db.example:6432/perf?sslmode=require"
    assert target.password == "s3cr@t"
    assert postgres.mask("could not use postgresql://team:hunter2@db/x") == "could not use postgresql://team:***@db/x"
    assert postgres.mask("host=db password=hunter2 dbname=x") == "host=db password=*** dbname=x"
    with pytest.raises(ValueError, match="name the database"):
        postgres.Target("postgresql://team:hunter2@db.example:5432")


def test_the_reading_pages_work_with_a_read_only_role(postgres_admin, pg_url, sample_fio):
    """The app's reads (the queries its pages make, the CLI's read commands) with an account that may only read."""
    from kneepoint.app import queries

    ingest_inputs(pg_url, iter_paths(sample_fio), disk="P10")
    dbname = postgres.Target(pg_url).dbname
    admin_execute(
        database_url(postgres_admin, dbname),
        "CREATE ROLE kp_reader LOGIN PASSWORD 'reader-secret-1'",
        "GRANT USAGE ON SCHEMA public TO kp_reader",
        "GRANT SELECT ON ALL TABLES IN SCHEMA public TO kp_reader",
        "GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO kp_reader",
    )
    try:
        reader = locate(database_url(postgres_admin, dbname, "kp_reader", "reader-secret-1"))
        disks = queries.disks(reader)
        assert disks["disk"].to_list() == ["P10"]
        options = queries.series_options(disks["disk_key"].to_list(), reader)
        assert options.height > 0
        assert saturation_rows(reader, 0.05)
        r = _kneepoint("--db", str(database_url(postgres_admin, dbname, "kp_reader", "reader-secret-1")), "saturation")
        assert r.returncode == 0, r.stderr
        refused = _kneepoint(
            "--db", database_url(postgres_admin, dbname, "kp_reader", "reader-secret-1"),
            "ingest", str(sample_fio[0]), "--disk", "x",
        )  # fmt: skip
        assert refused.returncode != 0 and "may only be read" in refused.stderr
    finally:
        admin_execute(
            database_url(postgres_admin, dbname),
            "REASSIGN OWNED BY kp_reader TO CURRENT_USER",
            "DROP OWNED BY kp_reader",
            "DROP ROLE kp_reader",
        )


def test_labels_stay_query_parameters(pg_db, sample_fio):
    label = "x'); DROP TABLE raw_files; --"
    ingest_inputs(pg_db, iter_paths(sample_fio[:1]), disk=label, host="h'%s?")
    assert _rows(pg_db, "SELECT disk, host FROM raw_files")[1] == [(label, "h'%s?")]
    assert _rows(pg_db, "SELECT disk FROM dim_disks")[1] == [(label,)]


# -- what the app and the report read ---------------------------------------------------------------------------


def _frame_rows(df) -> tuple[list[str], list[tuple]]:
    return df.columns, df.rows()


def _page_reads(db) -> dict[str, object]:
    """Every read the pages and the report make (app/queries.py), on the sample data and the corpus."""
    from kneepoint.app import queries

    keys = queries.all_disk_keys(db)
    options = queries.series_options(keys, db)
    sql_keys = queries.sql_disks(db)
    reads: dict[str, object] = {
        "all_disk_keys": keys,
        "disks": queries.disks(db),
        "disk_labels": queries.disk_labels(db),
        "host_labels": queries.host_labels(db),
        "series_options": options,
        "shared_workload_disks": queries.shared_workload_disks(keys, db),
        "saturation_overview": queries.saturation_overview(keys, db),
        "disk_grid": queries.disk_grid(keys, db),
        "latency_target": sorted(queries.latency_target(keys, None, 5.0, db).items()),
        "unit_checks": queries.unit_checks(keys, db),
        "unit_mismatches": queries.unit_mismatches(keys, db),
        "stored_files": queries.stored_files(db).drop("ingested_at"),
        "sql_disks": sql_keys,
        "sql_files": queries.sql_files(sql_keys, db),
        "statements": queries.statements(sql_keys, db=db),
        "statement_tables": queries.statement_tables(sql_keys, db=db),
        "table_totals": queries.table_totals(sql_keys, db=db),
        "time_totals": sorted(queries.time_totals(sql_keys, db=db).items()),
        "can_write": queries.can_write(db),
    }
    # the workloads measured on the most disks and at the most loads: what Curves and Compare open on
    for row in options.head(3).iter_rows(named=True):
        series = queries.Series(*(row[c] for c in queries.Series._fields))
        name = "/".join(str(v) for v in series)
        reads[f"curve_points {name}"] = queries.curve_points(keys, series, db)
        reads[f"saturation {name}"] = queries.saturation(keys, series, db)
        reads[f"saturation at 5% {name}"] = queries.saturation(keys, series, db, tolerance=0.05)
        reads[f"saturation_by_threads {name}"] = queries.saturation_by_threads(keys, series, db)
        reads[f"latency_percentiles {name}"] = queries.latency_percentiles(keys, series, db=db)
        reads[f"latency_percentiles every load {name}"] = queries.latency_percentiles(keys, series, True, db)
        reads[f"statements_on_curve {name}"] = queries.statements_on_curve(sql_keys, series, db=db)
    return reads


def test_every_page_read_is_the_same_on_both_engines(both_engines):
    duck, pg = both_engines
    on_duck, on_pg = _page_reads(duck), _page_reads(pg)
    assert on_duck.keys() == on_pg.keys()
    assert len(on_duck["all_disk_keys"]) >= 8 and on_duck["sql_disks"]
    for name, value in on_duck.items():
        other = on_pg[name]
        if hasattr(value, "columns"):
            assert value.height > 0 or name.startswith(("unit_mismatches", "statements_on_curve")), name
            assert_same_rows(name, _frame_rows(value), _frame_rows(other))
        else:
            assert _close(_normal(value), _normal(other)), f"{name}: {value!r} on DuckDB, {other!r} on PostgreSQL"


def test_the_report_says_the_same_on_both_engines(both_engines):
    """The report of the whole warehouse reads PostgreSQL itself (no copy): the same summary, charts and tables."""
    import re

    from kneepoint.app.sharing.anonymize import shared_warehouse
    from kneepoint.app.sharing.report import render

    when = datetime(2026, 11, 27, 12, 0)
    reports = []
    for db in both_engines:
        with shared_warehouse(db) as share:
            assert share.db == db  # every disk, not anonymized: read in place
            reports.append(render(share, generated_at=when))
    duck, pg = reports
    assert duck.summary == pg.summary and len(duck.summary) >= 8
    assert [c.title for c in duck.charts] == [c.title for c in pg.charts] and len(duck.charts) > 20

    def text(html: str) -> str:
        """The page's words and numbers as a reader sees them: scripts (the figures' data) and tags left out."""
        html = re.sub(r"(?s)<script.*?</script>", "", html)
        return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))

    on_duck, on_pg = text(duck.html), text(pg.html)
    at = next((i for i, (a, b) in enumerate(zip(on_duck, on_pg, strict=False)) if a != b), None)
    assert on_duck == on_pg, (
        f"from character {at}:\n  DuckDB     {on_duck[at : at + 300]}\n  PostgreSQL {on_pg[at : at + 300]}"
    )


def test_the_app_reads_with_a_read_only_role_and_says_it_cannot_write(postgres_admin, pg_url, monkeypatch):
    """Every page opens for an account that may only read; Upload and Stored files say it may not write."""
    from streamlit.testing.v1 import AppTest

    from kneepoint.app import queries
    from kneepoint.app.sample import load_sample_if_empty
    from kneepoint.app.sharing.report import build_report

    assert load_sample_if_empty(locate(pg_url)) > 0
    dbname = postgres.Target(pg_url).dbname
    admin_execute(
        database_url(postgres_admin, dbname),
        "CREATE ROLE kp_viewer LOGIN PASSWORD 'viewer-secret-1'",
        "GRANT USAGE ON SCHEMA public TO kp_viewer",
        "GRANT SELECT ON ALL TABLES IN SCHEMA public TO kp_viewer",
        "GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO kp_viewer",
    )
    try:
        reader = database_url(postgres_admin, dbname, "kp_viewer", "viewer-secret-1")
        monkeypatch.setenv("KNEEPOINT_DB", reader)
        app = str(ROOT / "app" / "web" / "streamlit_app.py")
        for page in ("curves", "compare", "sql", "report", "upload", "data"):
            at = AppTest.from_file(app, default_timeout=180)
            if page == "data":
                at.query_params["action"] = "Relabel"
                at.query_params["file"] = list_files_of(pg_url)[0]
            at.switch_page(f"views/{page}.py").run()
            assert not at.exception, (page, at.exception)
            assert not at.error, (page, [e.value for e in at.error])
            warnings = [m.value for m in at.warning]
            if page in ("upload", "data"):
                assert any("may only be read with this account" in m for m in warnings), (page, warnings)
                assert all("viewer-secret" not in m for m in warnings)
            if page == "upload":
                store = [b for b in at.button if b.label.startswith("Store")]
                assert store and store[0].disabled
            if page == "curves":
                assert at.get("plotly_chart"), "Curves draws no chart"
        # the report of every disk reads the warehouse in place; of some disks, through a copy it builds apart
        keys = queries.all_disk_keys(locate(reader))
        assert len(build_report(reader).summary) == len(keys) > 1
        assert [d for d, _ in build_report(reader, disks=keys[:1]).summary] == keys[:1]
    finally:
        admin_execute(
            database_url(postgres_admin, dbname),
            "REASSIGN OWNED BY kp_viewer TO CURRENT_USER",
            "DROP OWNED BY kp_viewer",
            "DROP ROLE kp_viewer",
        )


def list_files_of(db) -> list[str]:
    con = connect(db, read_only=True)
    try:
        return [f["file_id"] for f in list_files(con)]
    finally:
        con.close()
