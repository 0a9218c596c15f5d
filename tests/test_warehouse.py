"""The raw layer: one transaction per file, sha256 idempotence, relabel/delete, the write lock, and a kill -9
in the middle of a large ingest."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
import signal
import string
import subprocess
import sys
import time
import types
from pathlib import Path

import duckdb
import pytest

from kneepoint.app.cli.main import main
from kneepoint.ingest import contents, warehouse
from kneepoint.ingest.errors import ParseError, WarehouseBusy
from kneepoint.ingest.formats import parse_bytes
from kneepoint.ingest.load import close_pool, ingest_inputs
from kneepoint.ingest.records import (
    ParsedFile,
)
from kneepoint.ingest.schema import content_part
from kneepoint.ingest.sources import InputFile, iter_paths
from kneepoint.ingest.warehouse import ROW_TABLES, StoreError, connect, row_counts, store_file
from tests.helpers import ROOT, SAMPLE, corpus_dir
from tests.reliability.inputs import expected_rows

KNEEPOINT = [sys.executable, "-m", "kneepoint.app.cli"]
FIO_SAMPLES = sorted((SAMPLE / "fio").glob("*.json"))


def fio_variants(folder: Path, n: int) -> list[Path]:
    """`n` distinct real fio files: the sample sweep with the document timestamp moved by one second each."""
    folder.mkdir(parents=True, exist_ok=True)
    texts = [p.read_text(encoding="utf-8") for p in FIO_SAMPLES]
    paths = []
    for i in range(n):
        text, count = re.subn(
            r'"timestamp" : (\d+)', lambda m, i=i: f'"timestamp" : {int(m[1]) + i}', texts[i % len(texts)], count=1
        )
        assert count == 1
        path = folder / f"v{i:04d}-{FIO_SAMPLES[i % len(texts)].name}"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def rows_per_file(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (file_id,) in con.execute("SELECT file_id FROM raw_files").fetchall():
        out[file_id] = dict.fromkeys(ROW_TABLES, 0)
    for table in ROW_TABLES:
        for file_id, n in con.execute(f"SELECT file_id, count(*) FROM {table} GROUP BY file_id").fetchall():
            assert file_id in out, f"{table} holds rows of file {file_id}, which is not in raw_files"
            out[file_id][table] = n
    return out


def parse_path(path: Path) -> tuple[bytes, ParsedFile]:
    data = path.read_bytes()
    return data, parse_bytes(data, str(path))


def sha256_of(data: bytes) -> str:
    return InputFile("x", data).sha256


# --- one file, one transaction -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("injected", "raised"),
    [
        (duckdb.ConversionException("injected failure on the 3rd table insert"), StoreError),
        (RuntimeError("injected failure on the 3rd table insert"), RuntimeError),
        (KeyboardInterrupt(), KeyboardInterrupt),
    ],
    ids=["duckdb-error", "python-error", "ctrl-c"],
)
def test_a_failure_inside_store_file_leaves_nothing_of_that_file(tmp_path, monkeypatch, injected, raised):
    con = connect(tmp_path / "w.duckdb")
    first_data, first = parse_path(FIO_SAMPLES[0])
    store_file(con, "first.json", first_data, sha256_of(first_data), first, disk="d")
    before = row_counts(con)

    data, parsed = parse_path(FIO_SAMPLES[1])
    file_id = sha256_of(data)[:16]
    calls: list[str] = []
    real_insert = warehouse.insert_rows

    def insert_failing_on_the_third_table(con, table, rows):
        calls.append(table)
        if len(calls) == 4:
            raise injected
        real_insert(con, table, rows)

    monkeypatch.setattr(warehouse, "insert_rows", insert_failing_on_the_third_table)
    with pytest.raises(raised):
        store_file(con, "second.json", data, sha256_of(data), parsed, disk="d")
    # The change log and two tables had their rows inserted before the failure: the rollback took them out again.
    assert calls == ["raw_file_changes", "raw_files", "raw_file_contents", "raw_io_records"]
    assert row_counts(con, file_id) == dict.fromkeys(warehouse.RAW_TABLES, 0)
    assert row_counts(con) == before

    # The connection is usable and the same file stores whole afterwards (it is not taken for a duplicate).
    monkeypatch.setattr(warehouse, "insert_rows", real_insert)
    stored = store_file(con, "second.json", data, sha256_of(data), parsed, disk="d")
    assert stored.status == "added"
    assert rows_per_file(con)[file_id] == expected_rows(parsed)
    con.close()


@pytest.mark.parametrize("failure", ["parse", "store"])
def test_a_failure_in_file_7_of_10_is_reported_and_the_others_are_stored(tmp_path, monkeypatch, failure):
    paths = fio_variants(tmp_path / "in", 10)
    seventh_sha = sha256_of(paths[6].read_bytes())
    if failure == "parse":
        paths[6].write_text('{\n  "fio version" : "fio-3.33",\n  "jobs" : [ {', encoding="utf-8")
    else:
        real_insert = warehouse.insert_rows

        def insert(con, table, rows):
            # Refused whenever the seventh file's rows are among them: in its batch, then on its own.
            if table == "raw_latency_histograms" and seventh_sha[:16] in rows["file_id"].to_pylist():
                raise duckdb.ConstraintException("injected: histogram rows refused")
            real_insert(con, table, rows)

        monkeypatch.setattr(warehouse, "insert_rows", insert)
    db = tmp_path / "w.duckdb"
    report = ingest_inputs(db, iter_paths(paths), disk="d", build=False)

    assert [o.status for o in report.outcomes] == ["added"] * 6 + ["error"] + ["added"] * 3
    reason = report.outcomes[6].reason or ""
    assert reason.startswith(str(paths[6]))
    assert ("cut short or malformed" if failure == "parse" else "injected: histogram rows refused") in reason
    con = connect(db, read_only=True)
    try:
        stored = rows_per_file(con)
        assert len(stored) == 9 and seventh_sha[:16] not in stored
        for path in paths[:6] + paths[7:]:
            data, parsed = parse_path(path)
            assert stored[sha256_of(data)[:16]] == expected_rows(parsed), path.name
    finally:
        con.close()


def test_a_warehouse_failure_stops_the_ingest_after_reporting_the_file(tmp_path, monkeypatch):
    paths = fio_variants(tmp_path / "in", 10)
    real_insert = warehouse.insert_rows
    seventh = sha256_of(paths[6].read_bytes())[:16]

    def insert(con, table, rows):
        # The disk fills up as the seventh file is written: in its batch, then again on its own.
        if table == "raw_files" and seventh in rows["file_id"].to_pylist():
            raise duckdb.IOException("injected: No space left on device")
        real_insert(con, table, rows)

    monkeypatch.setattr(warehouse, "insert_rows", insert)
    db = tmp_path / "w.duckdb"
    report = ingest_inputs(db, iter_paths(paths), disk="d", build=True)
    # Files 8-10 are not tried once the warehouse itself fails, and nothing is built.
    assert [o.status for o in report.outcomes] == ["added"] * 6 + ["error"]
    assert report.aborted is not None and "No space left on device" in report.aborted
    assert report.build is None
    con = connect(db, read_only=True)
    assert con.execute("SELECT count(*) FROM raw_files").fetchall()[0][0] == 6
    con.close()


def test_a_record_in_an_unknown_unit_is_refused_with_its_file_named(tmp_path):
    data, parsed = parse_path(FIO_SAMPLES[0])
    parsed.records[3].throughput_unit = "MBps"
    con = connect(tmp_path / "w.duckdb")
    with pytest.raises(StoreError, match=r"record 3: unknown throughput unit 'MBps'"):
        store_file(con, "x.json", data, sha256_of(data), parsed, disk="d")
    assert row_counts(con) == dict.fromkeys(warehouse.RAW_TABLES, 0)
    con.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_value_beyond_its_column_fails_only_its_file_when_rows_are_built_together(tmp_path, workers):
    """Rows go to Arrow for many files at once; one file's out-of-range value must not cost its neighbours."""
    paths = fio_variants(tmp_path / "in", 40)
    text = paths[17].read_text(encoding="utf-8")
    paths[17].write_text(re.sub(r'"iodepth" : "\d+"', '"iodepth" : "4294967296"', text), encoding="utf-8")
    db = tmp_path / "w.duckdb"
    report = ingest_inputs(db, iter_paths(paths), disk="d", build=False, workers=workers)

    assert [o.status for o in report.outcomes] == ["added"] * 17 + ["error"] + ["added"] * 22
    reason = report.outcomes[17].reason or ""
    assert reason.startswith(f"{paths[17]}: not stored (fio_json): rows do not fit the raw layer"), reason
    con = connect(db, read_only=True)
    try:
        stored = rows_per_file(con)
        assert len(stored) == 39
        for path in paths[:17] + paths[18:]:
            data, parsed = parse_path(path)
            assert stored[sha256_of(data)[:16]] == expected_rows(parsed), path.name
    finally:
        con.close()


def test_store_batch_builds_unprepared_rows_together_and_refuses_only_the_file_that_does_not_fit(tmp_path):
    files = []
    for i, path in enumerate(fio_variants(tmp_path / "in", 5)):
        data, parsed = parse_path(path)
        if i == 3:
            parsed.records[0].threads = 2**31
        files.append(warehouse.prepare_file(path.name, data, sha256_of(data), parsed, disk="d"))
    con = connect(tmp_path / "w.duckdb")
    try:
        results = warehouse.store_batch(con, files)
        assert [type(r).__name__ for r in results] == ["StoreResult"] * 3 + ["StoreError", "StoreResult"]
        assert "rows do not fit the raw layer" in results[3].reason
        assert sorted(rows_per_file(con)) == sorted(f.file_id for i, f in enumerate(files) if i != 3)
        # Each stored file's rows are its own: every raw_io_records row of a file carries that file's id.
        for f in files[:3] + files[4:]:
            assert row_counts(con, f.file_id)["raw_io_records"] == f.row_counts["raw_io_records"]
    finally:
        con.close()


def _row_tables(prepared: warehouse.PreparedFile) -> dict[str, list[dict]]:
    tables, (error,) = warehouse.raw_tables([prepared])
    assert error is None
    return {name: tables[name].to_pylist() for name in ROW_TABLES}


def test_a_file_of_many_records_becomes_the_same_rows_a_slice_at_a_time(monkeypatch):
    """prepare_file(take_records=True) turns a file of more than SLICE_RECORDS records into Arrow slice by slice,
    taking the records out of the parsed file: the rows are those of the whole file at once, for every format (a
    slice ends between runs, so a run's metadata rows are its first record's), and the records are gone."""
    monkeypatch.setattr(warehouse, "SLICE_RECORDS", 2)
    paths = [p for p in sorted(SAMPLE.rglob("*")) if p.is_file() and p.suffix != ".md" and p.name != "labels.json"]
    formats_seen = set()
    for path in paths:
        try:
            data, parsed = parse_path(path)
        except ParseError:
            continue
        whole = warehouse.prepare_file(path.name, data, sha256_of(data), parsed, disk="d")
        sliced = warehouse.prepare_file(path.name, data, sha256_of(data), parsed, disk="d", take_records=True)
        assert (sliced.records, sliced.runs, sliced.row_counts) == (whole.records, whole.runs, whole.row_counts)
        assert _row_tables(sliced) == _row_tables(whole), path
        assert parsed.records == [] or whole.records <= 2, path
        formats_seen.add(parsed.format)
    assert len(formats_seen) >= 8, formats_seen


def test_records_out_of_run_order_are_one_slice_and_keep_each_runs_first_metadata(monkeypatch):
    monkeypatch.setattr(warehouse, "SLICE_RECORDS", 1)
    data, parsed = parse_path(FIO_SAMPLES[0])
    first = parsed.records[0]
    records = []
    for run_index, value in ((0, "a"), (1, "b"), (0, "c"), (1, "d")):
        records.append(dataclasses.replace(first, run_index=run_index, metadata={"k": value, value: "v"}))
    rows = []
    for take in (False, True):
        f = warehouse.prepare_file(
            "x.json", data, sha256_of(data), ParsedFile("fio", list(records)), "d", take_records=take
        )
        rows.append(_row_tables(f)["raw_run_metadata"])
    assert rows[0] == rows[1]
    assert [(r["run_index"], r["key"], r["value"]) for r in rows[1]] == [
        (0, "k", "a"),
        (0, "a", "v"),
        (1, "k", "b"),
        (1, "b", "v"),
        (0, "c", "v"),
        (1, "d", "v"),
    ]


# --- idempotence, relabel, delete ----------------------------------------------------------------------------


def test_ingesting_every_corpus_file_twice_leaves_all_row_counts_unchanged(tmp_path):
    corpus = corpus_dir()
    db = tmp_path / "w.duckdb"
    first = ingest_inputs(db, iter_paths([corpus]), disk="corpus", build=False)
    added = {o.name: o.file_id for o in first.added}
    assert len(added) >= 30, [o.reason for o in first.errors]
    con = connect(db, read_only=True)
    counts = row_counts(con)
    con.close()

    second = ingest_inputs(db, iter_paths([corpus]), disk="corpus", build=False)
    con = connect(db, read_only=True)
    try:
        assert row_counts(con) == counts
    finally:
        con.close()
    assert not second.added
    assert {o.name: o.file_id for o in second.duplicates} == added
    assert {o.name for o in second.errors} == {o.name for o in first.errors}
    for outcome in second.duplicates:
        assert "same bytes (sha256" in (outcome.reason or "") and outcome.file_id in (outcome.reason or "")


def test_same_bytes_under_another_label_point_to_relabel(tmp_path):
    db = tmp_path / "w.duckdb"
    first = ingest_inputs(db, iter_paths([FIO_SAMPLES[0]]), disk="P10", host="sql01", build=False)
    file_id = first.added[0].file_id
    again = ingest_inputs(db, iter_paths([FIO_SAMPLES[0]]), disk="P20", build=False)
    (outcome,) = again.outcomes
    assert outcome.status == "duplicate" and outcome.file_id == file_id
    assert "disk 'P10' @ 'sql01'" in (outcome.reason or "")
    assert f"kneepoint relabel {file_id} --disk" in (outcome.reason or "")

    con = connect(db)
    try:
        warehouse.relabel_file(con, file_id, disk="P20")
        assert con.execute("SELECT disk, host FROM raw_files").fetchall() == [("P20", "sql01")]
        warehouse.relabel_file(con, file_id, host="")
        assert con.execute("SELECT disk, host FROM raw_files").fetchall() == [("P20", None)]
        with pytest.raises(ValueError, match="cannot be empty"):
            warehouse.relabel_file(con, file_id, disk=" ")
    finally:
        con.close()


def test_delete_removes_every_row_of_the_file_and_the_bytes_can_come_back(tmp_path):
    db = tmp_path / "w.duckdb"
    report = ingest_inputs(db, iter_paths(FIO_SAMPLES[:2]), disk="d", build=False)
    gone, kept = (o.file_id for o in report.added)
    con = connect(db)
    try:
        kept_rows = row_counts(con, kept)
        warehouse.delete_file(con, warehouse.resolve_file_id(con, gone[:6]))
        assert row_counts(con, gone) == dict.fromkeys(warehouse.RAW_TABLES, 0)
        assert row_counts(con, kept) == kept_rows
    finally:
        con.close()
    again = ingest_inputs(db, iter_paths(FIO_SAMPLES[:1]), disk="d", build=False)
    assert [o.status for o in again.outcomes] == ["added"] and again.outcomes[0].file_id == gone


def test_stored_bytes_go_into_parts_and_a_part_a_delete_empties_is_dropped(tmp_path, monkeypatch):
    """DuckDB rewrites a table's row group after any append to it, so the bytes are kept in parts and a store
    appends to the last one only (ingest/contents.py). Here a part holds ~10 KB: the sample files (12-21 KB
    compressed) take one each, and every reader still finds every file's bytes through the view raw_file_contents."""
    monkeypatch.setattr(contents, "CONTENT_PART_BYTES", 10_000)
    db = tmp_path / "w.duckdb"
    paths = FIO_SAMPLES[:4]
    ids = [ingest_inputs(db, iter_paths([p]), disk="d", build=False).added[0].file_id for p in paths]

    def parts(con) -> list[int]:
        return [r[0] for r in con.execute("SELECT part FROM kneepoint_content_parts ORDER BY part").fetchall()]

    def tables(con) -> set[str]:
        found = con.execute("SELECT table_name FROM duckdb_tables() WHERE table_name LIKE 'raw_file_contents%'")
        return {r[0] for r in found.fetchall()}

    con = connect(db)
    try:
        assert parts(con) == [1, 2, 3, 4]
        for path, file_id in zip(paths, ids, strict=True):
            assert warehouse.file_content(con, file_id) == (path.name, path.read_bytes())
        warehouse.delete_file(con, ids[1])
        assert parts(con) == [1, 3, 4]  # part 2 held that file alone: dropped, its blocks freed
        assert "raw_file_contents_part_00002" not in tables(con)
        warehouse.delete_file(con, ids[3])
        assert parts(con) == [1, 3, 4]  # the last part stays for the next store, empty
        assert con.execute("SELECT count(*) FROM raw_file_contents_part_00004").fetchall() == [(0,)]
        assert con.execute("SELECT file_id FROM raw_file_contents ORDER BY file_id").fetchall() == sorted(
            [(ids[0],), (ids[2],)]
        )
    finally:
        con.close()
    again = ingest_inputs(db, iter_paths([paths[1]]), disk="d", build=False)
    assert again.added[0].file_id == ids[1]
    con = connect(db, read_only=True)
    try:
        assert warehouse.file_content(con, ids[1]) == (paths[1].name, paths[1].read_bytes())
        assert row_counts(con)["raw_file_contents"] == 3
    finally:
        con.close()


def _as_an_older_kneepoint_left_the_bytes(db: Path, stored: list, in_parts: bool) -> None:
    """The stored files' bytes (FIO_SAMPLES in order) as they were, uncompressed, where an older kneepoint kept
    them: in one part of (file_id, content) under the view (before compression), or in a table raw_file_contents
    (before the parts); its schema to be completed by the next connect."""
    con = duckdb.connect(str(db))
    table = content_part(1).name if in_parts else "raw_file_contents"
    con.execute("DROP VIEW raw_file_contents")
    con.execute(f"DROP TABLE {content_part(1).name}")
    if not in_parts:
        con.execute("DROP TABLE kneepoint_content_parts")
    con.execute(f"CREATE TABLE {table} (file_id VARCHAR PRIMARY KEY, content BLOB NOT NULL)")
    for path, outcome in zip(FIO_SAMPLES, stored, strict=False):
        con.execute(f"INSERT INTO {table} VALUES (?, ?)", [outcome.file_id, path.read_bytes()])
    if in_parts:
        con.execute(f"CREATE VIEW raw_file_contents AS SELECT file_id, content FROM {table}")
    con.execute("DELETE FROM kneepoint_schema")
    con.close()


def test_an_older_warehouse_keeps_its_bytes_table_as_the_first_part(tmp_path):
    """Before the parts, raw_file_contents was one table: it becomes part 1, full, where its bytes stay."""
    db = tmp_path / "w.duckdb"
    first = ingest_inputs(db, iter_paths(FIO_SAMPLES[:2]), disk="d", build=False).added
    _as_an_older_kneepoint_left_the_bytes(db, first, in_parts=False)
    later = ingest_inputs(db, iter_paths(FIO_SAMPLES[2:3]), disk="d", build=False).added
    con = connect(db)
    try:
        parts = con.execute("SELECT part, bytes_appended FROM kneepoint_content_parts ORDER BY part").fetchall()
        assert [p for p, _ in parts] == [1, 2]  # the old table is full: the new file started part 2
        new_frame = contents.compress(FIO_SAMPLES[2].read_bytes())
        assert parts[1][1] == new_frame.size < FIO_SAMPLES[2].stat().st_size  # counted as stored: compressed
        kept = con.execute("SELECT file_id, compression FROM raw_file_contents ORDER BY compression NULLS FIRST")
        assert kept.fetchall() == [(first[0].file_id, None), (first[1].file_id, None), (later[0].file_id, "zstd")]
        for path, outcome in zip(FIO_SAMPLES[:3], [*first, *later], strict=True):
            assert warehouse.file_content(con, outcome.file_id) == (path.name, path.read_bytes())
        warehouse.delete_file(con, first[0].file_id)
        assert row_counts(con, first[0].file_id)["raw_file_contents"] == 0
    finally:
        con.close()


def test_parts_from_before_compression_keep_their_bytes_as_they_are(tmp_path):
    """Parts made before the bytes were compressed get the column compression (NULL: their bytes as they are);
    both kinds read back as the tool wrote them, and new files are stored compressed beside them."""
    db = tmp_path / "w.duckdb"
    first = ingest_inputs(db, iter_paths(FIO_SAMPLES[:2]), disk="d", build=False).added
    _as_an_older_kneepoint_left_the_bytes(db, first, in_parts=True)
    later = ingest_inputs(db, iter_paths(FIO_SAMPLES[2:3]), disk="d", build=False).added
    con = connect(db, read_only=True)
    try:
        kept = con.execute("SELECT file_id, compression FROM raw_file_contents ORDER BY compression NULLS FIRST")
        assert sorted(kept.fetchall()[:2]) == sorted((o.file_id, None) for o in first)
        for path, outcome in zip(FIO_SAMPLES[:3], [*first, *later], strict=True):
            assert warehouse.file_content(con, outcome.file_id) == (path.name, path.read_bytes())
    finally:
        con.close()


def test_a_stored_file_is_compressed_and_its_frame_is_checked_against_its_size(tmp_path):
    """The bytes are stored as a zstd frame of raw_files.size_bytes bytes: a text log shrinks several times, and
    a frame that does not decompress to that size is refused, never returned cut or padded."""
    db = tmp_path / "w.duckdb"
    path = SAMPLE / "sqlio" / "synthetic-p10-sweep.txt"
    (added,) = ingest_inputs(db, iter_paths([path]), disk="d", build=False).added
    con = connect(db, read_only=True)
    try:
        content, compression, size_bytes = con.execute(
            "SELECT c.content, c.compression, f.size_bytes FROM raw_file_contents c JOIN raw_files f USING (file_id)"
        ).fetchall()[0]
    finally:
        con.close()
    assert compression == "zstd" and size_bytes == path.stat().st_size
    assert len(content) * 4 < size_bytes
    assert contents.original(content, compression, size_bytes) == path.read_bytes()
    with pytest.raises(OSError):
        contents.original(content, compression, size_bytes + 1)
    with pytest.raises(ValueError, match="cannot read"):
        contents.original(content, "brotli", size_bytes)


def test_resolve_file_id_takes_a_unique_prefix(tmp_path):
    db = tmp_path / "w.duckdb"
    # 20 files: two ids share their first hex digit (there are 16), so that digit is ambiguous.
    report = ingest_inputs(db, iter_paths(fio_variants(tmp_path / "in", 20)), disk="d", build=False)
    ids = [o.file_id for o in report.added]
    firsts = [i[0] for i in ids]
    shared = next(c for c in firsts if firsts.count(c) > 1)
    con = connect(db, read_only=True)
    try:
        assert warehouse.resolve_file_id(con, ids[0][:10].upper()) == ids[0]
        with pytest.raises(KeyError, match="no stored file"):
            warehouse.resolve_file_id(con, "zz")
        with pytest.raises(KeyError, match="ambiguous"):
            warehouse.resolve_file_id(con, shared)
        with pytest.raises(KeyError, match="give a file id"):
            warehouse.resolve_file_id(con, " ")
    finally:
        con.close()


def test_connect_completes_the_schema_of_an_older_warehouse(tmp_path, sample_fio):
    db = tmp_path / "old.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE raw_files (file_id VARCHAR PRIMARY KEY, name VARCHAR)")
    con.close()
    con = connect(db)
    try:
        # raw_file_contents is a view (over the parts of the stored bytes)
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        assert tables >= set(warehouse.RAW_TABLES)
        # and it takes files: the declared constraints are there (sha256 UNIQUE is the duplicate check)
        data = sample_fio[0].read_bytes()
        parsed = parse_bytes(data, sample_fio[0].name)
        assert store_file(con, "a.json", data, sha256_of(data), parsed, disk="d").status == "added"
        assert store_file(con, "b.json", data, sha256_of(data), parsed, disk="d").status == "duplicate"
    finally:
        con.close()
    # and the command line ingests into it and builds the models over both files
    assert main(["--db", str(db), "ingest", str(sample_fio[1]), "--disk", "e"]) == 0
    con = connect(db, read_only=True)
    try:
        assert sorted(con.execute("SELECT file_name, disk FROM dim_files").fetchall()) == [
            ("a.json", "d"),
            (sample_fio[1].name, "e"),
        ]
    finally:
        con.close()


def test_a_warehouse_of_kneepoint_0_1_is_upgraded_and_built_from_its_files(tmp_path, sample_fio):
    """0.1 had no change log: its files become `stored` changes in the order they were ingested, its models are
    rebuilt from them, and it goes on taking files."""
    db = tmp_path / "w.duckdb"
    con = connect(db)
    try:
        for path in sample_fio[:2]:
            data = path.read_bytes()
            store_file(con, path.name, data, sha256_of(data), parse_bytes(data, path.name), disk="old")
        # what 0.1 left: no stored_seq, no change log, its own build marker
        con.execute("ALTER TABLE raw_files DROP COLUMN stored_seq")
        for table in ("raw_file_changes", "kneepoint_build_state", "kneepoint_build_window", "kneepoint_schema"):
            con.execute(f"DROP TABLE {table}")
        con.execute("CREATE TABLE kneepoint_last_build AS SELECT now() AS finished_at")
    finally:
        con.close()
    con = connect(db)
    try:
        changes = con.execute("SELECT change, count(*) FROM raw_file_changes GROUP BY ALL").fetchall()
        assert changes == [("stored", 2)]
        assert con.execute("SELECT count(*) FROM raw_files WHERE stored_seq IS NULL").fetchall() == [(0,)]
    finally:
        con.close()
    assert main(["--db", str(db), "ingest", str(sample_fio[2]), "--disk", "new"]) == 0
    con = connect(db, read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM dim_files").fetchall() == [(3,)]
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        assert "kneepoint_last_build" not in tables
    finally:
        con.close()


# --- the write lock ------------------------------------------------------------------------------------------

HOLD = "import duckdb, sys; con = duckdb.connect(sys.argv[1]); print('holding', flush=True); sys.stdin.read()"


@pytest.fixture
def held_warehouse(tmp_path):
    """A warehouse another process holds open for writing until the test closes its stdin."""
    db = tmp_path / "held.duckdb"
    connect(db).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
    yield db, holder
    if holder.poll() is None:
        holder.stdin.close()
        holder.wait(timeout=30)


@pytest.mark.timeout(120)  # a connect that never gives up fails here
def test_connect_waits_then_names_the_process_that_holds_the_warehouse(held_warehouse):
    db, holder = held_warehouse
    started = time.monotonic()
    with pytest.raises(WarehouseBusy) as err:
        connect(db, wait_s=0.6)
    assert time.monotonic() - started >= 0.6  # it did wait before giving up
    assert f"held by process {holder.pid} (" in str(err.value)
    assert "waited 0.6 s" in str(err.value)


def test_a_command_fails_clearly_after_the_bounded_wait(held_warehouse, sample_fio):
    db, holder = held_warehouse
    env = dict(os.environ, KNEEPOINT_LOCK_WAIT_S="1")
    for args in (["files"], ["ingest", str(sample_fio[0]), "--disk", "d", "--no-build"]):
        proc = subprocess.run(
            [*KNEEPOINT, "--db", str(db), *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
        )
        assert proc.returncode == 1, proc.stderr
        waiting, busy = proc.stderr.splitlines()[-2:]
        assert waiting.startswith(f"kneepoint: waiting for {db}, held by process {holder.pid} (")
        assert busy.startswith(f"kneepoint: warehouse busy: {db} is held by process {holder.pid} (")
        assert "waited 1 s" in proc.stderr


def test_a_command_proceeds_when_the_holder_lets_go_within_the_wait(held_warehouse, sample_fio):
    db, holder = held_warehouse
    env = dict(os.environ, KNEEPOINT_LOCK_WAIT_S="60")
    cmd = [*KNEEPOINT, "--db", str(db), "ingest", str(sample_fio[0]), "--disk", "d", "--no-build"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    assert proc.stderr is not None
    waiting = proc.stderr.readline()  # the command says it waits for the lock: now let go
    assert waiting.startswith(f"kneepoint: waiting for {db}, held by process {holder.pid} ("), waiting
    assert proc.poll() is None
    holder.stdin.close()
    holder.wait(timeout=30)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "1 file(s) added" in out


# --- kill -9 in the middle of a large ingest -----------------------------------------------------------------


def test_kill_9_mid_ingest_leaves_whole_files_and_a_rerun_completes_it(tmp_path, monkeypatch):
    from kneepoint.ingest.build import build_models

    monkeypatch.setenv("KNEEPOINT_DBT_TARGET", str(tmp_path / "dbt-target"))
    paths = fio_variants(tmp_path / "in", 500)
    db = tmp_path / "w.duckdb"
    cmd = [*KNEEPOINT, "--db", str(db), "ingest", str(tmp_path / "in"), "--disk", "d", "--no-build"]

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    assert proc.stdout is not None
    added_lines = 0
    for line in proc.stdout:
        added_lines += line.startswith("added")
        if added_lines == 120:  # files are being stored, one after another: kill in the middle
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait(timeout=60)
    proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL

    expected = {}
    for path in paths:
        data, parsed = parse_path(path)
        expected[sha256_of(data)[:16]] = expected_rows(parsed)

    con = connect(db)  # opens (replaying the log of the committed files)
    try:
        stored = rows_per_file(con)  # also: no rows of a file that is not in raw_files
        contents = con.execute("SELECT count(*) FROM raw_file_contents").fetchall()[0][0]
    finally:
        con.close()
    assert 120 <= len(stored) < 500
    assert contents == len(stored)
    for file_id, rows in stored.items():
        assert rows == expected[file_id], file_id
    assert build_models(db).success

    rerun = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert f"{500 - len(stored)} file(s) added" in rerun.stdout
    assert f"{len(stored)} already stored" in rerun.stdout
    con = connect(db, read_only=True)
    try:
        assert rows_per_file(con) == expected
        assert con.execute("SELECT count(*), count(DISTINCT sha256) FROM raw_files").fetchall() == [(500, 500)]
    finally:
        con.close()


def test_files_json_lists_what_is_stored(tmp_path, sample_fio):
    db = tmp_path / "w.duckdb"
    ingest_inputs(db, iter_paths(sample_fio[:2]), disk="P10", host="sql01", build=False)
    proc = subprocess.run(
        [*KNEEPOINT, "--db", str(db), "files", "--json"], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    files = json.loads(proc.stdout)
    keys = {"file_id", "name", "sha256", "format", "disk", "host", "records", "ingested_at"}
    assert [set(f) for f in files] == [keys, keys]
    assert {f["name"] for f in files} == {p.name for p in sample_fio[:2]}
    records = {p.name: len(parse_path(p)[1].records) for p in sample_fio[:2]}
    for f in files:
        assert f["file_id"] == f["sha256"][:16] and f["format"] == "fio_json"
        assert f["records"] == records[f["name"]] and f["disk"] == "P10" and f["host"] == "sql01"
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", f["ingested_at"])


# --- parsing in worker processes, storing in batches ----------------------------------------------------------


def _table_rows(db: Path) -> dict[str, list[tuple]]:
    """Every raw table's rows apart from the ingest time, sorted: what two ingests must agree on."""
    con = connect(db, read_only=True)
    try:
        out = {}
        for table in warehouse.RAW_TABLES:
            cols = [c for (c,) in con.execute(f"SELECT column_name FROM (DESCRIBE {table})").fetchall()]
            keep = ", ".join(c for c in cols if c != "ingested_at")
            out[table] = sorted(con.execute(f"SELECT {keep} FROM {table}").fetchall(), key=repr)
        return out
    finally:
        con.close()


def test_a_pool_of_workers_stores_exactly_what_parsing_in_process_stores(tmp_path, monkeypatch):
    paths = fio_variants(tmp_path / "in", 24)
    (tmp_path / "in" / "broken.json").write_text('{"fio version": "fio-3.33", "jobs": [', encoding="utf-8")
    paths.insert(5, tmp_path / "in" / "broken.json")
    paths.insert(9, paths[2])  # the same bytes twice in one ingest
    # Small batches, so that the pool's files span several of them.
    monkeypatch.setattr("kneepoint.ingest.load.BATCH_FILES", 7)
    serial = ingest_inputs(tmp_path / "serial.duckdb", iter_paths(paths), disk="d", build=False, workers=1)
    pooled = ingest_inputs(tmp_path / "pooled.duckdb", iter_paths(paths), disk="d", build=False, workers=2)

    assert pooled.workers == 2 and serial.workers == 1
    assert [(o.name, o.status, o.file_id, o.records) for o in pooled.outcomes] == [
        (o.name, o.status, o.file_id, o.records) for o in serial.outcomes
    ]
    assert [o.status for o in pooled.outcomes].count("added") == 24
    assert pooled.outcomes[5].status == "error" and str(paths[5]) in (pooled.outcomes[5].reason or "")
    assert pooled.outcomes[9].status == "duplicate" and pooled.outcomes[9].file_id == pooled.outcomes[2].file_id
    assert _table_rows(tmp_path / "pooled.duckdb") == _table_rows(tmp_path / "serial.duckdb")


def test_files_already_stored_are_duplicates_in_a_batch(tmp_path):
    paths = fio_variants(tmp_path / "in", 20)
    db = tmp_path / "w.duckdb"
    first = ingest_inputs(db, iter_paths(paths[:8]), disk="first", build=False, workers=1)
    assert len(first.added) == 8
    second = ingest_inputs(db, iter_paths(paths), disk="second", build=False, workers=2)
    assert [o.status for o in second.outcomes] == ["duplicate"] * 8 + ["added"] * 12
    assert "disk 'first'" in (second.outcomes[0].reason or "")
    con = connect(db, read_only=True)
    try:
        assert con.execute("SELECT count(*), count(DISTINCT sha256) FROM raw_files").fetchall() == [(20, 20)]
    finally:
        con.close()


def test_a_killed_ingest_leaves_no_worker_process_behind(tmp_path):
    paths = fio_variants(tmp_path / "in", 400)
    proc = subprocess.Popen(
        [*KNEEPOINT, "--db", str(tmp_path / "w.duckdb"), "ingest", str(tmp_path / "in"), "--disk", "d"]
        + ["--workers", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
    )

    def descendants() -> set[int]:
        found: set[int] = set()
        todo = [proc.pid]
        while todo:
            pid = todo.pop()
            out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
            todo += [int(p) for p in out]
            found |= {int(p) for p in out}
        return found

    workers: set[int] = set()
    deadline = time.monotonic() + 120
    while len(workers) < 3 and time.monotonic() < deadline:  # forkserver, two workers (and a resource tracker)
        workers = descendants()
        time.sleep(0.1)
    assert len(workers) >= 3, f"no worker processes seen: {workers}"
    proc.kill()
    proc.wait()

    def running(pid: int) -> bool:
        try:
            return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
        except FileNotFoundError:
            return False

    deadline = time.monotonic() + 10
    while any(running(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in workers if running(p)]
    assert len(paths) == 400


def test_the_pool_is_kept_between_ingests_replaced_when_a_worker_died_and_closed_when_idle(tmp_path, monkeypatch):
    from kneepoint.ingest import load

    paths = fio_variants(tmp_path / "in", 60)
    db = tmp_path / "w.duckdb"
    close_pool()
    first = ingest_inputs(db, iter_paths(paths[:20]), disk="d", build=False, workers=2)
    pool = load._POOL._pool
    assert pool is not None and first.workers == 2
    second = ingest_inputs(db, iter_paths(paths[20:40]), disk="d", build=False, workers=2)
    assert load._POOL._pool is pool, "the second ingest started a pool of its own"

    victim = next(iter(pool._processes))
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{victim}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    monkeypatch.setattr(load, "POOL_IDLE_S", 0.2)
    third = ingest_inputs(db, iter_paths(paths[40:]), disk="d", build=False, workers=2)
    assert load._POOL._pool is not pool
    assert [o.status for r in (first, second, third) for o in r.outcomes] == ["added"] * 60

    # Closed when idle: the pool, its workers and the server they forked from, which holds the parsers, DuckDB and
    # Arrow in a process of its own.
    from multiprocessing import forkserver

    workers = list(load._POOL._pool._processes.values())

    def closed() -> bool:
        return load._POOL._pool is None and forkserver._forkserver._forkserver_pid is None

    deadline = time.monotonic() + 10
    while (not closed() or any(w.is_alive() for w in workers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert closed() and not any(w.is_alive() for w in workers)
    again = ingest_inputs(db, iter_paths(paths[:20]), disk="d", build=False, workers=2)  # a new pool and server
    assert again.workers == 2 and [o.status for o in again.outcomes] == ["duplicate"] * 20


def _last_line_of_python(script: str) -> str:
    """What `script` printed last, run in a Python process of its own (memory and imports measured apart)."""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


def test_an_ingest_and_its_workers_store_rows_without_importing_pandas(tmp_path):
    """pyarrow imports pandas (~75 MB) on its first conversion of a list only to ask whether it is a pandas object:
    an ingest, in its own process and in each parsing worker, spares it (warehouse.arrow_without_pandas). Checked in
    a process of its own (this one has pandas), and in the workers by what they mapped: pandas' C extensions."""
    paths = fio_variants(tmp_path / "in", 80)  # chunks enough for both workers to start
    script = (
        "import json, sys\n"
        "from kneepoint.ingest import load\n"
        "from kneepoint.ingest.sources import iter_paths\n"
        f"report = load.ingest_inputs({str(tmp_path / 'w.duckdb')!r}, iter_paths({[str(p) for p in paths]!r}),"
        " disk='d', build=False, workers=2)\n"
        "workers = list(load._POOL._pool._processes)\n"
        "mapped = [open(f'/proc/{pid}/maps').read() for pid in workers]\n"
        "print(json.dumps({'added': len(report.added), 'workers': len(workers), 'main': 'pandas' in sys.modules,"
        " 'in_workers': ['/pandas/' in m for m in mapped],"
        " 'pyarrow_in_workers': ['/pyarrow/' in m for m in mapped]}))\n"
    )
    seen = json.loads(_last_line_of_python(script))
    assert seen["added"] == 80 and seen["workers"] == 2
    assert seen["pyarrow_in_workers"] == [True, True]  # the check can see a library a worker holds
    assert seen["main"] is False and seen["in_workers"] == [False, False]


def test_many_files_are_parsed_in_process_unless_workers_are_asked_for(tmp_path, monkeypatch):
    """A pool trades memory for time (each worker ~40 MB more): the default stays within the memory target, on a
    machine of many cores too."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    paths = fio_variants(tmp_path / "in", 40)
    report = ingest_inputs(tmp_path / "w.duckdb", iter_paths(paths), disk="d", build=False)
    assert report.workers == 1 and len(report.added) == 40


def test_pool_workers_keep_what_their_server_preloaded_out_of_the_collectors_passes():
    """A collector pass writes to every object it visits, and each page written is copied out of what the workers
    share with their server: a worker starts by freezing what it inherited (gc.freeze)."""
    import gc

    from kneepoint.ingest import load

    try:
        with load._worker_pool(2) as pool:
            frozen = [pool.submit(gc.get_freeze_count).result() for _ in range(4)]
    finally:
        close_pool()
    assert min(frozen) > 10_000  # the parsers, Arrow and DuckDB's modules: ~200,000 objects


@pytest.mark.skipif(warehouse._malloc_trim is None, reason="malloc_trim is glibc's")
def test_release_freed_memory_gives_back_the_free_pages_inside_a_threads_heap():
    """The pool's results are unpickled on a thread of their own; what they were freed into stayed in the process
    (112 MB held, 39 MB in use, after 200 Perfmon files). Measured in a process of its own."""
    script = (
        "import threading\n"
        "from kneepoint.ingest.warehouse import release_freed_memory\n"
        "def rss():\n"
        "    return int(open('/proc/self/status').read().split('VmRSS:')[1].split()[0]) // 1024\n"
        "held = []\n"
        "def churn():\n"
        "    blocks = [bytes(4096) for _ in range(16384)]  # 64 MB past pymalloc: the C library's heap\n"
        "    held.extend(blocks[1::64])  # a few kept: the heap cannot shrink from its end\n"
        "thread = threading.Thread(target=churn)\n"
        "thread.start()\n"
        "thread.join()\n"
        "before = rss()\n"
        "release_freed_memory()\n"
        "print(before, rss())\n"
    )
    before, after = map(int, _last_line_of_python(script).split())
    assert before - after >= 40, (before, after)


def test_pandas_is_refused_only_to_the_thread_that_converts_its_first_list():
    """The app's other threads (Streamlit's) may import pandas while an upload's ingest starts: they get it."""
    import threading

    finder = warehouse._NoPandasHere()
    with pytest.raises(ModuleNotFoundError):
        finder.find_spec("pandas", None)
    elsewhere: list[object] = []
    thread = threading.Thread(target=lambda: elsewhere.append(finder.find_spec("pandas.core", None)))
    thread.start()
    thread.join()
    assert elsewhere == [None]  # not refused: the import goes on to the next finder
    assert finder.find_spec("pyarrow", None) is None


def test_a_bounded_fold_leaves_headroom_above_what_duckdb_must_hold_and_keeps_every_row(tmp_path):
    """After small files load folds with DuckDB's memory bounded (warehouse.checkpoint_within): to what DuckDB must
    hold plus a headroom, never below it (a fold that runs out of memory is fatal to the database). A key's index
    is held in memory: the larger it is, the higher the bound; the usual limit comes back after."""

    class Sent:
        def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
            self.con, self.statements = con, []

        def execute(self, sql: str, *args: object) -> duckdb.DuckDBPyConnection:
            self.statements.append(sql)
            return self.con.execute(sql, *args)

    db = tmp_path / "w.duckdb"
    con = duckdb.connect(str(db))
    try:
        con.execute("SET checkpoint_threshold = '1GB'")
        con.execute("SET memory_limit = '512MiB'")
        con.execute("CREATE TABLE t (id VARCHAR PRIMARY KEY, n INTEGER)")
        wal = Path(f"{db}.wal")
        bounds = []
        for rows in (1000, 1_000_000):  # the second's index: ~67 MB, which DuckDB keeps in memory
            first = len(bounds) * 1000
            con.execute(f"INSERT INTO t SELECT md5(i::VARCHAR), i FROM range({first}, {first + rows}) r(i)")
            assert wal.stat().st_size > 0
            sent = Sent(con)
            warehouse.checkpoint_within(sent, headroom_mb=32)  # type: ignore[arg-type]
            assert not wal.exists() or wal.stat().st_size == 0
            checkpoint = sent.statements.index("CHECKPOINT")
            bounds.append(int(re.fullmatch(r"SET memory_limit = '(\d+)MB'", sent.statements[checkpoint - 1])[1]))
            assert con.execute("SELECT current_setting('memory_limit')").fetchall() == [("512.0 MiB",)]
        small, large = bounds
        assert 32 <= small < 40 and large > small + 50, bounds
        assert con.execute("SELECT count(*), count(DISTINCT id) FROM t").fetchall() == [(1_001_000, 1_001_000)]
    finally:
        con.close()


def test_an_ingest_folds_bounded_with_room_for_twice_its_largest_file(tmp_path, monkeypatch):
    """A fold holds a file's compressed bytes whole: its headroom grows with the largest file since the last fold."""
    from kneepoint.ingest import load

    bounded: list[int] = []
    monkeypatch.setattr(load, "checkpoint_within", lambda con, headroom_mb: bounded.append(headroom_mb))
    monkeypatch.setattr(load, "FOLD_BYTES", 1)  # a fold after every batch
    paths = fio_variants(tmp_path / "in", 2)
    big = tmp_path / "big.json"
    fio = json.loads(paths[0].read_text(encoding="utf-8"))
    fio["jobs"][0]["job options"]["description"] = "x" * (5 * 2**20)
    big.write_text(json.dumps(fio), encoding="utf-8")
    db = tmp_path / "w.duckdb"
    ingest_inputs(db, iter_paths(paths), disk="d", build=False, workers=1)
    assert bounded and set(bounded) == {load.FOLD_HEADROOM_MB + 2}  # fio files of a few KB: 1 MB rounded up
    bounded.clear()
    report = ingest_inputs(db, iter_paths([big]), disk="d", build=False, workers=1)
    assert [o.status for o in report.outcomes] == ["added"] and bounded == [load.FOLD_HEADROOM_MB + 2 * 6]


def test_a_large_file_of_random_text_folds_within_its_bound(tmp_path, monkeypatch):
    """Random text barely compresses: its stored bytes, held whole by the fold, are nearly its size. A fold that ran
    out of memory would be fatal to DuckDB's database (the file stays in the log; nothing later works)."""
    import base64

    from kneepoint.ingest import load

    failed: list[BaseException] = []
    real = load.checkpoint_within

    def checked(con, headroom_mb):
        try:
            real(con, headroom_mb)
        except BaseException as exc:
            failed.append(exc)
            raise

    monkeypatch.setattr(load, "checkpoint_within", checked)
    fio = json.loads(fio_variants(tmp_path / "in", 1)[0].read_text(encoding="utf-8"))
    fio["jobs"][0]["job options"]["description"] = base64.b64encode(random.randbytes(18 * 2**20)).decode()
    big = tmp_path / "random.json"
    big.write_text(json.dumps(fio), encoding="utf-8")
    db = tmp_path / "w.duckdb"
    report = ingest_inputs(db, iter_paths([big]), disk="d", build=False, workers=1)
    assert [o.status for o in report.outcomes] == ["added"] and failed == []
    con = connect(db, read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM raw_files").fetchall() == [(1,)]
    finally:
        con.close()


def test_workers_do_not_rerun_the_main_script(tmp_path, monkeypatch):
    """Streamlit installs each page as `__main__` (AppTest too): a worker started from the app must not run it."""
    script = tmp_path / "page.py"
    script.write_text("raise SystemExit('a worker ran the main script')\n", encoding="utf-8")
    page = types.ModuleType("__main__")
    page.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", page)
    paths = fio_variants(tmp_path / "in", 20)
    close_pool()  # workers started by an earlier test would not show it: start new ones under this page
    report = ingest_inputs(tmp_path / "w.duckdb", iter_paths(paths), disk="d", build=False, workers=2)
    assert [o.status for o in report.outcomes] == ["added"] * 20
    assert sys.modules["__main__"] is page


def test_stored_bytes_come_back_whole_large_files_among_small_ones(tmp_path: Path):
    """Large frames go to Arrow without a copy (contents.ZERO_COPY_BYTES), small ones copied into one chunk: in
    one batch, in any order, every file's stored bytes are its own. The padding is random letters, which
    compress to about three quarters: the large files' frames stay large."""
    sqlio = (SAMPLE / "sqlio" / "synthetic-p10-sweep.txt").read_bytes()
    sizes = [0, 2 * contents.ZERO_COPY_BYTES, 10, 2 * contents.ZERO_COPY_BYTES, 4 * contents.ZERO_COPY_BYTES, 1]
    rng = random.Random(7)
    inputs = [
        InputFile(f"f{i}.txt", sqlio + b"\n# " + "".join(rng.choices(string.ascii_letters, k=pad)).encode())
        for i, pad in enumerate(sizes)
    ]
    frames = [contents.compress(i.data).size for i in inputs]
    assert sum(f >= contents.ZERO_COPY_BYTES for f in frames) == 3
    db = tmp_path / "w.duckdb"
    report = ingest_inputs(db, inputs, disk="d", build=False)
    assert len(report.added) == len(inputs)
    con = connect(db, read_only=True)
    try:
        for item, outcome in zip(inputs, report.outcomes, strict=True):
            assert warehouse.file_content(con, outcome.file_id) == (item.name, item.data)
    finally:
        con.close()
