"""fio JSON: the sample sweep (fio 3.33 json+) and the real-world corpus files."""

from __future__ import annotations

import json

import pytest

from ingest import formats
from ingest.errors import ParseError
from tests.helpers import SAMPLE, corpus_file


def parse(path):
    return formats.parse_bytes(path.read_bytes(), str(path))


def test_sample_sweep_point_by_point():
    parsed = parse(SAMPLE / "fio" / "randread-4k-jobs1.json")
    assert parsed.format == "fio_json"
    recs = [r.to_normalized() for r in parsed.records]
    assert [r["queue_depth"] for r in recs] == [1, 2, 4, 8, 16, 32, 64, 128]
    first = recs[0]
    # Figures read by hand from the file: jobs[0].read of "randread-4k-qd1".
    assert first["tool_version"] == "3.33"
    assert (first["pattern"], first["operation"], first["direction"]) == ("random", "read", "read")
    assert first["block_size_bytes"] == 4096 and first["threads"] == 1
    assert first["iops"] == pytest.approx(74958.76031)
    assert first["throughput_bytes_per_s"] == 307031082
    assert first["latency_avg_ms"] == pytest.approx(0.013153137174)
    assert first["latency_min_ms"] == pytest.approx(0.0092)
    assert first["inferred"] == []
    # json+ bins are kept for the latency distribution.
    assert sum(c for _, c in parsed.records[0].histogram) == 299910


def test_sample_sweep_numjobs_is_threads():
    recs = parse(SAMPLE / "fio" / "seqread-128k-jobs4.json").records
    assert {r.threads for r in recs} == {4}
    assert {r.block_size_bytes for r in recs} == {131072}
    assert {r.pattern for r in recs} == {"sequential"}


def test_iops_times_block_size_is_throughput_in_every_sample_record():
    for path in sorted((SAMPLE / "fio").glob("*.json")):
        for r in parse(path).records:
            n = r.to_normalized()
            assert n["iops"] * n["block_size_bytes"] == pytest.approx(n["throughput_bytes_per_s"], rel=0.02)


def test_clones_without_group_reporting_are_combined():
    path = corpus_file("fio", "fioplot-3.6-randread-16jobs-no-group-reporting.json")
    doc = json.loads(path.read_text())
    (rec,) = parse(path).records
    assert rec.threads == 16 and rec.queue_depth == 1
    assert rec.iops == pytest.approx(sum(j["read"]["iops"] for j in doc["jobs"]))
    assert rec.to_normalized()["throughput_bytes_per_s"] == sum(j["read"]["bw_bytes"] for j in doc["jobs"])
    ios = [j["read"]["total_ios"] for j in doc["jobs"]]
    weighted = sum(j["read"]["lat_ns"]["mean"] * n for j, n in zip(doc["jobs"], ios, strict=True)) / sum(ios)
    assert rec.latency_avg == pytest.approx(weighted)
    assert rec.metadata["combined_clones"] == "16"


def test_group_reporting_randrw_gives_read_and_write():
    recs = parse(corpus_file("fio", "fioplot-3.1-randrw-group-reporting.json")).records
    assert [(r.direction, r.operation, r.read_pct) for r in recs] == [
        ("read", "mixed", 50.0),
        ("write", "mixed", 50.0),
    ]
    assert {r.threads for r in recs} == {2}
    assert "read_pct" in recs[0].inferred  # rwmixread not given: fio's default 50


def test_signal_line_before_json():
    (rec,) = parse(corpus_file("fio", "fioplot-3.34-macos-signal-line-before-json.json")).records
    assert rec.source_line == 3  # the document starts after "\nfio: terminating on signal 2\n"


def test_two_documents_with_shell_prompt_between():
    recs = parse(corpus_file("fio", "arau-3.12-two-json-docs-with-shell-prompt-between.json")).records
    assert [r.run_index for r in recs] == [0, 1]
    assert recs[1].source_line == 317


def test_truncated_json_is_a_parse_error_with_line():
    text = (SAMPLE / "fio" / "randread-4k-jobs1.json").read_text()
    cut = text[: len(text) // 2]
    with pytest.raises(ParseError) as err:
        formats.parse_bytes(cut.encode(), "cut.json")
    assert str(err.value).startswith("cut.json:")
    assert err.value.line > 1
