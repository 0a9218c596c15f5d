"""`kneepoint headroom`: the observed production load of each host and device against its disk's benchmark, read
from mart_headroom and said in one sentence each (app/wording.py headroom_sentence, as the page and the report say
it). Nothing is computed here: the percentiles, the baseline, headroom and the degradation flag are the mart's."""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kneepoint.app import wording as w

if TYPE_CHECKING:
    from kneepoint.ingest.warehouse import Location

ORDER = "disk_key, host, device"
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


def to_json(rows: Sequence[dict[str, Any]]) -> str:
    """A JSON array keyed by mart_headroom's column names, each with its `sentence`."""
    return json.dumps(
        [{**{k: _json_value(v) for k, v in r.items()}, "sentence": w.headroom_sentence(r)} for r in rows],
        indent=2,
        ensure_ascii=False,
    )


def _json_value(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, datetime):
        return v.isoformat()
    return v


def _wrapped(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=INDENT, subsequent_indent=INDENT + "  ", break_on_hyphens=False)


def report_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Per host and device: a header (disk · host · device), its sentence, and which benchmark it was placed on."""
    if not rows:
        return [
            "no observed production load in the warehouse: ingest a Perfmon counter log, an iostat -x report or "
            "SQL Server file statistics under the benchmarked disk's label (kneepoint ingest FILE --disk LABEL)"
        ]
    factor = rows[0]["degradation_factor"]
    lines = textwrap.wrap(
        "Production against the baseline: percentiles of each device's intervals in its busiest hour (the clock "
        "hour with the most I/O, the whole log where it covers less; since-boot averages and _Total left out) on "
        "the nearest benchmark series of the same disk; degraded where latency at the observed load passes "
        f"{w.fmt_times(factor)} the baseline's.",
        WIDTH,
    )
    for r in rows:
        # the logging computer once: a disk labelled `... @ sql01` logged on SQL01 does not say it twice (Windows
        # writes host names in capitals, and they are the same name in any case)
        host = r["host"] if r["host"] and not r["disk_key"].lower().endswith(f" @ {r['host'].lower()}") else None
        head = " · ".join(part for part in (r["disk_key"], host, r["device"]) if part)
        lines += ["", *textwrap.wrap(head, WIDTH, subsequent_indent="  ")]
        lines += _wrapped(w.capital(w.headroom_sentence(r)))
        lines += _wrapped(
            f"Baseline: {w.baseline_text(r)}; {w.busy_hour_count(r)}, p50 {w.fmt_iops(r['iops_p50'])} "
            f"/ p99 {w.fmt_iops(r['iops_p99'])} IOPS"
        )
    return lines
