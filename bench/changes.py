"""Every change costs what it changes: the commands a user runs many times a day, each a whole `kneepoint` process
measured from outside (median of N), against warehouses from one stored file to 10M fact rows:

    changes.ingest.<size>    kneepoint ingest ONE_FIO_FILE --disk ...   (a new file every run)
    changes.relabel.<size>   kneepoint relabel FILE_ID --disk ...        (the same file, moved between two labels)
    changes.delete.<size>    kneepoint delete FILE_ID --yes              (another file every run)

Each size's warehouse is made first (`prepare_changes`: one fio file ingested, or bench/rows.py's raw layer of N
fact rows, then a full build), the way a user's warehouse is after its first ingest.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bench.harness import Spec

# Rows of the warehouses the changes are made in: 0 is one stored fio file.
SIZES = {"full": [0, 1_000_000, 10_000_000], "tiny": [0, 20_000]}
KNEEPOINT = str(Path(sys.executable).parent / "kneepoint")


def label(rows: int) -> str:
    from bench.harness import rows_label

    return "1file" if rows == 0 else rows_label(rows)


def chains(out_dir: Path, sizes: list[int], fio_file: Path) -> list[list[Spec]]:
    chains = []
    for rows in sizes:
        name = label(rows)
        db = out_dir / f"changes-{name}.duckdb"
        files = out_dir / f"changes-{name}-files"
        chain = [
            Spec(
                f"changes.{name}.prepare",
                "prepare_changes",
                {"db": str(db), "rows": rows, "file": str(fio_file), "files": str(files)},
                runs=1,
                warmup=0,
            ),
            Spec(f"changes.ingest.{name}", cmd_for_run=_ingest(db, fio_file, files)),
        ]
        if rows:  # relabel and delete of one file among many (the one-file warehouse has one file to move)
            chain.append(Spec(f"changes.relabel.{name}", cmd_for_run=_relabel(db)))
            chain.append(Spec(f"changes.delete.{name}", cmd_for_run=_delete(db)))
        chains.append(chain)
    return chains


def new_fio_file(fio_file: Path, path: Path, name: str) -> Path:
    """A new file at `path`: the fio result `fio_file` with `name` in its job names (its own bytes, its own
    sha256), so that every run stores a file."""
    doc = json.loads(fio_file.read_text())
    for job in doc["jobs"]:
        job["jobname"] = f"{job['jobname']}-{name}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1))
    return path


def _ingest(db: Path, fio_file: Path, folder: Path):
    def cmd(run: int) -> list[str]:
        path = new_fio_file(fio_file, folder / f"run-{run}.json", f"bench-{run}")
        return [KNEEPOINT, "--db", str(db), "ingest", str(path), "--disk", "bench changes"]

    return cmd


def _relabel(db: Path):
    # bench/rows.py names its files by number: the first file's id is sixteen zeros.
    return lambda run: [KNEEPOINT, "--db", str(db), "relabel", "0" * 16, "--disk", f"moved {run % 2}"]


def _delete(db: Path):
    return lambda run: [KNEEPOINT, "--db", str(db), "delete", f"{run + 1:016x}", "--yes"]
