"""Load series for the tests, made the way the readers will make them: LoadRecord lists (one step per load), stored
through the warehouse as a file of their own (until the readers land, no table needs parsing).

`sessions_sweep` follows the Universal Scalability Law with Little's law holding: each step's mean response time is
load / throughput, so a sweep is a real application's curve, not arbitrary numbers."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from kneepoint.ingest.analytics import usl_iops
from kneepoint.ingest.records import LoadRecord, ParsedFile
from kneepoint.ingest.warehouse import Connection, StoreResult, store_file

# The source document's sweep: the same SQL from 1, 2, 3, 4, 5, 6, 9 and 12 sessions at once.
SESSIONS = (1, 2, 3, 4, 5, 6, 9, 12)


def sessions_sweep(
    loads: Sequence[float] = SESSIONS,
    *,
    per_minute_at_one: float = 60.0,
    sigma: float = 0.08,
    kappa: float = 0.02,
    unit: str = "queries/min",
    load_kind: str = "concurrent sessions",
    workload: str | None = None,
    tool: str = "table",
    slower: float = 1.0,
) -> list[LoadRecord]:
    """One step per load: the USL's throughput (in `unit`, a per-minute unit unless it ends in /s) and, by Little's
    law, the mean response time in ms; `slower` multiplies the response times (Little's law then off by it)."""
    per_s_factor = 1.0 if unit.endswith("/s") else 1 / 60
    out = []
    for i, n in enumerate(loads):
        throughput = usl_iops(n, per_minute_at_one, sigma, kappa)
        response_ms = n / (throughput * per_s_factor) * 1000 * slower
        out.append(
            LoadRecord(
                tool=tool,
                step_index=i,
                source_line=i + 2,
                load_kind=load_kind,
                load=float(n),
                throughput=throughput,
                throughput_unit=unit,
                response_avg_ms=response_ms,
                response_p95_ms=response_ms * 1.5,
                duration_s=300.0,
                errors=0,
                workload=workload,
            )
        )
    return out


def store_loads(
    con: Connection,
    records: Iterable[LoadRecord],
    disk: str,
    host: str | None = None,
    name: str = "sessions.csv",
    fmt: str = "load_table",
    variant: str = "",
) -> StoreResult:
    """Store the records as one file (its bytes: the records as JSON; `variant` makes the same records another
    file)."""
    records = list(records)
    data = (json.dumps([r.to_normalized() for r in records]) + variant).encode()
    return store_file(con, name, data, hashlib.sha256(data).hexdigest(), ParsedFile(fmt, records), disk=disk, host=host)


def ingest_loads(db: Path, records: Iterable[LoadRecord], disk: str, **kw: object) -> str:
    """Store the records and bring the models up to date; the file's id."""
    from kneepoint.ingest.build import build_models
    from kneepoint.ingest.warehouse import connect

    con = connect(db)
    try:
        result = store_loads(con, records, disk, **kw)  # type: ignore[arg-type]
    finally:
        con.close()
    build_models(db).raise_for_failure()
    return result.file_id
