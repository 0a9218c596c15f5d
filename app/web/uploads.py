"""The upload page's work, apart from Streamlit: preview files before storing, suggest disk labels, store them.

A preview parses each file (a zip's entries one by one) without writing anything, so the page can show the
detected format, tool version, runs, warnings and errors before the user labels and stores the files. A bad
file is one preview with an error; it never stops the others.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import duckdb

from kneepoint.ingest import formats
from kneepoint.ingest.build import BuildResult, build_models, warm_up
from kneepoint.ingest.errors import ParseError, ReadOnlyWarehouse, WarehouseBusy
from kneepoint.ingest.formats import load_table
from kneepoint.ingest.labels import check_labels
from kneepoint.ingest.load import FileOutcome, IngestReport, ingest_inputs
from kneepoint.ingest.records import IntervalRecord, IoRecord, LoadRecord, WaitRecord
from kneepoint.ingest.sources import InputError, InputFile, Limits, iter_upload
from kneepoint.ingest.textio import decode
from kneepoint.ingest.warehouse import Connection, Location, connect, exists, is_postgres

T = TypeVar("T")


@dataclass(frozen=True, slots=True, eq=False)
class Upload:
    """One uploaded file or zip entry, read again from the upload's bytes when it is needed (a mapping, the
    store): previews of a large zip hold the upload once (Streamlit holds it anyway), never each entry's bytes
    besides."""

    name: str
    sha256: str
    upload_name: str
    upload: bytes
    index: int  # its place among the upload's items (iter_upload)
    limits: Limits

    def read(self) -> InputFile:
        return next(_read(self.upload_name, self.upload, self.limits, {self.index}))


def _read(name: str, data: bytes, limits: Limits, wanted: set[int]) -> Iterator[InputFile]:
    """The upload's readable items at the `wanted` places, one at a time, in order."""
    for i, item in enumerate(iter_upload(name, data, limits)):
        if i in wanted and isinstance(item, InputFile):
            yield item
        del item


@dataclass(slots=True)
class Preview:
    """What one uploaded file (or zip entry) holds, or why it cannot be read."""

    name: str
    size_bytes: int
    item: Upload | None = None
    format: str | None = None
    tool_version: str | None = None
    runs: int = 0
    records: int = 0
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    targets: list[str] = field(default_factory=list)
    # (file_id, disk) when the same bytes are already stored
    stored_as: tuple[str, str] | None = None
    benchmark_records: int = 0  # disk benchmark results
    observed_records: int = 0  # observed production load (counter logs, iostat, SQL Server file and wait stats)
    load_records: int = 0  # load-series steps (load tables, HammerDB)
    # the rest are SQL Server SET STATISTICS records
    # The column mapping the file is read with (load_table's parse options), stored with it; None: detected.
    options: dict[str, str] | None = None
    # A file that did not read but holds a table of figures: its columns, for a column-mapping form.
    columns: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None and self.item is not None

    @property
    def status(self) -> str:
        if self.error is not None:
            return "error"
        if self.stored_as is not None:
            return f"already stored (file {self.stored_as[0]}, disk {self.stored_as[1]!r})"
        return "ready"


def preview_upload(name: str, data: bytes, limits: Limits | None = None) -> list[Preview]:
    """Previews of one uploaded file: one, or one per zip entry (each parsed and let go before the next is read)."""
    limits = limits or Limits()
    out = []
    for i, item in enumerate(iter_upload(name, data, limits)):
        if isinstance(item, InputError):
            out.append(Preview(item.name, 0, error=f"{item.name}:1: {item.reason}"))
            continue
        out.append(_preview(item, Upload(item.name, item.sha256, name, data, i, limits)))
        del item
    return out


def _preview(item: InputFile, upload: Upload, options: dict[str, str] | None = None) -> Preview:
    """What one file reads to (with `options`: load_table's column mapping), or why it does not."""
    try:
        parsed = formats.parse_bytes(item.data, item.name, options=options)
    except (ParseError, ValueError) as exc:
        # Kept (upload) so that a column mapping can read it again; not `ok` while it has an error.
        columns = load_table.table_columns(decode(item.data)[0])
        return Preview(item.name, len(item.data), item=upload, error=str(exc), options=options, columns=columns or [])
    targets = sorted({r.target for r in parsed.records if isinstance(r, IoRecord) and r.target})
    return Preview(
        item.name,
        len(item.data),
        item=upload,
        format=parsed.format,
        tool_version=parsed.tool_version,
        runs=parsed.runs,
        records=len(parsed.records),
        warnings=list(parsed.warnings),
        targets=targets,
        benchmark_records=sum(isinstance(r, IoRecord) for r in parsed.records),
        observed_records=sum(isinstance(r, IntervalRecord | WaitRecord) for r in parsed.records),
        load_records=sum(isinstance(r, LoadRecord) for r in parsed.records),
        options=options,
    )


def remap(preview: Preview, options: dict[str, str]) -> Preview:
    """The preview of the same file read with a column mapping (empty values left out; none left: detected)."""
    if preview.item is None:
        return preview
    options = {k: v for k, v in options.items() if v}
    return _preview(preview.item.read(), preview.item, options or None)


def mark_stored(previews: Iterable[Preview], stored: dict[str, tuple[str, str]]) -> None:
    """Note the previews whose bytes are already stored (`stored`: sha256 -> (file_id, disk))."""
    for p in previews:
        if p.item is not None:
            p.stored_as = stored.get(p.item.sha256)


_WINDOWS_DRIVE = re.compile(r"^([A-Za-z]):")
_PHYSICAL_DRIVE = re.compile(r"^\\\\[.?]\\(PhysicalDrive\d+)$", re.IGNORECASE)
# Folders that name no disk: a test file there says nothing about which device was measured.
_NOT_A_DEVICE = {".", "/", "/tmp", "/var/tmp", "~"}


def device_of(target: str) -> str | None:
    """The device a benchmark target names, when it names one: a drive letter ('E:' of E:\\testfile.dat), a
    device (nvme0n1 of /dev/nvme0n1, PhysicalDrive1), or the folder a test file sits in (/mnt/p10 of
    /mnt/p10/fio.test). A bare file or job name ('fio.test', 'randread') names none."""
    t = target.strip().strip('"')
    if m := _WINDOWS_DRIVE.match(t):
        return f"{m.group(1).upper()}:"
    if m := _PHYSICAL_DRIVE.match(t):
        return m.group(1)
    if t.startswith("/dev/"):
        return os.path.basename(t) or None
    if "/" in t or "\\" in t:
        parent = str(Path(t.replace("\\", "/")).parent)
        return parent if parent not in _NOT_A_DEVICE else None
    return None


def label_suggestions(previews: Iterable[Preview], used: Iterable[str]) -> list[str]:
    """Disk labels to offer: the devices the files' targets name (device_of) first, then the labels in use."""
    out: dict[str, None] = {}
    for p in previews:
        for target in p.targets:
            device = device_of(target)
            if device:
                out[device] = None
    for label in used:
        out.setdefault(label, None)
    return list(out)


@dataclass(slots=True)
class StoreOutcome:
    report: IngestReport
    build: BuildResult | None

    @property
    def added(self) -> list[FileOutcome]:
        return self.report.added

    @property
    def duplicates(self) -> list[FileOutcome]:
        return [o for o in self.report.outcomes if o.status == "duplicate"]

    @property
    def errors(self) -> list[FileOutcome]:
        return self.report.errors


def store_previews(
    db: Location,
    previews: Iterable[Preview],
    disk: str,
    host: str | None,
    tags: list[str],
    notes: str | None,
    on_file: Callable[[FileOutcome], None] | None = None,
    on_build: Callable[[], None] | None = None,
    on_build_step: Callable[[str], None] | None = None,
) -> StoreOutcome:
    """Store the readable previews under one set of labels, then bring the models up to date once (`on_build_step`
    hears which model is being built). Labels past their limits raise LabelError before anything is stored.

    The warehouse is held from the store to the end of the build (WarehouseBusy when another process keeps it
    past KNEEPOINT_LOCK_WAIT_S): a `kneepoint ingest` waiting for it cannot take it in between and make the
    build fail."""
    check_labels(disk, host, tags, notes)  # LabelError before anything is stored
    # One ingest per column mapping (each file is stored with the mapping it was read with), in upload order.
    groups: dict[tuple[tuple[str, str], ...], list[Upload]] = {}
    for p in previews:
        if p.ok and p.item is not None:
            groups.setdefault(tuple(sorted((p.options or {}).items())), []).append(p.item)
    with holding_warehouse(db):
        report = IngestReport([])
        for options, uploaded in groups.items():
            items = _read_all(uploaded)
            # The pages of other sessions read this warehouse in this process: its cache stays (release_memory).
            part = ingest_inputs(db, items, disk=disk, host=host, tags=tags, notes=notes, options=dict(options),
                                 build=False, progress=on_file, release_memory=False)  # fmt: skip
            report.outcomes += part.outcomes
            report.aborted = report.aborted or part.aborted
            if part.aborted is not None:
                break
        if on_build and report.added:
            on_build()
        build = rebuild(db, on_build_step)
    return StoreOutcome(report, build if build.kind != "none" or not build.success else None)


def _read_all(uploaded: list[Upload]) -> Iterator[InputFile]:
    """The files again from their uploads, one at a time in upload order (each upload read once)."""
    places: dict[int, tuple[Upload, set[int]]] = {}
    for u in uploaded:
        places.setdefault(id(u.upload), (u, set()))[1].add(u.index)
    for u, wanted in places.values():
        yield from _read(u.upload_name, u.upload, u.limits, wanted)


# This process's opens and closes of the warehouse, one at a time: opening a new warehouse creates its raw layer,
# and two sessions doing that at once conflict in DuckDB's catalog; closing the last connection tears the database
# down, and a connect from another thread at that moment fails ("Unique file handle conflict").
_OPEN_LOCK = threading.Lock()


def serialized(fn: Callable[..., T], *args: object) -> T:
    """Run a warehouse read (an app.queries function, or state.cached of one: it connects and closes) with this
    process's other opens and closes of the warehouse kept apart."""
    with _OPEN_LOCK:
        return fn(*args)


@contextmanager
def holding_warehouse(db: Location, wait_s: float | None = None) -> Iterator[Connection]:
    """Keep the warehouse's write lock for a whole change (store, then build). Inside one process DuckDB shares
    the open database with every other connection to it (the loader's, dbt's), so they work while this one keeps
    other processes out; dbt itself does not wait for a lock, it fails at once. On PostgreSQL it is a connection
    like any other: writers share the server, and builds exclude each other by advisory locks (ingest/build.py)."""
    with _OPEN_LOCK:
        con = connect(db, wait_s=wait_s)
    try:
        yield con
    finally:
        with _OPEN_LOCK:
            con.close()


@contextmanager
def kept_open(db: Location) -> Iterator[None]:
    """Keep a DuckDB warehouse open while one page runs. Opening the file costs ~15 ms and a page reads it 10 to
    20 times, each read opening and closing it: with one connection kept, the reads share the open database.
    Another process gets the write lock between two page runs instead of between two reads. Nothing is kept
    where the file does not exist yet (a read must not create it), another process holds it, this account may not
    write it, or another thread of this process is closing it that moment (a build's end): the reads open and close
    as before. PostgreSQL: nothing to keep."""
    with ExitStack() as stack:
        if not is_postgres(db) and exists(db) and os.access(db, os.W_OK):
            with suppress(WarehouseBusy, ReadOnlyWarehouse, duckdb.Error):
                stack.enter_context(holding_warehouse(db, wait_s=0))
        yield


# The warehouses whose builds this process has started warming up (warm_up_builds), and the threads doing it.
_WARMING: dict[Location, threading.Thread] = {}
_WARMING_LOCK = threading.Lock()


def warm_up_builds(db: Location) -> None:
    """The first time this process serves `db`, prepare its builds in the background (ingest.build.warm_up: the
    warehouse's change build recorded, or dbt loaded), so the first Store waits only for its own build, as later
    ones do. A Store pressed meanwhile waits for the warm-up to end (the build lock) and loses nothing by it."""
    with _WARMING_LOCK:
        if db in _WARMING:
            return
        thread = threading.Thread(target=_warm_up, args=(db,), name="kneepoint-warm-up", daemon=True)
        _WARMING[db] = thread
    thread.start()


def warm_ups_done(timeout_s: float | None = None) -> bool:
    """Wait for the warm-ups started so far (a test's, before the next test points the app elsewhere)."""
    with _WARMING_LOCK:
        threads = list(_WARMING.values())
    for thread in threads:
        thread.join(timeout_s)
    return not any(t.is_alive() for t in threads)


def _warm_up(db: Location) -> None:
    try:
        warm_up(db)
    except Exception:  # noqa: BLE001 - a cold first build is slower, not wrong: the Store builds as it would
        logging.getLogger(__name__).warning("dbt could not be loaded ahead of the first build", exc_info=True)


def rebuild(db: Location, progress: Callable[[str], None] | None = None) -> BuildResult:
    """Bring the models up to date after a committed change. Sessions storing at once share builds: a build
    covers every change committed before it started, so a session whose change an earlier build covered finds
    nothing left to build (ingest/build.py)."""
    return build_models(db, progress=progress)


# What can turn text into markup in Streamlit's Markdown, escaped with a backslash: emphasis, code, links, images,
# raw HTML, entities, tables, strikethrough, LaTeX ($), and GitHub's e-mail autolinks (@) anywhere; a colon that
# opens an emoji, icon or colour directive (`:smile:`, `:material/x:`, `:red[x]`) or a URL (`http://`); `www.`
# (an autolink); a heading, quote, list or rule marker at the start of a line. Other punctuation is left as it
# is, so ordinary messages (`notes.txt:1: ...`) read the same in the page source.
_MARKDOWN_ANYWHERE = re.compile(r"([\\`*_{}\[\]<>|~$&!@])")
_MARKDOWN_COLON = re.compile(r":(?=[A-Za-z/])")
_MARKDOWN_WWW = re.compile(r"(?i)\b(www)\.")
_MARKDOWN_LINE_START = re.compile(r"(?m)^([ \t]*)([#>+=-])")
_MARKDOWN_ORDERED = re.compile(r"(?m)^([ \t]*\d+)([.)])")


def md_literal(text: str) -> str:
    """`text` (a file name, label, note, message quoting them) shown as itself in Streamlit's Markdown, so that
    `<b>`, `**x**` or `[a](javascript:...)` are text, not markup. (Streamlit still draws ` -- ` as a dash and
    ` -> ` as an arrow: typography, not markup.)"""
    text = _MARKDOWN_ANYWHERE.sub(r"\\\1", text)
    text = _MARKDOWN_COLON.sub(r"\\:", text)
    text = _MARKDOWN_WWW.sub(r"\1\\.", text)
    text = _MARKDOWN_LINE_START.sub(r"\1\\\2", text)
    return _MARKDOWN_ORDERED.sub(r"\1\\\2", text)


def parse_tags(text: str) -> list[str]:
    """'ssd, Storage Spaces,, ssd' -> ['ssd', 'Storage Spaces']: comma-separated, duplicates dropped."""
    return list(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))
