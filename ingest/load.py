"""`kneepoint ingest` and the app's upload: parse, store each file in its own transaction, rebuild models."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ingest import formats
from ingest.build import BuildResult, build_models
from ingest.errors import ParseError
from ingest.sources import InputError, InputFile
from ingest.warehouse import StoreResult, connect, store_file


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
            return f"skipped  {self.name}: same bytes already stored as file {self.file_id} ({self.reason})"
        return f"error    {self.reason}"


@dataclass(slots=True)
class IngestReport:
    outcomes: list[FileOutcome]
    build: BuildResult | None = None

    @property
    def added(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.status == "added"]

    @property
    def errors(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.status == "error"]


def parse_input(item: InputFile, fmt: str | None = None):
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
    """Store every readable file; a bad file is reported and never blocks the others."""
    if not disk or not disk.strip():
        raise ValueError("a disk label is required (--disk LABEL)")
    outcomes: list[FileOutcome] = []
    con = connect(db)
    try:
        for item in items:
            outcome = _ingest_one(con, item, disk.strip(), host, tags, notes, fmt)
            outcomes.append(outcome)
            if progress:
                progress(outcome)
        result = None
        if build and any(o.status == "added" for o in outcomes):
            result = build_models(db)
    finally:
        con.close()
    return IngestReport(outcomes, result)


def _ingest_one(con, item, disk, host, tags, notes, fmt) -> FileOutcome:
    if isinstance(item, InputError):
        return FileOutcome(item.name, "error", reason=f"{item.name}:1: {item.reason}")
    try:
        parsed = parse_input(item, fmt)
    except ParseError as exc:
        return FileOutcome(item.name, "error", reason=str(exc))
    stored: StoreResult = store_file(
        con, _display_name(item.name), item.data, item.sha256, parsed, disk, host, tags, notes
    )
    return FileOutcome(
        item.name,
        stored.status,
        file_id=stored.file_id,
        format=parsed.format,
        tool_version=parsed.tool_version,
        records=stored.records if stored.status == "added" else len(parsed.records),
        runs=parsed.runs,
        reason=f"disk {stored.existing_disk!r}; use `kneepoint relabel {stored.file_id} --disk ...` to change"
        if stored.status == "duplicate"
        else None,
        warnings=list(parsed.warnings),
    )


def _display_name(name: str) -> str:
    """Stored name: the file's base name (and the zip entry), never a path to write to."""
    outer, _, inner = name.partition("!")
    base = os.path.basename(outer.replace("\\", "/"))
    return f"{base}!{inner}" if inner else base
