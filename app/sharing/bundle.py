"""Data bundles: `kneepoint export` writes the marts, the raw layer, the report and a manifest into one zip;
`kneepoint import` loads one into another warehouse (a vendor's, a team's), keeping labels and provenance.
`kneepoint import` also takes a whole DuckDB warehouse file (a laptop's, into the team's PostgreSQL warehouse).

The raw layer is the source of truth: import inserts the bundle's raw rows (one transaction per file, files
whose sha256 is already stored are skipped, every file's bytes checked against its sha256) and brings the models
up to date, so the marts come out as they were made; the bundle's own marts are never loaded. The bundle's raw
tables are read through a DuckDB file of their own (in a temporary folder) and go into the warehouse, of either
engine, as Arrow.
The Parquet marts are there for the reader who has no kneepoint (pandas, DuckDB, Excel through Power Query).
An anonymized bundle carries neither the original bytes nor any path (app/anonymize.py).

Layout of the zip:
    manifest.json                      format, versions, disks, files with sha256, every table with rows and sha256
    report.html                        the self-contained report (app/sharing/report.py)
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
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from kneepoint.app.sharing.anonymize import Share, shared_warehouse
from kneepoint.ingest import __version__, contents, schema
from kneepoint.ingest.labels import LabelError, check_labels
from kneepoint.ingest.sources import Limits, MiB
from kneepoint.ingest.units import PROJECT_ROOT
from kneepoint.ingest.warehouse import (
    _ANY_ERROR,
    RAW_TABLES,
    Connection,
    Location,
    changing,
    connect,
    insert_rows,
    record_changes,
)

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
    db: Location,
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
    from kneepoint.app.sharing.report import render

    if report_html is None:
        report_html = render(share).html
    con = connect(share.db)
    try:
        stored = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        tables: dict[str, pa.Table] = {}
        for t in RAW_TABLES:
            if t == "raw_file_contents" and share.anonymized:
                continue  # the original bytes hold every name the anonymization replaced
            if t == "raw_file_contents":
                tables[f"raw/{t}.parquet"] = _original_bytes(con)
                continue
            # Every column in the order: the same warehouse gives the same bytes.
            order = ", ".join(schema.TABLES[t].column_names)
            tables[f"raw/{t}.parquet"] = con.sql(f"SELECT * FROM {t} ORDER BY {order}").to_arrow_table()
        for m in mart_names():
            if m in stored:
                tables[f"marts/{m}.parquet"] = con.sql(f"SELECT * FROM {m}").to_arrow_table()
        files = con.execute(
            """
            SELECT file_id, name, sha256, size_bytes, format, tool_version, disk, host, ingested_at, kneepoint_version
            FROM raw_files ORDER BY ingested_at, name
            """
        )
        columns = [d[0] for d in files.description]
        listed = [dict(zip(columns, row, strict=True)) for row in files.fetchall()]
    finally:
        con.close()
    for f in listed:
        f["ingested_at"] = f["ingested_at"].astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
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
            "files": listed,
            "tables": entries,
            "report": {"path": REPORT, "sha256": hashlib.sha256(report).hexdigest()},
        }
        zf.writestr(MANIFEST, json.dumps(manifest, indent=2, ensure_ascii=False))
    return buf.getvalue()


def _original_bytes(con: Connection) -> pa.Table:
    """raw_file_contents as a bundle carries it: each file's bytes as the tool wrote them (the warehouse keeps them
    compressed), so that any kneepoint can read them and an import checks them against their sha256."""
    rows = con.execute(
        "SELECT c.file_id, c.content, c.compression, f.size_bytes FROM raw_file_contents c "
        "JOIN raw_files f USING (file_id) ORDER BY c.file_id"
    ).fetchall()
    return pa.table(
        {
            "file_id": pa.array([r[0] for r in rows], pa.string()),
            "content": contents.binary_column([contents.original(*r[1:]) for r in rows]),
        }
    )


def _parquet(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="none")
    return buf.getvalue()


# -- import -------------------------------------------------------------------------------------------------

# A bundle is read member by member from the zip, each within these bounds (the ingest's zip limits), so a crafted
# bundle costs no more than what it declares: a member that inflates past its size or the ratio is refused.
MAX_MANIFEST_BYTES = 64 * 1024 * 1024
_STREAM_CHUNK = 1024 * 1024


@dataclass
class ImportResult:
    added: list[dict] = field(default_factory=list)  # manifest file entries
    duplicates: list[dict] = field(default_factory=list)  # (entry + the stored file's id and disk)
    errors: list[str] = field(default_factory=list)
    dropped_columns: list[str] = field(default_factory=list)
    build_failures: list[str] | None = None  # None: not rebuilt
    anonymized: bool = False


@dataclass
class _Bundle:
    manifest: dict
    raw: dict[str, Path]  # raw table -> its Parquet, unpacked and checked against the manifest's sha256


def read_bundle(path: str | os.PathLike[str]) -> tuple[dict, dict[str, pa.Table]]:
    """The manifest and the raw tables of a bundle, each member checked against the manifest's sha256."""
    with tempfile.TemporaryDirectory(prefix="kneepoint-bundle-") as tmp:
        bundle = _unpack(Path(path), Path(tmp), Limits())
        return bundle.manifest, {name: pq.read_table(member) for name, member in bundle.raw.items()}


def _unpack(path: Path, folder: Path, limits: Limits) -> _Bundle:
    """Check the bundle and unpack its raw tables into `folder`: the manifest first, then each listed raw member,
    streamed within the limits and hashed as it is written."""
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise BundleError(f"{path.name}: not a zip file ({exc})") from None
    with zf:
        members = {i.filename: i for i in zf.infolist()}
        if MANIFEST not in members:
            raise BundleError(f"{path.name}: no {MANIFEST}; not a kneepoint bundle")
        manifest_bytes = _member_bytes(zf, members[MANIFEST], path, MAX_MANIFEST_BYTES, limits)
        try:
            manifest = json.loads(manifest_bytes)
        except ValueError as exc:
            raise BundleError(f"{path.name}: unreadable {MANIFEST} ({exc})") from None
        del manifest_bytes
        if not isinstance(manifest, dict) or manifest.get("format") != BUNDLE_FORMAT:
            raise BundleError(f"{path.name}: {MANIFEST} is not a {BUNDLE_FORMAT} manifest")
        if manifest.get("bundle_version") != BUNDLE_VERSION:
            raise BundleError(
                f"{path.name}: bundle version {manifest.get('bundle_version')!r}; this kneepoint "
                f"({__version__}) reads version {BUNDLE_VERSION}"
            )
        listed: dict[str, str] = {}  # member -> raw table
        for member, entry in (manifest.get("tables") or {}).items():
            if not isinstance(entry, dict) or entry.get("layer") != "raw":
                continue
            table = entry.get("table")
            if table not in RAW_TABLES or member != f"raw/{table}.parquet":
                raise BundleError(f"{path.name}: {member} is not a raw table this kneepoint knows")
            if member not in members:
                raise BundleError(f"{path.name}: {member} is listed in the manifest but missing")
            listed[member] = table
        # Refused on the declared sizes before anything is unpacked (the sum of what is read is checked too).
        declared = sum(members[m].file_size for m in listed)
        if declared > limits.max_zip_total_bytes:
            raise BundleError(f"{path.name}: the raw tables expand to {declared / MiB:.0f} MB, {_past_total(limits)}")
        raw: dict[str, Path] = {}
        total = 0
        for member, table in listed.items():
            entry = manifest["tables"][member]
            out = folder / f"{table}.parquet"
            total += _unpack_member(zf, members[member], out, entry.get("sha256"), path, limits)
            if total > limits.max_zip_total_bytes:
                raise BundleError(f"{path.name}: the raw tables expand {_past_total(limits)}")
            try:
                pq.read_metadata(out)
            except (pa.ArrowException, OSError) as exc:
                raise BundleError(f"{path.name}: {member} is not readable Parquet ({exc})") from None
            raw[table] = out
    if "raw_files" not in raw:
        raise BundleError(f"{path.name}: the bundle holds no raw_files table")
    return _Bundle(manifest, raw)


def _past_total(limits: Limits) -> str:
    return f"past the limit of {limits.max_zip_total_bytes / MiB:.0f} MB (KNEEPOINT_MAX_ZIP_MB)"


def _check_member(info: zipfile.ZipInfo, path: Path, max_bytes: int, limits: Limits) -> None:
    if info.file_size > max_bytes:
        raise BundleError(
            f"{path.name}: {info.filename} is {info.file_size / MiB:.0f} MB, past the limit of {max_bytes / MiB:.0f} MB"
        )
    if info.compress_size and info.file_size / info.compress_size > limits.max_zip_ratio:
        raise BundleError(
            f"{path.name}: {info.filename}: compression ratio {info.file_size / info.compress_size:.0f}:1 past the "
            f"limit of {limits.max_zip_ratio:.0f}:1 (zip bomb?)"
        )


def _stream(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path, max_bytes: int, limits: Limits) -> Iterator[bytes]:
    """The member's bytes in chunks, never more than it declares (a lying header inflates no further)."""
    _check_member(info, path, max_bytes, limits)
    read = 0
    try:
        with zf.open(info) as fh:
            while chunk := fh.read(_STREAM_CHUNK):
                read += len(chunk)
                if read > info.file_size:
                    raise BundleError(f"{path.name}: {info.filename} expands past its declared size: refused")
                yield chunk
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, RuntimeError, ValueError) as exc:
        raise BundleError(f"{path.name}: {info.filename} is damaged ({exc})") from None


def _member_bytes(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path, max_bytes: int, limits: Limits) -> bytes:
    return b"".join(_stream(zf, info, path, max_bytes, limits))


def _unpack_member(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, out: Path, sha256: object, path: Path, limits: Limits
) -> int:
    digest = hashlib.sha256()
    size = 0
    with open(out, "wb") as fh:
        for chunk in _stream(zf, info, path, limits.max_zip_total_bytes, limits):
            digest.update(chunk)
            size += len(chunk)
            fh.write(chunk)
    if digest.hexdigest() != sha256:
        raise BundleError(f"{path.name}: {info.filename} does not match its sha256 in the manifest")
    return size


def is_warehouse_file(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a DuckDB database file (its header's magic bytes), not a bundle."""
    try:
        with open(path, "rb") as fh:
            return fh.read(12)[8:12] == b"DUCK"
    except OSError:
        return False


def import_bundle(
    db: Location,
    path: str | os.PathLike[str],
    build: bool = True,
    progress: Callable[[str], None] | None = None,
    build_progress: Callable[[str], None] | None = None,
) -> ImportResult:
    """Load a bundle, or a whole DuckDB warehouse file, into the warehouse `db`: each file in its own transaction
    (its bytes checked against its sha256, its labels against their limits), known sha256s skipped; then bring
    the models up to date (unless `build` is False). The bundle's marts are not loaded: the models are rebuilt
    from its raw layer, so a forged mart can show nothing."""
    from kneepoint.ingest.build import build_models

    path = Path(path)
    with tempfile.TemporaryDirectory(prefix="kneepoint-bundle-") as tmp:
        if is_warehouse_file(path):
            result = ImportResult()
            try:
                source = duckdb.connect(str(path), read_only=True)
            except duckdb.Error as exc:
                raise BundleError(f"{path.name}: cannot read this warehouse file ({exc})") from None
            entries: dict[str, dict] = {}
        else:
            bundle = _unpack(path, Path(tmp), Limits())  # checked before the warehouse is touched
            result = ImportResult(anonymized=bool(bundle.manifest.get("anonymized")))
            entries = {
                f["file_id"]: f for f in bundle.manifest.get("files", []) if isinstance(f, dict) and "file_id" in f
            }
            source = _bundle_tables(bundle, Path(tmp) / "bundle.duckdb")
        con = connect(db)
        try:
            columns = _target_columns(source, result, path)
            _import_files(source, con, columns, entries, result, progress)
        finally:
            source.close()
            con.close()
    # Also completes a build an earlier import or ingest left unfinished (killed), even when nothing is new.
    if build:
        outcome = build_models(db, progress=build_progress)
        if outcome.kind != "none" or not outcome.success:
            result.build_failures = [] if outcome.success else outcome.failures
    return result


def _bundle_tables(bundle: _Bundle, path: Path) -> duckdb.DuckDBPyConnection:
    """The bundle's raw tables in a DuckDB file of their own (on disk: a bundle may be larger than memory)."""
    source = duckdb.connect(str(path))
    for name, parquet in bundle.raw.items():
        source.execute(f"CREATE TABLE {name} AS SELECT * FROM read_parquet('{_quoted(str(parquet))}')")
    return source


def _quoted(text: str) -> str:
    return text.replace("'", "''")


def _import_files(
    source: duckdb.DuckDBPyConnection,
    con: Connection,
    columns: dict[str, list[str]],
    entries: dict[str, dict],
    result: ImportResult,
    progress: Callable[[str], None] | None,
) -> None:
    stored = dict(con.execute("SELECT sha256, file_id FROM raw_files").fetchall())
    has_contents = "raw_file_contents" in columns
    # A bundle carries the original bytes; a warehouse file (of this version) keeps them compressed: those are
    # checked file by file, decompressed.
    compressed = "c.compression" if "compression" in columns.get("raw_file_contents", ()) else "NULL"
    files = source.execute(
        "SELECT f.file_id, f.name, f.sha256, f.disk, f.host, f.tags, f.notes"
        + (
            f", c.content IS NOT NULL, {compressed} IS NOT NULL OR coalesce(sha256(c.content) = f.sha256, false)"
            + f", {compressed} IS NOT NULL"
            if has_contents
            else ""
        )
        + " FROM raw_files f"
        + (" LEFT JOIN raw_file_contents c USING (file_id)" if has_contents else "")
        + " ORDER BY f.ingested_at, f.name, f.file_id"
    ).fetchall()
    tables = [t for t in RAW_TABLES if t in columns]
    for file_id, name, sha256, disk, host, tags, notes, *content in files:
        entry = {**entries.get(file_id, {}), "file_id": file_id, "name": name, "disk": disk}
        if has_contents and content.pop():
            content[1] = _decompressed_matches(source, file_id, sha256)
        if not has_contents and not result.anonymized:
            content = [False, False]  # no bytes to prove the sha256 by: only an anonymized bundle goes without
        problem = _file_problem(file_id, sha256, disk, host, tags, notes, content, result.anonymized)
        if problem is not None:
            result.errors.append(f"{name}: not imported: {problem}")
            _say(progress, f"error: {name}: {problem}")
            continue
        if sha256 in stored:
            result.duplicates.append({**entry, "stored_as": stored[sha256]})
            _say(progress, f"already stored: {name} (sha256 {sha256[:12]}…)")
            continue
        try:
            _insert_file(source, con, file_id, {t: columns[t] for t in tables})
        except _ANY_ERROR as exc:
            result.errors.append(f"{name}: could not be stored: {exc}")
            _say(progress, f"error: {name}: {exc}")
            continue
        stored[sha256] = file_id
        result.added.append(entry)
        _say(progress, f"added: {name} (disk {disk})")


def _decompressed_matches(source: duckdb.DuckDBPyConnection, file_id: str, sha256: str) -> bool:
    """Whether a file's compressed bytes in a warehouse file decompress to bytes of its sha256."""
    content, compression, size_bytes = source.execute(
        "SELECT c.content, c.compression, f.size_bytes FROM raw_file_contents c JOIN raw_files f USING (file_id) "
        "WHERE file_id = ?",
        [file_id],
    ).fetchall()[0]
    try:
        data = contents.original(content, compression, size_bytes)
    except (ValueError, OSError, pa.ArrowException):
        return False  # an unknown codec, a frame that is not one, or not of the size raw_files says
    return hashlib.sha256(data).hexdigest() == sha256


def _file_problem(
    file_id: str, sha256: str, disk: str, host: str | None, tags, notes, content: list, anonymized: bool
) -> str | None:
    """Why one bundled file cannot be imported, or None: its id must be its sha256's, its bytes (when the bundle
    carries them) must hash to it, its labels must fit."""
    if not isinstance(sha256, str) or len(sha256) != 64 or file_id != sha256[:16]:
        return "its file id does not match its sha256"
    if content:
        present, matches = content
        if not present and not anonymized:
            return "the bundle lacks its original bytes"
        if present and not matches:
            return "its bytes do not match its sha256 (changed after export?)"
    try:
        check_labels(disk, host, tags or (), notes)
    except LabelError as exc:
        return str(exc)
    return None


def _say(progress: Callable[[str], None] | None, text: str) -> None:
    if progress is not None:
        progress(text)


def _target_columns(source: duckdb.DuckDBPyConnection, result: ImportResult, path: Path) -> dict[str, list[str]]:
    """Per raw table of the source, the columns this kneepoint declares; a NOT NULL column the source lacks is an
    error. The change each file is stored by (stored_seq) is this warehouse's own, never the source's."""
    found: dict[str, list[str]] = {}
    for table, column in source.execute(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_catalog = current_database() ORDER BY ordinal_position"
    ).fetchall():
        found.setdefault(table, []).append(column)
    if "raw_files" not in found:
        raise BundleError(f"{path.name}: holds no raw_files table")
    out: dict[str, list[str]] = {}
    for name in RAW_TABLES:
        if name not in found:
            continue
        declared = schema.TABLES[name]
        have = found[name]
        missing = [c.name for c in declared.columns if c.not_null and not c.at_commit and c.name not in have]
        if missing:
            raise BundleError(f"{path.name}: table {name} lacks the required column(s) {', '.join(missing)}")
        known = {c.name for c in declared.columns if not c.at_commit}
        result.dropped_columns += [f"{name}.{c}" for c in have if c not in known and c != "stored_seq"]
        out[name] = [c for c in have if c in known]
    return out


def _insert_file(
    source: duckdb.DuckDBPyConnection, con: Connection, file_id: str, columns: dict[str, list[str]]
) -> None:
    """One file's rows from every raw table of the source and its `stored` change, all or nothing."""
    with changing(con):
        (seq,) = record_changes(con, [file_id], "stored")
        for t in reversed(list(columns)):  # parents first
            rows = source.sql(f"SELECT {', '.join(columns[t])} FROM {t} WHERE file_id = ?", params=[file_id])
            rows = rows.to_arrow_table()
            if t == "raw_files":
                rows = rows.append_column("stored_seq", pa.array([seq] * rows.num_rows, pa.int64()))
            insert_rows(con, t, rows.cast(_arrow_schema(t, rows.column_names)))


def _arrow_schema(table: str, names: Sequence[str]) -> pa.Schema:
    """The declared Arrow types of these columns (a bundle's Parquet or an older warehouse may differ a little)."""
    declared = schema.arrow_schema(table)
    return pa.schema([declared.field(n) for n in names])
