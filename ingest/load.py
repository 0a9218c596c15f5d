"""`kneepoint ingest` and the app's upload: parse, store each file in its own transaction, rebuild models."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field

import duckdb

from ingest import formats
from ingest.build import BuildResult, build_models
from ingest.errors import ParseError
from ingest.records import ParsedFile
from ingest.sources import InputError, InputFile
from ingest.warehouse import StoreError, StoreResult, connect, store_file

# While many files go in, let the write-ahead log grow before DuckDB folds it into the file: each fold
# rewrites the tables' indexes, so folding every 16 MB (the default) makes a large ingest quadratic.
# Committed files are in the log and survive a crash; the fold happens when the ingest closes.
BULK_CHECKPOINT_THRESHOLD = "1GB"


@dataclass(slots=True)
class FileOutcome:
    name: str
    status: str  # "added" | "duplicate" | "error"
    file_id: str | None = None
    format: str | None = None
    tool_version: str | None = None
    records: int = 0
    runs: int = 0
    reason: str | None = None
    warnings: list[str] = field(default_factory=list)

    def describe(self) -> str:
        if self.status == "added":
            return f"added    {self.name}: {self.format} {self.tool_version or ''}".rstrip() + (
                f", {self.runs} run(s), {self.records} record(s) [file {self.file_id}]"
            )
        if self.status == "duplicate":
            return f"skipped  {self.name}: {self.reason}"
        return f"error    {self.reason}"


@dataclass(slots=True)
class IngestReport:
    outcomes: list[FileOutcome]
    build: BuildResult | None = None
    # Set when the warehouse itself failed (disk full, ...) and the remaining inputs were not tried.
    aborted: str | None = None

    @property
    def added(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.status == "added"]

    @property
    def duplicates(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.status == "duplicate"]

    @property
    def errors(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.status == "error"]


def parse_input(item: InputFile, fmt: str | None = None) -> ParsedFile:
    """Parse one input; a ParseError names the file and line."""
    return formats.parse_bytes(item.data, item.name, fmt)


def ingest_inputs(
    db: str | os.PathLike[str],
    items: Iterable[InputFile | InputError],
    disk: str,
    host: str | None = None,
    tags: Sequence[str] = (),
    notes: str | None = None,
    fmt: str | None = None,
    build: bool = True,
    progress: Callable[[FileOutcome], None] | None = None,
) -> IngestReport:
    """Store every readable file, each in its own transaction; a bad file is reported and never blocks the
    others. An interruption (Ctrl-C, a kill) leaves the files stored so far whole; a rerun skips them."""
    if not disk or not disk.strip():
        raise ValueError("a disk label is required (--disk LABEL)")
    disk = disk.strip()
    host = host.strip() or None if host else None
    outcomes: list[FileOutcome] = []
    aborted: str | None = None
    con = connect(db)
    try:
        con.execute(f"SET checkpoint_threshold = '{BULK_CHECKPOINT_THRESHOLD}'")
        try:
            for item in items:
                outcome, fatal = _ingest_one(con, item, disk, host, tags, notes, fmt)
                outcomes.append(outcome)
                if progress:
                    progress(outcome)
                if fatal:
                    aborted = outcome.reason
                    break
        finally:
            _reset_checkpoint_threshold(con)
        result = None
        if build and aborted is None and any(o.status == "added" for o in outcomes):
            result = build_models(db)
    finally:
        con.close()
    return IngestReport(outcomes, result, aborted)


def _reset_checkpoint_threshold(con: duckdb.DuckDBPyConnection) -> None:
    # On a failed warehouse this fails too; the error that matters was reported already.
    with suppress(duckdb.Error):
        con.execute("RESET checkpoint_threshold")


def _ingest_one(
    con: duckdb.DuckDBPyConnection,
    item: InputFile | InputError,
    disk: str,
    host: str | None,
    tags: Sequence[str],
    notes: str | None,
    fmt: str | None,
) -> tuple[FileOutcome, bool]:
    """The file's outcome, and whether the warehouse failed so that no further file can be stored."""
    if isinstance(item, InputError):
        return FileOutcome(item.name, "error", reason=f"{item.name}:1: {item.reason}"), False
    try:
        parsed = parse_input(item, fmt)
    except ParseError as exc:
        return FileOutcome(item.name, "error", reason=str(exc)), False
    try:
        stored: StoreResult = store_file(
            con, _display_name(item.name), item.data, item.sha256, parsed, disk, host, tags, notes
        )
    except StoreError as exc:
        reason = f"{item.name}: not stored ({parsed.format}): {exc.reason}"
        return FileOutcome(item.name, "error", format=parsed.format, reason=reason), exc.fatal
    outcome = FileOutcome(
        item.name,
        stored.status,
        file_id=stored.file_id,
        format=parsed.format,
        tool_version=parsed.tool_version,
        records=len(parsed.records),
        runs=parsed.runs,
        warnings=list(parsed.warnings),
    )
    if stored.status == "duplicate":
        outcome.reason = _duplicate_reason(stored, item.sha256, disk, host)
    return outcome, False


def _duplicate_reason(stored: StoreResult, sha256: str, disk: str, host: str | None) -> str:
    where = repr(stored.existing_disk) + (f" @ {stored.existing_host!r}" if stored.existing_host else "")
    reason = (
        f"same bytes (sha256 {sha256[:12]}…) already stored as file {stored.file_id} "
        f"({stored.existing_name}, disk {where})"
    )
    if (stored.existing_disk, stored.existing_host or None) != (disk, host):
        reason += f"; to label it differently: kneepoint relabel {stored.file_id} --disk LABEL [--host LABEL]"
    return reason


def _display_name(name: str) -> str:
    """Stored name: the file's base name (and the zip entry), never a path to write to."""
    outer, _, inner = name.partition("!")
    base = os.path.basename(outer.replace("\\", "/"))
    return f"{base}!{inner}" if inner else base
