"""fio terse (`--minimal`) lines: field order per version, damaged lines, the same run beside normal text or JSON."""

from __future__ import annotations

from pathlib import Path

import pytest

from kneepoint.ingest import formats
from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats import fio_terse
from kneepoint.ingest.synth import fio_json as json_writer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SWEEP = (FIXTURES / "fio_terse" / "randread-4k-sweep-v3.txt").read_text()
# A real fio 3.7 terse v3 line's head, as printed (read side only; the rest as fio prints an idle write side).
V3_READ = (
    "3;fio-3.7;my_perf;0;0;108759296;1812503;28320;60005;1;707;20.805113;8.930855;232;11885;4494.007157;108.520682;"
    "1.000000%=4292;5.000000%=4358;10.000000%=4358;20.000000%=4423;30.000000%=4423;40.000000%=4489;"
    "50.000000%=4489;60.000000%=4489;70.000000%=4554;80.000000%=4554;90.000000%=4620;95.000000%=4685;"
    "99.000000%=4751;99.500000%=4816;99.900000%=4947;99.950000%=5013;99.990000%=6062;0%=0;0%=0;0%=0;"
    "259;11915;4515.545253;108.518330;444800;460800;24.998278%;453094.533333;1156.494563"
)
IDLE = (
    ";0;0;0;0" + ";0;0;0.000000;0.000000" * 2 + ";0%=0" * 20 + ";0;0;0.000000;0.000000;0;0;0.000000%;0.000000;0.000000"
)
TAIL = ";1.0%;2.0%;100;0;10" + ";0.0%" * 6 + ";100.0%" + ";0.00%" * 22 + ";nvme0n1;1;1;0;0;1;1;2;90.00%"


def test_a_real_v3_line_reads_as_fio_printed_it():
    (rec,) = fio_terse.parse(V3_READ + IDLE + TAIL)
    assert (rec.tool_version, rec.direction, rec.iops, rec.throughput, rec.throughput_unit) == (
        "3.7",
        "read",
        28320.0,
        1812503.0,
        "KiB/s",
    )
    assert (rec.latency_unit, rec.latency_avg, rec.latency_min, rec.latency_max) == ("us", 4515.545253, 259, 11915)
    assert (rec.latency_p50, rec.latency_p95, rec.latency_p99, rec.latency_p999) == (4489, 4685, 4751, 4947)
    assert (rec.duration_s, rec.queue_depth, rec.block_size_bytes, rec.target) == (60.005, 64, 65536, "nvme0n1")
    assert "block_size_bytes" in rec.inferred and "threads" in rec.inferred


def test_versions_2_4_and_5_place_their_fields():
    v2 = "2;my_perf" + V3_READ.split(";my_perf", 1)[1] + IDLE + IDLE + TAIL.rsplit(";nvme0n1", 1)[0]
    v4 = "4" + V3_READ[1:] + IDLE + IDLE + TAIL
    v5_dir = ";1;1;1.0;0.0;1"  # v5: bandwidth samples, then IOPS min, max, mean, stdev, samples
    v5 = "5" + V3_READ[1:] + ";10" + v5_dir + IDLE + ";0" + v5_dir + IDLE + ";0" + v5_dir + TAIL
    for line in (v2, v4, v5):
        (rec,) = fio_terse.parse(line)
        assert (rec.iops, rec.latency_avg, rec.latency_p99) == (28320.0, 4515.545253, 4751)
    assert fio_terse.parse(v2)[0].tool_version is None


def test_a_damaged_line_is_a_warning_and_the_others_are_kept():
    parsed = formats.parse_bytes((FIXTURES / "fio_terse" / "damaged-lines.txt").read_bytes(), "damaged.txt")
    assert parsed.format == "fio_terse"
    assert [r.source_line for r in parsed.records] == [2, 5]
    assert [w.split(":")[0] for w in parsed.warnings] == ["line 3", "line 4"]


def test_nothing_but_damage_is_a_parse_error_at_the_damaged_line():
    with pytest.raises(ParseError) as err:
        fio_terse.parse("notes\n" + SWEEP.splitlines()[0][:300] + "\n")
    assert err.value.line == 2 and "cut short" in err.value.reason


def test_terse_beside_normal_text_of_the_same_jobs_is_counted_once():
    parsed = formats.parse_bytes((FIXTURES / "fio_terse" / "terse-beside-normal.txt").read_bytes(), "both.txt")
    assert parsed.format == "fio_terse" and len(parsed.records) == 1


def test_terse_beside_json_of_the_same_jobs_is_left_to_fio_json():
    from kneepoint.ingest.formats import fio_text  # noqa: F401 - the registry is loaded

    recs = fio_terse.parse(SWEEP)
    for rec in recs:
        rec.metadata["jobname"] = rec.metadata["jobname"]
    text = json_writer.write(recs) + SWEEP
    parsed = formats.parse_bytes(text.encode(), "json-and-terse.txt")
    assert parsed.format == "fio_json"
    assert len(parsed.records) == len(recs)
