"""Bundles: export from the sample warehouse, import into an empty one, and every mart comes out row for row
the same; labels, provenance and the original bytes travel; a damaged bundle is refused."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import zipfile
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kneepoint.app.cli.main import main
from kneepoint.app.sharing.bundle import BundleError, import_bundle, mart_names, read_bundle
from kneepoint.ingest import contents
from kneepoint.ingest.schema import content_part
from kneepoint.ingest.warehouse import RAW_TABLES, connect, file_content

# Marts of observed production load, which the sample data has none of (tests/test_observed.py bundles them).
OBSERVED_MARTS = {
    "fct_observed_intervals",
    "fct_observed_waits",
    "mart_production_vs_baseline",
    "mart_headroom",
    "mart_waits_vs_baseline",
}
STRIPE = "synthetic 4-disk Storage Spaces stripe (modelled) @ synthetic-sql01"


@pytest.fixture(scope="module")
def source(sample_warehouse: Path, tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("bundle-src") / "source.duckdb"
    shutil.copy(sample_warehouse, db)
    return db


@pytest.fixture(scope="module")
def bundle(source: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "bundle.zip"
    assert main(["export", "--db", str(source), "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def imported(bundle: Path, tmp_path_factory) -> Path:
    """The vendor's side: an empty warehouse that imports the bundle."""
    db = tmp_path_factory.mktemp("vendor") / "vendor.duckdb"
    assert main(["import", "--db", str(db), str(bundle)]) == 0
    return db


def _differences(a: Path, b: Path, table: str, where: str = "true") -> tuple[int, int, int, int]:
    """Rows of `table` only in a, only in b (as multisets), and the row counts of both. `table` is a name or a
    query with `{db}` where the database goes."""
    in_a, in_b = (table.format(db=d) if "{db}" in table else f"{d}.{table}" for d in ("a", "b"))
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH '{a}' AS a (READ_ONLY)")
        con.execute(f"ATTACH '{b}' AS b (READ_ONLY)")
        return con.execute(
            f"""
            SELECT (SELECT count(*) FROM (SELECT * FROM {in_a} WHERE {where} EXCEPT ALL SELECT * FROM {in_b})),
                   (SELECT count(*) FROM (SELECT * FROM {in_b} EXCEPT ALL SELECT * FROM {in_a} WHERE {where})),
                   (SELECT count(*) FROM {in_a} WHERE {where}),
                   (SELECT count(*) FROM {in_b})
            """
        ).fetchall()[0]
    finally:
        con.close()


def test_round_trip_reproduces_every_mart(source: Path, imported: Path):
    marts = mart_names()
    # models/marts holds these (and the round trip must cover each of them)
    assert {"fct_io_results", "dim_disks", "dim_files", "mart_saturation_points", "mart_usl_fits"} <= set(marts)
    for mart in marts:
        only_source, only_imported, n_source, n_imported = _differences(source, imported, mart)
        assert (only_source, only_imported) == (0, 0), mart
        # The sample data holds no observed production load (no counter log reader is in the sample yet):
        # tests/test_observed.py carries those marts through a bundle.
        assert n_source == n_imported, mart
        assert n_source > 0 or mart in OBSERVED_MARTS, mart


def test_bundle_marts_are_the_warehouse_marts(source: Path, bundle: Path):
    """The Parquet marts a reader without kneepoint opens hold the same rows as the warehouse."""
    zf = zipfile.ZipFile(bundle)
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH '{source}' AS s (READ_ONLY)")
        for mart in mart_names():
            table = pq.read_table(io.BytesIO(zf.read(f"marts/{mart}.parquet")))
            con.register("shared", table)
            only = con.execute(
                f"SELECT (SELECT count(*) FROM (SELECT * FROM shared EXCEPT ALL SELECT * FROM s.{mart})), "
                f"(SELECT count(*) FROM (SELECT * FROM s.{mart} EXCEPT ALL SELECT * FROM shared))"
            ).fetchall()[0]
            assert only == (0, 0), mart
            con.unregister("shared")
    finally:
        con.close()


def test_labels_provenance_and_bytes_travel(source: Path, imported: Path):
    cols = "file_id, name, sha256, size_bytes, format, tool_version, encoding, ingested_at, disk, host, tags, notes, "
    cols += "warnings, kneepoint_version, parse_options"
    only_source, only_imported, n, _ = _differences(source, imported, f"(SELECT {cols} FROM {{db}}.raw_files)")
    assert (only_source, only_imported) == (0, 0) and n == 18  # sample_data/labels.json: 18 files
    con = duckdb.connect(str(imported), read_only=True)
    try:
        rows = con.execute(
            "SELECT f.sha256, c.content, c.compression, f.size_bytes FROM raw_files f "
            "JOIN raw_file_contents c USING (file_id)"
        ).fetchall()
    finally:
        con.close()
    assert len(rows) == 18
    # the bundle carries the original bytes; the warehouse they go into keeps them compressed
    assert {compression for _, _, compression, _ in rows} == {"zstd"}
    assert all(hashlib.sha256(contents.original(*stored)).hexdigest() == sha for sha, *stored in rows)


def test_manifest_describes_the_bundle(bundle: Path):
    zf = zipfile.ZipFile(bundle)
    manifest = json.loads(zf.read("manifest.json"))
    assert manifest["format"] == "kneepoint-bundle" and manifest["anonymized"] is False
    assert manifest["original_bytes_included"] is True
    assert len(manifest["files"]) == 18 and len(manifest["disks"]) == 4
    assert {f["name"] for f in manifest["files"]} >= {"randread-4k-jobs1.json", "synthetic-p10-sweep.txt"}
    for member, entry in manifest["tables"].items():
        data = zf.read(member)
        assert pq.read_table(io.BytesIO(data)).num_rows == entry["rows"], member
    assert zf.read("report.html").startswith(b"<!DOCTYPE html>")


def test_importing_again_adds_nothing(bundle: Path, imported: Path, tmp_path: Path):
    db = tmp_path / "again.duckdb"
    shutil.copy(imported, db)
    result = import_bundle(db, bundle)
    assert result.added == [] and len(result.duplicates) == 18 and result.errors == []
    assert result.build_failures is None  # nothing new: no rebuild


def test_export_of_one_disk_holds_only_its_files(source: Path, tmp_path: Path):
    out = tmp_path / "stripe.zip"
    assert main(["export", "--db", str(source), "--disk", STRIPE, "--out", str(out)]) == 0
    manifest, raw = read_bundle(out)
    assert manifest["disks"] == [STRIPE]
    # sample_data/diskspd holds two files (the text sweep and the XML run)
    assert sorted(f["name"] for f in manifest["files"]) == [
        "synthetic-ss-stripe-mixed-8k.xml",
        "synthetic-ss-stripe-sweep.txt",
    ]
    assert raw["raw_files"].num_rows == 2
    vendor = tmp_path / "vendor.duckdb"
    assert main(["import", "--db", str(vendor), str(out)]) == 0
    for mart in ("fct_io_results", "mart_saturation_points", "mart_saturation_by_threads", "dim_disks"):
        only_source, only_imported, n_source, n_imported = _differences(source, vendor, mart, f"disk_key = '{STRIPE}'")
        assert (only_source, only_imported) == (0, 0), mart
        # The sample data holds no observed production load (no counter log reader is in the sample yet):
        # tests/test_observed.py carries those marts through a bundle.
        assert n_source == n_imported, mart
        assert n_source > 0 or mart in OBSERVED_MARTS, mart


def test_unknown_disk_is_refused(source: Path, tmp_path: Path, capsys):
    assert main(["export", "--db", str(source), "--disk", "no such disk", "--out", str(tmp_path / "x.zip")]) == 1
    err = capsys.readouterr().err
    assert "no disk 'no such disk'" in err and STRIPE in err
    assert not (tmp_path / "x.zip").exists()


def test_damaged_bundles_are_refused(bundle: Path, tmp_path: Path, capsys):
    vendor = tmp_path / "vendor.duckdb"
    # One Parquet member rewritten: its sha256 no longer matches the manifest.
    tampered = tmp_path / "tampered.zip"
    with zipfile.ZipFile(bundle) as src, zipfile.ZipFile(tampered, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "raw/raw_io_records.parquet":
                data = data[:-40] + bytes(40)
            dst.writestr(item, data)
    assert main(["import", "--db", str(vendor), str(tampered)]) == 2
    assert "raw/raw_io_records.parquet does not match its sha256" in capsys.readouterr().err

    not_zip = tmp_path / "notes.zip"
    not_zip.write_text("not a zip")
    assert main(["import", "--db", str(vendor), str(not_zip)]) == 2
    assert "not a zip file" in capsys.readouterr().err

    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("manifest.json", json.dumps({"format": "something else"}))
    with pytest.raises(BundleError, match="not a kneepoint-bundle manifest"):
        read_bundle(other)
    # The bundle is checked before the warehouse is touched: none was created.
    assert not vendor.exists()


# --- bundles that lie -----------------------------------------------------------------------------------------


def _rewritten(bundle: Path, out: Path, members: dict[str, bytes], compress: dict[str, int] | None = None) -> Path:
    """`bundle` with some members replaced, the manifest's sha256 of each raw table recomputed to match (what a
    forger who knows the format does)."""
    with zipfile.ZipFile(bundle) as src:
        manifest = json.loads(src.read("manifest.json"))
        contents = {i.filename: src.read(i) for i in src.infolist()}
    contents.update(members)
    for member, entry in manifest["tables"].items():
        entry["sha256"] = hashlib.sha256(contents[member]).hexdigest()
    contents["manifest.json"] = json.dumps(manifest).encode()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as dst:
        for name, data in contents.items():
            dst.writestr(name, data, compresslevel=(compress or {}).get(name, 6))
    return out


def test_a_file_whose_bytes_do_not_match_its_sha256_is_not_imported(bundle: Path, tmp_path: Path, sample_fio):
    """A bundle whose raw_files.sha256 (and file id, in every raw table) was forged, the manifest updated to match,
    would store bytes under a hash they do not have, and the genuine file could then never be ingested: the forged
    file is refused, the rest go in."""
    forged = hashlib.sha256(b"not these bytes").hexdigest()
    with zipfile.ZipFile(bundle) as zf:
        victim = next(
            f
            for f in pq.read_table(io.BytesIO(zf.read("raw/raw_files.parquet"))).to_pylist()
            if f["name"] == sample_fio[0].name
        )
        members = {}
        for name in zf.namelist():
            if not name.startswith("raw/"):
                continue
            table = pq.read_table(io.BytesIO(zf.read(name)))
            rows = table.to_pylist()
            for row in rows:
                if row["file_id"] == victim["file_id"]:
                    row["file_id"] = forged[:16]
                    if "sha256" in row:
                        row["sha256"] = forged
            buf = io.BytesIO()
            pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), buf)
            members[name] = buf.getvalue()
    lying = _rewritten(bundle, tmp_path / "forged.zip", members)
    db = tmp_path / "vendor.duckdb"
    result = import_bundle(db, lying)
    assert result.errors == [
        f"{victim['name']}: not imported: its bytes do not match its sha256 (changed after export?)"
    ]
    assert len(result.added) == 17 and not result.build_failures
    # the genuine bytes can still be ingested
    assert main(["--db", str(db), "ingest", str(sample_fio[0]), "--disk", "genuine"]) == 0


def _member(bundle: Path, name: str) -> bytes:
    with zipfile.ZipFile(bundle) as zf:
        return zf.read(name)


def test_a_member_that_inflates_past_the_ratio_is_refused_before_it_is_read(bundle: Path, tmp_path: Path):
    bomb = bytes(64 * 1024 * 1024)  # deflates ~1000:1
    lying = _rewritten(bundle, tmp_path / "bomb.zip", {"raw/raw_io_records.parquet": bomb}, {})
    db = tmp_path / "vendor.duckdb"
    with pytest.raises(BundleError, match=r"raw/raw_io_records.parquet: compression ratio \d+:1 past the limit"):
        import_bundle(db, lying)
    assert not db.exists()


def test_a_huge_manifest_is_refused(bundle: Path, tmp_path: Path):
    with zipfile.ZipFile(bundle) as src:
        contents = {i.filename: src.read(i) for i in src.infolist()}
    manifest = json.loads(contents["manifest.json"])
    manifest["padding"] = "x" * (65 * 1024 * 1024)
    contents["manifest.json"] = json.dumps(manifest).encode()
    out = tmp_path / "fat.zip"
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as dst:
        for name, data in contents.items():
            dst.writestr(name, data)
    with pytest.raises(BundleError, match="manifest.json is 65 MB, past the limit"):
        import_bundle(tmp_path / "vendor.duckdb", out)


def test_labels_past_their_limits_in_a_bundle_are_refused_per_file(bundle: Path, tmp_path: Path):
    files = pq.read_table(io.BytesIO(_member(bundle, "raw/raw_files.parquet")))
    rows = files.to_pylist()
    rows[0]["disk"] = "D" * 130_000
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=files.schema), buf)
    lying = _rewritten(bundle, tmp_path / "long.zip", {"raw/raw_files.parquet": buf.getvalue()})
    result = import_bundle(tmp_path / "vendor.duckdb", lying)
    assert len(result.errors) == 1 and "the disk label is 130,000 characters long" in result.errors[0]
    assert len(result.added) == len(rows) - 1


def _base_table(table: str) -> str:
    """The table to change a raw table's rows in: the bytes are in parts under the view raw_file_contents
    (ingest/contents.py), and these small warehouses have one part."""
    return content_part(1).name if table == "raw_file_contents" else table


def _forge_file_id(con: duckdb.DuckDBPyConnection, file_id: str) -> str:
    """The file's sha256 (and so its id, in every raw table) replaced by another: what a forger who changes the
    bytes' hash but not the bytes does. Returns the forged sha256."""
    forged = hashlib.sha256(b"not these bytes").hexdigest()
    for table in RAW_TABLES:
        con.execute(f"UPDATE {_base_table(table)} SET file_id = ? WHERE file_id = ?", [forged[:16], file_id])
    con.execute("UPDATE raw_files SET sha256 = ? WHERE file_id = ?", [forged, forged[:16]])
    return forged


def _laptop_with_victim(source: Path, tmp_path: Path, name: str) -> tuple[Path, duckdb.DuckDBPyConnection, str, str]:
    """A copy of the source warehouse as a laptop's file, open for forging, and the file `name` to forge: its name
    and id. The caller closes the connection."""
    laptop = tmp_path / "laptop.duckdb"
    shutil.copy(source, laptop)
    con = duckdb.connect(str(laptop))
    (victim, file_id) = con.execute("SELECT name, file_id FROM raw_files WHERE name = ?", [name]).fetchone()
    return laptop, con, victim, file_id


def _stored_ids(db: Path) -> set[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {r[0] for t in RAW_TABLES for r in con.execute(f"SELECT DISTINCT file_id FROM {t}").fetchall()}
    finally:
        con.close()


def test_a_warehouse_file_with_a_forged_sha256_or_mart_imports_only_what_its_bytes_prove(
    source: Path, tmp_path: Path, sample_fio
):
    """`kneepoint import` of a whole DuckDB warehouse file checks every file as a bundle's: a file whose sha256 and
    id were forged is refused (nothing of it stored), and a forged mart is never loaded (the marts are rebuilt from
    the raw rows); the genuine file can be ingested afterwards."""
    laptop, con, victim, file_id = _laptop_with_victim(source, tmp_path, sample_fio[0].name)
    try:
        forged = _forge_file_id(con, file_id)
        con.execute("UPDATE fct_io_results SET disk = 'forged mart'")
        files = con.execute("SELECT count(*) FROM raw_files").fetchone()[0]
    finally:
        con.close()
    db = tmp_path / "team.duckdb"
    result = import_bundle(db, laptop)
    assert result.errors == [f"{victim}: not imported: its bytes do not match its sha256 (changed after export?)"]
    assert len(result.added) == files - 1 and not result.build_failures
    assert forged[:16] not in _stored_ids(db) and file_id not in _stored_ids(db)
    only_source, only_imported, _, _ = _differences(source, db, "fct_io_results")
    assert only_imported == 0 and only_source > 0  # the victim's rows are missing, nothing forged is there
    assert main(["--db", str(db), "ingest", str(sample_fio[0]), "--disk", "genuine"]) == 0
    assert file_id in _stored_ids(db)


def test_a_warehouse_files_compressed_bytes_are_checked_decompressed(source: Path, tmp_path: Path, sample_fio):
    """A warehouse keeps the files' bytes compressed: `kneepoint import` of one decompresses each file's frame and
    checks it against the file's sha256. A frame of other bytes of the same size, and bytes that are no frame at
    all, are refused; every other file imports and reads back as the tool wrote it."""
    laptop, con, first, first_id = _laptop_with_victim(source, tmp_path, sample_fio[0].name)
    try:
        (second, second_id) = con.execute(
            "SELECT name, file_id FROM raw_files WHERE name = ?", [sample_fio[1].name]
        ).fetchone()
        size = sample_fio[0].stat().st_size
        other = contents.compress(b"x" * size).to_pybytes()
        part = _base_table("raw_file_contents")
        con.execute(f"UPDATE {part} SET content = ? WHERE file_id = ?", [other, first_id])
        con.execute(f"UPDATE {part} SET content = 'no frame'::BLOB WHERE file_id = ?", [second_id])
        files = con.execute("SELECT count(*) FROM raw_files").fetchone()[0]
    finally:
        con.close()
    db = tmp_path / "team.duckdb"
    result = import_bundle(db, laptop, build=False)
    refused = "not imported: its bytes do not match its sha256 (changed after export?)"
    assert sorted(result.errors) == sorted([f"{first}: {refused}", f"{second}: {refused}"])
    assert len(result.added) == files - 2
    con = connect(db, read_only=True)
    try:
        for path in sample_fio[2:]:
            (file_id,) = con.execute("SELECT file_id FROM raw_files WHERE name = ?", [path.name]).fetchone()
            assert file_content(con, file_id) == (path.name, path.read_bytes())
    finally:
        con.close()


def test_a_forged_mart_in_a_bundle_is_never_loaded(source: Path, bundle: Path, tmp_path: Path):
    with zipfile.ZipFile(bundle) as zf:
        table = pq.read_table(io.BytesIO(zf.read("marts/fct_io_results.parquet")))
    forged = table.set_column(table.schema.get_field_index("disk"), "disk", pa.array(["forged"] * table.num_rows))
    buf = io.BytesIO()
    pq.write_table(forged, buf)
    lying = _rewritten(bundle, tmp_path / "forged-mart.zip", {"marts/fct_io_results.parquet": buf.getvalue()})
    db = tmp_path / "vendor.duckdb"
    result = import_bundle(db, lying)
    assert not result.errors and not result.build_failures
    assert _differences(source, db, "fct_io_results")[:2] == (0, 0)


def test_a_bundle_that_is_not_anonymized_but_lacks_the_original_bytes_is_refused(bundle: Path, tmp_path: Path):
    """Without the bytes nothing proves a file's sha256: a bundle that says it carries them and does not (its
    raw_file_contents taken out, the manifest to match) imports nothing."""
    contents = "raw/raw_file_contents.parquet"
    with zipfile.ZipFile(bundle) as src:
        manifest = json.loads(src.read("manifest.json"))
        members = {i.filename: src.read(i) for i in src.infolist() if i.filename not in (contents, "manifest.json")}
    del manifest["tables"][contents]
    assert manifest["anonymized"] is False
    out = tmp_path / "no-bytes.zip"
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as dst:
        for name, data in {**members, "manifest.json": json.dumps(manifest).encode()}.items():
            dst.writestr(name, data)
    db = tmp_path / "vendor.duckdb"
    result = import_bundle(db, out, build=False)
    assert not result.added and len(result.errors) == len(manifest["files"])
    assert all(e.endswith("not imported: the bundle lacks its original bytes") for e in result.errors)
    assert not _stored_ids(db)


def test_a_file_whose_id_is_not_its_sha256s_is_not_imported(source: Path, tmp_path: Path, sample_fio):
    """A file id is its sha256's first 16 hex digits (ingest/warehouse.py prepare_file): one renamed in every raw
    table, its sha256 and bytes left genuine, is refused; the genuine file goes in afterwards under its own id."""
    laptop, con, victim, file_id = _laptop_with_victim(source, tmp_path, sample_fio[0].name)
    try:
        for table in RAW_TABLES:
            con.execute(f"UPDATE {_base_table(table)} SET file_id = '0123456789abcdef' WHERE file_id = ?", [file_id])
    finally:
        con.close()
    db = tmp_path / "team.duckdb"
    result = import_bundle(db, laptop, build=False)
    assert result.errors == [f"{victim}: not imported: its file id does not match its sha256"]
    assert "0123456789abcdef" not in _stored_ids(db)
    assert main(["--db", str(db), "ingest", str(sample_fio[0]), "--disk", "genuine"]) == 0
    assert file_id in _stored_ids(db)
