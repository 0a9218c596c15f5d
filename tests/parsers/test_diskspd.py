"""DiskSpd text (`-Rtext`) and XML (`-Rxml`): every corpus file run by run, the edge cases the corpus notes
name, junk and encodings, the sample files, and the writers' round trips."""

from __future__ import annotations

import codecs

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kneepoint.ingest import formats
from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats import diskspd, diskspd_xml
from kneepoint.ingest.synth import diskspd as writer
from kneepoint.ingest.synth import diskspd_xml as xml_writer
from kneepoint.ingest.synth.disk_model import DiskModel, sweep
from kneepoint.ingest.textio import decode
from tests.helpers import SAMPLE, corpus_dir, corpus_file

MIB = 1024 * 1024
TEXT_FILES = [
    "basilkisel-azure-dc-two-runs.txt",
    "basilkisel-irbis-tw57-cp1251-msinfo-header.txt",
    "patricklang-containers-2.0.21-mibs-latency-readme.txt",
    "virtualclient-2.2-multinuma-multigroup-no-input-params.txt",
    "virtualclient-2.2-singlegroup-kib-units.txt",
    "virtualclient-utf8bom-multitarget-no-cmdline.txt",
]
XML_FILES = ["pkb-2.0.21a-xml-rxml-4threads-seqread.xml"]


def parse(path):
    return formats.parse_bytes(path.read_bytes(), str(path))


def norm(parsed):
    return [r.to_normalized() for r in parsed.records]


def corpus_text(name: str) -> str:
    return decode(corpus_file("diskspd", name).read_bytes())[0]


# --------------------------------------------------------------------------------------------- detection


@pytest.mark.parametrize("name", TEXT_FILES)
def test_text_files_are_detected_from_content(name):
    path = corpus_file("diskspd", name)
    assert formats.parse_bytes(path.read_bytes(), name).format == "diskspd"


@pytest.mark.parametrize("name", XML_FILES)
def test_xml_files_are_detected_from_content(name):
    path = corpus_file("diskspd", name)
    assert formats.parse_bytes(path.read_bytes(), name).format == "diskspd_xml"


def test_detect_claims_no_other_tools_output():
    others = [p for p in corpus_dir().rglob("*") if p.is_file() and p.parent.name not in ("diskspd",)]
    others = [p for p in others if p.parent != corpus_dir()]
    assert len(others) > 20
    for path in others:
        text = decode(path.read_bytes())[0]
        assert diskspd.detect(text) < 0.3, path
        assert diskspd_xml.detect(text) < 0.3, path
    # and the two DiskSpd formats do not claim each other
    assert diskspd.detect(corpus_text(XML_FILES[0])) < 0.3
    for name in TEXT_FILES:
        assert diskspd_xml.detect(corpus_text(name)) < 0.3


# --------------------------------------------------------------------------------------------- corpus, text


def test_cp1251_msinfo_header_pre_2_0_20_mb_column():
    parsed = parse(corpus_file("diskspd", "basilkisel-irbis-tw57-cp1251-msinfo-header.txt"))
    assert parsed.encoding == "cp1251"
    read, write, total = norm(parsed)
    # A mixed run: its read and write rows and the Total IO row the tool prints.
    assert [r["direction"] for r in (read, write, total)] == ["read", "write", "total"]
    assert total["iops"] == pytest.approx(read["iops"] + write["iops"], abs=0.02)
    # Line 50 is `Command Line:`; the msinfo block and the PS prompt before it are skipped.
    for r in (read, write, total):
        assert r["source_line"] == 50 and r["run_index"] == 0
        assert (r["pattern"], r["operation"], r["read_pct"]) == ("random", "mixed", 50.0)
        assert r["block_size_bytes"] == 4096  # `block size: 4096`
        assert r["threads"] == 2  # `thread count: 2` (-F2)
        assert r["queue_depth"] == 32  # one target: -o32 per thread
        assert r["duration_s"] == 600.01
        assert r["target"] == "C:\\testfile.foo"
        assert r["tool_version"] is None and r["started_at"] is None
    # Read IO total: 1304707072 | 318532 | 2.07 | 530.88 | 32.273; the MB/s column is MiB.
    assert read["direction"] == "read"
    assert read["iops"] == 530.88
    assert read["throughput_bytes_per_s"] == pytest.approx(2.07 * MIB)
    assert read["latency_avg_ms"] == 32.273
    # %-ile table, Read column: min 12.382, 50th 30.110, 95th 43.782, 99th 52.576, 3-nines 207.018, max 8185.776
    assert (read["latency_min_ms"], read["latency_p50_ms"], read["latency_p95_ms"]) == (12.382, 30.110, 43.782)
    assert (read["latency_p99_ms"], read["latency_p999_ms"], read["latency_max_ms"]) == (52.576, 207.018, 8185.776)
    # Write IO total: 1302355968 | 317958 | 2.07 | 529.92 | 88.584; Write column 99th 116.005, max 10815.966
    assert write["iops"] == 529.92 and write["latency_avg_ms"] == 88.584
    assert write["latency_p99_ms"] == 116.005 and write["latency_max_ms"] == 10815.966
    assert read["inferred"] == [] and write["inferred"] == []
    meta = parsed.records[0].metadata
    assert meta["throughput_column"] == "MB/s"
    assert meta["command_line"].endswith("-F2 -o32 -Sh -L -r -d600 C:\\testfile.foo")
    assert meta["input.duration"] == "600s"
    assert meta["input.target.1.block_size"] == "4096"
    assert meta["total.iops"] == "1060.79" and meta["total.latency_99th_ms"] == "110.148"
    assert meta["cpu.usage_pct"] == "7.36"


def test_two_runs_with_notes_and_prompts_between():
    parsed = parse(corpus_file("diskspd", "basilkisel-azure-dc-two-runs.txt"))
    recs = norm(parsed)
    assert parsed.runs == 2
    assert [(r["run_index"], r["direction"], r["source_line"]) for r in recs] == [
        (0, "read", 7),  # `Command Line:` of the HDD run
        (0, "write", 7),
        (0, "total", 7),
        (1, "read", 95),  # `Command Line:` after "Testing of local SSD storage." and the PS prompt
        (1, "write", 95),
        (1, "total", 95),
    ]
    hdd_read, hdd_write, _, ssd_read, ssd_write, _ = recs
    assert {r["threads"] for r in recs} == {2} and {r["queue_depth"] for r in recs} == {32}
    assert {r["duration_s"] for r in recs} == {600.0}
    assert hdd_read["target"] == "C:\\testfile.foo" and ssd_read["target"] == "D:\\testfile.foo"
    # HDD Read IO total: 485220352 bytes | 118462 | 0.77 | 197.44 | 119.536. Below 1 MiB/s the two decimals
    # hide too much, so bytes / actual test time (600.00 s) is used.
    assert hdd_read["iops"] == 197.44
    assert hdd_read["throughput_bytes_per_s"] == pytest.approx(485220352 / 600.0)
    assert hdd_read["inferred"] == ["throughput_bytes_per_s"]
    assert hdd_read["latency_avg_ms"] == 119.536 and hdd_read["latency_p99_ms"] == 276.565
    # HDD Write IO total: 481611776 | 117581 | 0.77 | 195.97 | 206.155; Write 99th 376.050, 3-nines 792.078
    assert hdd_write["iops"] == 195.97 and hdd_write["latency_avg_ms"] == 206.155
    assert hdd_write["throughput_bytes_per_s"] == pytest.approx(481611776 / 600.0)
    assert hdd_write["latency_p99_ms"] == 376.050 and hdd_write["latency_p999_ms"] == 792.078
    # SSD Read IO total: 61925138432 | 15118442 | 98.43 | 25197.22 | 1.270; Read 99th 3.175, max 410.299
    assert ssd_read["iops"] == 25197.22
    assert ssd_read["throughput_bytes_per_s"] == pytest.approx(98.43 * MIB)
    assert ssd_read["latency_avg_ms"] == 1.270 and ssd_read["latency_p99_ms"] == 3.175
    assert ssd_read["latency_max_ms"] == 410.299 and ssd_read["inferred"] == []
    # SSD Write IO total: 62049964032 | 15148917 | 98.63 | 25248.01 | 1.266; Write 50th 0.464
    assert ssd_write["iops"] == 25248.01 and ssd_write["latency_p50_ms"] == 0.464
    assert ssd_write["throughput_bytes_per_s"] == pytest.approx(98.63 * MIB)


def test_2_0_21_mibs_system_information_and_total_label():
    parsed = parse(corpus_file("diskspd", "patricklang-containers-2.0.21-mibs-latency-readme.txt"))
    read, write, _ = norm(parsed)
    for r in (read, write):
        assert r["source_line"] == 3  # the `docker run` line before it is skipped
        assert r["threads"] == 8 and r["queue_depth"] == 8 and r["block_size_bytes"] == 4096
        assert (r["pattern"], r["operation"], r["read_pct"]) == ("random", "mixed", 50.0)
        assert r["started_at"] == "2019-07-25T21:46:27+00:00"  # start time: 2019/07/25 21:46:27 UTC
        assert r["duration_s"] == 120.0 and r["target"] == "testfile.dat"
    # Read IO total: 11837591552 | 2890037 | 94.08 | 24083.62 | 1.563
    assert read["iops"] == 24083.62 and read["latency_avg_ms"] == 1.563
    assert read["throughput_bytes_per_s"] == pytest.approx(94.08 * MIB)
    # `total:` %-ile table, Read: min 0.190, 50th 1.405, 95th 2.814, 99th 4.075, 3-nines 7.703, max 145.285
    assert [read[f"latency_{k}_ms"] for k in ("min", "p50", "p95", "p99", "p999", "max")] == [
        0.190,
        1.405,
        2.814,
        4.075,
        7.703,
        145.285,
    ]
    # Write IO total: 11854909440 | 2894265 | 94.21 | 24118.86 | 1.091; Write 99th 3.153, max 135.744
    assert write["iops"] == 24118.86 and write["latency_avg_ms"] == 1.091
    assert write["throughput_bytes_per_s"] == pytest.approx(94.21 * MIB)
    assert write["latency_p99_ms"] == 3.153 and write["latency_max_ms"] == 135.744
    meta = parsed.records[0].metadata
    assert meta["system.computer_name"] == "e1e8c95b2207"
    assert meta["input.target.1.threads_per_file"] == "8"
    assert meta["throughput_column"] == "MiB/s"
    # The whole Read column is kept as a share histogram: 25 % of I/Os between min and 25th (1.011 ms), ...
    hist = parsed.records[0].histogram
    assert parsed.records[0].histogram_kind == "share"
    assert hist[0] == (1.011, 25.0) and hist[3] == (2.434, 15.0)
    assert sum(share for _, share in hist) == pytest.approx(100.0)


def test_2_2_kib_block_size_tabs_and_iops_stddev_column():
    parsed = parse(corpus_file("diskspd", "virtualclient-2.2-singlegroup-kib-units.txt"))
    (rec,) = norm(parsed)  # the Read IO table is all zeros: no read record
    assert (rec["direction"], rec["operation"], rec["read_pct"], rec["pattern"]) == ("write", "write", 0.0, "random")
    assert rec["block_size_bytes"] == 4096  # `block size: 4KiB`
    assert rec["threads"] == 4 and rec["queue_depth"] == 16  # `... operations per thread: 16`, 4 threads
    assert rec["source_line"] == 2 and rec["duration_s"] == 10.0
    assert rec["started_at"] == "2026-06-22T22:16:45+00:00"
    # Write IO total: 20819968 | 5083 | 1.98 | 508.09 | 125.800 | 1.62 (IopsStdDev) | 25.418
    assert rec["iops"] == 508.09 and rec["latency_avg_ms"] == 125.800
    assert rec["throughput_bytes_per_s"] == pytest.approx(1.98 * MIB)
    # `Total latency distribution:` Write column: min 86.700, 50th 140.008, 99th 161.752, max 164.312
    assert (rec["latency_min_ms"], rec["latency_p50_ms"]) == (86.700, 140.008)
    assert (rec["latency_p99_ms"], rec["latency_max_ms"]) == (161.752, 164.312)
    meta = parsed.records[0].metadata
    assert meta["write.iops_stddev"] == "1.62" and meta["write.latency_stddev_ms"] == "25.418"
    assert meta["read.latency_stddev_ms"] == "N/A"
    assert meta["system.cpu_count"] == "4" and meta["system.active_power_scheme"].startswith("High performance")
    assert meta["cpu.usage_pct"] == "1.13"  # the right-aligned `avg.` row of the Core | CPU table


def test_no_input_parameters_takes_the_command_line():
    parsed = parse(corpus_file("diskspd", "virtualclient-2.2-multinuma-multigroup-no-input-params.txt"))
    (rec,) = norm(parsed)
    # Command Line: ... -c64M -b4K -r4K -t4 -o4 -w100 -d5 ...; thread count: 4
    assert rec["source_line"] == 2  # the file starts with an empty line
    assert (rec["direction"], rec["operation"], rec["pattern"]) == ("write", "write", "random")
    assert rec["block_size_bytes"] == 4096 and rec["threads"] == 4 and rec["queue_depth"] == 4
    # No Input parameters: what the command line gave is listed as read from it (threads: `thread count: 4`).
    assert rec["inferred"] == ["block_size_bytes", "operation", "pattern", "queue_depth", "read_pct"]
    # Write IO total: 24952832 | 6092 | 4.75 | 1215.24 | 6.531 | 396.90 | 13.584
    assert rec["iops"] == 1215.24 and rec["latency_avg_ms"] == 6.531
    assert rec["throughput_bytes_per_s"] == pytest.approx(4.75 * MIB)
    # Write column: 50th 6.402, 95th 12.994, 99th 18.342, 3-nines 44.981, max 53.872
    assert (rec["latency_p50_ms"], rec["latency_p95_ms"], rec["latency_p99_ms"]) == (6.402, 12.994, 18.342)
    assert (rec["latency_p999_ms"], rec["latency_max_ms"]) == (44.981, 53.872)
    meta = parsed.records[0].metadata
    assert meta["parameters_from"] == "command line"
    assert meta["system.node_count"] == "2" and meta["cpu.usage_pct"] == "0.72"


def test_utf8_bom_many_targets_use_the_totals():
    parsed = parse(corpus_file("diskspd", "virtualclient-utf8bom-multitarget-no-cmdline.txt"))
    assert parsed.encoding == "utf-8-sig"
    (rec,) = norm(parsed)
    assert rec["source_line"] == 1  # starts at `Input parameters:` after the BOM
    assert rec["threads"] == 115  # `thread count: 115` = 5 targets x 23 threads per file
    assert rec["queue_depth"] == 22 and rec["block_size_bytes"] == 8192
    assert (rec["direction"], rec["operation"], rec["pattern"]) == ("write", "write", "random")
    assert rec["duration_s"] == 60.02
    assert rec["target"] == ", ".join(f"{d}:\\diskspd-test.dat" for d in "EFGHI")
    # Write IO total (line 567): 162301329408 | 19812174 | 2579.05 | 330118.77 | 7.681 | 178867.92 | 42.583
    assert rec["iops"] == 330118.77 and rec["latency_avg_ms"] == 7.681
    assert rec["throughput_bytes_per_s"] == pytest.approx(2579.05 * MIB)
    # The `total:` %-ile table, not the per-target ones: 99th 368.150 (E:'s own says 24.265), max 3134.107
    assert rec["latency_p99_ms"] == 368.150 and rec["latency_max_ms"] == 3134.107
    assert rec["latency_min_ms"] == 0.015 and rec["latency_p50_ms"] == 1.520
    meta = parsed.records[0].metadata
    assert [meta[f"target.{i}.path"] for i in range(1, 6)] == [f"{d}:\\diskspd-test.dat" for d in "EFGHI"]
    assert meta["target.1.threads"] == "23" and meta["target.1.file_size"] == "496GiB"
    assert meta["target.1.write.latency_99th_ms"] == "24.265"  # the `E:\diskspd-test.dat` %-ile table
    assert meta["target.4.write.latency_99th_ms"] == "375.478"  # `H:\...` (4th target by first row)
    # The per-target sums add up to the printed total I/O count.
    assert sum(int(meta[f"target.{i}.write.ios"]) for i in range(1, 6)) == 19812174
    assert sum(int(meta[f"target.{i}.threads"]) for i in range(1, 6)) == 115


def test_several_targets_under_a_thread_pool_count_every_target_per_thread():
    # -F2 with two targets and -o8: every pool thread keeps 8 in flight on each target (no `threads per file`).
    text = """
Command Line: diskspd.exe -F2 -o8 -b64K -w0 -d10 E:\\a.dat F:\\b.dat

Input parameters:

\ttimespan:   1
\t-------------
\tduration: 10s
\tpath: 'E:\\a.dat'
\t\tperforming read test
\t\tblock size: 65536
\t\tusing sequential I/O (stride: 65536)
\t\tnumber of outstanding I/O operations: 8
\tpath: 'F:\\b.dat'
\t\tperforming read test
\t\tblock size: 65536
\t\tusing sequential I/O (stride: 65536)
\t\tnumber of outstanding I/O operations: 8

Results for timespan 1:
*******************************************************************************

actual test time:\t10.00s
thread count:\t\t2

Read IO
thread |       bytes     |     I/Os     |    MiB/s   |  I/O per s |  file
------------------------------------------------------------------------------
     0 |      1310720000 |        20000 |     125.00 |    2000.00 | E:\\a.dat (1024MiB)
     0 |      1310720000 |        20000 |     125.00 |    2000.00 | F:\\b.dat (1024MiB)
     1 |      1310720000 |        20000 |     125.00 |    2000.00 | E:\\a.dat (1024MiB)
     1 |      1310720000 |        20000 |     125.00 |    2000.00 | F:\\b.dat (1024MiB)
------------------------------------------------------------------------------
total:        5242880000 |        80000 |     500.00 |    8000.00
"""
    (rec,) = diskspd.parse(text)
    assert rec.threads == 2 and rec.queue_depth == 16 and "queue_depth" in rec.inferred
    assert rec.pattern == "sequential" and rec.block_size_bytes == 65536
    assert rec.iops == 8000.0 and rec.latency_avg is None  # no -L: no latency columns
    assert rec.metadata["target.2.read.ios"] == "40000"


def test_several_timespans_and_the_totals_block():
    text = corpus_text("patricklang-containers-2.0.21-mibs-latency-readme.txt")
    results = text[text.index("Results for timespan 1:") :]
    second = results.replace("Results for timespan 1:", "Results for timespan 2:")
    totals = "\n\nTotals:\n" + "*" * 79 + "\n\ntype   |       bytes     |     I/Os     |    MiB/s   |  I/O per s\n"
    totals += "write  |     23709818880 |      5788530 |     188.42 |   48237.72\n"
    combined = text + "\n" + second + totals
    recs = diskspd.parse(combined)
    assert [r.run_index for r in recs] == [0, 0, 0, 1, 1, 1]
    recs = [r for r in recs if r.direction != "total"]
    assert recs[2].source_line == combined.split("\n").index("Results for timespan 2:") + 1
    assert recs[2].metadata["timespan"] == "2"
    # Timespan 2 has no Input parameters of its own here: measured figures only.
    assert recs[2].metadata["parameters_from"] == "none"
    assert "pattern" in recs[2].inferred and recs[2].queue_depth is None
    assert recs[2].iops == 24083.62 and recs[2].threads == 8


# --------------------------------------------------------------------------------------------- corpus, XML


def test_rxml_uses_the_results_timespan_not_the_profile():
    parsed = parse(corpus_file("diskspd", "pkb-2.0.21a-xml-rxml-4threads-seqread.xml"))
    (rec,) = norm(parsed)
    assert rec["tool_version"] == "2.0.21a"
    assert rec["started_at"] == "2018-10-18T21:39:04+00:00"  # <RunTime>2018/10/18 21:39:04 UTC
    assert (rec["pattern"], rec["operation"], rec["direction"]) == ("sequential", "read", "read")
    assert rec["block_size_bytes"] == 65536 and rec["threads"] == 4 and rec["queue_depth"] == 2
    # <TestTimeSeconds>30.02, not the profile's <Duration>30
    assert rec["duration_s"] == 30.02
    # ReadCount 22645 + 22623 + 22548 + 23154 = 90970; ReadBytes ... = 5961809920
    assert rec["iops"] == pytest.approx(90970 / 30.02)
    assert rec["throughput_bytes_per_s"] == pytest.approx(5961809920 / 30.02)
    assert rec["inferred"] == ["iops", "throughput_bytes_per_s"]
    assert all(rec[f"latency_{k}_ms"] is None for k in ("avg", "min", "p50", "p99", "max"))  # -L not used
    meta = parsed.records[0].metadata
    assert meta["system.ComputerName"] == "pkb-044ffc87-0"
    assert meta["input.Duration"] == "30" and meta["input.target.1.ThreadsPerFile"] == "4"
    assert meta["cpu.usage_pct"] == "3.20" and meta["read.ios"] == "90970"


def test_xml_documents_appended_with_junk_between():
    doc = corpus_text("pkb-2.0.21a-xml-rxml-4threads-seqread.xml")
    text = "PS C:\\> .\\diskspd.exe -Rxml ... >> all.xml\n" + doc + "\nnext run:\n" + doc
    recs = diskspd_xml.parse(text)
    assert [r.run_index for r in recs] == [0, 1]
    assert recs[0].source_line == 2
    assert recs[1].source_line == 2 + doc.count("\n") + 2


def test_xml_interrupted_timespan_yields_nothing():
    text = "<Results><System/><Profile/><TimeSpan><Error>The test was interrupted</Error></TimeSpan></Results>"
    with pytest.raises(ParseError) as err:
        formats.parse_bytes(text.encode(), "x.xml")
    assert err.value.line == 1


def test_xml_cut_short_and_doctype_are_parse_errors_with_a_line():
    doc = corpus_text("pkb-2.0.21a-xml-rxml-4threads-seqread.xml")
    with pytest.raises(ParseError) as err:
        diskspd_xml.parse("note\n" + doc[: len(doc) // 2])
    assert err.value.line == 2
    # Entities declared outside <Results> are never read, so they are not expanded either.
    bomb = '<!DOCTYPE r [<!ENTITY a "aaaa">]>\n<Results><TimeSpan><TestTimeSeconds>&a;</TestTimeSeconds>'
    with pytest.raises(ParseError, match="undefined entity") as err:
        diskspd_xml.parse(bomb + "</TimeSpan></Results>")
    assert err.value.line == 2
    with pytest.raises(ParseError) as err:
        diskspd_xml.parse("\n\n<Results><TimeSpan><Thread></TimeSpan></Results>")
    assert err.value.line == 3


# --------------------------------------------------------------------------------------------- junk, pastes, encodings


def test_junk_around_and_between_runs():
    first = corpus_text("patricklang-containers-2.0.21-mibs-latency-readme.txt")
    second = corpus_text("virtualclient-2.2-singlegroup-kib-units.txt")
    text = "my notes\n\nPS C:\\> .\\run.ps1\n" + first + "\nPS C:\\> echo next\nnext\n" + second + "\nPS C:\\> exit\n"
    recs = diskspd.parse(text)
    assert [(r.run_index, r.direction) for r in recs] == [(0, "read"), (0, "write"), (0, "total"), (1, "write")]
    lines = text.split("\n")
    starts = [i + 1 for i, line in enumerate(lines) if line.startswith("Command Line:")]
    assert [recs[0].source_line, recs[3].source_line] == starts
    assert recs[3].iops == 508.09 and recs[0].iops == 24083.62


def test_pasted_without_any_header():
    text = corpus_text("patricklang-containers-2.0.21-mibs-latency-readme.txt")
    paste = "PS C:\\> # pasted from the console\n" + text[text.index("Total IO") :]
    read, write, total = diskspd.parse(paste)
    assert total.direction == "total" and total.iops == 48202.48
    assert read.source_line == 2
    assert read.iops == 24083.62 and write.iops == 24118.86
    assert read.threads == 8  # thread rows 0..7
    assert read.block_size_bytes == 4096  # 11837591552 bytes / 2890037 I/Os
    assert read.queue_depth is None and read.operation == "mixed"
    # The read share is what was measured: 2890037 / (2890037 + 2894265) I/Os.
    assert read.read_pct == pytest.approx(100 * 2890037 / 5784302, abs=0.01)
    assert {"block_size_bytes", "threads", "pattern", "operation", "read_pct"} <= set(read.inferred)
    assert read.latency_p99 == 4.075


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-8-sig"])
def test_encodings_and_crlf(encoding):
    path = corpus_file("diskspd", "patricklang-containers-2.0.21-mibs-latency-readme.txt")
    text = path.read_text(encoding="utf-8").replace("\n", "\r\n")
    data = text.encode(encoding)
    if encoding == "utf-16-be":
        data = codecs.BOM_UTF16_BE + data
    assert norm(formats.parse_bytes(data, "x.txt")) == norm(parse(path))


def test_thread_rows_wrapped_by_a_narrow_console():
    text = corpus_text("virtualclient-utf8bom-multitarget-no-cmdline.txt")
    # A 120-column console (the Windows default) breaks the 132-column rows inside the file cell.
    wrapped = "\n".join(
        "\n".join(line[k : k + 120] for k in range(0, len(line), 120)) if len(line) > 120 else line
        for line in text.split("\n")
    )
    continued = [line for line in wrapped.split("\n") if line.endswith("(496GiB)") and "|" not in line]
    assert len(continued) == 3 * 115  # every thread row of the three tables was broken in its file cell
    (rec,) = diskspd.parse(wrapped)
    assert rec.iops == 330118.77 and rec.threads == 115
    assert rec.target == ", ".join(f"{d}:\\diskspd-test.dat" for d in "EFGHI")
    assert rec.metadata["target.1.threads"] == "23" and rec.metadata["target.1.file_size"] == "496GiB"


def test_nothing_recognizable_is_a_parse_error_with_a_line():
    with pytest.raises(ParseError) as err:
        formats.parse_bytes(b"\n\nPS C:\\> dir\nnothing here\n", "junk.txt")
    assert err.value.line == 3
    with pytest.raises(ParseError) as err:
        diskspd.parse("\nCommand Line: diskspd.exe -b4K x.dat\n\nInput parameters:\n\n\ttimespan:   1\n")
    assert err.value.line == 2


def test_table_cut_short_is_a_parse_error_at_the_table():
    text = corpus_text("patricklang-containers-2.0.21-mibs-latency-readme.txt")
    cut = text[: text.index("total:       11837591552")]  # the Read IO table loses its total: row
    with pytest.raises(ParseError) as err:
        diskspd.parse(cut)
    header = cut.split("\n").index("Read IO") + 2
    assert err.value.line == header and "total:" in err.value.reason


# --------------------------------------------------------------------------------------------- samples


def test_sample_text_sweep():
    parsed = parse(SAMPLE / "diskspd" / "synthetic-ss-stripe-sweep.txt")
    assert parsed.format == "diskspd" and parsed.runs == 72 and len(parsed.records) == 72
    recs = norm(parsed)
    first = recs[0]
    # First run (Command Line on line 6, -t1 -o1 -r -w0 -b8K): Read IO total 3870932992 | 472526 | 61.53 |
    # 7875.43 | 0.127; Read column min 0.025, 50th 0.114, 99th 0.330, 3-nines 0.508, max 1.016.
    assert first["source_line"] == 6
    assert (first["pattern"], first["operation"], first["block_size_bytes"]) == ("random", "read", 8192)
    assert (first["threads"], first["queue_depth"], first["duration_s"]) == (1, 1, 60.0)
    assert first["iops"] == 7875.43 and first["throughput_bytes_per_s"] == pytest.approx(61.53 * MIB)
    assert (first["latency_avg_ms"], first["latency_min_ms"], first["latency_p50_ms"]) == (0.127, 0.025, 0.114)
    assert (first["latency_p99_ms"], first["latency_p999_ms"], first["latency_max_ms"]) == (0.330, 0.508, 1.016)
    assert first["started_at"] == "2026-01-05T09:00:00+00:00"
    last = recs[-1]
    # Last run (line 7241, -b64K -t8 -o32 -w0): Read IO total 96349847552 | 1470182 | 1531.44 | 24503.03 | 10.448
    assert (last["pattern"], last["block_size_bytes"], last["threads"], last["queue_depth"]) == (
        "sequential",
        65536,
        8,
        32,
    )
    assert last["iops"] == 24503.03 and last["latency_avg_ms"] == 10.448 and last["latency_p99_ms"] == 27.164
    # The three sweeps: 8 KiB random read, 8 KiB random write, 64 KiB sequential read, 24 points each.
    kinds = [(r["pattern"], r["operation"], r["block_size_bytes"]) for r in recs]
    assert (
        kinds
        == [("random", "read", 8192)] * 24 + [("random", "write", 8192)] * 24 + [("sequential", "read", 65536)] * 24
    )
    assert {(r["threads"], r["queue_depth"]) for r in recs[:24]} == {
        (t, q) for t in (1, 2, 4, 8) for q in (1, 2, 4, 8, 16, 32)
    }
    for r in recs:  # Little's law holds within print rounding in every run
        assert r["latency_avg_ms"] == pytest.approx(r["threads"] * r["queue_depth"] / r["iops"] * 1000, rel=0.02)
    assert "synthetic" in (SAMPLE / "diskspd" / "synthetic-ss-stripe-sweep.txt").read_text().split("\n")[0].lower()


def test_sample_xml_sweep():
    path = SAMPLE / "diskspd" / "synthetic-ss-stripe-mixed-8k.xml"
    parsed = parse(path)
    assert parsed.format == "diskspd_xml" and parsed.runs == 6
    read, write = norm(parsed)[:2]
    # First <Results> (line 2, after the synthetic-data comment): TestTimeSeconds 60.00, four threads with
    # ReadCount 300630 + 303201 + 311025 + 301305 = 1216161 and WriteCount 72514 + 73133 + 75020 + 72675 = 293342.
    assert read["source_line"] == 2 and read["tool_version"] == "2.0.21a"
    assert (read["operation"], read["read_pct"], read["pattern"]) == ("mixed", 70.0, "random")
    assert (read["threads"], read["queue_depth"], read["block_size_bytes"]) == (4, 1, 8192)
    assert read["iops"] == pytest.approx(1216161 / 60.0) and write["iops"] == pytest.approx(293342 / 60.0)
    assert read["throughput_bytes_per_s"] == pytest.approx(1216161 * 8192 / 60.0)
    # <Latency>: AverageRead 0.138, AverageWrite 0.245; Percentile 0: 0.028 / 0.049; 50: 0.124 / 0.221;
    # 99: 0.359 / 0.638
    assert (read["latency_avg_ms"], read["latency_min_ms"], read["latency_p50_ms"]) == (0.138, 0.028, 0.124)
    assert (write["latency_avg_ms"], write["latency_min_ms"], write["latency_p50_ms"]) == (0.245, 0.049, 0.221)
    assert (read["latency_p99_ms"], write["latency_p99_ms"]) == (0.359, 0.638)
    assert [r["queue_depth"] for r in norm(parsed)[::2]] == [1, 2, 4, 8, 16, 32]
    assert path.read_text().startswith("<!-- Synthetic")


def test_sample_files_are_what_the_writer_makes_and_small():
    for name, content in writer.sample_files().items():
        path = SAMPLE / "diskspd" / name
        data = content.encode() if isinstance(content, str) else content
        assert path.read_bytes() == data, f"{name}: run sample_data/make_synthetic.py"
        assert len(data) < 400_000


# --------------------------------------------------------------------------------------------- writers


def _close(a: float | None, b: float | None, abs_tol: float, rel: float = 1e-9) -> bool:
    if a is None or b is None:
        return a is b
    return abs(a - b) <= abs_tol + rel * abs(a)


def _assert_round_trip(original, parsed, *, iops_abs: float, tput_abs: float, lat_abs: float = 0.0006) -> None:
    assert len(parsed) == len(original)
    for a, b in zip(original, parsed, strict=True):
        na, nb = a.to_normalized(), b.to_normalized()
        for key in ("run_index", "pattern", "operation", "direction", "block_size_bytes", "threads", "queue_depth"):
            assert na[key] == nb[key], key
        assert na["read_pct"] == pytest.approx(nb["read_pct"])
        assert na["duration_s"] == pytest.approx(nb["duration_s"], abs=0.005)
        assert _close(na["iops"], nb["iops"], iops_abs), (na["iops"], nb["iops"])
        assert _close(na["throughput_bytes_per_s"], nb["throughput_bytes_per_s"], tput_abs, rel=1e-6)
        for key in ("avg", "min", "p50", "p95", "p99", "p999", "max"):
            assert _close(na[f"latency_{key}_ms"], nb[f"latency_{key}_ms"], lat_abs, rel=1e-9), key


_disks = st.builds(
    DiskModel,
    name=st.just("d"),
    service_time_ms=st.floats(0.05, 10.0),
    sigma=st.floats(0.0, 0.2),
    kappa=st.floats(0.0, 0.01),
    max_bytes_per_s=st.floats(50e6, 5e9),
    noise=st.just(0.0),
)
_plans = st.fixed_dictionaries(
    {
        "pattern": st.sampled_from(["random", "sequential"]),
        # DiskSpd's -w is a whole percent; read and write runs take the sweep's 100 / 0.
        "operation": st.sampled_from(["read", "write", "mixed"]),
        "read_pct": st.integers(1, 99).map(float),
        "block_size_bytes": st.sampled_from([512, 4096, 8192, 65536, 1 << 20]),
        "threads": st.integers(1, 16).map(lambda t: (t,)),
        "queue_depths": st.lists(st.integers(1, 64), min_size=1, max_size=3).map(tuple),
        "duration_s": st.sampled_from([10.0, 60.0, 120.0]),
    }
)


def _sweep(disk: DiskModel, plan: dict) -> list:
    plan = dict(plan)
    if plan["operation"] != "mixed":
        del plan["read_pct"]
    return sweep(disk, "diskspd", **plan)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(disk=_disks, plan=_plans, layout=st.sampled_from(writer.LAYOUTS))
def test_text_writer_round_trip(disk, plan, layout):
    records = _sweep(disk, plan)
    text = writer.write(records, layout=layout)
    parsed = formats.parse_text(text)
    assert parsed.format == "diskspd"
    # I/O counts are whole numbers (half an I/O over the run), rates print with two decimals.
    iops_abs = 0.5 / plan["duration_s"] + 0.006
    tput_abs = 0.006 * MIB + iops_abs * plan["block_size_bytes"]
    # A mixed run reads back with its Total IO row too: the sum of the two the writer was given.
    split = [r for r in parsed.records if r.direction != "total"]
    totals = [r for r in parsed.records if r.direction == "total"]
    assert len(totals) == (len(split) // 2 if plan["operation"] == "mixed" else 0)
    for total in totals:
        pair = [r.iops or 0.0 for r in split if r.run_index == total.run_index]
        assert total.iops == pytest.approx(sum(pair), abs=2 * iops_abs)
    _assert_round_trip(records, split, iops_abs=iops_abs, tput_abs=tput_abs)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(disk=_disks, plan=_plans)
def test_xml_writer_round_trip(disk, plan):
    records = _sweep(disk, plan)
    parsed = formats.parse_text(xml_writer.write(records))
    assert parsed.format == "diskspd_xml"
    seconds = plan["duration_s"]
    _assert_round_trip(
        records,
        parsed.records,
        iops_abs=0.5 / seconds + 1e-6,
        tput_abs=0.5 * plan["block_size_bytes"] / seconds + 1e-3,
    )


@pytest.mark.parametrize("name", TEXT_FILES)
def test_parsed_corpus_writes_back_to_the_same_figures(name):
    """parse -> write -> parse keeps every run's figures (the %-ile column travels as the share histogram)."""
    # (a mixed run's Total IO row is not written back: the writer prints the sum of the two it is given)
    first = [r for r in parse(corpus_file("diskspd", name)).records if r.direction != "total"]
    again = [r for r in diskspd.parse(writer.write(first)) if r.direction != "total"]
    assert [(r.direction, r.threads, r.queue_depth, r.block_size_bytes) for r in again] == [
        (r.direction, r.threads, r.queue_depth, r.block_size_bytes) for r in first
    ]
    for a, b in zip(first, again, strict=True):
        assert b.iops == pytest.approx(a.iops, abs=0.5 / (a.duration_s or 1) + 0.006)
        for key in ("latency_avg", "latency_min", "latency_p50", "latency_p95", "latency_p99", "latency_max"):
            assert _close(getattr(a, key), getattr(b, key), 0.0006), (key, getattr(a, key), getattr(b, key))


def test_percentile_histogram_merges_equal_latencies():
    points = [(0.0, 1.0), (50.0, 2.0), (99.0, 3.0), (99.9, 5.0), (99.99, 5.0), (100.0, 5.0)]
    assert diskspd.percentile_histogram(points) == [(2.0, 50.0), (3.0, 49.0), (5.0, pytest.approx(1.0))]
    assert diskspd.percentile_histogram([(50.0, None), (100.0, 2.0)]) == [(2.0, 100.0)]


def test_writer_rejects_an_unknown_layout():
    with pytest.raises(ValueError, match="layout"):
        writer.write([], layout="1.0")
