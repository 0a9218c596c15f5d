"""First start: an empty warehouse gets the sample data, so a new user sees curves at once."""

from __future__ import annotations

import json

from kneepoint.ingest.units import PROJECT_ROOT
from kneepoint.ingest.warehouse import Location

SAMPLE_DIR = PROJECT_ROOT / "sample_data"


def sample_sets() -> list[dict]:
    """sample_data/labels.json: which folder holds what, and the labels to store it under."""
    with open(SAMPLE_DIR / "labels.json", encoding="utf-8") as fh:
        return json.load(fh)["sets"]


def sample_disk_keys() -> frozenset[str]:
    """The disks the sample data is stored under (`disk` or `disk @ host`, as the marts name them): what a new user
    did not upload, and what Share leaves out unless asked."""
    from kneepoint.app.queries import disk_key

    return frozenset(disk_key(s["disk"], s.get("host")) for s in sample_sets())


def warehouse_is_empty(db: Location) -> bool:
    from kneepoint.ingest.warehouse import connect, exists

    if not exists(db):
        return True
    con = connect(db, read_only=True)
    try:
        return con.execute("SELECT count(*) FROM raw_files").fetchone()[0] == 0
    except Exception:  # a warehouse without the raw layer yet
        return True
    finally:
        con.close()


def load_sample_if_empty(db: Location) -> int:
    """Ingest every sample set into an empty warehouse; returns the number of files added."""
    from kneepoint.ingest.build import build_models, warm_up
    from kneepoint.ingest.load import ingest_inputs
    from kneepoint.ingest.sources import iter_paths

    if not warehouse_is_empty(db):
        return 0
    added = 0
    for s in sample_sets():
        folder = SAMPLE_DIR / s["folder"]
        files = sorted(p for p in folder.iterdir() if p.suffix in tuple(s["suffixes"])) if folder.is_dir() else []
        if not files:
            continue
        report = ingest_inputs(
            db,
            iter_paths(files),
            disk=s["disk"],
            host=s.get("host"),
            tags=s.get("tags", []),
            notes=s.get("notes"),
            build=False,
        )
        if report.errors:
            raise RuntimeError("sample data failed to load: " + "; ".join(o.reason or "" for o in report.errors))
        added += len(report.added)
    build_models(db).raise_for_failure()
    # The warehouse's change build recorded now, while a first start loads the sample anyway: the user's first
    # Store then sends SQL only (ingest/replay.py), however soon it comes after the app opens.
    warm_up(db)
    return added
