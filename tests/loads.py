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


def load_files() -> list[list[LoadRecord]]:
    """Load-series files of several shapes, each one file: sessions against queries/min (with a step measured twice
    and a step without a throughput), a HammerDB autopilot (virtual users, NOPM and TPM: two series of one file),
    two workloads of one table in transactions/s, and databases on one server (Little's law not checked)."""
    sessions = sessions_sweep()
    sessions += [
        LoadRecord("table", 8, 10, "concurrent sessions", 4.0, sessions[3].throughput * 0.9, "queries/min", 5000.0),
        LoadRecord("table", 9, 11, "concurrent sessions", 7.0, None, None, 9000.0),
    ]
    vus = (1, 2, 4, 8, 12, 16, 20, 24)
    nopm = sessions_sweep(
        vus,
        per_minute_at_one=9000,
        sigma=0.03,
        kappa=0.002,
        unit="new orders/min",
        load_kind="virtual users",
        tool="hammerdb",
    )
    tpm = sessions_sweep(
        vus,
        per_minute_at_one=21000,
        sigma=0.03,
        kappa=0.002,
        unit="transactions/min",
        load_kind="virtual users",
        tool="hammerdb",
    )
    for r in nopm + tpm:
        r.response_avg_ms = r.response_p95_ms = None  # HammerDB prints no response time
    workloads = sessions_sweep(per_minute_at_one=5, unit="transactions/s", workload="oltp") + sessions_sweep(
        per_minute_at_one=0.5, sigma=0.3, kappa=0.0, unit="transactions/s", workload="reports"
    )
    databases = sessions_sweep(
        (1, 2, 3, 4, 6, 8), per_minute_at_one=800, load_kind="databases", unit="transactions/min"
    )
    return [sessions, nopm + tpm, workloads, databases]


def without_load_series(db: Path) -> Path:
    """`db` (a copy of the sample warehouse) without the sample's load-series files, its models brought up to date:
    a warehouse whose only load series are those a test stores."""
    from kneepoint.ingest.build import build_models
    from kneepoint.ingest.warehouse import connect, delete_file

    con = connect(db)
    try:
        for (file_id,) in con.execute("SELECT DISTINCT file_id FROM raw_load_steps").fetchall():
            delete_file(con, file_id)
    finally:
        con.close()
    build_models(db).raise_for_failure()
    return db
