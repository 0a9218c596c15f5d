"""Prototype: ingest with parsing in a process pool, storing in the main process in input order.

This is the change the measurements argue for in `ingest.load.ingest_inputs` (see the README's Benchmarks
section, "if it pays"); it lives here until load.py's owners take it. It calls what ingest_inputs calls:
sources.iter_paths reads the files (streamed), formats.parse_bytes runs in the workers, warehouse.store_file
stores each parsed file in its own transaction, in the order the files came, so outcomes, duplicates and errors
are those of the serial ingest. At most `window` files are in flight, so memory stays bounded.
"""

from __future__ import annotations

import os
import time
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from ingest import formats
from ingest.errors import ParseError
from ingest.load import BULK_CHECKPOINT_THRESHOLD, _display_name
from ingest.records import ParsedFile
from ingest.sources import InputError, InputFile, iter_paths
from ingest.warehouse import connect, store_file


def _parse(name: str, data: bytes) -> ParsedFile | str:
    """In a worker: the parsed file, or the ParseError's message (its line and path survive as text;
    an exception with a custom __init__ does not pickle back whole)."""
    try:
        return formats.parse_bytes(data, name)
    except ParseError as exc:
        return str(exc)


def ingest_parallel(
    db: str | os.PathLike[str], groups: list[dict[str, Any]], workers: int = 2, window: int = 64
) -> dict[str, Any]:
    """Store every file of `groups` (folders with disk/host labels), parsing in `workers` processes."""
    stages = {"read_s": 0.0, "wait_s": 0.0, "store_s": 0.0}
    outcomes: dict[str, int] = {}
    records = 0
    # The pool forks before the warehouse is opened: no DuckDB handle crosses into a worker.
    with ProcessPoolExecutor(workers) as pool:
        con = connect(db)
        try:
            con.execute(f"SET checkpoint_threshold = '{BULK_CHECKPOINT_THRESHOLD}'")
            for group in groups:
                pending: deque[tuple[InputFile, Future[ParsedFile | str]]] = deque()
                items = iter_paths([group["path"]])
                while True:
                    t = time.perf_counter()
                    item = next(items, None)
                    stages["read_s"] += time.perf_counter() - t
                    if isinstance(item, InputError):
                        outcomes["error"] = outcomes.get("error", 0) + 1
                        continue
                    if item is not None:
                        pending.append((item, pool.submit(_parse, item.name, item.data)))
                    if pending and (item is None or len(pending) >= window):
                        done, fut = pending.popleft()
                        t = time.perf_counter()
                        parsed = fut.result()
                        stages["wait_s"] += time.perf_counter() - t
                        if isinstance(parsed, str):
                            outcomes["error"] = outcomes.get("error", 0) + 1
                            continue
                        t = time.perf_counter()
                        stored = store_file(
                            con, _display_name(done.name), done.data, done.sha256, parsed, group["disk"], group["host"]
                        )
                        stages["store_s"] += time.perf_counter() - t
                        outcomes[stored.status] = outcomes.get(stored.status, 0) + 1
                        records += len(parsed.records)
                    elif item is None:
                        break
        finally:
            con.execute("RESET checkpoint_threshold")
            con.close()
    return {"outcomes": outcomes, "records": records, "stages": stages, "workers": workers}
