"""Streamlit AppTest: the Stored files page on files imported from an anonymized bundle, which carry no original
bytes (app/bundle.py leaves raw_file_contents out of an anonymized bundle)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from kneepoint.app.cli.main import main
from kneepoint.ingest.load import ingest_inputs
from kneepoint.ingest.sources import iter_paths
from tests.app.test_apptest import STRIPE_DISK, new_app
from tests.helpers import SAMPLE


@pytest.fixture(scope="module")
def anonymized_bundle(sample_warehouse: Path, tmp_path_factory) -> Path:
    """`kneepoint export --anonymize` of the sample's Storage Spaces stripe (sample_data/diskspd: two files)."""
    bundle = tmp_path_factory.mktemp("bundle") / "stripe-anonymized.zip"
    assert (
        main(["export", "--db", str(sample_warehouse), "--disk", STRIPE_DISK, "--anonymize", "--out", str(bundle)]) == 0
    )
    return bundle


@pytest.fixture
def mixed_warehouse(empty_db: Path, anonymized_bundle: Path) -> Path:
    """One file ingested here (its bytes kept) and the bundle's two files imported (no bytes)."""
    report = ingest_inputs(empty_db, iter_paths([SAMPLE / "sqlio" / "synthetic-p10-sweep.txt"]), "P10", build=False)
    assert not report.errors and len(report.added) == 1
    # The page reads the raw layer only: no model build needed.
    assert main(["import", "--db", str(empty_db), str(anonymized_bundle), "--no-build"]) == 0
    return empty_db


def _file_ids(db: Path) -> dict[str, bool]:
    """file_id -> whether its original bytes are stored."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "SELECT file_id, file_id IN (SELECT file_id FROM raw_file_contents) FROM raw_files ORDER BY file_id"
        ).fetchall()
    finally:
        con.close()
    return dict(rows)


def test_imported_file_says_its_bytes_were_not_in_the_bundle(mixed_warehouse: Path):
    stored = _file_ids(mixed_warehouse)
    imported = [f for f, has_bytes in stored.items() if not has_bytes]
    assert len(imported) == 2 and len(stored) == 3

    at = new_app("data", file=imported[0]).run()
    assert not at.exception
    assert "except for 2 files imported from an anonymized bundle" in at.caption[0].value
    table = at.dataframe[0].value
    shown = {f: cell == "yes" for f, cell in zip(table["file id"], table["original bytes"], strict=True)}
    assert shown == stored
    # Nothing to download, and the page says why.
    assert not at.get("download_button")
    assert at.info[0].value.startswith("No original file to download: this file was imported from an anonymized")

    at = new_app("data", file=imported[0], action="Delete").run()
    assert not at.exception
    assert "no original file to download first (anonymized bundle)" in "\n".join(m.value for m in at.markdown)


def test_file_ingested_here_still_downloads(mixed_warehouse: Path):
    (kept,) = [f for f, has_bytes in _file_ids(mixed_warehouse).items() if has_bytes]
    at = new_app("data", file=kept).run()
    assert not at.exception
    assert [b.proto.label for b in at.get("download_button")] == ["Download the original file"]
    assert not at.info
