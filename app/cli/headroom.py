"""`kneepoint headroom`: the observed production load of each host and device against its disk's benchmark, read
from mart_headroom, and each server's SQL Server I/O waits against it, read from mart_waits_vs_baseline, said in
one sentence each (app/wording.py headroom_sentence and wait_sentence, as the page and the report say them).
Nothing is computed here: the percentiles, the baseline, headroom and the degradation flag are the marts'."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kneepoint.app import wording as w

if TYPE_CHECKING:
    from kneepoint.ingest.warehouse import Location

ORDER = "disk_key, host, device"
WAIT_ORDER = "disk_key, host_key, instance, wait_type"
WIDTH = 100
INDENT = "    "


class MissingModels(Exception):
    """The warehouse has no mart_headroom yet (built before it existed, or never built)."""


def headroom_rows(db: Location, disk: str | None = None) -> list[dict[str, Any]]:
    """mart_headroom's rows, of the disk `disk` names (a disk key `label @ host`, or a bare label: every host of
    it) when given; KeyError naming the disks with observed load when it names none of them."""
    from kneepoint.ingest.warehouse import connect

    con = connect(db, read_only=True)
    try:
        found = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() "
            "AND table_name = 'mart_headroom'"
        ).fetchone()[0]
        if not found:
            raise MissingModels(f"no production-vs-baseline models in {db}: run `kneepoint build`")
        cur = con.execute(f"SELECT * FROM mart_headroom ORDER BY {ORDER}")
        columns = [d[0] for d in cur.description]
        rows = [dict(zip(columns, r, strict=True)) for r in cur.fetchall()]
    finally:
        con.close()
    if disk is None or not disk.strip():
        return rows
    wanted = disk.strip()
    chosen = [r for r in rows if r["disk_key"] == wanted] or [r for r in rows if r["disk"].strip() == wanted]
    if not chosen:
        keys = list(dict.fromkeys(r["disk_key"] for r in rows))
        raise KeyError(
            f"no observed load of disk {wanted!r}; disks with observed load: " + ("; ".join(keys) if keys else "none")
        )
    return chosen


def wait_rows(db: Location, disk_keys: Sequence[str]) -> list[dict[str, Any]]:
    """mart_waits_vs_baseline's rows of the disks `disk_keys` names (those headroom_rows chose); none from a
    warehouse built before the mart existed."""
    from kneepoint.ingest.warehouse import connect

    keys = set(disk_keys)
    con = connect(db, read_only=True)
    try:
        found = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() "
            "AND table_name = 'mart_waits_vs_baseline'"
        ).fetchone()[0]
        if not found:
            return []
        cur = con.execute(f"SELECT * FROM mart_waits_vs_baseline ORDER BY {WAIT_ORDER}")
        columns = [d[0] for d in cur.description]
        rows = [dict(zip(columns, r, strict=True)) for r in cur.fetchall()]
    finally:
        con.close()
    return [r for r in rows if r["disk_key"] in keys]


def to_json(rows: Sequence[dict[str, Any]], waits: Sequence[dict[str, Any]] = ()) -> str:
    """A JSON object: `devices`, mart_headroom's rows keyed by its column names, and `waits`,
    mart_waits_vs_baseline's, each with its `sentence`."""
    return json.dumps(
        {
            "devices": [_json_row(r, w.headroom_sentence(r)) for r in rows],
            "waits": [_json_row(r, w.wait_sentence(r)) for r in waits],
        },
        indent=2,
        ensure_ascii=False,
    )


def _json_row(row: dict[str, Any], sentence: str) -> dict[str, Any]:
    return {**{k: _json_value(v) for k, v in row.items()}, "sentence": sentence}


def _json_value(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, datetime):
        return v.isoformat()
    return v


def _wrapped(text: str) -> list[str]:
    return w.printable_wrap(text, WIDTH, initial_indent=INDENT, subsequent_indent=INDENT + "  ", break_on_hyphens=False)


def _head(row: dict[str, Any], last: str) -> str:
    """'disk · host · last': the logging computer once (a disk labelled `... @ sql01` logged on SQL01 does not say
    it twice: Windows writes host names in capitals, and they are the same name in any case)."""
    host = row["host"] if row["host"] and not row["disk_key"].lower().endswith(f" @ {row['host'].lower()}") else None
    return " · ".join(part for part in (row["disk_key"], host, last) if part)


def report_lines(rows: Sequence[dict[str, Any]], waits: Sequence[dict[str, Any]] = ()) -> list[str]:
    """Per host and device: a header (disk · host · device), its sentence, and which benchmark it was placed on;
    then per server its I/O waits (disk · host · SQL Server waits), a sentence and a baseline each."""
    if not rows:
        return [
            "no observed production load in the warehouse: ingest a Perfmon counter log, an iostat -x report or "
            "SQL Server file statistics under the benchmarked disk's label (kneepoint ingest FILE --disk LABEL)"
        ]
    factor = rows[0]["degradation_factor"]
    lines = w.printable_wrap(
        "Production against the baseline: percentiles of each device's intervals in its busiest hour (the clock "
        "hour with the most I/O, the whole log where it covers less; since-boot averages and _Total left out) on "
        "the nearest benchmark series of the same disk; degraded where latency at the observed load passes "
        f"{w.fmt_times(factor)} the baseline's.",
        WIDTH,
    )
    for r in rows:
        lines += ["", *w.printable_wrap(_head(r, r["device"]), WIDTH, subsequent_indent="  ")]
        lines += _wrapped(w.capital(w.headroom_sentence(r)))
        lines += _wrapped(
            f"Baseline: {w.baseline_text(r)}; {w.busy_hour_count(r)}, p50 {w.fmt_iops(r['iops_p50'])} "
            f"/ p99 {w.fmt_iops(r['iops_p99'])} IOPS"
        )
    servers: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in waits:
        servers.setdefault((r["disk_key"], r["host_key"], r["instance"]), []).append(r)
    for (_, _, instance), server in servers.items():
        last = f"{instance}: SQL Server waits" if instance else "SQL Server waits"
        lines += ["", *w.printable_wrap(_head(server[0], last), WIDTH, subsequent_indent="  ")]
        for r in server:
            lines += _wrapped(w.wait_sentence(r))
            if r["series_id"] is not None:
                lines += _wrapped(f"Baseline: {w.baseline_text(r)}; {w.plural(r['intervals'], 'interval')}")
    return lines
