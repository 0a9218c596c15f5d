"""Golden files: each fixture under tests/fixtures/<format>/ reads (format detected, as `kneepoint parse` reads a file)
to what its `<fixture>.jsonl` beside it says, line for line: a first line with the format, encoding and record count
(and the warnings, when there are any; or the ParseError's reason and line), then one line per record, its
`to_normalized()` form with the raw units, the metadata and the histogram.

The real-world corpus is read in place (../shared/corpus, see tests/helpers.py): its expectations are kept under
tests/fixtures/_corpus/<folder>/<file>.jsonl, and its cases skip where the corpus is absent.

A change that moves a record changes its expected file on purpose only: `KNEEPOINT_UPDATE_GOLDEN=1 pytest
tests/parsers/test_golden.py` rewrites every expected file (each case then skips, saying so) for the diff to be
reviewed and committed. A fixture without an expected file fails.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from kneepoint.ingest import formats
from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.records import IoRecord, Record
from tests.helpers import corpus_file, corpus_names

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CORPUS_EXPECTED = FIXTURES / "_corpus"
EXPECTED = ".jsonl"
UPDATE = os.environ.get("KNEEPOINT_UPDATE_GOLDEN") == "1"
# Corpus folders and the files of each that are outputs of a tool (SOURCES.md sits beside them).
CORPUS = {
    "crystaldiskmark": "*.txt",
    "diskspd": "*.*",
    "fio": "*.*",
    "sqlio": "*.txt",
    "sqlstats": "*.*",
}


def fixtures() -> list[Path]:
    return sorted(
        p
        for p in FIXTURES.glob("*/*")
        if p.is_file() and not p.parent.name.startswith("_") and not p.name.endswith(EXPECTED)
    )


def golden_record(record: Record) -> dict[str, Any]:
    out = record.to_normalized()
    if isinstance(record, IoRecord):
        out["throughput_unit"] = record.throughput_unit
        out["latency_unit"] = record.latency_unit
        out["metadata"] = record.metadata
        out["histogram_kind"] = record.histogram_kind
        out["histogram"] = record.histogram
    return out


def outcome(data: bytes, name: str) -> list[dict[str, Any]]:
    """What a file reads to, as the lines of its expected file (tuples made lists, as JSON has them)."""
    try:
        parsed = formats.parse_bytes(data, name)
    except ParseError as exc:
        lines = [{"error": exc.reason, "line": exc.line}]
    else:
        head: dict[str, Any] = {"format": parsed.format, "encoding": parsed.encoding, "records": len(parsed.records)}
        if parsed.warnings:  # the damaged lines a parser skipped or read in part
            head["warnings"] = parsed.warnings
        lines = [head] + [golden_record(r) for r in parsed.records]
    return json.loads(json.dumps(lines))


def check(actual: list[dict[str, Any]], expected_path: Path) -> None:
    if UPDATE:
        expected_path.parent.mkdir(parents=True, exist_ok=True)
        expected_path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in actual), "utf-8")
        pytest.skip(f"rewrote {expected_path} (KNEEPOINT_UPDATE_GOLDEN=1): review its diff")
    if not expected_path.is_file():
        pytest.fail(f"no expected file {expected_path}: write it with KNEEPOINT_UPDATE_GOLDEN=1 and review it")
    expected = [json.loads(line) for line in expected_path.read_text("utf-8").splitlines()]
    assert actual[0] == expected[0]
    assert len(actual) == len(expected)
    for number, (got, want) in enumerate(zip(actual, expected, strict=True), 1):
        assert got == want, f"{expected_path.name}, line {number}"


@pytest.mark.parametrize("path", fixtures(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_reads_as_its_expected_file(path: Path) -> None:
    actual = outcome(path.read_bytes(), path.name)
    if "format" in actual[0]:
        assert actual[0]["format"] == path.parent.name, "a fixture sits in the folder of the format it is"
    check(actual, path.with_name(path.name + EXPECTED))


@pytest.mark.parametrize(
    "folder, name", [(folder, name) for folder, pattern in CORPUS.items() for name in corpus_names(folder, pattern)]
)
def test_corpus_file_reads_as_its_expected_file(folder: str, name: str | None) -> None:
    path = corpus_file(folder, name or "")  # no corpus: skips (fails under KNEEPOINT_REQUIRE_CORPUS=1)
    check(outcome(path.read_bytes(), path.name), CORPUS_EXPECTED / folder / (path.name + EXPECTED))


def test_every_format_has_a_fixture_and_every_expected_file_a_fixture() -> None:
    assert {p.parent.name for p in fixtures()} == set(formats.names())
    for expected in FIXTURES.glob(f"*/*{EXPECTED}"):
        if not expected.parent.name.startswith("_"):
            assert expected.with_name(expected.name.removesuffix(EXPECTED)).is_file(), f"{expected}: no fixture"
