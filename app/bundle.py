"""Data bundles: `kneepoint export` writes the marts, the raw layer, the report and a manifest into one zip;
`kneepoint import` loads one into another warehouse (a vendor's), keeping labels and provenance.

The raw layer is the source of truth: import inserts the bundle's raw rows (one transaction per file, files
whose sha256 is already stored are skipped) and rebuilds the models, so the marts come out as they were made.
The Parquet marts are there for the reader who has no kneepoint (pandas, DuckDB, Excel through Power Query).
An anonymized bundle carries neither the original bytes nor any path (app/anonymize.py).

Layout of the zip:
    manifest.json                      format, versions, disks, files with sha256, every table with rows and sha256
    report.html                        the self-contained report (app/report.py)
    raw/<raw table>.parquet            the raw layer of the bundled files
    marts/<mart>.parquet               every model of models/marts
Parquet is written uncompressed and the zip deflates it: the same size, and a text search of the unzipped
bundle finds any string in it (how a user checks an anonymized bundle before sending it).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from app.anonymize import Share, shared_warehouse
from ingest import __version__
from ingest.units import PROJECT_ROOT
from ingest.warehouse import RAW_TABLES, connect

BUNDLE_FORMAT = "kneepoint-bundle"
BUNDLE_VERSION = 1
MANIFEST = "manifest.json"
REPORT = "report.html"


class BundleError(Exception):
    """A file that is not a kneepoint bundle, or one that was damaged."""


def mart_names() -> list[str]:
    """The models of models/marts (SQL and Python), in name order."""
    folder = PROJECT_ROOT / "models" / "marts"
    return sorted({p.stem for p in folder.iterdir() if p.suffix in (".sql", ".py")})


# -- export -------------------------------------------------------------------------------------------------


@dataclass
class ExportResult:
    path: Path
    disks: list[str]
    files: int
    tables: dict[str, int]  # zip member -> rows
    anonymized: bool


def export_bundle(
    db: str | os.PathLike[str],
    out: str | os.PathLike[str],
    disks: Iterable[str] | None = None,
    anonymize: bool = False,
    marked: Sequence[str] = (),
) -> ExportResult:
    """Write a bundle of the chosen disks (every disk when none) to `out`."""
    with shared_warehouse(db, disks, anonymize, marked) as share:
        data = bundle_bytes(share)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    tmp.write_bytes(data)
    tmp.replace(out)
    manifest = json.loads(zipfile.ZipFile(out).read(MANIFEST))
    return ExportResult(
        out,
        manifest["disks"],
        len(manifest["files"]),
        {k: v["rows"] for k, v in manifest["tables"].items()},
        manifest["anonymized"],
    )


def bundle_bytes(share: Share, report_html: str | None = None) -> bytes:
    """The zip of a prepared warehouse (app.anonymize.shared_warehouse); renders the report unless given."""
    from app.report import render

    if report_html is None:
        report_html = render(share).html
    con = connect(share.db)
    try:
        stored = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        tables: dict[str, pa.Table] = {}
        for t in RAW_TABLES:
            if t == "raw_file_contents" and share.anonymized:
                continue  # the original bytes hold every name the anonymization replaced
            tables[f"raw/{t}.parquet"] = con.sql(f"SELECT * FROM {t} ORDER BY ALL").to_arrow_table()
        for m in mart_names():
            if m in stored:
                tables[f"marts/{m}.parquet"] = con.sql(f"SELECT * FROM {m}").to_arrow_table()
        files = con.sql(
            """
            SELECT file_id, name, sha256, size_bytes, format, tool_version, disk, host,
                   strftime(ingested_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%fZ') AS ingested_at,
                   kneepoint_version
            FROM raw_files ORDER BY ingested_at, name
            """
        ).to_arrow_table()
    finally:
        con.close()
    buf = io.BytesIO()
    entries: dict[str, dict] = {}
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for member, table in tables.items():
            data = _parquet(table)
            zf.writestr(member, data)
            entries[member] = {
                "table": Path(member).stem,
                "layer": member.split("/")[0],
                "rows": table.num_rows,
                "sha256": hashlib.sha256(data).hexdigest(),
            }
        report = report_html.encode("utf-8")
        zf.writestr(REPORT, report)
        manifest = {
            "format": BUNDLE_FORMAT,
            "bundle_version": BUNDLE_VERSION,
            "kneepoint_version": __version__,
            "created_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "anonymized": share.anonymized,
            "original_bytes_included": "raw/raw_file_contents.parquet" in entries,
            "disks": list(share.disk_keys),
            "files": files.to_pylist(),
            "tables": entries,
            "report": {"path": REPORT, "sha256": hashlib.sha256(report).hexdigest()},
        }
        zf.writestr(MANIFEST, json.dumps(manifest, indent=2, ensure_ascii=False))
    return buf.getvalue()


def _parquet(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="none")
    return buf.getvalue()


# -- import -------------------------------------------------------------------------------------------------


@dataclass
class ImportResult:
    added: list[dict] = field(default_factory=list)  # manifest file entries
    duplicates: list[dict] = field(default_factory=list)  # (entry + the stored file's id and disk)
    errors: list[str] = field(default_factory=list)
    dropped_columns: list[str] = field(default_factory=list)
    build_failures: list[str] | None = None  # None: not rebuilt
    anonymized: bool = False


def read_bundle(path: str | os.PathLike[str]) -> tuple[dict, dict[str, pa.Table]]:
    """The manifest and the raw tables of a bundle, each member checked against the manifest's sha256."""
    path = Path(path)
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise BundleError(f"{path.name}: not a zip file ({exc})") from None
    with zf:
        names = set(zf.namelist())
        if MANIFEST not in names:
            raise BundleError(f"{path.name}: no {MANIFEST}; not a kneepoint bundle")
        try:
            manifest = json.loads(zf.read(MANIFEST))
        except (ValueError, zipfile.BadZipFile) as exc:
            raise BundleError(f"{path.name}: unreadable {MANIFEST} ({exc})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != BUNDLE_FORMAT:
            raise BundleError(f"{path.name}: {MANIFEST} is not a {BUNDLE_FORMAT} manifest")
        if manifest.get("bundle_version") != BUNDLE_VERSION:
            raise BundleError(
                f"{path.name}: bundle version {manifest.get('bundle_version')!r}; this kneepoint "
                f"({__version__}) reads version {BUNDLE_VERSION}"
            )
        raw: dict[str, pa.Table] = {}
        for member, entry in manifest.get("tables", {}).items():
            if entry.get("layer") != "raw":
                continue
            if member not in names:
                raise BundleError(f"{path.name}: {member} is listed in the manifest but missing")
            try:
                data = zf.read(member)
            except (zipfile.BadZipFile, OSError) as exc:
                raise BundleError(f"{path.name}: {member} is damaged ({exc})") from None
            if hashlib.sha256(data).hexdigest() != entry.get("sha256"):
                raise BundleError(f"{path.name}: {member} does not match its sha256 in the manifest")
            try:
                raw[entry["table"]] = pq.read_table(io.BytesIO(data))
            except (pa.ArrowException, OSError) as exc:
                raise BundleError(f"{path.name}: {member} is not readable Parquet ({exc})") from None
    if "raw_files" not in raw:
        raise BundleError(f"{path.name}: the bundle holds no raw_files table")
    return manifest, raw


def import_bundle(
    db: str | os.PathLike[str],
    path: str | os.PathLike[str],
    build: bool = True,
    progress: Callable[[str], None] | None = None,
) -> ImportResult:
    """Load a bundle into the warehouse `db`: each file in its own transaction, known sha256s skipped; then
    rebuild the models (unless `build` is False)."""
    from ingest.build import build_models

    manifest, raw = read_bundle(path)
    result = ImportResult(anonymized=bool(manifest.get("anonymized")))
    entries = {f["file_id"]: f for f in manifest.get("files", [])}
    con = connect(db)
    try:
        columns = _target_columns(con, raw, result)
        for name, table in raw.items():
            if name in columns:
                _kp_rows = table.select(columns[name])  # noqa: F841 - read by DuckDB's replacement scan
                con.execute(f"CREATE OR REPLACE TEMP TABLE kp_bundle_{name} AS SELECT * FROM _kp_rows")
        stored = dict(con.execute("SELECT sha256, file_id FROM raw_files").fetchall())
        files = raw["raw_files"].sort_by([("ingested_at", "ascending"), ("name", "ascending")]).to_pylist()
        for f in files:
            entry = {**entries.get(f["file_id"], {}), "file_id": f["file_id"], "name": f["name"], "disk": f["disk"]}
            if f["sha256"] in stored:
                result.duplicates.append({**entry, "stored_as": stored[f["sha256"]]})
                _say(progress, f"already stored: {f['name']} (sha256 {f['sha256'][:12]}…)")
                continue
            try:
                _insert_file(con, f["file_id"], [t for t in RAW_TABLES if t in columns])
            except duckdb.Error as exc:
                result.errors.append(f"{f['name']}: could not be stored: {exc}")
                _say(progress, f"error: {f['name']}: {exc}")
                continue
            stored[f["sha256"]] = f["file_id"]
            result.added.append(entry)
            _say(progress, f"added: {f['name']} (disk {f['disk']})")
        for name in columns:
            con.execute(f"DROP TABLE IF EXISTS kp_bundle_{name}")
    finally:
        con.close()
    if build and result.added:
        outcome = build_models(db)
        result.build_failures = [] if outcome.success else outcome.failures
    return result


def _say(progress: Callable[[str], None] | None, text: str) -> None:
    if progress is not None:
        progress(text)


def _target_columns(con: duckdb.DuckDBPyConnection, raw: dict[str, pa.Table], result: ImportResult) -> dict:
    """Per raw table, the bundle columns this warehouse has; a NOT NULL column the bundle lacks is an error."""
    out: dict[str, list[str]] = {}
    for name in RAW_TABLES:
        if name not in raw:
            continue
        described = con.execute(
            "SELECT column_name, is_nullable FROM information_schema.columns WHERE table_name = ? "
            "ORDER BY ordinal_position",
            [name],
        ).fetchall()
        have = set(raw[name].column_names)
        missing = [c for c, nullable in described if nullable == "NO" and c not in have]
        if missing:
            raise BundleError(f"bundle table {name} lacks the required column(s) {', '.join(missing)}")
        known = {c for c, _ in described}
        result.dropped_columns += [f"{name}.{c}" for c in raw[name].column_names if c not in known]
        out[name] = [c for c in raw[name].column_names if c in known]
    return out


def _insert_file(con: duckdb.DuckDBPyConnection, file_id: str, tables: Sequence[str]) -> None:
    """One file's rows from every bundled raw table, all or nothing."""
    con.execute("BEGIN TRANSACTION")
    try:
        for t in tables:
            con.execute(f"INSERT INTO {t} BY NAME SELECT * FROM kp_bundle_{t} WHERE file_id = ?", [file_id])
        con.execute("COMMIT")
    except BaseException:
        with suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise
