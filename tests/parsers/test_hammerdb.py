"""HammerDB logs: one step per TEST RESULT, NOPM as the throughput, the virtual users from the step's own lines (or
the autopilot sequence), the time profile's NEWORD response times, failed virtual users counted."""

from __future__ import annotations

from pathlib import Path

import pytest

from kneepoint.ingest import formats
from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats import hammerdb
from kneepoint.ingest.synth import hammerdb as writer
from kneepoint.ingest.synth.load_model import AppModel, sweep

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hammerdb"
RESULT = "Vuser 1:TEST RESULT : System achieved {nopm} NOPM from {tpm} SQL Server TPM"


def parse(name: str) -> formats.ParsedFile:
    return formats.parse_bytes((FIXTURES / name).read_bytes(), name)


def read(lines: list[str]) -> formats.ParsedFile:
    return formats.parse_bytes("\n".join(lines).encode(), "hammerdb.log")


def test_a_cli_autopilot_script_one_step_per_virtual_user_count():
    parsed = parse("cli-4.12-sqlserver-autopilot-script.txt")
    one, two, four = parsed.records
    assert parsed.format == "hammerdb" and parsed.warnings == []
    assert [(r.load, r.throughput) for r in parsed.records] == [(1, 10942), (2, 21011), (4, 37573)]
    assert (one.tool, one.load_kind, one.throughput_unit, one.tool_version) == (
        "hammerdb", "virtual users", "new orders/min", "4.12",
    )  # fmt: skip
    assert (one.duration_s, one.errors, one.response_avg_ms) == (120.0, 0, None)  # every virtual user succeeded
    # The time profile of step 2: NEWORD's figures, not PAYMENT's.
    assert (two.response_avg_ms, two.response_p50_ms, two.response_p95_ms, two.response_p99_ms) == (
        2.314, 1.877, 4.12, 7.991,
    )  # fmt: skip
    assert four.errors == 1  # Error in Virtual User 4 (a deadlock victim), FINISHED FAILED
    assert [r.source_line for r in parsed.records] == [28, 55, 96]


def test_hammerdb_3_result_order_and_the_guis_log():
    records = parse("hammerdb-3.3-gui-log-old-result-order.log").records
    assert [(r.load, r.throughput, r.duration_s) for r in records] == [(10, 13207, 480.0), (20, 21370, 480.0)]


def test_the_web_services_json_output():
    (record,) = parse("web-service-4.x-oracle.txt").records
    assert (record.load, record.throughput) == (5, 27975)  # 6 created with the monitor


def test_result_lines_alone_are_refused_for_want_of_a_virtual_user_count():
    with pytest.raises(ParseError, match="without a virtual-user count") as exc:
        parse("summary-lines-without-vu-count.txt")
    assert exc.value.line == 1


@pytest.mark.parametrize(
    "lines, loads",
    [
        # `vuset vu N` before each run (no summary line).
        (["hammerdb>vuset vu 4", RESULT, "hammerdb>vuset vu 8", RESULT], [4, 8]),
        # `print vuconf`.
        (["Virtual Users = 3", RESULT], [3]),
        # The `Vuser K created` lines, the monitor left out.
        (
            [
                "Vuser 1 created MONITOR - WAIT IDLE",
                "Vuser 2 created - WAIT IDLE",
                "Vuser 3 created - WAIT IDLE",
                RESULT,
            ],
            [2],
        ),  # fmt: skip
        # An autopilot sequence and nothing else.
        (["Beginning autopilot sequence: 1 2 4 8", RESULT, RESULT, RESULT], [1, 2, 4]),
        # The step's own count wins over the sequence.
        (["autopilot sequence 1 2", "Vuser 1:5 Active Virtual Users configured", RESULT], [5]),
    ],
)
def test_the_virtual_user_count_of_a_step(lines, loads):
    lines = [line.format(nopm=1000, tpm=2300) for line in lines]
    assert [r.load for r in read(lines).records] == loads


def test_grouped_figures_and_a_damaged_result_line():
    parsed = read(
        [
            "Vuser 1:8 Active Virtual Users configured",
            "Vuser 1:TEST RESULT : System achieved 1,204,551 NOPM from 2,770,467 SQL Server TPM",
            "Vuser 1:16 Active Virtual Users configured",
            "Vuser 1:TEST RESULT : System achieved",
        ]
    )
    assert [(r.load, r.throughput) for r in parsed.records] == [(8, 1_204_551)]
    assert parsed.warnings == ["line 4: damaged TEST RESULT line: skipped"]


def test_a_log_without_a_result_is_refused():
    text = "Vuser 1 created MONITOR - WAIT IDLE\nVuser 2 created - WAIT IDLE\n2 Virtual Users Created with Monitor VU\n"
    assert hammerdb.detect(text) == 0.4
    with pytest.raises(ParseError, match="no HammerDB TEST RESULT line"):
        formats.parse_bytes(text.encode(), "cut.log")


def test_other_texts_naming_hammerdb_are_not_its_logs():
    assert hammerdb.detect("Notes: the HammerDB run is next week.\n") == 0.0


def test_writer_round_trip():
    app = AppModel("tprocc", service_time_s=0.02, sigma=0.03, kappa=0.002)
    records = sweep(app, "hammerdb", (1, 2, 4, 8, 16), load_kind="virtual users", unit="new orders/min", per_s=1 / 60)
    parsed = formats.parse_bytes(writer.write(records, database="PostgreSQL").encode(), "autopilot.txt")
    assert [r.load for r in parsed.records] == [1, 2, 4, 8, 16]
    assert [r.throughput for r in parsed.records] == [round(r.throughput) for r in records]
    assert {r.duration_s for r in parsed.records} == {300.0}
