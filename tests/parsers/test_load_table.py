"""Load tables: the source documents' shape (sessions, per-session elapsed mm:ss.ss, mean response, queries/min),
CSV/TSV, Markdown and pasted tables, headers in SQL Server's languages, workloads by column or heading, the column
mapping for a header it does not know, and the disk tools' tables it must leave alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from kneepoint.ingest import formats, units
from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats import load_table
from kneepoint.ingest.synth import load_table as writer
from kneepoint.ingest.synth.load_model import AppModel, sweep

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "load_table"


def parse(name: str, **options: str) -> formats.ParsedFile:
    return formats.parse_bytes((FIXTURES / name).read_bytes(), name, options=options or None)


def read(text: str, **options: str) -> formats.ParsedFile:
    return formats.parse_bytes(text.encode(), "table.txt", options=options or None)


def test_the_source_documents_shape_sessions_mean_response_and_queries_per_minute():
    parsed = parse("synthetic-p10-query-sessions.md")
    assert parsed.format == "load_table" and parsed.warnings == []
    assert [r.load for r in parsed.records] == [1, 2, 3, 4, 5, 6, 9, 12]
    first, *_, twelve = parsed.records
    assert (first.tool, first.load_kind, first.throughput_unit, first.workload) == (
        "table", "concurrent sessions", "queries/min", None,
    )  # fmt: skip
    assert (first.throughput, first.response_avg_ms, first.source_line) == (1.48, 40_460.0, 5)  # 00:40.46
    assert twelve.response_avg_ms == 134_480.0  # 02:14.48
    # Little's law holds in the table: sessions = throughput x response time.
    for r in parsed.records:
        in_flight = units.to_per_s(r.throughput, r.throughput_unit) * r.response_avg_ms / 1000
        assert in_flight == pytest.approx(r.load, rel=0.02)


def test_per_session_elapsed_times_are_averaged_where_no_mean_column_exists():
    parsed = parse("word-paste-per-session-only.txt")
    assert [r.load for r in parsed.records] == [1, 2, 3, 4]
    assert [r.response_avg_ms for r in parsed.records] == [131_000.0, 135_000.0, 143_000.0, 180_000.0]
    assert parsed.records[0].throughput_unit == "transactions/min"  # `Transactions per minute`
    assert parsed.warnings == ["line 8: load 'Total' is not a positive number: row skipped"]


def test_german_csv_with_decimal_commas_grouped_thousands_and_errors():
    one, *_, eight = parse("german-semicolon-decimal-comma.csv").records
    assert (one.throughput, one.throughput_unit, one.response_avg_ms, one.errors) == (
        1234.5,
        "transactions/min",
        48.6,
        0,
    )
    assert (eight.throughput, eight.response_avg_ms, eight.errors) == (4102.7, 117.0, 3)


def test_japanese_tab_separated_copy_from_excel_with_a_percentile():
    records = parse("excel-copy-japanese.tsv").records
    assert [(r.load, r.throughput, r.response_avg_ms, r.response_p95_ms) for r in records][:2] == [
        (1.0, 1.46, 41_200.0, 43_000.0), (2.0, 2.77, 43_400.0, 46_100.0),
    ]  # fmt: skip
    assert {r.throughput_unit for r in records} == {"queries/min"}


def test_a_workload_column_labels_each_row():
    records = parse("workloads-column-french.csv").records
    assert [(r.workload, r.load) for r in records] == [
        ("OLTP", 1), ("OLTP", 4), ("OLTP", 16), ("Rapport", 1), ("Rapport", 4), ("Rapport", 16),
    ]  # fmt: skip
    assert records[0].throughput_unit == "transactions/s" and records[2].response_p95_ms == 19.8


def test_one_table_per_workload_labelled_by_its_heading():
    records = parse("two-tables-headings-spanish.md").records
    assert [r.workload for r in records] == ["Consulta de ventas"] * 3 + ["Carga de facturas"] * 3
    assert (records[3].load, records[3].throughput, records[3].response_avg_ms) == (1.0, 3.2, 18_800.0)
    assert [r.step_index for r in records] == list(range(6))


def test_databases_on_one_server_in_chinese():
    records = parse("databases-per-server-chinese.txt").records
    assert {r.load_kind for r in records} == {"databases"}
    assert (records[-1].load, records[-1].throughput, records[-1].throughput_unit) == (16, 168_800, "transactions/min")


@pytest.mark.parametrize(
    "header, kind, unit, response_ms",
    [
        ("Sessioni | Throughput (query/min) | Tempo di risposta medio (s)", "concurrent sessions", "queries/min", 2500),
        ("Sessões | Vazão (transações/s) | Tempo de resposta médio (ms)", "concurrent sessions", "transactions/s", 2.5),
        ("Сеансы | Пропускная способность (запросов в минуту) | Среднее время отклика (с)", "concurrent sessions",
         "queries/min", 2500),
        ("동시 세션 | 처리량 (트랜잭션/분) | 평균 응답 시간 (ms)", "concurrent sessions", "transactions/min", 2.5),
        ("使用者 | 輸送量 (交易/秒) | 平均回應時間 (毫秒)", "concurrent users", "transactions/s", 2.5),
        ("Threads | TPS | Avg latency (ms)", "threads", "transactions/s", 2.5),
        ("Virtual users | NOPM | Mean response (s)", "virtual users", "new orders/min", 2500),
        ("Instances | Batch Requests/sec | Average response (ms)", "instances", "batches/s", 2.5),
        ("Usuarios concurrentes | Rendimiento (consultas por segundo) | Tiempo transcurrido (s)", "concurrent users",
         "queries/s", 2500),
    ],
)  # fmt: skip
def test_header_words_in_sql_servers_languages(header, kind, unit, response_ms):
    (record,) = read(f"{header}\n4 | 120 | 2,5\n").records
    assert (record.load_kind, record.load, record.throughput, record.throughput_unit) == (kind, 4, 120, unit)
    assert record.response_avg_ms == pytest.approx(response_ms)


def test_a_whitespace_table_with_single_spaces_and_extremes_left_out_of_the_mean():
    text = "users min_ms max_ms mean_ms tps\n1 2.0 9.0 3.0 330\n2 2.1 12.0 3.4 590\n"
    records = read(text).records
    assert [(r.load, r.response_avg_ms, r.throughput) for r in records] == [(1, 3.0, 330), (2, 3.4, 590)]


@pytest.mark.parametrize(
    "cell, ms",
    [("00:41.20", 41_200.0), ("1:05", 65_000.0), ("0:02:11", 131_000.0), ("1:00:00", 3_600_000.0),
     ("02:13,5", 133_500.0), ("2:75", None), ("1:61:00", None), ("abc", None)],
)  # fmt: skip
def test_clock_times(cell, ms):
    assert load_table._clock_ms(cell) == ms


def test_a_time_without_a_unit_is_refused_with_the_option_to_give():
    with pytest.raises(ParseError, match=r"table.txt:2: .*names no unit.*--response-unit") as exc:
        read("sessions, mean response, transactions/min\n1, 41.2, 1.4\n")
    assert exc.value.line == 2
    (record,) = read("sessions, mean response, transactions/min\n1, 41.2, 1.4\n", response_unit="s").records
    assert record.response_avg_ms == 41_200


def test_a_throughput_without_a_time_unit_is_refused_with_the_option_to_give():
    with pytest.raises(ParseError, match=r"names no time unit.*--throughput-unit"):
        read("sessions\tthroughput\n1\t80\n2\t150\n")
    records = read("sessions\tthroughput\n1\t80\n2\t150\n", throughput_unit="queries/s").records
    assert [r.throughput_unit for r in records] == ["queries/s", "queries/s"]


def test_a_table_its_header_does_not_name_is_read_with_the_column_mapping():
    text = "N;X;R (s)\n1;60;1,0\n2;100;1,2\n"
    with pytest.raises(ParseError, match="no recognizable result"):
        read(text)
    records = read(text, load_column="N", throughput_column="X", response_column="3", throughput_unit="queries/min",
                   load_kind="databases").records  # fmt: skip
    assert [(r.load, r.throughput, r.response_avg_ms, r.load_kind) for r in records] == [
        (1, 60, 1000.0, "databases"), (2, 100, 1200.0, "databases"),
    ]  # fmt: skip


def test_a_headerless_table_by_column_numbers_and_the_hint_without_them():
    with pytest.raises(ParseError, match=r"no-header-numbers-only.csv:1: .*--load-column and --throughput-column"):
        parse("no-header-numbers-only.csv")
    records = parse("no-header-numbers-only.csv", load_column="1", throughput_column="2", response_column="3",
                    throughput_unit="queries/min", response_unit="s").records  # fmt: skip
    assert [(r.source_line, r.load, r.throughput, r.response_avg_ms, r.load_kind) for r in records] == [
        (1, 1, 1.46, 41_200, "load"), (2, 2, 2.77, 43_400, "load"), (3, 4, 4.9, 49_000, "load"),
    ]  # fmt: skip


def test_a_mapping_that_matches_nothing_says_so():
    with pytest.raises(ParseError, match="no line holds the load column 'Nodes'"):
        read("a,b\n1,2\n", load_column="Nodes", throughput_column="b", throughput_unit="queries/s")


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="throughput unit 'furlongs/s'"):
        load_table.parse("x", {"throughput_unit": "furlongs/s"})
    with pytest.raises(ValueError, match="unknown load_table option"):
        load_table.parse("x", {"colour": "red"})
    with pytest.raises(ValueError, match="format sqlio takes no parse options"):
        formats.parse_bytes(b"x", "x.txt", fmt="sqlio", options={"load_column": "1"})


@pytest.mark.parametrize(
    "text",
    [
        # DiskSpd's per-thread table: a thread column, a latency column, but I/O figures.
        "thread |       bytes     |     I/Os     |    MiB/s   |  I/O per s |  AvgLat  | LatStdDev |  file\n"
        "     0 |      1234567890 |       301408 |      39.24 |    5023.20 |    1.590 |     0.806 | c:\\t.dat (1GiB)\n",
        # iostat's CPU line has %user and avg-cpu.
        "avg-cpu:  %user   %nice %system %iowait  %steal   %idle\n"
        "           0.14    0.00    0.16    0.00    0.00  99.70\n",
        # Iometer's results: workers and a response time, but IOps.
        "'Target Type,Target Name,# Workers,IOps,Average Response Time\nALL,All,4,5023.2,1.59\n",
        # Perfmon: User Connections and Batch Requests/sec are counters of a log, not a table's columns.
        '"(PDH-CSV 4.0)","\\\\SQL01\\SQLServer:General Statistics\\User Connections","\\\\SQL01\\SQLServer:SQL '
        'Statistics\\Batch Requests/sec"\n"11/13/2026 10:00:00.000","12","340.5"\n',
        # A table of sessions without a throughput or response column.
        "sessions | host\n1 | a\n",
    ],
)
def test_the_disk_tools_tables_are_left_to_their_formats(text):
    assert load_table.detect(text) == 0.0


def test_writer_round_trip():
    app = AppModel("q", service_time_s=12.0, sigma=0.05, kappa=0.01)
    records = sweep(app, "table", (1, 2, 4, 8), load_kind="concurrent sessions", unit="queries/min", per_s=1 / 60)
    parsed = formats.parse_bytes(writer.write(records, title="Query Q").encode(), "q.md")
    assert [r.load for r in parsed.records] == [1, 2, 4, 8]
    for want, got in zip(records, parsed.records, strict=True):
        assert got.throughput == pytest.approx(want.throughput, abs=0.005)
        assert got.response_avg_ms == pytest.approx(want.response_avg_ms, abs=10)  # mm:ss.ss: 10 ms steps


def test_a_damaged_secondary_cell_costs_only_itself_and_a_damaged_throughput_its_row():
    parsed = read("sessions | p95 (ms) | tps | errors\n1 | 5,1 | 100 | 0.5%\n2 | x | 180 | 1\n4 | 7,9 | 2x0 | 0\n")
    assert [(r.load, r.response_p95_ms, r.throughput, r.errors) for r in parsed.records] == [
        (1, 5.1, 100, None), (2, None, 180, 1),
    ]  # fmt: skip
    assert parsed.warnings == [
        "line 2: cell '0.5%' is not a figure: left out",
        "line 3: cell 'x' is not a figure: left out",
        "line 4: cell '2x0' is not a figure: row skipped",
    ]


def test_a_mapping_wins_over_the_headers_words():
    # `p95` would be a percentile and `I/O wait` would make it a disk table: mapped, each is what the user said.
    text = "Sessions | p95 | I/O wait (ms)\n1 | 80 | 2\n2 | 150 | 3\n"
    assert load_table.detect(text) == 0.0
    records = read(text, load_column="1", throughput_column="p95", throughput_unit="requests/s",
                   response_column="3").records  # fmt: skip
    assert [(r.load, r.throughput, r.response_p95_ms, r.response_avg_ms) for r in records] == [
        (1, 80, None, 2.0), (2, 150, None, 3.0),
    ]  # fmt: skip
