"""Incremental builds give exactly what a full refresh gives.

Random sequences of changes (ingest, re-ingest of stored or deleted bytes, production logs, load series, relabel,
delete, bundle import) run over the sample data and corpus files, each change brought into the models the way the
product does it (an incremental build of the changes since the last one). After each sequence every mart of that
warehouse is compared, row for row (floats to 1e-9 relative), with a `--full-refresh` build of a copy of the same raw
layer.

CI runs SEQUENCES sequences; KNEEPOINT_LONG=1 runs LONG_SEQUENCES. A failure names its seed and the changes of its
sequence; `KNEEPOINT_SEED=N` replays that sequence alone (from an empty warehouse).
"""

from __future__ import annotations

import math
import os
import random
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from kneepoint.app.sharing.bundle import export_bundle, import_bundle
from kneepoint.ingest.build import build_models
from kneepoint.ingest.load import ingest_inputs
from kneepoint.ingest.sources import InputFile, iter_paths
from kneepoint.ingest.warehouse import connect, delete_file, relabel_file
from tests.helpers import SAMPLE, corpus_dir
from tests.loads import load_files, store_loads
from tests.observed import observed_logs, store_observed
from tests.reliability.conftest import size

SEQUENCES = 200
LONG_SEQUENCES = 1000
CHAIN = 10
MARTS = (
    "fct_io_results",
    "fct_latency_distribution",
    "fct_query_io",
    "fct_query_time",
    "dim_files",
    "dim_disks",
    "int_saturation_points",
    "int_saturation_thread_points",
    "mart_usl_fits",
    "mart_saturation_points",
    "mart_saturation_by_threads",
    "mart_percentile_loads",
    "mart_unit_checks",
    "mart_statements_on_curve",
    "fct_observed_intervals",
    "fct_observed_waits",
    "mart_production_vs_baseline",
    "mart_headroom",
    "mart_waits_vs_baseline",
    "fct_load_steps",
    "int_load_points",
    "mart_load_usl_fits",
    "mart_load_saturation",
)
# Few labels, so that changes move files into series that already hold other files' points, and out of them.
DISKS = ("P10", "stripe", "nvme")
HOSTS = (None, "sql01")


OBSERVED = observed_logs()
LOADS = load_files()


@dataclass(frozen=True)
class Pool:
    files: list[InputFile]  # every file a sequence may ingest
    bundle: Path  # an export of some of them, under labels of its own


@pytest.fixture(scope="module")
def pool(tmp_path_factory) -> Pool:
    corpus = corpus_dir()
    paths = sorted(p for p in SAMPLE.rglob("*") if p.suffix in (".json", ".txt", ".xml") and p.parent != SAMPLE)
    paths += [corpus / "fio" / "fioplot-3.1-randrw-group-reporting.json", corpus / "sqlio"]
    paths += [corpus / "crystaldiskmark" / "cdm8.0.4-mix-r70w30-seq128k-rnd4k-q32t16-S790.txt"]
    paths += [
        corpus / "sqlstats" / "jorriss-sampleoutput-en.txt",
        corpus / "diskspd" / "basilkisel-azure-dc-two-runs.txt",
    ]
    files = [item for item in iter_paths(paths) if isinstance(item, InputFile)]
    tmp = tmp_path_factory.mktemp("incremental-pool")
    source = tmp / "source.duckdb"
    sqlio = [f for f in files if "sqlio" in f.name]
    fio = [f for f in files if f.name.endswith(".json")][:3]
    assert not ingest_inputs(source, sqlio, disk="P10", host="sql01").errors
    assert not ingest_inputs(source, fio, disk="vendor disk").errors
    bundle = tmp / "bundle.zip"
    export_bundle(source, bundle)
    return Pool(files, bundle)


def snapshot(db: Path) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {m: con.execute(f"SELECT * FROM {m} ORDER BY ALL").fetchall() for m in MARTS}
    finally:
        con.close()


def same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def differences(incremental: dict[str, list[tuple]], full: dict[str, list[tuple]]) -> list[str]:
    out = []
    for mart in MARTS:
        a, b = incremental[mart], full[mart]
        if len(a) != len(b):
            out.append(f"{mart}: {len(a)} rows incrementally, {len(b)} after a full refresh")
            continue
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if not same(x, y):
                out.append(f"{mart} row {i}:\n  incremental {x}\n  full        {y}")
                break
    return out


class Sequence:
    """One random sequence of changes on its own warehouse, each followed by the product's incremental build."""

    def __init__(self, seed: int, pool: Pool, db: Path) -> None:
        self.rng = random.Random(seed)
        self.pool = pool
        self.db = db
        self.log: list[str] = []

    def run(self, steps: int) -> None:
        if not self.stored():
            self.ingest()  # something to change
        for _ in range(steps):
            action = self.rng.choice(
                (self.ingest, self.ingest, self.observe, self.load, self.relabel, self.delete, self.import_bundle)
            )
            action()

    def stored(self) -> list[str]:
        con = connect(self.db)
        try:
            return [r[0] for r in con.execute("SELECT file_id FROM raw_files ORDER BY file_id").fetchall()]
        finally:
            con.close()

    def ingest(self) -> None:
        # Stored, deleted and new bytes alike: a re-ingest of stored bytes changes nothing, of deleted ones stores
        # them again.
        files = self.rng.sample(self.pool.files, self.rng.randint(1, 3))
        disk, host = self.rng.choice(DISKS), self.rng.choice(HOSTS)
        self.log.append(f"ingest {[f.name.rsplit('/', 1)[-1] for f in files]} as {disk} @ {host}")
        report = ingest_inputs(self.db, files, disk=disk, host=host)
        assert not report.errors, [o.reason for o in report.errors]
        self.check_build(report.build)

    def observe(self) -> None:
        """A counter log of production load (stored bytes again change nothing)."""
        n = self.rng.randrange(len(OBSERVED))
        disk, host = self.rng.choice(DISKS), self.rng.choice(HOSTS)
        self.log.append(f"observe log {n} as {disk} @ {host}")
        self.change(lambda con: store_observed(con, OBSERVED[n], disk=disk, host=host, name=f"log{n}.csv"))

    def load(self) -> None:
        """A load series file (sessions, virtual users, databases; stored bytes again change nothing)."""
        n = self.rng.randrange(len(LOADS))
        disk, host = self.rng.choice(DISKS), self.rng.choice(HOSTS)
        self.log.append(f"load series {n} as {disk} @ {host}")
        self.change(lambda con: store_loads(con, LOADS[n], disk=disk, host=host, name=f"loads{n}.csv"))

    def relabel(self) -> None:
        if not (stored := self.stored()):
            return
        file_id = self.rng.choice(stored)
        disk = self.rng.choice((None, *DISKS))
        host = self.rng.choice(("", "sql01", None)) if disk is not None else self.rng.choice(("", "sql01"))
        self.log.append(f"relabel {file_id} disk={disk} host={host!r}")
        self.change(lambda con: relabel_file(con, file_id, disk=disk, host=host))

    def delete(self) -> None:
        if not (stored := self.stored()):
            return
        file_id = self.rng.choice(stored)
        self.log.append(f"delete {file_id}")
        self.change(lambda con: delete_file(con, file_id))

    def import_bundle(self) -> None:
        self.log.append("import the bundle")
        result = import_bundle(self.db, self.pool.bundle)
        assert not result.errors and not result.build_failures, (result.errors, result.build_failures)

    def change(self, fn) -> None:
        con = connect(self.db)
        try:
            fn(con)
            self.check_build(build_models(self.db))
        finally:
            con.close()

    def check_build(self, result) -> None:
        assert result is not None and result.success, (self.log, result and result.failures)


def seeds() -> Iterator[int]:
    if os.environ.get("KNEEPOINT_SEED"):
        yield int(os.environ["KNEEPOINT_SEED"])
        return
    yield from range(size(SEQUENCES, LONG_SEQUENCES))


def test_incremental_builds_equal_a_full_refresh(pool: Pool, tmp_path: Path) -> None:
    """Sequences run in chains of CHAIN: each sequence starts where the one before it ended (a warehouse that
    already holds files, builds and deletions), the first of a chain from an empty warehouse."""
    # The same two paths throughout: dbt's parsed project is kept per warehouse path (ingest/build.py).
    db, copy = tmp_path / "incremental.duckdb", tmp_path / "full.duckdb"
    failures = []
    for n, seed in enumerate(seeds()):
        if n % CHAIN == 0 or os.environ.get("KNEEPOINT_SEED"):
            for path in (db, Path(f"{db}.wal")):
                path.unlink(missing_ok=True)
        sequence = Sequence(seed, pool, db)
        sequence.run(steps=sequence.rng.randint(1, 3))
        incremental = snapshot(db)
        for path in (copy, Path(f"{copy}.wal")):
            path.unlink(missing_ok=True)
        shutil.copy(db, copy)
        result = build_models(copy, full_refresh=True)
        assert result.success and result.kind == "full", result.failures
        if problems := differences(incremental, snapshot(copy)):
            failures.append(f"seed {seed}: {' -> '.join(sequence.log)}\n" + "\n".join(problems))
    assert not failures, "\n\n".join(failures)
