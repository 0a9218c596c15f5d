"""The format registry's paths: a whole JSON/XML document read without detection, everything else detected and
checked for a second tool's output (also past the detectors' heads)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest import formats
from ingest.errors import ParseError
from ingest.formats import fio_json

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
FIO_DOC = (SAMPLE / "fio" / "randread-4k-jobs1.json").read_text()
SQLIO = (SAMPLE / "sqlio" / "synthetic-p10-sweep.txt").read_text()
CDM = (SAMPLE / "crystaldiskmark" / "synthetic-nvme-cdm8.txt").read_text()


@pytest.fixture
def no_detection(monkeypatch):
    def refuse(text: str) -> list:
        raise AssertionError("a whole document was run through the detectors")

    monkeypatch.setattr(formats, "detect_all", refuse)


def test_a_whole_fio_document_is_read_without_detection(no_detection):
    parsed = formats.parse_bytes(("\n  " + FIO_DOC + "\n\n").encode(), "doc.json")
    assert parsed.format == "fio_json"
    assert parsed.records == fio_json.parse("\n  " + FIO_DOC + "\n\n")


def test_text_around_a_document_goes_through_detection():
    assert fio_json.parse_document("$ fio --output-format=json job.fio\n" + FIO_DOC) is None
    assert fio_json.parse_document(FIO_DOC + "\n$ exit\n") is None
    # Read the slow way, the same records with lines counted from the prompt on.
    parsed = formats.parse_bytes(("$ fio job.fio\n" + FIO_DOC).encode(), "prompt.json")
    assert parsed.format == "fio_json"
    assert [r.source_line for r in parsed.records] == [r.source_line + 1 for r in fio_json.parse(FIO_DOC)]


def test_a_document_followed_by_another_tool_is_refused_as_mixed():
    with pytest.raises(ParseError, match="mixes the output of two tools: fio_json .* and sqlio"):
        formats.parse_bytes((FIO_DOC + "\n" + SQLIO).encode(), "two.txt")


def test_a_damaged_document_gets_the_parsers_error():
    cut = FIO_DOC[: len(FIO_DOC) // 2]
    assert fio_json.parse_document(cut) is None
    with pytest.raises(ParseError, match="fio JSON document cut short or malformed"):
        formats.parse_bytes(cut.encode(), "cut.json")


def test_a_second_tool_past_every_detectors_head_is_still_found():
    # SQLIO runs filling the first 200 KB, a CrystalDiskMark result after them.
    runs = SQLIO
    while len(runs) < 200_000:
        runs += "\n" + SQLIO
    assert len(runs) > formats.WHOLE_TEXT_DETECTED
    with pytest.raises(ParseError, match="mixes the output of two tools: sqlio .* and crystaldiskmark"):
        formats.parse_bytes((runs + "\n" + CDM).encode(), "long.txt")
