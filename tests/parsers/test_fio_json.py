"""fio JSON: the sample sweep (fio 3.33 json+), every real-world corpus file run by run, the edge cases the
corpus notes name, junk and encodings, and the writer round trip."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kneepoint.ingest import formats
from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats import fio_json
from kneepoint.ingest.synth import fio_json as writer
from kneepoint.ingest.synth.disk_model import DiskModel, sweep
from kneepoint.ingest.textio import decode
from tests.helpers import SAMPLE, corpus_file

KIB = 1024


def parse(path):
    return formats.parse_bytes(path.read_bytes(), str(path))


def norm(rec):
    return rec.to_normalized()


# ------------------------------------------------------------------------------------ the sample sweep


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
    assert parsed.records[0].histogram_kind == "count"


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


def test_source_line_is_the_line_of_each_jobname():
    for path in sorted((SAMPLE / "fio").glob("*.json")):
        lines = path.read_text().split("\n")
        recs = parse(path).records
        for r in recs:
            assert lines[r.source_line - 1].strip().startswith('"jobname" : '), (path.name, r.source_line)
        assert len({r.source_line for r in recs}) == len(recs)


def test_one_json_decode_per_document(monkeypatch):
    """Lean: the document is decoded once, with no second pass over the text as JSON."""
    calls = []
    real = fio_json._DECODER.raw_decode

    class Spy:
        def raw_decode(self, text, idx=0):
            calls.append(idx)
            return real(text, idx)

    monkeypatch.setattr(fio_json, "_DECODER", Spy())
    fio_json.parse(corpus_file("fio", "arau-3.12-two-json-docs-with-shell-prompt-between.json").read_text())
    assert len(calls) == 2


# ------------------------------------------------------------------------------- corpus, run by run

# Expected figures per record, read by hand from each file (line numbers in the comments).
# Latencies in ms: fio 3 prints ns (/1e6), fio 2 µs (/1e3).
CORPUS = {
    "arau-3.12-randrw-50-50-global-options.json": [
        # global options l.8-17: libaio, randrw, rwmixread 50, bs 32k, iodepth 16; no numjobs
        dict(
            run=0,
            line=23,
            direction="read",
            pattern="random",
            operation="mixed",
            read_pct=50.0,
            bs=32768,
            threads=1,
            qd=16,
            iops=225.893944,
            bps=7402092,  # l.36, l.34
            avg=20.368555062895,
            lo=0.269386,
            hi=1013.994271,  # lat_ns l.73-75
            p50=2.113536,
            p95=8.224768,
            p99=624.951296,
            p999=708.837376,  # clat_ns l.59-67
            inferred={"threads"},
            target="/usr/share/nginx/html/p3",
            duration=290.902,
        ),
        dict(
            run=0,
            line=23,
            direction="write",
            pattern="random",
            operation="mixed",
            read_pct=50.0,
            bs=32768,
            threads=1,
            qd=16,
            iops=224.677039,
            bps=7362217,  # l.95, l.93
            avg=50.727382771645,
            lo=1.368902,
            hi=1037.394132,  # l.132-134
            p50=9.895936,
            p95=566.23104,
            p99=666.894336,
            p999=742.391808,  # l.118-126
            inferred={"threads"},
            target="/usr/share/nginx/html/p3",
            duration=290.902,
        ),
    ],
    "arau-3.12-two-json-docs-with-shell-prompt-between.json": [
        # rwmixread 0 (l.13): a mixed job that only wrote; the second document (l.317) is the same run again
        dict(
            run=run,
            line=line,
            direction="write",
            pattern="random",
            operation="mixed",
            read_pct=0.0,
            bs=4096,
            threads=1,
            qd=16,
            iops=457.18591,
            bps=1872633,  # l.95 / l.411, l.93 / l.409
            avg=34.994520266948,
            lo=0.45713,
            hi=1241.630054,  # l.132-134 / l.448-450
            p50=3.457024,
            p95=32.374784,
            p99=708.837376,
            p999=759.169024,  # l.118-126 / l.434-442
            inferred={"threads"},
            target="/usr/share/nginx/html/p2",
            duration=2293.544,
        )
        for run, line in ((0, 23), (1, 339))
    ],
    "blizzarddiskmark-3.39-jsonplus-bins-macos-posixaio.json": [
        # global options l.7-12: bs 1K, iodepth 8, numjobs 1, randwrite, posixaio
        dict(
            run=0,
            line=16,
            direction="write",
            pattern="random",
            operation="write",
            read_pct=0.0,
            bs=1024,
            threads=1,
            qd=8,
            iops=19621.556886,
            bps=20092474,  # l.74, l.72
            avg=0.406984619141,
            lo=0.004,
            hi=9.113,  # lat_ns l.549-551, after the bins
            p50=0.18944,
            p95=1.859584,
            p99=3.489792,
            p999=4.816896,  # l.99-107
            inferred=set(),
            target=None,
            duration=0.835,
        ),
    ],
    "fioplot-2.18-randread-clat-usec.json": [
        # job options l.14-23: randread, 4k, iodepth "01", libaio, numjobs "04", group_reporting
        dict(
            run=0,
            line=8,
            direction="read",
            pattern="random",
            operation="read",
            read_pct=100.0,
            bs=4096,
            threads=4,
            qd=1,
            iops=192.61477,
            bps=770 * KIB,  # l.35, bw KiB/s l.34
            avg=20.742519689,
            lo=3.908,
            hi=503.489,  # lat (µs) l.75-77
            p50=15.424,
            p95=33.024,
            p99=62.208,
            p999=485.376,  # clat l.58-66
            inferred=set(),
            target="/dev/md127",
            duration=10.02,
        ),
    ],
    "fioplot-3.1-randrw-group-reporting.json": [
        # job options l.14-22: randrw, 4k, libaio, iodepth 1, numjobs 2; no rwmixread (fio's default 50)
        dict(
            run=0,
            line=8,
            direction="read",
            pattern="random",
            operation="mixed",
            read_pct=50.0,
            bs=4096,
            threads=2,
            qd=1,
            iops=7159.464009,
            bps=28637 * KIB,  # l.34, no bw_bytes: bw KiB/s l.33
            avg=0.165296637791,
            lo=0.04621,
            hi=2.502365,  # l.74-76
            p50=0.13056,
            p95=0.244736,
            p99=0.346112,
            p999=0.50176,  # l.57-65
            inferred={"read_pct"},
            target="/dev/sdd",
            duration=60.001,
        ),
        dict(
            run=0,
            line=8,
            direction="write",
            pattern="random",
            operation="mixed",
            read_pct=50.0,
            bs=4096,
            threads=2,
            qd=1,
            iops=7172.413793,
            bps=28689 * KIB,  # l.95, l.94
            avg=0.10507160606,
            lo=0.0473,
            hi=2.287456,  # l.135-137
            p50=0.052992,
            p95=0.1792,
            p99=0.185344,
            p999=0.197632,  # l.118-126
            inferred={"read_pct"},
            target="/dev/sdd",
            duration=60.001,
        ),
    ],
    "fioplot-3.34-macos-signal-line-before-json.json": [
        # job options l.17-22: sync engine, randread, 4k, iodepth 1 (nothing to cap), numjobs 1
        dict(
            run=0,
            line=10,
            direction="read",
            pattern="random",
            operation="read",
            read_pct=100.0,
            bs=4096,
            threads=1,
            qd=1,
            iops=10102.601156,
            bps=41380254,  # l.37, l.35
            avg=0.096095658704,
            lo=0.029,
            hi=0.912,  # l.76-78
            p50=0.100864,
            p95=0.109056,
            p99=0.175104,
            p999=0.236544,  # l.62-70
            inferred=set(),
            target="/Volumes/Temporary Storage/fio",
            duration=2.768,
        ),
    ],
    "pkb-2.1.4-five-jobs-no-timestamp.json": [
        # fio 2.1.4: no options at all. Block size = KiB/s / IOPS (`io_bytes` is KiB here), queue depth = the
        # busiest iodepth_level bucket, pattern from the job name; all inferred.
        dict(
            run=0,
            line=5,
            direction="write",
            pattern="sequential",
            operation="write",
            read_pct=0.0,
            bs=512 * KIB,  # 68118 KiB/s / 133 IOPS (l.63-64) = 512.2 KiB
            threads=1,
            qd=64,  # ">=64" : 91.09 (l.177)
            iops=133,
            bps=68118 * KIB,
            avg=478.73747,
            lo=189.438,
            hi=869.97,  # lat l.103-105
            p50=444.416,
            p95=724.992,
            p99=823.296,
            p999=872.448,  # clat l.85-94
            inferred={"pattern", "operation", "block_size_bytes", "queue_depth", "threads"},
            target="sdb",
            duration=5.314,
        ),
        dict(
            run=1,
            line=207,
            direction="read",
            pattern="sequential",
            operation="read",
            read_pct=100.0,
            bs=512 * KIB,  # 129836 / 253 (l.212-213) = 513.2 KiB
            threads=1,
            qd=64,  # l.377
            iops=253,
            bps=129836 * KIB,
            avg=250.77005,
            lo=24.361,
            hi=528.583,  # l.252-254
            p50=264.192,
            p95=366.592,
            p99=473.088,
            p999=528.384,  # l.234-243
            inferred={"pattern", "operation", "block_size_bytes", "queue_depth", "threads"},
            target="sdb",
            duration=2.788,
        ),
        dict(
            run=2,
            line=407,
            direction="write",
            pattern="random",
            operation="write",
            read_pct=0.0,
            bs=4096,  # 6443 / 1610 (l.463-464) = 4.0 KiB
            threads=1,
            qd=1,  # "1" : 100.00 (l.571)
            iops=1610,
            bps=6443 * KIB,
            avg=0.61769,
            lo=0.447,
            hi=81.866,  # l.503-505
            p50=0.51,
            p95=1.064,
            p99=1.688,
            p999=3.216,  # l.485-494
            inferred={"pattern", "operation", "block_size_bytes", "queue_depth", "threads"},
            target="sdb",
            duration=5.625,
        ),
        dict(
            run=3,
            line=607,
            direction="read",
            pattern="random",
            operation="read",
            read_pct=100.0,
            bs=4096,
            threads=1,
            qd=1,  # l.612-613, l.771
            iops=317,
            bps=1269 * KIB,
            avg=3.1465,
            lo=0.006,
            hi=352.781,  # l.652-654
            p50=3.28,
            p95=3.44,
            p99=3.728,
            p999=6.88,  # l.634-643
            inferred={"pattern", "operation", "block_size_bytes", "queue_depth", "threads"},
            target="sdb",
            duration=28.54,
        ),
        dict(
            run=4,
            line=807,
            direction="read",
            pattern="random",
            operation="read",
            read_pct=100.0,
            bs=4096,
            threads=1,
            qd=64,  # l.812-813, ">=64" : 99.30 (l.977)
            iops=323,
            bps=1292 * KIB,
            avg=198.05886,
            lo=0.006,
            hi=400.119,  # l.852-854
            p50=199.68,
            p95=209.92,
            p99=209.92,
            p999=370.688,  # l.834-843
            inferred={"pattern", "operation", "block_size_bytes", "queue_depth", "threads"},
            target="sdb",
            duration=28.045,
        ),
    ],
    "virtualclient-3.26-windowsaio-windows.json": [
        dict(
            run=0,
            line=8,
            direction="write",
            pattern="random",
            operation="write",
            read_pct=0.0,
            bs=4096,
            threads=1,
            qd=1,
            iops=2167.231601,
            bps=8876980,
            avg=0.459323126984,
            lo=0.0535,
            hi=4292.5812,  # l.110-112
            p50=0.091648,
            p95=0.144384,
            p99=0.264192,
            p999=41.156608,  # l.96-104
            inferred=set(),
            target=None,
            duration=120.958,
        ),
    ],
}


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_file_every_run(name):
    parsed = parse(corpus_file("fio", name))
    assert parsed.format == "fio_json"
    expected = CORPUS[name]
    assert len(parsed.records) == len(expected)
    for rec, exp in zip(parsed.records, expected, strict=True):
        n = norm(rec)
        got = {
            "run": n["run_index"],
            "line": n["source_line"],
            "direction": n["direction"],
            "pattern": n["pattern"],
            "operation": n["operation"],
            "read_pct": n["read_pct"],
            "bs": n["block_size_bytes"],
            "threads": n["threads"],
            "qd": n["queue_depth"],
            "inferred": set(n["inferred"]),
            "target": n["target"],
        }
        assert got == {k: exp[k] for k in got}, name
        assert n["iops"] == pytest.approx(exp["iops"])
        assert n["throughput_bytes_per_s"] == pytest.approx(exp["bps"])
        assert n["duration_s"] == pytest.approx(exp["duration"])
        for key, field in (
            ("avg", "avg"),
            ("lo", "min"),
            ("hi", "max"),
            ("p50", "p50"),
            ("p95", "p95"),
            ("p99", "p99"),
            ("p999", "p999"),
        ):
            assert n[f"latency_{field}_ms"] == pytest.approx(exp[key]), (name, field)


def test_versions_as_printed():
    # "fio version" lines: fio-2.18-59-g618e (a git describe), fio-2.1.4, fio-3.39
    assert parse(corpus_file("fio", "fioplot-2.18-randread-clat-usec.json")).tool_version == "2.18-59-g618e"
    assert parse(corpus_file("fio", "pkb-2.1.4-five-jobs-no-timestamp.json")).tool_version == "2.1.4"
    assert parse(corpus_file("fio", "blizzarddiskmark-3.39-jsonplus-bins-macos-posixaio.json")).tool_version == "3.39"


def test_started_at_from_job_start_else_timestamp():
    # job_start 1741208675800 ms (l.18) = 2025-03-05T21:04:35.8Z
    (rec,) = parse(corpus_file("fio", "blizzarddiskmark-3.39-jsonplus-bins-macos-posixaio.json")).records
    assert rec.started_at == "2025-03-05T21:04:35.800000+00:00"
    # timestamp 1680135576 (l.5), no job_start
    (rec,) = parse(corpus_file("fio", "fioplot-3.34-macos-signal-line-before-json.json")).records
    assert rec.started_at == "2023-03-30T00:19:36+00:00"
    # fio 2.1.4 prints neither
    assert {r.started_at for r in parse(corpus_file("fio", "pkb-2.1.4-five-jobs-no-timestamp.json")).records} == {None}


def test_jsonplus_bins_are_the_histogram():
    (rec,) = parse(corpus_file("fio", "blizzarddiskmark-3.39-jsonplus-bins-macos-posixaio.json")).records
    # 434 buckets (SOURCES.md) holding every one of the 16384 I/Os (total_ios l.76), in ns, ascending
    assert len(rec.histogram) == 434
    assert sum(c for _, c in rec.histogram) == 16384
    assert rec.histogram_kind == "count" and rec.latency_unit == "ns"
    assert [b for b, _ in rec.histogram] == sorted(b for b, _ in rec.histogram)


def test_without_bins_the_latency_shares_are_the_histogram():
    # fioplot-3.34 l.235-245: latency_us "50" : 0.114433, "100" : 48.566013, "250" : 51.255185, ... (percent)
    (rec,) = parse(corpus_file("fio", "fioplot-3.34-macos-signal-line-before-json.json")).records
    assert rec.histogram_kind == "share"
    assert rec.histogram[:3] == [(50_000.0, 0.114433), (100_000.0, 48.566013), (250_000.0, 51.255185)]  # ns
    assert sum(s for _, s in rec.histogram) == pytest.approx(100, abs=0.1)
    assert all(b1 < b2 for (b1, _), (b2, _) in zip(rec.histogram, rec.histogram[1:], strict=False))
    # a mixed job's distribution covers both directions: not kept on either record
    assert [r.histogram for r in parse(corpus_file("fio", "fioplot-3.1-randrw-group-reporting.json")).records] == [
        [],
        [],
    ]


def test_clones_without_group_reporting_are_combined():
    path = corpus_file("fio", "fioplot-3.6-randread-16jobs-no-group-reporting.json")
    doc = json.loads(path.read_text())
    (rec,) = parse(path).records
    # 16 entries named "random-io" (l.8, l.288, ...), numjobs 16, iodepth 1, randread 4k
    assert rec.threads == 16 and rec.queue_depth == 1 and rec.block_size_bytes == 4096
    assert rec.source_line == 8
    # first clone: iops 6.199173 (l.30), bw_bytes 25391 (l.28); the record is the sum over all 16
    assert doc["jobs"][0]["read"]["iops"] == 6.199173
    assert rec.iops == pytest.approx(sum(j["read"]["iops"] for j in doc["jobs"]))
    assert rec.to_normalized()["throughput_bytes_per_s"] == sum(j["read"]["bw_bytes"] for j in doc["jobs"])
    ios = [j["read"]["total_ios"] for j in doc["jobs"]]
    weighted = sum(j["read"]["lat_ns"]["mean"] * n for j, n in zip(doc["jobs"], ios, strict=True)) / sum(ios)
    assert rec.latency_avg == pytest.approx(weighted)
    assert rec.latency_min == min(j["read"]["lat_ns"]["min"] for j in doc["jobs"])
    assert rec.latency_max == max(j["read"]["lat_ns"]["max"] for j in doc["jobs"])
    # plain json: no bins to merge, so no percentiles
    assert (rec.latency_p50, rec.latency_p99) == (None, None)
    assert rec.metadata["combined_clones"] == "16"
    assert "threads" not in rec.inferred


def test_jsonplus_clones_merge_bins_for_percentiles():
    disk = DiskModel("d", service_time_ms=0.1, max_bytes_per_s=1e9)
    recs = sweep(disk, "fio", threads=(4,), queue_depths=(8,), latency_unit="us", tool_version="3.33")
    (rec,) = fio_json.parse(writer.write(recs, json_plus=True, group_reporting=False))
    assert rec.metadata["combined_clones"] == "4" and rec.threads == 4
    assert sum(c for _, c in rec.histogram) == round(recs[0].iops * 60)
    for key in ("p50", "p95", "p99", "p999"):
        # fio's rule on the merged bins lands within one bin (1/64 of a power of two) of the percentile
        assert getattr(rec, f"latency_{key}") / 1000 == pytest.approx(getattr(recs[0], f"latency_{key}"), rel=0.02)


def test_group_reporting_randrw_gives_read_and_write():
    recs = parse(corpus_file("fio", "fioplot-3.1-randrw-group-reporting.json")).records
    assert [(r.direction, r.operation, r.read_pct) for r in recs] == [
        ("read", "mixed", 50.0),
        ("write", "mixed", 50.0),
    ]
    assert {r.run_index for r in recs} == {0}


def test_signal_line_before_json():
    path = corpus_file("fio", "fioplot-3.34-macos-signal-line-before-json.json")
    assert path.read_text().startswith("\nfio: terminating on signal 2\n{")
    (rec,) = parse(path).records
    assert rec.source_line == 10  # the document starts on line 3, its jobname is on line 10


def test_two_documents_with_shell_prompt_between():
    recs = parse(corpus_file("fio", "arau-3.12-two-json-docs-with-shell-prompt-between.json")).records
    assert [r.run_index for r in recs] == [0, 1]
    assert [r.source_line for r in recs] == [23, 339]  # the second document starts on line 317


# ------------------------------------------------------------------------------- queue depth capping


def _edit(name, *subs):
    text = corpus_file("fio", name).read_text()
    for old, new in subs:
        assert old in text
        text = text.replace(old, new, 1)
    return text


def test_synchronous_engine_caps_queue_depth():
    text = _edit(
        "fioplot-2.18-randread-clat-usec.json",
        ('"iodepth" : "01"', '"iodepth" : "8"'),
        ('"ioengine" : "libaio"', '"ioengine" : "psync"'),
    )
    (rec,) = fio_json.parse(text)
    assert rec.queue_depth == 1 and "queue_depth" in rec.inferred
    assert rec.metadata["queue_depth_asked"] == "8"
    assert rec.metadata["queue_depth_capped"] == "synchronous engine psync"


def test_capped_note_applies_to_jobs_without_an_engine():
    note = "note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1\n"
    text = _edit(
        "fioplot-2.18-randread-clat-usec.json",
        ('"iodepth" : "01"', '"iodepth" : "16"'),
        ('"ioengine" : "libaio",\n', ""),
    )
    (rec,) = fio_json.parse(note + text)
    assert rec.queue_depth == 1 and rec.metadata["queue_depth_asked"] == "16"
    # without the note: the asked depth stands
    (rec,) = fio_json.parse(text)
    assert rec.queue_depth == 16 and "queue_depth_asked" not in rec.metadata
    # a note from another (synchronous) job does not cap a libaio job
    recs = fio_json.parse(note + corpus_file("fio", "arau-3.12-randrw-50-50-global-options.json").read_text())
    assert {r.queue_depth for r in recs} == {16}


def test_latency_depth_stands_in_for_a_missing_iodepth_option():
    text = _edit("arau-3.12-randrw-50-50-global-options.json", ('    "iodepth" : "16",\n', ""))
    assert '"latency_depth" : 16' in text
    recs = fio_json.parse(text)
    assert {r.queue_depth for r in recs} == {16}
    assert all("queue_depth" not in r.inferred for r in recs)


# ------------------------------------------------------------------------------------- other layouts


def test_unified_rw_reporting_mixed_is_direction_total():
    disk = DiskModel("d", service_time_ms=0.2)
    recs = sweep(disk, "fio", operation="read", queue_depths=(4,), latency_unit="us")
    recs[0].direction = "total"
    text = writer.write(recs)
    assert '"mixed" : {' in text and '"read" : {' not in text
    (rec,) = fio_json.parse(text)
    assert rec.direction == "total" and rec.iops == pytest.approx(recs[0].iops, rel=1e-3)


def test_fio2_jsonplus_bins_keyed_by_index():
    # fio 2.x json+ keys the bins by bucket index and prints the bucket layout alongside.
    text = _edit(
        "fioplot-2.18-randread-clat-usec.json",
        (
            '"percentile" : {',
            '"bins" : {"FIO_IO_U_PLAT_BITS" : 6, "FIO_IO_U_PLAT_VAL" : 64, '
            '"FIO_IO_U_PLAT_NR" : 1216, "0" : 0, "100" : 5, "200" : 7, "700" : 3},\n          "percentile" : {',
        ),
    )
    (rec,) = fio_json.parse(text)
    # fio's plat_idx_to_val: index 100 -> 100 µs (below 128 the index is the value); 200 -> group 3 starts at
    # 256 with buckets of 4: 256 + 8.5 * 4 = 290; 700 -> group 10 starts at 32768, buckets of 512: 32768 + 60.5 * 512
    assert rec.histogram == [(100.0, 5), (290.0, 7), (63744.0, 3)]


# ------------------------------------------------------------------------------ junk, encodings, errors


def test_junk_before_between_and_after_documents():
    a = corpus_file("fio", "fioplot-3.34-macos-signal-line-before-json.json").read_text()
    b = corpus_file("fio", "virtualclient-3.26-windowsaio-windows.json").read_text()
    text = (
        "user@host:~$ fio --output-format=json job.fio\n"
        + a
        + "\nfio: terminating on signal 2\n$ \n"
        + b
        + "\n$ exit\n"
    )
    recs = fio_json.parse(text)
    assert [(r.run_index, r.tool_version) for r in recs] == [(0, "3.34"), (1, "3.26")]
    lines = text.split("\n")
    assert all('"jobname"' in lines[r.source_line - 1] for r in recs)


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-be"])
def test_encodings_and_crlf(encoding):
    path = corpus_file("fio", "fioplot-3.1-randrw-group-reporting.json")
    data = path.read_text().replace("\n", "\r\n").encode(encoding)
    parsed = formats.parse_bytes(data, "x.json")
    assert parsed.format == "fio_json"
    assert [norm(r) for r in parsed.records] == [norm(r) for r in parse(path).records]


@pytest.mark.parametrize("path", sorted(CORPUS) + ["fioplot-3.6-randread-16jobs-no-group-reporting.json"])
def test_detected_from_content(path):
    data = corpus_file("fio", path).read_bytes()
    assert formats.parse_bytes(data, "no-extension").format == "fio_json"
    assert fio_json.detect(data.decode("utf-8")) >= 0.9


def test_detect_does_not_claim_other_tools():
    from tests.helpers import corpus_dir

    for folder in ("sqlio", "diskspd", "crystaldiskmark", "sqlstats"):
        for path in sorted((corpus_dir() / folder).iterdir()):
            text, _ = decode(path.read_bytes())
            assert fio_json.detect(text) < 0.3, path.name
    for path in sorted(corpus_dir().joinpath("fio").glob("*.txt")):
        assert fio_json.detect(path.read_text()) < 0.3, path.name


def test_truncated_json_is_a_parse_error_with_line():
    text = (SAMPLE / "fio" / "randread-4k-jobs1.json").read_text()
    cut = text[: len(text) // 2]
    with pytest.raises(ParseError) as err:
        formats.parse_bytes(cut.encode(), "cut.json")
    assert str(err.value).startswith("cut.json:")
    assert err.value.line > 1


def test_json_without_jobs_is_a_parse_error():
    with pytest.raises(ParseError) as err:
        fio_json.parse('my notes\n{\n  "fio version" : "fio-3.33",\n  "note" : "no jobs here"\n}\n')
    assert err.value.line >= 1
    with pytest.raises(ParseError):
        fio_json.parse("nothing recognizable at all\n")


def test_garbage_values_do_not_crash():
    text = _edit(
        "fioplot-3.1-randrw-group-reporting.json",
        ('"iops" : 7159.464009', '"iops" : "fast"'),
        ('"iodepth" : "1"', '"iodepth" : "deep"'),
        ('"bs" : "4k"', '"bs" : "4 kay"'),
        ('"groupid" : 0', '"groupid" : [1]'),
    )
    recs = fio_json.parse(text)
    assert recs[0].iops == 0.0 and recs[0].block_size_bytes == 4096 and "block_size_bytes" in recs[0].inferred
    # iodepth unreadable: fio's own `latency_depth` (1) stands in
    assert recs[0].queue_depth == 1


# ----------------------------------------------------------------------------------- writer round trip


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(
    service_ms=st.floats(0.02, 10.0),
    threads=st.sampled_from([1, 2, 4]),
    operation=st.sampled_from(["read", "write", "mixed"]),
    pattern=st.sampled_from(["random", "sequential"]),
    bs=st.sampled_from([512, 4096, 8192, 65536, 1 << 20]),
    unit=st.sampled_from(["ns", "us", "ms"]),
    json_plus=st.booleans(),
    group_reporting=st.booleans(),
)
def test_round_trip(service_ms, threads, operation, pattern, bs, unit, json_plus, group_reporting):
    disk = DiskModel("d", service_time_ms=service_ms, max_bytes_per_s=2e9)
    recs = sweep(
        disk,
        "fio",
        operation=operation,
        pattern=pattern,
        block_size_bytes=bs,
        threads=(threads,),
        queue_depths=(1, 16),
        latency_unit=unit,
        tool_version="3.33",
        duration_s=30,
    )
    text = writer.write(recs, json_plus=json_plus, group_reporting=group_reporting)
    back = fio_json.parse(text)
    assert len(back) == len(recs)
    for a, b in zip(recs, back, strict=True):
        na, nb = norm(a), norm(b)
        for key in (
            "run_index",
            "pattern",
            "operation",
            "direction",
            "block_size_bytes",
            "threads",
            "queue_depth",
            "read_pct",
        ):
            assert na[key] == nb[key], key
        # whole I/Os in 30 s and whole bytes: within 1 I/O per second
        assert nb["iops"] == pytest.approx(na["iops"], abs=1 / 30 + 1e-9)
        # fio floors bw_bytes per entry: up to 1 B/s per clone
        assert nb["throughput_bytes_per_s"] == pytest.approx(na["throughput_bytes_per_s"], rel=1e-6, abs=threads)
        for key in ("avg", "min", "max"):
            assert nb[f"latency_{key}_ms"] == pytest.approx(na[f"latency_{key}_ms"], rel=1e-6, abs=1e-6)
        for key in ("p50", "p95", "p99", "p999"):
            if group_reporting or threads == 1:
                assert nb[f"latency_{key}_ms"] == pytest.approx(na[f"latency_{key}_ms"], rel=1e-6, abs=1e-6)
            elif json_plus:  # clones: fio's rule on the clones' bins added up
                point = {"p50": 50, "p95": 95, "p99": 99, "p999": 99.9}[key]
                assert nb[f"latency_{key}_ms"] == pytest.approx(
                    _merged_percentile(text, b.run_index, b.direction, point) / 1e6
                )
            else:
                assert nb[f"latency_{key}_ms"] is None


def _merged_percentile(text: str, run_index: int, direction: str, point: float) -> float:
    """fio's percentile rule (the first bucket whose running count reaches point % of all I/Os) on the bins of
    every clone of one job, added up: an independent check of the parser's merge."""
    doc = json.loads(text)
    names = list(dict.fromkeys(j["jobname"] + str(j["groupid"]) for j in doc["jobs"]))
    clones = [j for j in doc["jobs"] if j["jobname"] + str(j["groupid"]) == names[run_index]]
    merged: dict[int, int] = {}
    for job in clones:
        for bound, count in job[direction]["clat_ns"]["bins"].items():
            merged[int(bound)] = merged.get(int(bound), 0) + count
    total, running = sum(merged.values()), 0
    for bound in sorted(merged):
        running += merged[bound]
        if running >= total * point / 100:
            return bound
    raise AssertionError("no bucket reached the percentile")


def test_writer_layout_is_fios():
    disk = DiskModel("d", service_time_ms=0.2)
    text = writer.write(sweep(disk, "fio", queue_depths=(1,), latency_unit="us"), json_plus=True)
    assert text.startswith('{\n  "fio version" : "fio-3.33",\n  "timestamp" : ')
    assert re.search(r'\n      "jobname" : "randread-4k-qd1",\n      "groupid" : 0,', text)
    assert '"clat_ns" : {' in text and '"bins" : {\n' in text and '"latency_ms" : {' in text


def test_jobname_lines_count_every_line_of_a_bins_block():
    # A json+ document whose bins block repeats a line (a duplicate key: the decoded block is one bin shorter than
    # its lines): the second job's source_line is still the line that holds its "jobname".
    disk = DiskModel("d", service_time_ms=0.2)
    recs = sweep(disk, "fio", queue_depths=(1, 2), latency_unit="us")
    text = writer.write(recs, json_plus=True)
    bins = text.index('"bins" : {\n') + len('"bins" : {\n')
    first_bin = text[bins : text.index("\n", bins) + 1]
    text = text[:bins] + first_bin + text[bins:]
    lines = text.split("\n")
    for rec in fio_json.parse(text):
        assert '"jobname"' in lines[rec.source_line - 1]


# ---------------------------------------------------------------------------------------------- fio --client


def test_client_server_json_gives_a_run_per_host_and_the_all_clients_sum_apart():
    from pathlib import Path

    from kneepoint.ingest import formats as registry

    path = Path(__file__).resolve().parents[1] / "fixtures" / "fio_json" / "client-server-two-hosts.json"
    parsed = registry.parse_bytes(path.read_bytes(), path.name)
    hosts = [r.metadata.get("hostname") for r in parsed.records]
    assert hosts == ["db-node-1", "db-node-2", None]
    aggregate = parsed.records[2]
    assert aggregate.metadata["aggregate"] == "all clients"
    assert len({r.run_index for r in parsed.records}) == 3  # the sum is never folded into a host's run
    assert aggregate.iops == parsed.records[0].iops + parsed.records[1].iops
    assert "hostname" in registry.host_keys()


def test_littles_law_disagreement_is_a_warning_naming_the_run():
    from pathlib import Path

    from kneepoint.ingest import formats as registry

    path = Path(__file__).resolve().parents[1] / "fixtures" / "fio_json" / "randread-sweep.json"
    text = path.read_text()
    assert registry.parse_bytes(text.encode(), "ok.json").warnings == []
    # Four job sections merged into one group_reporting entry still say numjobs=1: 4x the I/Os in flight.
    doc = json.loads(text)
    doc["jobs"] = doc["jobs"][:1]
    doc["jobs"][0]["read"]["iops"] *= 4
    parsed = registry.parse_bytes(json.dumps(doc).encode(), "merged.json")
    (warning,) = parsed.warnings
    assert warning.startswith("line ") and "Little's law" in warning
