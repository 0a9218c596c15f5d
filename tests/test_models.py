"""The dbt models on real inputs: units through real ingest, every corpus file built with every test passing,
Little's law over mixed runs, the latency percentile curves, the SQL Server statement marts, and the docs."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from kneepoint.ingest.build import build_models, run_dbt, run_model_tests
from kneepoint.ingest.load import ingest_inputs
from kneepoint.ingest.records import IoRecord, ParsedFile
from kneepoint.ingest.sources import InputFile, iter_paths
from kneepoint.ingest.warehouse import connect, store_file
from tests.helpers import corpus_dir, corpus_file, rows

# SQLIO prints "MBs/sec" in MiB: 47.3 x 2^20 = 49,597,235 bytes/s (94.6 IOs/sec x 512 KiB agrees within 0.001%).
# The run's layout is the corpus file dataelisabeth-random-read-64k-8outstanding.txt's; the figures are the issue's.
SQLIO_512K = """\
sqlio v1.5.SG
using system counter for latency timings, 2539060 counts per second
parameter file used: G:\\param.txt
\tfile G:\\testfile.dat with 2 threads (0-1) using mask 0x0 (0)
2 threads reading for 60 secs from file G:\\testfile.dat
\tusing 512KB sequential IOs
\tenabling multiple I/Os per thread with 1 outstanding
using specified size: 50000 MB for file: G:\\testfile.dat
initialization done
CUMULATIVE DATA:
throughput metrics:
IOs/sec:    94.60
MBs/sec:    47.30
latency metrics:
Min_Latency(ms): 3
Avg_Latency(ms): 20
Max_Latency(ms): 95
histogram:
ms: 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24+
%:  0  0  0  1  2  3  4  5  6  6  6  6  6  6  6  6  5  5  5  4  3  2  1  1  1
"""

CDM3_LINE = "    Random Read 4KB (QD=1) :     0.357 MB/s [    87.1 IOPS]"


def cdm3_text() -> str:
    """The real CrystalDiskMark 3.0.1 result of the corpus with its QD=1 random-read line replaced by the
    issue's: 0.357 MB/s (CDM's MB is 10^6 bytes) at 87.1 IOPS of 4 KiB blocks."""
    text = corpus_file("crystaldiskmark", "cdm3.0.1-x64-2012-markdown-block.txt").read_text(encoding="utf-8")
    lines = text.split("\n")
    (i,) = [n for n, line in enumerate(lines) if "Random Read 4KB (QD=1)" in line]
    lines[i] = CDM3_LINE + ("\r" if lines[i].endswith("\r") else "")
    return "\n".join(lines)


def total_and_split_run() -> list[IoRecord]:
    """One 70/30 run at 4 x 8 outstanding reported three ways, as a tool could: its read and write rows and a
    `total` row. No parser emits all three today; the model must still count the run's I/O once."""

    def row(direction: str, iops: float, latency_ms: float) -> IoRecord:
        return IoRecord(
            tool="fio",
            run_index=0,
            source_line=1,
            pattern="random",
            operation="mixed",
            read_pct=70.0,
            direction=direction,  # type: ignore[arg-type]
            block_size_bytes=8192,
            threads=4,
            queue_depth=8,
            iops=iops,
            throughput=iops * 8192,
            latency_avg=latency_ms,
        )

    # 7000 x 4 ms + 3000 x 1.333.. ms = 32 outstanding; the total row: 10000 IOPS at 3.2 ms, the same 32.
    return [row("read", 7000, 4.0), row("write", 3000, 4 / 3), row("total", 10000, 3.2)]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Iterator[Path]:
    """Every corpus file (disk `corpus` on host `lab`), the two unit cases and a run with a `total` row as well
    as its read and write rows, ingested and built once."""
    tmp = tmp_path_factory.mktemp("models")
    db = tmp / "warehouse.duckdb"
    with pytest.MonkeyPatch.context() as mp:
        # A private dbt target: other test runs on this machine may build at the same time.
        mp.setenv("KNEEPOINT_DBT_TARGET", str(tmp / "dbt-target"))
        corpus = ingest_inputs(db, iter_paths([corpus_dir()]), disk="corpus", host="lab", build=False)
        not_read = [o.reason for o in corpus.errors if not (o.name or "").endswith("SOURCES.md")]
        assert not not_read, not_read
        for disk, name, text in (("sqlio 512k", "sqlio-512k.txt", SQLIO_512K), ("cdm3", "cdm3.txt", cdm3_text())):
            report = ingest_inputs(db, [InputFile(name, text.encode("utf-8"))], disk=disk, build=False)
            assert [o.status for o in report.outcomes] == ["added"], [o.reason for o in report.outcomes]
        records = total_and_split_run()
        data = json.dumps([r.to_normalized() for r in records]).encode()
        store = connect(db)
        try:
            parsed = ParsedFile(format="fio_json", records=list(records))
            store_file(store, "total-and-split.json", data, hashlib.sha256(data).hexdigest(), parsed, disk="total")
        finally:
            store.close()
        result = build_models(db)
        assert result.success, "\n".join(result.failures)
        yield db


@pytest.fixture
def con(built) -> Iterator[duckdb.DuckDBPyConnection]:
    c = duckdb.connect(str(built), read_only=True)
    yield c
    c.close()


# --- units, through real ingest ------------------------------------------------------------------------------


def test_sqlio_mbs_per_sec_are_mib(con):
    (r,) = rows(con, "SELECT * FROM fct_io_results WHERE disk = 'sqlio 512k'")
    assert r["throughput_bytes_per_s"] == pytest.approx(49_597_235, rel=0.001)
    assert r["iops"] == pytest.approx(94.6)
    assert (r["block_size_bytes"], r["threads"], r["queue_depth"], r["outstanding_io"]) == (524288, 2, 1, 2)
    assert (r["pattern"], r["operation"], r["direction"], r["tool"]) == ("sequential", "read", "read", "sqlio")
    assert r["reported_throughput_unit"] == "MiB/s"


def test_crystaldiskmark_3_mb_per_sec_are_decimal(con):
    line = cdm3_text().split("\n").index(CDM3_LINE) + 1
    (r,) = rows(con, "SELECT * FROM fct_io_results WHERE disk = 'cdm3' AND source_line = ?", [line])
    assert (r["pattern"], r["operation"], r["direction"]) == ("random", "read", "read")
    assert r["throughput_bytes_per_s"] == pytest.approx(357_000)
    assert r["iops"] == pytest.approx(87.1)
    assert (r["block_size_bytes"], r["queue_depth"], r["tool"]) == (4096, 1, "crystaldiskmark")


# --- the corpus as a whole -----------------------------------------------------------------------------------


def test_every_corpus_format_reaches_the_marts(con):
    formats = {r[0] for r in con.execute("SELECT DISTINCT format FROM dim_files WHERE disk = 'corpus'").fetchall()}
    assert formats >= {"crystaldiskmark", "diskspd", "diskspd_xml", "fio_json", "fio_text", "sqlio", "sqlstats"}
    stored = con.execute("SELECT count(*) FROM dim_files WHERE disk = 'corpus'").fetchall()[0][0]
    assert stored == sum(1 for p in corpus_dir().rglob("*") if p.is_file() and p.name != "SOURCES.md")
    (disk,) = rows(con, "SELECT * FROM dim_disks WHERE disk_key = 'corpus @ lab'")
    assert set(disk["tools"]) >= {"crystaldiskmark", "diskspd", "fio", "sqlio", "sqlserver"}
    assert disk["files"] == stored and disk["statements"] > 0 and disk["runs"] > 0


def test_the_marts_hold_each_raw_row_once(con):
    for mart, raw in (("fct_io_results", "raw_io_records"), ("fct_query_io", "raw_query_io")):
        assert (
            con.execute(f"SELECT count(*) FROM {mart}").fetchall()
            == con.execute(f"SELECT count(*) FROM {raw}").fetchall()
        ), mart


# --- Little's law over whole runs ----------------------------------------------------------------------------


def run_rows(con: duckdb.DuckDBPyConnection, file_name: str, run_index: int) -> dict[str, dict]:
    found = rows(
        con,
        "SELECT * FROM fct_io_results WHERE file_name = ? AND run_index = ? ORDER BY record_index",
        [file_name, run_index],
    )
    return {r["direction"]: r for r in found}


def test_littles_law_sums_the_directions_of_a_diskspd_mixed_run(con):
    run = run_rows(con, "patricklang-containers-2.0.21-mibs-latency-readme.txt", 0)
    assert set(run) == {"read", "write", "total"}  # the parser keeps DiskSpd's own Total IO row too
    # Line 37 `thread count: 8`, line 22 `number of outstanding I/O operations: 8`: 64 outstanding. The
    # `total:` rows: Read IO (line 73) 24083.62 IOPS at 1.563 ms, Write IO (line 87) 24118.86 at 1.091 ms,
    # Total IO (line 59) 48202.48 at 1.327 ms: the run's figures are the Total IO row's.
    # The read row alone would give 0.59 and be flagged; the run as a whole keeps its 64 I/Os in flight.
    expected = 48202.48 * 1.327 / 1000 / 64
    for r in run.values():
        assert r["outstanding_io"] == 64
        assert r["littles_law_ratio"] == pytest.approx(expected)
        assert r["littles_law_ratio"] == pytest.approx(1, abs=0.01)
        assert r["littles_law_flag"] is False
        assert r["run_iops"] == pytest.approx(48202.48)
    # The sum of the two directions: the same run within DiskSpd's rounding.
    assert run["read"]["run_iops"] == pytest.approx(24083.62 + 24118.86, abs=0.02)
    assert run["read"]["run_latency_avg_ms"] == pytest.approx(1.327, abs=0.001)


def test_littles_law_sums_the_directions_of_a_fio_randrw_job(con):
    run = run_rows(con, "arau-3.12-randrw-50-50-global-options.json", 0)
    assert set(run) == {"read", "write"}
    # global options iodepth 16 (line 17), one job; read iops 225.893944 (line 36), lat_ns mean 20368555.062895
    # (line 75); write iops 224.677039 (line 95), lat_ns mean 50727382.771645 (line 134).
    expected = (225.893944 * 20368555.062895 + 224.677039 * 50727382.771645) / 1e9 / 16
    for r in run.values():
        assert r["outstanding_io"] == 16
        assert r["littles_law_ratio"] == pytest.approx(expected)
        assert r["littles_law_ratio"] == pytest.approx(1, abs=0.01)
        assert r["littles_law_flag"] is False


def test_a_crystaldiskmark_mix_is_its_one_total_row(con):
    run = run_rows(con, "cdm8.0.4-mix-r70w30-seq128k-rnd4k-q32t16-S790.txt", 10)
    (r,) = run.values()
    # Line 23, under [Mix] Read 70%/Write 30%: `RND 4KiB (Q= 32, T=16)` 139643.3 IOPS at <3640.51 us>, 16 x 32.
    assert (r["direction"], r["outstanding_io"]) == ("total", 512)
    assert r["littles_law_ratio"] == pytest.approx(139643.3 * 3640.51e-6 / 512)


def test_a_run_with_a_total_row_is_counted_once(con):
    found = rows(con, "SELECT * FROM fct_io_results WHERE disk = 'total' ORDER BY record_index")
    assert [r["direction"] for r in found] == ["read", "write", "total"]
    # The total row alone (10000 IOPS x 3.2 ms / 32): 1.0; with the read and write rows added, 2.0.
    for r in found:
        assert r["run_iops"] == pytest.approx(10000)
        assert r["run_latency_avg_ms"] == pytest.approx(3.2)
        assert r["littles_law_ratio"] == pytest.approx(1.0)


# --- latency percentile curves -------------------------------------------------------------------------------


def curve(con: duckdb.DuckDBPyConnection, file_name: str, direction: str = "read") -> list[dict]:
    return rows(
        con,
        """SELECT d.* FROM fct_latency_distribution d
           JOIN fct_io_results r USING (io_result_id)
           WHERE r.file_name = ? AND r.direction = ?
           ORDER BY d.point_index""",
        [file_name, direction],
    )


def latency_at(points: list[dict], percentile: float) -> float:
    """The curve read as fio reads its bins: the first point that reaches the percentile."""
    return next(p["latency_ms"] for p in points if p["percentile"] >= percentile - 1e-9)


def test_fio_json_plus_bins_give_the_percentiles_fio_printed(con):
    points = curve(con, "blizzarddiskmark-3.39-jsonplus-bins-macos-posixaio.json", "write")
    assert {p["curve_source"] for p in points} == {"histogram"}
    assert {p["histogram_kind"] for p in points} == {"count"}
    assert len(points) == 434  # clat_ns.bins holds 434 buckets
    # clat_ns.percentile in the file (lines 99, 105, 107): 50.000000: 189440, 99.000000: 3489792, 99.900000: 4816896
    assert latency_at(points, 50) == pytest.approx(0.189440)
    assert latency_at(points, 99) == pytest.approx(3.489792)
    assert latency_at(points, 99.9) == pytest.approx(4.816896)
    assert points[-1]["percentile"] == pytest.approx(100)
    assert sum(p["bucket_ios"] for p in points) == points[0]["histogram_ios"]


def test_sqlio_histogram_shares_become_a_curve(con):
    points = curve(con, "dataelisabeth-random-read-64k-8outstanding.txt")
    assert {p["histogram_kind"] for p in points} == {"share"}
    # `%:  4 11 10  6  4  2  2  1 ... 1  0 ... 0 49`: buckets 0..17 ms hold 4+11+10+6+4+2+2+11x1 = 50 %,
    # stored with upper bound k+1 ms; the open 24+ bucket (49 %) ends at Max_Latency(ms) 749 + 1.
    assert (points[0]["percentile"], points[0]["latency_ms"]) == (pytest.approx(4), 1)
    assert latency_at(points, 50) == 18
    assert (points[-1]["percentile"], points[-1]["latency_ms"]) == (pytest.approx(100), 750)
    assert points[-1]["bucket_share_pct"] == pytest.approx(49)
    assert len(points) == 20  # the 5 empty buckets (19..23 ms) add no point


def test_diskspd_percentile_table_becomes_the_curve(con):
    points = curve(con, "patricklang-containers-2.0.21-mibs-latency-readme.txt")
    # The Read (ms) column of the %-ile table (lines 95-108 of the file).
    got = {round(p["percentile"], 5): p["latency_ms"] for p in points}
    assert got[25] == pytest.approx(1.011)
    assert got[50] == pytest.approx(1.405)
    assert got[99] == pytest.approx(4.075)
    assert got[99.9] == pytest.approx(7.703)
    assert got[100] == pytest.approx(145.285)


def test_records_without_a_histogram_get_the_percentiles_their_tool_printed(con):
    records = rows(
        con,
        """SELECT io_result_id, latency_min_ms, latency_p50_ms, latency_p95_ms, latency_p99_ms, latency_p999_ms,
                  latency_max_ms
           FROM fct_io_results
           WHERE (file_id, record_index) NOT IN (SELECT file_id, record_index FROM raw_latency_histograms)
             AND latency_p50_ms IS NOT NULL""",
    )
    assert records  # e.g. fio 3.1 JSON without bins, and fio 2.2 text
    for r in records:
        points = rows(
            con,
            "SELECT * FROM fct_latency_distribution WHERE io_result_id = ? ORDER BY point_index",
            [r["io_result_id"]],
        )
        assert {p["curve_source"] for p in points} == {"printed_percentiles"}
        printed = {0.0: "min", 50.0: "p50", 95.0: "p95", 99.0: "p99", 99.9: "p999", 100.0: "max"}
        expected = {pct: r[f"latency_{k}_ms"] for pct, k in printed.items() if r[f"latency_{k}_ms"] is not None}
        assert {p["percentile"]: p["latency_ms"] for p in points} == pytest.approx(expected)


# --- SQL Server statements -----------------------------------------------------------------------------------

EN = "jorriss-sampleoutput-en.txt"


def test_statement_totals_as_statistics_parser_shows_them(con):
    (s,) = rows(
        con,
        """SELECT * FROM fct_query_time WHERE file_name = ? AND statement_id IN
           (SELECT statement_id FROM fct_query_io WHERE file_name = ? AND table_name = 'Comments')""",
        [EN, EN],
    )
    # Lines 1-13 of the file: compile 108/108 ms; 7 table lines; execution CPU 156527 ms, elapsed 284906 ms.
    assert (s["compile_cpu_ms"], s["compile_elapsed_ms"]) == (108, 108)
    assert (s["execution_cpu_ms"], s["execution_elapsed_ms"]) == (156527, 284906)
    assert (s["total_cpu_ms"], s["total_elapsed_ms"]) == (108 + 156527, 108 + 284906)
    assert s["tables"] == 7
    # logical 2+42015+1089402+77500+397944+16247024+0; physical 1+1+248+348+9338; read-ahead
    # 41306+1108174+82219+402977.
    assert s["logical_reads"] == 17_853_887
    assert (s["physical_reads"], s["read_ahead_reads"]) == (9_936, 1_634_676)
    assert s["pages_read"] == 9_936 + 1_634_676
    assert s["read_bytes"] == 1_644_612 * 8192
    assert s["effective_read_bytes_per_s"] == pytest.approx(1_644_612 * 8192 / 284.906)
    assert s["cpu_to_elapsed"] == pytest.approx(156527 / 284906)
    assert (s["disk_key"], s["source_line"]) == ("corpus @ lab", 1)

    lines = rows(con, "SELECT * FROM fct_query_io WHERE statement_id = ? ORDER BY table_row", [s["statement_id"]])
    assert [r["table_name"] for r in lines] == [
        "PostTypes",
        "Users",
        "Comments",
        "PostTags",
        "Posts",
        "Worktable",
        "Worktable",
    ]
    comments = lines[2]
    assert comments["pages_read"] == 248 + 1_108_174
    assert comments["logical_reads_pct_of_statement"] == pytest.approx(100 * 1_089_402 / 17_853_887, abs=0.001)
    assert {r["statement_logical_reads"] for r in lines} == {17_853_887}
    assert {r["statement_pages_read"] for r in lines} == {1_644_612}
    assert sum(r["logical_reads_pct_of_statement"] for r in lines) == pytest.approx(100, abs=0.01)


def test_lob_reads_are_kept_apart_and_a_statement_without_io_has_no_rate(con):
    # Line 21: Table 'Posts' ... lob physical reads 42854, lob read-ahead reads 3272.
    (posts,) = rows(con, "SELECT * FROM fct_query_io WHERE file_name = ? AND source_line = 21", [EN])
    assert posts["table_name"] == "Posts"
    assert posts["lob_pages_read"] == 42854 + 3272
    assert posts["pages_read"] == 18 + 49191
    # Lines 28-32: after `Msg 207` (line 26), a statement that failed: 0 ms, no tables, marked failed.
    (last,) = rows(con, "SELECT * FROM fct_query_time WHERE file_name = ? AND source_line = 28", [EN])
    assert (last["tables"], last["execution_elapsed_ms"]) == (0, 0)
    assert (last["failed"], last["error_number"]) == (True, 207)
    assert last["effective_read_bytes_per_s"] is None and last["cpu_to_elapsed"] is None


def test_failed_statements_are_marked_and_the_others_not(con):
    # The Italian corpus file ends with `Messaggio 207, livello 16, stato 1, riga 1` (line 29) after its only
    # statement's Execution Times: a failed statement of its own, with no time block and no tables.
    statements = rows(
        con,
        "SELECT * FROM fct_query_time WHERE file_name = ? ORDER BY statement_index",
        ["jorriss-sampleoutput-it.txt"],
    )
    assert [(s["statement_index"], s["failed"], s["error_number"], s["tables"]) for s in statements] == [
        (0, False, None, 20),
        (1, True, 207, 0),
    ]
    failed = statements[1]
    assert (failed["source_line"], failed["execution_blocks"]) == (29, 0)
    assert failed["execution_elapsed_ms"] is None and failed["total_elapsed_ms"] is None
    # Every other statement of the corpus ran: the English and Spanish samples fail their third.
    (n,) = con.execute("SELECT count(*) FROM fct_query_time WHERE failed").fetchone()
    assert n == 3


# --- docs ----------------------------------------------------------------------------------------------------


def test_docs_generate_and_every_mart_column_is_described(built, tmp_path, monkeypatch):
    target = tmp_path / "dbt-target"
    monkeypatch.setenv("KNEEPOINT_DBT_TARGET", str(target))
    failures = run_dbt(built, ["docs", "generate"]).failures
    assert not failures, "\n".join(failures)
    catalog = json.loads((target / "catalog.json").read_text(encoding="utf-8"))
    manifest = json.loads((target / "manifest.json").read_text(encoding="utf-8"))
    marts = {
        uid: node
        for uid, node in manifest["nodes"].items()
        if node["resource_type"] == "model" and node["path"].startswith("marts/")
    }
    assert {n["name"] for n in marts.values()} >= {
        "fct_io_results",
        "dim_disks",
        "dim_files",
        "fct_query_io",
        "fct_query_time",
        "fct_latency_distribution",
    }
    problems = []
    for uid, node in marts.items():
        built_columns = {c.lower() for c in catalog["nodes"][uid]["columns"]}
        documented = {c.lower(): col.get("description", "") for c, col in node["columns"].items()}
        if not node.get("description"):
            problems.append(f"{node['name']}: no description")
        for column in sorted(built_columns - set(documented)):
            problems.append(f"{node['name']}.{column}: not in the yml")
        for column in sorted(set(documented) - built_columns):
            problems.append(f"{node['name']}.{column}: in the yml, not in the model")
        for column, description in documented.items():
            if not description.strip():
                problems.append(f"{node['name']}.{column}: empty description")
    assert not problems, "\n".join(problems)


def test_unique_by_hash_reports_a_repeated_latency_point(built, tmp_path, monkeypatch):
    """The memory-light `unique` of fct_latency_distribution still fails on a repeated key (passing is the build)."""
    copy = tmp_path / "warehouse.duckdb"
    shutil.copy(built, copy)
    monkeypatch.setenv("KNEEPOINT_DBT_TARGET", str(tmp_path / "dbt-target"))
    c = duckdb.connect(str(copy))
    try:
        c.execute("INSERT INTO fct_latency_distribution SELECT * FROM fct_latency_distribution LIMIT 1")
    finally:
        c.close()
    failures = run_model_tests(copy, ["test_name:unique_by_hash"])
    failed = "unique_fct_latency_distribution_point"
    assert any(failed in f for f in failures), failures
