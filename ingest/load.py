"""`kneepoint ingest` and the app's upload: parse (in a process pool when there are many files), store whole files
in batches, rebuild the models.

Parsing is CPU-bound Python, so a large ingest parses in worker processes (kept between ingests of one process),
which also turn each chunk of files' rows into Arrow, one array per column and chunk; the main process, the only
one holding the warehouse, stores them in batches: one transaction and one bulk insert per raw table for up to
BATCH_FILES files. A batch commits whole or not at all, so every file is stored whole or
not at all; a file is reported "added" only after its batch committed; an interruption loses at most the batch
being written, and a rerun stores it (files already stored are skipped by their sha256).
"""

from __future__ import annotations

import gc
import hashlib
import math
import multiprocessing
import os
import sys
import threading
import time
import types
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

import duckdb
import pyarrow as pa

from kneepoint.ingest import contents, formats
from kneepoint.ingest.build import BuildResult, Progress, build_models
from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.labels import Labels, check_labels
from kneepoint.ingest.records import ParsedFile
from kneepoint.ingest.sources import InputError, InputFile
from kneepoint.ingest.textio import cr_as_lf, decode, without_crlf
from kneepoint.ingest.warehouse import (
    Connection,
    PreparedFile,
    StoreError,
    StoreResult,
    arrow_without_pandas,
    attach_tables,
    checkpoint_within,
    connect,
    file_content,
    file_parse_options,
    is_postgres,
    prepare_file,
    raw_tables,
    release_cache,
    release_freed_memory,
    store_batch,
)

# While many files go in, let the write-ahead log grow before DuckDB folds it into the file: each fold
# rewrites the tables' indexes, so folding every 16 MB (the default) makes a large ingest quadratic.
# Committed files are in the log and survive a crash; the fold happens when the ingest closes (or see FOLD_BYTES).
BULK_CHECKPOINT_THRESHOLD = "1GB"
# ... unless this many bytes of files went in: DuckDB holds what it has not folded in memory (_bulk_checkpoints).
FOLD_BYTES = 32 * 1024 * 1024
# The fold runs with DuckDB's memory bounded to what it must hold plus FOLD_HEADROOM_MB and twice the largest file
# folded (checkpoint_within): it holds a file's compressed bytes whole, and a fold that runs out of memory is fatal
# to DuckDB's database. 25,400 small files of every format into a new warehouse peaked at 309 MB before their build
# with DuckDB's usual limit, ~258 MB bounded, no slower. A 40 MB file of random text (30 MB compressed) failed to
# fold with 36 MB of headroom and folded with 52; twice its size is kept.
FOLD_HEADROOM_MB = 32
# A batch ends at this many files or bytes of file content: large enough that per-statement costs vanish, small
# enough that memory stays bounded and an interrupted ingest loses little work.
BATCH_FILES = 256
BATCH_BYTES = 16 * 1024 * 1024
# Files go to a worker in chunks (per-task costs are paid per chunk), at most WINDOW_PER_WORKER chunks per worker
# in flight: that keeps both the workers and the writer busy, and memory bounded.
CHUNK_FILES = 32
CHUNK_BYTES = 4 * 1024 * 1024
WINDOW_PER_WORKER = 3
# and at most this many bytes of input in flight, whatever the chunks: memory stays bounded by the files' size.
WINDOW_BYTES = 32 * 1024 * 1024


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
    workers: int = 1
    # Seconds: "parse_s" the writer waited for parsed files, "store_s" storing them, "build_s" the dbt build.
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def added(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.status == "added"]

    @property
    def duplicates(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.status == "duplicate"]

    @property
    def errors(self) -> list[FileOutcome]:
        return [o for o in self.outcomes if o.status == "error"]


@dataclass(frozen=True, slots=True)
class _Labels:
    """What every file of one ingest is stored under, the format to read it as (None: detect) and the parse options
    (load_table's column mapping: (key, value) pairs), stored with each file."""

    disk: str
    host: str | None
    tags: tuple[str, ...]
    notes: str | None
    fmt: str | None
    options: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, labels: Labels, fmt: str | None, options: Mapping[str, str] | None = None) -> _Labels:
        return cls(labels.disk, labels.host, labels.tags, labels.notes, fmt, tuple(sorted((options or {}).items())))


@dataclass(slots=True)
class _Prepared:
    """What a worker sends back for one file: its rows, or why it cannot be stored."""

    file: PreparedFile | None
    tool_version: str | None = None
    warnings: list[str] = field(default_factory=list)
    error: str | None = None


def _prepare(held: list[tuple[str, bytes]], labels: _Labels) -> _Prepared:
    """Parse one file and build its rows (in a worker process, or in-process for a few files). `held`: the file's
    (name, bytes), taken out of it here: once hashed and compressed as they will be stored, the bytes are let go of
    as soon as their copy with `\\n` line ends exists, and that copy once decoded, so that at most two of the bytes,
    their copy and the text are held at once (a 190 MB CRLF file held all three, and a 100 MB log its bytes beside
    its text and records)."""
    name, data = held.pop()
    try:
        formats.check_input(data, name)
    except ParseError as exc:
        return _Prepared(None, error=str(exc))
    sha256 = hashlib.sha256(data).hexdigest()
    content = contents.Frame.of(data)
    data = without_crlf(data)  # a CRLF file's bytes go once their copy exists (textio.lf_line_ends)
    data = cr_as_lf(data)
    text, encoding = decode(data)
    del data
    try:
        parsed = formats.parse_decoded(text, encoding, name, labels.fmt, dict(labels.options) or None)
    except ParseError as exc:
        return _Prepared(None, error=str(exc))
    del text
    tool_version = parsed.tool_version  # of its records, which prepare_file takes
    try:
        prepared = prepare_file(
            _display_name(name),
            content,
            sha256,
            parsed,
            labels.disk,
            labels.host,
            labels.tags,
            labels.notes,
            dict(labels.options),
            take_records=True,
        )
    except StoreError as exc:
        return _Prepared(None, error=f"{name}: not stored ({parsed.format}): {exc.reason}")
    return _Prepared(prepared, tool_version, list(parsed.warnings))


def ingest_inputs(
    db: str | os.PathLike[str],
    items: Iterable[InputFile | InputError],
    disk: str,
    host: str | None = None,
    tags: Sequence[str] = (),
    notes: str | None = None,
    fmt: str | None = None,
    options: Mapping[str, str] | None = None,
    build: bool = True,
    progress: Callable[[FileOutcome], None] | None = None,
    workers: int | None = None,
    build_progress: Progress | None = None,
    release_memory: bool = True,
) -> IngestReport:
    """Store every readable file whole; a bad file is reported and never blocks the others. An interruption
    (Ctrl-C, a kill) leaves the files stored so far whole; a rerun skips them. Labels past their limits raise
    LabelError before anything is read or stored.

    `options`: parse options (load_table's column mapping, see formats.parse_text) for every file, stored with each.
    `workers`: parsing processes; None or 1: in this process, the only way an ingest of many files stays within its
    memory target (see README, "Memory"; a pool's stated cost per process: wording.POOL_PROCESS_MB).
    `build`: then bring the models up to date (also after an earlier build that did not finish).
    `release_memory`: let DuckDB drop its cache as large stores go in (_bulk_checkpoints); False where other
    threads of the process query the same warehouse (the app), whose queries that moment could fail."""
    labels = _Labels.of(check_labels(disk, host, tags, notes), fmt, options)
    arrow_without_pandas()
    # A pool is asked for, never chosen: it trades memory for time. The main process reads, stores and unpacks the
    # workers' rows, so a pool pays from 3 cores; on 2 it was no faster than parsing in-process (bench, every format:
    # 137 s on 2 workers, 140 s in-process, 2026-12-07).
    workers = max(1, workers or 1)
    report = IngestReport([], workers=workers, timings={"parse_s": 0.0, "store_s": 0.0, "build_s": 0.0})
    with _worker_pool(workers) as pool:
        con = connect(db)
        try:
            with _bulk_checkpoints(con, release_memory) as stored:
                _store_all(con, _prepared(iter(items), labels, pool, workers, report), report, progress, stored)
            if pool is not None and build:
                # The build ends an ingest: its memory matters more than the next call's pool start.
                _POOL.close_if_idle(besides=pool)
            # Built while this connection keeps the warehouse: no other process can take it between the store and
            # the build. A build that was killed before is completed here, even when nothing was added.
            if build and report.aborted is None:
                release_freed_memory()  # the stored rows' buffers: the build needs the memory
                t = time.perf_counter()
                report.build = build_models(db, progress=build_progress)
                report.timings["build_s"] = time.perf_counter() - t
        finally:
            con.close()
    return report


# A pool nobody used for this long is shut down (its workers hold ~100 MB each).
POOL_IDLE_S = 30.0


class _SharedPool:
    """The process's parsing pool, kept between ingest calls: starting one cost ~0.15 s per call even with the
    parsers preloaded, and a script (or the bench) that ingests folder after folder paid it hundreds of times.
    Shut down after POOL_IDLE_S unused, when it broke (a worker died), or by `close_pool`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None
        self._workers = 0
        self._users = 0
        self._timer: threading.Timer | None = None

    @contextmanager
    def use(self, workers: int) -> Iterator[ProcessPoolExecutor]:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            # A worker that died breaks the pool for good; another size is started when nobody uses this one.
            if self._pool is not None and (_broken(self._pool) or (self._users == 0 and self._workers != workers)):
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = None
            if self._pool is None:
                self._pool, self._workers = _start_pool(workers), workers
            self._users += 1
            pool = self._pool
        try:
            yield pool
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0 and self._pool is pool:
                    self._timer = threading.Timer(POOL_IDLE_S, self.close_if_idle)
                    self._timer.daemon = True
                    self._timer.start()

    def close_if_idle(self, besides: ProcessPoolExecutor | None = None) -> None:
        """Shut the pool down unless somebody uses it (`besides`: a caller that is done with it)."""
        with self._lock:
            users = self._users - (besides is not None and besides is self._pool)
            if self._pool is None or users > 0:
                return
            pool, self._pool = self._pool, None
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        pool.shutdown(wait=True, cancel_futures=True)
        _stop_forkserver()


def _stop_forkserver() -> None:
    """Stop the server the pool's workers fork from: a process of its own that holds what it preloaded (parsers,
    DuckDB, Arrow: RSS ~90 MB, ~50 MB of it its own while workers share it) until this process exits, through the
    build that ends an ingest. The next pool starts it again (~0.5 s). Python 3.11 has no public call for it: `_stop`
    is what its own tests use."""
    from multiprocessing import forkserver

    stop = getattr(forkserver._forkserver, "_stop", None)
    if stop is not None:
        stop()


_POOL = _SharedPool()


def close_pool() -> None:
    """Shut the parsing pool down now if no ingest is using it (its workers are started again when needed)."""
    _POOL.close_if_idle()


@contextmanager
def _worker_pool(workers: int) -> Iterator[ProcessPoolExecutor | None]:
    if workers <= 1:
        yield None
        return
    with _POOL.use(workers) as pool:
        yield pool


def _start_pool(workers: int) -> ProcessPoolExecutor:
    # Forkserver, because the app's process has threads, and forking a threaded process can deadlock the child.
    context = _WorkerContext()
    # Workers fork from a server that has imported the parsers, DuckDB and Arrow once (~0.5 s per worker); a
    # parser module a worker imported itself cost every call with a pool ~0.07 s more.
    context.set_forkserver_preload([__name__, *(mod.__name__ for mod in formats.registry().values())])
    return ProcessPoolExecutor(workers, context, initializer=_start_worker, initargs=(os.getpid(),))


def _broken(pool: ProcessPoolExecutor) -> bool:
    """A worker died (killed, out of memory): the pool refuses every task from then on. CPython sets `_broken` a
    moment after the death; a dead process in `_processes` tells it at once."""
    processes = getattr(pool, "_processes", None) or {}
    return bool(getattr(pool, "_broken", False)) or any(not p.is_alive() for p in list(processes.values()))


@contextmanager
def _main_module_hidden() -> Iterator[None]:
    """A new worker re-runs the parent's `__main__` script (multiprocessing's rule for non-fork starts). In the
    app that is a Streamlit page (Streamlit installs each page as `__main__`), under pytest a test's: a worker
    must start from the parsers alone. Only process starts run inside this, for the few ms they take."""
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")  # no __file__, no __spec__: nothing to re-run
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main


class _WorkerProcess(multiprocessing.context.ForkServerProcess):
    def start(self) -> None:
        with _main_module_hidden():
            super().start()


class _WorkerContext(multiprocessing.context.ForkServerContext):
    Process = _WorkerProcess


def _start_worker(pid: int) -> None:
    # What the server preloaded stays out of the garbage collector's passes: a pass writes to each object it visits,
    # and every page written is copied out of what the workers share with the server (each worker held ~10 MB more
    # of its own, and the server ~9 MB, without this).
    gc.freeze()
    arrow_without_pandas()
    _watch_parent(pid)


def _watch_parent(pid: int) -> None:
    """In a worker: exit when the ingesting process is gone. Python 3.11's pool workers wait on their queue
    forever when their parent is SIGKILLed, and keep the forkserver alive with them."""

    def watch() -> None:
        while _alive(pid):
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="kneepoint-parent-watch", daemon=True).start()


def _alive(pid: int) -> bool:
    """Running (a killed process stays a zombie until its parent reaps it: that counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel whether the pid exists
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


@dataclass(slots=True)
class _Chunk:
    """Several files' outcomes, and all their rows as one Arrow table per raw table: built once per chunk (per file
    it cost more than the parse), and what a worker sends back (pickling seven small tables per file cost more
    than parsing it)."""

    prepared: list[_Prepared]
    tables: dict[str, pa.Table]


def _prepare_chunk(files: list[tuple[str, bytes]], labels: _Labels) -> _Chunk:
    """`files` is emptied as it is read: _prepare lets go of each file's bytes once it has what it needs of them."""
    names = [name for name, _ in files]
    prepared = []
    files.reverse()
    while files:
        prepared.append(_prepare([files.pop()], labels))
    stored = [(name, p) for name, p in zip(names, prepared, strict=True) if p.file is not None]
    tables, errors = raw_tables([p.file for _, p in stored])
    for (name, p), error in zip(stored, errors, strict=True):
        if error is not None:
            p.error = f"{name}: not stored ({p.file.format}): {error.reason}"
            p.file = None
        else:
            p.file.rows = None  # in the tables now; a worker would pickle the records for nothing
    return _Chunk(prepared, tables)


def _prepare_in_worker(files: list[tuple[str, bytes]], labels: _Labels) -> _Chunk:
    """A chunk in a parsing worker. What its parse freed goes back to the system before the rows are sent: a worker
    kept ~20 MB of it from chunk to chunk, also while idle through the fold that ends an ingest (its peak)."""
    chunk = _prepare_chunk(files, labels)
    release_freed_memory()
    return chunk


def _unpack(chunk: _Chunk) -> list[_Prepared]:
    """Each file pointed at its rows in the chunk's tables."""
    attach_tables([p.file for p in chunk.prepared if p.file is not None], chunk.tables)
    return chunk.prepared


@dataclass(frozen=True, slots=True)
class _Entry:
    """One input in the store loop: its name, why it could not be read (InputError), or its prepared rows. The
    input's bytes are not kept: they live in the prepared rows (or are gone) once it is parsed."""

    name: str
    unreadable: str | None
    prepared: _Prepared | None


def _prepared(
    items: Iterator[InputFile | InputError],
    labels: _Labels,
    pool: ProcessPoolExecutor | None,
    workers: int,
    report: IngestReport,
) -> Iterator[_Entry]:
    """Each input with its prepared rows, in input order."""
    if pool is None:
        for chunk in _chunks(items):
            t = time.perf_counter()
            files = [(i.name, i.data) for i in chunk if isinstance(i, InputFile)]
            size = sum(len(data) for _, data in files)
            stand_ins = _stand_ins(chunk)
            del chunk  # the bytes live in `files`, then in the prepared rows, never twice
            prepared = _unpack(_prepare_chunk(files, labels))
            del files
            report.timings["parse_s"] += time.perf_counter() - t
            yield from _in_order(stand_ins, prepared)
            # The store loop holds what it has not stored yet; this chunk's rows are let go of here, not once the
            # next chunk is parsed, and so are the pages Arrow's allocator keeps after a large chunk (two weeks of
            # Perfmon counters, 35 MB each: the first's 91 MB of rows were held through the second's parse).
            del prepared
            if size >= CHUNK_BYTES:
                release_freed_memory()
        return
    # Chunks of files go to the workers, at most WINDOW_PER_WORKER chunks per worker and WINDOW_BYTES in flight.
    pending: deque[tuple[list[InputError | str], int, Future[_Chunk]]] = deque()
    in_flight = 0
    try:
        for chunk in _chunks(items):
            files = [(i.name, i.data) for i in chunk if isinstance(i, InputFile)]
            size = sum(len(data) for _, data in files)
            pending.append((_stand_ins(chunk), size, pool.submit(_prepare_in_worker, files, labels)))
            in_flight += size
            del chunk, files
            while pending and (len(pending) >= workers * WINDOW_PER_WORKER or in_flight >= WINDOW_BYTES):
                in_flight -= pending[0][1]
                yield from _next_done(pending, report)
        while pending:
            yield from _next_done(pending, report)
    finally:
        # An ingest that stops early (an abort, Ctrl-C) leaves the shared pool no work of its own.
        for *_, future in pending:
            future.cancel()


def _stand_ins(chunk: list[InputFile | InputError]) -> list[InputError | str]:
    """The chunk without the files' bytes: a readable file is its name."""
    return [item if isinstance(item, InputError) else item.name for item in chunk]


def _chunks(items: Iterator[InputFile | InputError]) -> Iterator[list[InputFile | InputError]]:
    chunk: list[InputFile | InputError] = []
    size = 0
    for item in items:
        chunk.append(item)
        size += len(item.data) if isinstance(item, InputFile) else 0
        del item  # else it holds this input's bytes while the next one is read
        if len(chunk) >= CHUNK_FILES or size >= CHUNK_BYTES:
            # handed on without a reference kept here: the caller lets go of the bytes once they are parsed
            full, chunk, size = [chunk], [], 0
            yield full.pop()
    if chunk:
        last, chunk = [chunk], []  # as above: the last chunk, often a file alone, is let go of as it is parsed
        yield last.pop()


def _next_done(
    pending: deque[tuple[list[InputError | str], int, Future[_Chunk]]], report: IngestReport
) -> Iterator[_Entry]:
    items, _, future = pending.popleft()
    t = time.perf_counter()
    prepared = _unpack(future.result())
    report.timings["parse_s"] += time.perf_counter() - t
    yield from _in_order(items, prepared)


def _in_order(items: list[InputError | str], prepared: list[_Prepared]) -> Iterator[_Entry]:
    """Each input with its prepared file: `prepared` holds one per readable input, in order."""
    files = iter(prepared)
    for item in items:
        if isinstance(item, InputError):
            yield _Entry(item.name, item.reason, None)
        else:
            yield _Entry(item, None, next(files))


def _store_all(
    con: Connection,
    entries: Iterator[_Entry],
    report: IngestReport,
    progress: Callable[[FileOutcome], None] | None,
    stored_bytes: Callable[[int, int], None],
) -> None:
    """Batch the prepared files; outcomes are reported in input order, each file's after its batch committed.
    `stored_bytes` is told the files' bytes of each batch, and its largest file's, once it committed."""
    # Outcomes waiting for the batch before them (errors included, so that the order stays the input's).
    waiting: list[_Entry] = []
    batch_files = batch_bytes = 0

    def flush() -> bool:
        nonlocal batch_files, batch_bytes
        t = time.perf_counter()
        files = [e.prepared.file for e in waiting if e.prepared is not None and e.prepared.file is not None]
        largest = max((f.size_bytes for f in files), default=0)
        stored = iter(store_batch(con, files) if files else [])
        del files
        stored_bytes(batch_bytes, largest)
        report.timings["store_s"] += time.perf_counter() - t
        for entry in waiting:
            outcome, fatal = _outcome(entry, stored)
            if outcome is None:  # not tried: the warehouse failed before this file
                break
            report.outcomes.append(outcome)
            if progress:
                progress(outcome)
            if fatal:
                report.aborted = outcome.reason
                break
        waiting.clear()
        batch_files = batch_bytes = 0
        return report.aborted is None

    for entry in entries:
        waiting.append(entry)
        p = entry.prepared
        if p is not None and p.file is not None:
            batch_files += 1
            batch_bytes += p.file.size_bytes
        del entry, p
        if (batch_files >= BATCH_FILES or batch_bytes >= BATCH_BYTES) and not flush():
            return
    if waiting:
        flush()


def _outcome(entry: _Entry, stored: Iterator[StoreResult | StoreError]) -> tuple[FileOutcome | None, bool]:
    """The file's outcome (None when it was not tried), and whether the warehouse failed storing it."""
    name, p = entry.name, entry.prepared
    if entry.unreadable is not None or p is None:
        return FileOutcome(name, "error", reason=f"{name}:1: {entry.unreadable}"), False
    if p.file is None:
        return FileOutcome(name, "error", reason=p.error), False
    result = next(stored, None)
    if result is None:
        return None, False
    f = p.file
    if isinstance(result, StoreError):
        reason = f"{name}: not stored ({f.format}): {result.reason}"
        return FileOutcome(name, "error", format=f.format, reason=reason), result.fatal
    outcome = FileOutcome(
        name,
        result.status,
        file_id=result.file_id,
        format=f.format,
        tool_version=p.tool_version,
        records=f.records,
        runs=f.runs,
        warnings=p.warnings,
    )
    if result.status == "duplicate":
        outcome.reason = _duplicate_reason(result, f.sha256, f.disk, f.host)
    return outcome, False


@contextmanager
def _bulk_checkpoints(con: Connection, release_memory: bool) -> Iterator[Callable[[int, int], None]]:
    """DuckDB folds its write-ahead log less often while files go in (BULK_CHECKPOINT_THRESHOLD). But until it
    folds, it holds every stored byte in memory, and afterwards keeps them cached: so once FOLD_BYTES of files
    are stored, fold, bounded (FOLD_HEADROOM_MB), and (`release_memory`) let go of the cache. With `release_memory`,
    DuckDB also stores on one
    thread: a file of many records comes as many Arrow chunks, which its threads appended in parallel, each with row
    groups of its own in memory (a 100 MB SQLIO log's rows: +196 MB instead of +137 MB, and no faster); and it
    writes each full row group out instead of buffering five (that log's store: 450 MB instead of 500 MB at its
    peak). The function this yields is told each batch's bytes and its largest file's. PostgreSQL has no such
    setting per session."""
    if is_postgres(con):
        yield lambda stored_bytes, largest_file_bytes: None
        return
    unfolded = largest = 0

    def fold() -> None:
        nonlocal unfolded, largest
        headroom_mb = FOLD_HEADROOM_MB + 2 * math.ceil(largest / 2**20)
        unfolded = largest = 0
        # What the stored batches' rows were freed into goes back first: the fold is where an ingest peaks.
        release_freed_memory()
        # The files are committed: a failed fold leaves them in the log, and closing folds it.
        with suppress(duckdb.Error):
            if not release_memory:  # other threads' queries need DuckDB's usual limit
                con.execute("CHECKPOINT")
                return
            checkpoint_within(con, headroom_mb)
            release_cache(con)
            release_freed_memory()

    def stored(stored_bytes: int, largest_file_bytes: int) -> None:
        nonlocal unfolded, largest
        unfolded += stored_bytes
        largest = max(largest, largest_file_bytes)
        if unfolded >= FOLD_BYTES:
            fold()

    con.execute(f"SET checkpoint_threshold = '{BULK_CHECKPOINT_THRESHOLD}'")
    (threads,) = con.execute("SELECT current_setting('threads')").fetchall()[0]
    if release_memory:
        con.execute("SET threads = 1")
        con.execute("SET write_buffer_row_group_count = 1")
    try:
        yield stored
        if unfolded and release_memory:
            fold()  # what is left, now rather than as the connection closes, with DuckDB's cache full
    finally:
        # On a failed warehouse this fails too; the error that matters was reported already.
        with suppress(duckdb.Error):
            con.execute("RESET checkpoint_threshold")
            con.execute("RESET write_buffer_row_group_count")
            con.execute(f"SET threads = {int(threads)}")


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


def reread_stored(con: Connection, file_id: str) -> ParsedFile:
    """A stored file read again from its bytes, as its format and with the parse options it was stored with (a
    column-mapped load table reads to the same records): what a re-parse after a parser change starts from."""
    name, data = file_content(con, file_id)
    fmt = con.execute("SELECT format FROM raw_files WHERE file_id = ?", [file_id]).fetchall()[0][0]
    return formats.parse_bytes(data, name, fmt, file_parse_options(con, file_id) or None)
