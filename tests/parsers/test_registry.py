"""The format registry's paths: a whole JSON/XML document read without detection, everything else detected and
checked for a second tool's output (also past the detectors' heads)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kneepoint.ingest import formats
from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats import fio_json

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


def test_every_format_declares_the_interface_and_the_registry_gathers_it():
    for name, mod in formats.registry().items():
        assert name == mod.NAME and mod.TITLE
        assert all(key == key.lower() and "." not in key for key in mod.HOST_KEYS | mod.USER_KEYS), name
        assert all(prefix.endswith(".") for prefix in mod.RESULT_KEY_PREFIXES), name
    assert formats.tools() == [
        "amorphousdiskmark", "crystaldiskmark", "diskspd", "elbencho", "fio", "hammerdb",
        "iometer", "iostat", "kdiskmark", "perfmon", "sqlio", "sqlserver", "table", "vdbench",
    ]  # fmt: skip
    assert formats.titles()["sqlstats"] == "SQL Server STATISTICS IO/TIME"
    assert formats.titles()["crystaldiskmark"] == "CrystalDiskMark / KDiskMark"
    assert formats.host_keys() == {"computer_name", "computername", "hostname", "hosts", "manager_name"}
    assert formats.user_keys() == frozenset()
    assert formats.result_key_prefixes() == (
        "cpu.", "first_done.", "latency.", "measured.", "read.", "result.", "results.", "total.", "write.",
    )  # fmt: skip
    assert formats.result_keys() == ("printed_throughput", "timespan")


def test_the_host_keys_are_the_keys_the_parsers_write_host_names_under():
    diskspd = formats.parse_bytes((SAMPLE / "diskspd" / "synthetic-ss-stripe-sweep.txt").read_bytes()).records
    xml = formats.parse_bytes((SAMPLE / "diskspd" / "synthetic-ss-stripe-mixed-8k.xml").read_bytes()).records
    for records in (diskspd, xml):
        hosts = {k for k in records[0].metadata if k.rsplit(".", 1)[-1].lower() in formats.host_keys()}
        assert len(hosts) == 1 and records[0].metadata[hosts.pop()] == "SYNTHETIC-SQL01"


def test_a_format_module_missing_part_of_the_interface_is_refused(monkeypatch):
    from kneepoint.ingest.formats import sqlio

    monkeypatch.delattr(sqlio, "TITLE")
    formats.registry.cache_clear()
    try:
        with pytest.raises(TypeError, match="ingest.formats.sqlio lacks TITLE"):
            formats.registry()
    finally:
        monkeypatch.undo()
        formats.registry.cache_clear()
        formats._document_readers.cache_clear()


def test_the_template_declares_the_interface_and_is_no_format():
    from kneepoint.ingest.formats import _template

    assert all(hasattr(_template, attr) for attr in formats.REQUIRED)
    assert _template.NAME not in formats.names()
    (record,) = _template.parse("mytool 1.2\nread: 1234.5 IOPS, 4.8 MiB/s, 0.81 ms\n")
    assert (record.tool, record.source_line, record.iops) == ("mytool", 2, 1234.5)
