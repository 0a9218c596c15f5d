"""Load-table writer: LoadRecords back into the table of the source documents this project grew from (the same
SQL from N sessions at once on one disk): `sessions | Session 1 ... Session N (mm:ss.ss) | mean response (mm:ss.ss)
| throughput (queries/min)` as a Markdown table, each session's elapsed time scattered around the mean.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from kneepoint.ingest.records import LoadRecord
from kneepoint.ingest.synth.load_model import AppModel, sweep

SAMPLE_FOLDER = "workloads"


def _clock(ms: float) -> str:
    minutes, seconds = divmod(ms / 1000, 60)
    return f"{int(minutes):02d}:{seconds:05.2f}"


def write(records: Iterable[LoadRecord], *, title: str | None = None, seed: int = 7) -> str:
    recs = list(records)
    rng = random.Random(seed)
    width = max(int(r.load) for r in recs)
    head = ["sessions", *(f"Session {k} (mm:ss.ss)" for k in range(1, width + 1)), "mean response (mm:ss.ss)",
            "throughput (queries/min)"]  # fmt: skip
    out = [f"# {title}", ""] if title else []
    out += ["| " + " | ".join(head) + " |", "|" + "|".join("---:" for _ in head) + "|"]
    for r in recs:
        n = int(r.load)
        mean = r.response_avg_ms or 0.0
        spread = [rng.uniform(-0.03, 0.03) for _ in range(n)]
        shift = sum(spread) / n
        sessions = [_clock(mean * (1 + s - shift)) for s in spread]  # their mean is the mean response
        cells = [str(n), *sessions, *([""] * (width - n)), _clock(mean), f"{r.throughput or 0.0:.2f}"]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def sample_files() -> dict[str, str | bytes]:
    """The same 41 s query from 1, 2, 3, 4, 5, 6, 9 and 12 sessions on the sample P10 disk: throughput grows to
    about 6 sessions and falls past 9, the mean response time grows from the first extra session on."""
    app = AppModel("one query on P10", service_time_s=41.2, sigma=0.06, kappa=0.012, noise=0.02)
    records = sweep(app, "table", (1, 2, 3, 4, 5, 6, 9, 12), load_kind="concurrent sessions",
                    unit="queries/min", per_s=1 / 60)  # fmt: skip
    title = "SYNTHETIC (modelled, not measured): the same query from N sessions at once, synthetic P10"
    return {"synthetic-p10-query-sessions.md": write(records, title=title)}
