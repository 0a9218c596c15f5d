"""SQLIO v1.5.SG: the three real-world corpus runs, batch logs built from them, and the writer.

Expected figures are read by hand from the corpus files (/work/shared/corpus/sqlio); the line each comes from is
named in the comments. SQLIO's MB is 2^20 bytes, so bytes/s = MBs/sec x 1,048,576.
"""

from __future__ import annotations

import codecs
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kneepoint.ingest import formats
from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats import sqlio
from kneepoint.ingest.records import IoRecord
from kneepoint.ingest.synth import sqlio as writer
from kneepoint.ingest.synth.disk_model import DiskModel, sweep
from kneepoint.ingest.textio import decode
from tests.helpers import SAMPLE, corpus_dir, corpus_file

RANDOM_4K = "dataelisabeth-random-read-4k-expandfile.txt"
RANDOM_64K_QD8 = "dataelisabeth-random-read-64k-8outstanding.txt"
SEQ_WRITE_64K = "dataelisabeth-seq-write-64k-no-outstanding-line.txt"
PERCENTILE_KEYS = ["latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "latency_p999_ms"]


def corpus_text(name: str) -> str:
    return corpus_file("sqlio", name).read_text(encoding="utf-8")


def parse_file(name: str):
    path = corpus_file("sqlio", name)
    return formats.parse_bytes(path.read_bytes(), str(path))


# ---------------------------------------------------------------------------------------------- corpus


# Every figure below is read from the file: lines 5-7 (threads, secs, block, pattern, outstanding), the
# `IOs/sec:` / `MBs/sec:` lines, the three `_Latency(ms):` lines and the `%:` histogram row.
CORPUS = {
    RANDOM_4K: {
        "pattern": "random",
        "operation": "read",
        "block_size_bytes": 4096,  # "using 4KB random IOs"
        "threads": 64,  # "64 threads reading for 15 secs"
        "queue_depth": 1,  # no "enabling multiple I/Os" line
        "iops": 26263.98,
        "throughput_bytes_per_s": 102.59 * 2**20,
        "latency_min_ms": 0.0,
        "latency_avg_ms": 1.0,
        "latency_max_ms": 138.0,
        # %: 22 43 22 6 2 1 1 0 ... 0 1 (sum 98). p50: 49 reached in bucket 1 (22+43) -> 2 ms; p95: 93.1 in
        # bucket 4 (22+43+22+6+2=95) -> 5 ms; p99: 97.02 only in 24+ -> Max_Latency 138 + 1.
        "percentiles": [2.0, 5.0, 139.0, 139.0],
        "share_sum": 98,
    },
    RANDOM_64K_QD8: {
        "pattern": "random",
        "operation": "read",
        "block_size_bytes": 65536,
        "threads": 64,
        "queue_depth": 8,  # "enabling multiple I/Os per thread with 8 outstanding"
        "iops": 14122.49,
        "throughput_bytes_per_s": 882.65 * 2**20,
        "latency_min_ms": 0.0,
        "latency_avg_ms": 35.0,
        "latency_max_ms": 749.0,
        # %: 4 11 10 6 4 2 2, then 1 for buckets 7..18, 0 for 19..23, 49 in 24+ (sum 100). Cumulative 50 at
        # bucket 17 -> p50 = 18 ms; 95 and beyond only in 24+ -> 749 + 1.
        "percentiles": [18.0, 750.0, 750.0, 750.0],
        "share_sum": 100,
    },
    SEQ_WRITE_64K: {
        "pattern": "sequential",
        "operation": "write",
        "block_size_bytes": 65536,
        "threads": 64,  # "64 threads writing for 15 secs to file"
        "queue_depth": 1,
        "iops": 12255.66,
        "throughput_bytes_per_s": 765.97 * 2**20,
        "latency_min_ms": 0.0,
        "latency_avg_ms": 4.0,
        "latency_max_ms": 92.0,
        # %: 25 18 3 5 8 8 7 5 4 3 2 2 2 1 1 1 1 1 0 0 0 0 0 0 2 (sum 99). p50 49.5: bucket 3 (cum 51) -> 4 ms;
        # p95 94.05: bucket 15 (cum 95) -> 16 ms; p99 98.01: only in 24+ -> 92 + 1.
        "percentiles": [4.0, 16.0, 93.0, 93.0],
        "share_sum": 99,
    },
}


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_run_figures(name):
    expected = dict(CORPUS[name])
    parsed = parse_file(name)
    assert parsed.format == "sqlio"
    (rec,) = parsed.records
    n = rec.to_normalized()
    assert n["tool"] == "sqlio" and n["tool_version"] == "1.5.SG"
    assert (n["run_index"], n["source_line"]) == (0, 1)
    assert n["target"] == "G:\\testfile.dat"
    assert n["duration_s"] == 15.0
    assert n["direction"] == expected["operation"]
    assert n["read_pct"] == (100.0 if expected["operation"] == "read" else 0.0)
    assert rec.throughput_unit == "MiB/s" and rec.latency_unit == "ms"
    for key in ("pattern", "operation", "block_size_bytes", "threads", "queue_depth"):
        assert n[key] == expected[key], key
    assert n["iops"] == pytest.approx(expected["iops"])
    assert n["throughput_bytes_per_s"] == pytest.approx(expected["throughput_bytes_per_s"])
    for key in ("latency_min_ms", "latency_avg_ms", "latency_max_ms"):
        assert n[key] == expected[key], key
    assert [n[k] for k in PERCENTILE_KEYS] == expected["percentiles"]
    assert set(PERCENTILE_KEYS) <= set(n["inferred"])
    assert ("queue_depth" in n["inferred"]) == (name != RANDOM_64K_QD8)
    # The histogram is kept as printed: 25 integer shares, bucket k stored with upper bound k+1 ms.
    assert rec.histogram_kind == "share"
    assert len(rec.histogram) == 25
    assert [b for b, _ in rec.histogram[:24]] == [float(k) for k in range(1, 25)]
    assert rec.histogram[-1][0] == expected["latency_max_ms"] + 1
    assert sum(s for _, s in rec.histogram) == expected["share_sum"]
    # SQLIO's MB is MiB: IOPS x block size gives the printed MBs/sec within its 2-decimal rounding.
    assert n["iops"] * n["block_size_bytes"] == pytest.approx(n["throughput_bytes_per_s"], rel=1e-4)


def test_corpus_run_metadata():
    (rec,) = parse_file(RANDOM_4K).records
    # Lines 2-4 and 7-11 of the file.
    assert rec.metadata["latency_timer"] == "system counter"
    assert rec.metadata["latency_timer_counts_per_second"] == "2539060"
    assert rec.metadata["parameter_file"] == "G:\\param.txt"
    assert rec.metadata["affinity_mask"] == "0x0 (0)"
    assert rec.metadata["file_bytes_before_expanding"] == "0"
    assert rec.metadata["file_bytes_expanded_by"] == "52428800000"
    assert rec.metadata["file_size"] == "50000 MB"
    assert rec.metadata["file_size_source"] == "specified"
    assert "command_line" not in rec.metadata


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_files_are_detected_from_content(name):
    path = corpus_file("sqlio", name)
    assert formats.parse_bytes(path.read_bytes(), "upload.bin").format == "sqlio"
    text, _ = decode(path.read_bytes())
    assert sqlio.detect(text) >= 0.9


def test_detect_does_not_claim_other_tools_outputs():
    others = [p for d in ("fio", "diskspd", "crystaldiskmark", "sqlstats") for p in (corpus_dir() / d).iterdir()]
    assert len(others) > 20
    for path in others:
        text, _ = decode(path.read_bytes())
        assert sqlio.detect(text) < 0.3, path.name


# ---------------------------------------------------------------------------------------------- batch logs


def without_header(text: str) -> str:
    assert text.startswith("sqlio v1.5.SG\n")
    return text.removeprefix("sqlio v1.5.SG\n")


def test_batch_log_with_prompts_commands_and_notes_between_runs():
    parts = [
        "Microsoft Windows [Version 6.1.7601]\n",
        "\n",
        "C:\\SQLIO>REM  G: is the SAN LUN under test\n",
        "\n",
        "C:\\SQLIO>sqlio -kR -t64 -s15 -o8 -frandom -b64 -LS -FG:\\param.txt\n",
        corpus_text(RANDOM_64K_QD8),  # lines 6-25
        "\n",
        "note: SAN cache was flushed before the next run\n",
        "\n",
        "C:\\SQLIO>sqlio -kW -t64 -s15 -fsequential -b64 -LS -FG:\\param.txt\n",
        without_header(corpus_text(SEQ_WRITE_64K)),  # lines 30-47, pasted without `sqlio v1.5.SG`
        "C:\\SQLIO>timeout /T 30\n",
        "\n",
        "C:\\SQLIO>sqlio -kR -t64 -s15 -frandom -b4 -LS -FG:\\param.txt\n",
        corpus_text(RANDOM_4K),  # lines 51-74
        "\n",
        "C:\\SQLIO>\n",
    ]
    recs = sqlio.parse("".join(parts))
    assert [r.run_index for r in recs] == [0, 1, 2]
    assert [r.source_line for r in recs] == [6, 30, 51]
    assert [r.tool_version for r in recs] == ["1.5.SG", None, "1.5.SG"]
    assert [(r.pattern, r.operation, r.block_size_bytes) for r in recs] == [
        ("random", "read", 65536),
        ("sequential", "write", 65536),
        ("random", "read", 4096),
    ]
    assert [r.iops for r in recs] == [14122.49, 12255.66, 26263.98]
    assert [r.queue_depth for r in recs] == [8, 1, 1]
    assert recs[0].metadata["command_line"] == "sqlio -kR -t64 -s15 -o8 -frandom -b64 -LS -FG:\\param.txt"
    assert recs[1].metadata["command_line"] == "sqlio -kW -t64 -s15 -fsequential -b64 -LS -FG:\\param.txt"
    assert all("command_line_conflicts" not in r.metadata for r in recs)
    # Only what the run did not print would come from the command line: here nothing.
    assert all("from_command_line" not in r.metadata for r in recs)


def test_run_without_header_line_and_without_anything_else():
    (rec,) = sqlio.parse(without_header(corpus_text(RANDOM_64K_QD8)))
    assert rec.source_line == 1  # the "using system counter" line
    assert rec.tool_version is None
    assert (rec.threads, rec.queue_depth, rec.iops, rec.throughput) == (64, 8, 14122.49, 882.65)


def test_param_file_overrides_t_on_the_command_line():
    # The run's lines say 8 threads (edited from the corpus run's 64); the echoed command says -t2.
    run = (
        corpus_text(RANDOM_64K_QD8)
        .replace("with 64 threads (0-63)", "with 8 threads (0-7)")
        .replace("64 threads reading", "8 threads reading")
    )
    text = "C:\\SQLIO>sqlio -kR -t2 -s15 -o8 -frandom -b64 -BH -LS -Fparam.txt\n" + run
    (rec,) = sqlio.parse(text)
    assert rec.threads == 8
    assert rec.source_line == 2
    assert rec.metadata["command_line"] == "sqlio -kR -t2 -s15 -o8 -frandom -b64 -BH -LS -Fparam.txt"
    assert rec.metadata["command_line_conflicts"] == "threads: command line -t2, run 8"
    assert "threads" not in rec.inferred


def test_command_line_conflicts_are_noted_but_the_run_wins():
    text = "D:\\sqlIO -kW -t2 -s30 -o4 -fsequential -b8 -BH -LS -Fparam.txt\n" + corpus_text(RANDOM_64K_QD8)
    (rec,) = sqlio.parse(text)
    assert (rec.operation, rec.pattern, rec.block_size_bytes, rec.duration_s) == ("read", "random", 65536, 15.0)
    assert (rec.threads, rec.queue_depth) == (64, 8)
    assert rec.metadata["command_line_conflicts"] == (
        "threads: command line -t2, run 64; duration_s: command line -s30, run 15; "
        "block_size_kb: command line -b8, run 64; operation: command line -kW, run read; "
        "pattern: command line -fsequential, run random; queue_depth: command line -o4, run 8"
    )


def test_results_without_description_take_the_echoed_command_line():
    text = corpus_text(RANDOM_64K_QD8)
    results_only = text[text.index("CUMULATIVE DATA:") :]
    command = '& "C:\\Program Files\\SQLIO\\sqlio.exe" -kW -t4 -s60 -o16 -fsequential -b256 F:\\t.dat'
    (rec,) = sqlio.parse(command + "\n" + results_only)
    assert (rec.operation, rec.pattern, rec.threads, rec.queue_depth) == ("write", "sequential", 4, 16)
    assert (rec.block_size_bytes, rec.duration_s, rec.target) == (262144, 60.0, "F:\\t.dat")
    assert rec.source_line == 2
    taken = ["operation", "pattern", "threads", "queue_depth", "block_size_bytes", "duration_s", "target"]
    assert rec.metadata["from_command_line"] == ", ".join(taken)
    assert set(taken) <= set(rec.inferred)


def test_results_without_description_or_command_is_a_parse_error():
    text = corpus_text(RANDOM_64K_QD8)
    results_only = "some notes\n" + text[text.index("CUMULATIVE DATA:") :]
    with pytest.raises(ParseError) as err:
        sqlio.parse(results_only)
    assert err.value.line == 2
    assert "description" in err.value.reason


def test_exact_mib_check_94_6_iops_at_512k():
    # The corpus 64 KB run with its figures edited: 94.6 IOs/sec x 512 KiB = 47.3 MiB/s.
    text = (
        corpus_text(RANDOM_64K_QD8)
        .replace("using 64KB random IOs", "using 512KB random IOs")
        .replace("IOs/sec: 14122.49", "IOs/sec:    94.60")
        .replace("MBs/sec:   882.65", "MBs/sec:    47.30")
    )
    (rec,) = sqlio.parse(text)
    n = rec.to_normalized()
    assert n["block_size_bytes"] == 524288
    assert n["iops"] == 94.6
    assert n["throughput_bytes_per_s"] == pytest.approx(49_597_235, rel=0.001)


def test_two_runs_pasted_back_to_back_without_headers_or_prompts():
    text = without_header(corpus_text(RANDOM_64K_QD8)) + without_header(corpus_text(SEQ_WRITE_64K))
    recs = sqlio.parse(text)
    assert [(r.source_line, r.operation, r.queue_depth) for r in recs] == [(1, "read", 8), (20, "write", 1)]


def test_whitespace_collapsed_by_a_web_page():
    """Blog copies lose the tabs and the histogram's column padding; the figures stay."""
    text = "\n".join(" ".join(line.split()) for line in corpus_text(RANDOM_64K_QD8).split("\n"))
    (rec,) = sqlio.parse(text)
    (orig,) = parse_file(RANDOM_64K_QD8).records
    assert rec.to_normalized() == orig.to_normalized()
    assert rec.histogram == orig.histogram


def test_single_thread_run_and_buffering_line():
    seq = corpus_text(SEQ_WRITE_64K)
    text = (
        "sqlio v1.5.SG\n"
        "using system counter for latency timings, 10000000 counts per second\n"
        "1 thread writing for 30 secs to file E:\\testfile.dat\n"
        "\tusing 8KB random IOs\n"
        "\tenabling multiple I/Os per thread with 1 outstanding\n"
        "\tbuffering set to use hardware disk cache (but not file cache)\n"
        "using current size: 2048 MB for file: E:\\testfile.dat\n"
        "initialization done\n" + seq[seq.index("CUMULATIVE DATA:") :]
    )
    (rec,) = sqlio.parse(text)
    assert (rec.threads, rec.queue_depth, rec.block_size_bytes, rec.operation) == (1, 1, 8192, "write")
    assert "queue_depth" not in rec.inferred  # printed: "with 1 outstanding"
    assert rec.metadata["buffering"] == "use hardware disk cache (but not file cache)"
    assert rec.metadata["file_size_source"] == "current"


# ---------------------------------------------------------------------------------------------- encodings


@pytest.mark.parametrize(
    "encode",
    [
        lambda t: t.encode("utf-8"),
        lambda t: codecs.BOM_UTF8 + t.encode("utf-8"),
        lambda t: codecs.BOM_UTF16_LE + t.replace("\n", "\r\n").encode("utf-16-le"),
        lambda t: codecs.BOM_UTF16_BE + t.replace("\n", "\r\n").encode("utf-16-be"),
        lambda t: t.replace("\n", "\r\n").encode("cp1252"),
    ],
    ids=["utf8", "utf8-bom", "utf16le-bom-crlf", "utf16be-bom-crlf", "cp1252-crlf"],
)
def test_encodings(encode):
    text = "Prüfung der SAN-LUN, Größe 50 GB\n\nC:\\SQLIO>sqlio -kR -t64 -o8 -Fparam.txt\n" + corpus_text(
        RANDOM_64K_QD8
    )
    parsed = formats.parse_bytes(encode(text), "run.txt")
    (rec,) = parsed.records
    assert parsed.format == "sqlio"
    assert rec.source_line == 4
    assert (rec.iops, rec.throughput, rec.queue_depth, rec.latency_avg) == (14122.49, 882.65, 8, 35.0)
    assert rec.metadata["command_line"] == "sqlio -kR -t64 -o8 -Fparam.txt"


def test_windows_1251_notes():
    text = "Тестирование диска G: (SAN), ночной прогон\n" + corpus_text(SEQ_WRITE_64K)
    parsed = formats.parse_bytes(text.replace("\n", "\r\n").encode("cp1251"), "run.txt")
    assert parsed.encoding == "cp1251"
    (rec,) = parsed.records
    assert (rec.source_line, rec.iops, rec.operation) == (2, 12255.66, "write")


# ---------------------------------------------------------------------------------------------- bad input


def test_nothing_recognizable_is_a_parse_error_with_a_line():
    with pytest.raises(ParseError) as err:
        sqlio.parse("\n\nC:\\SQLIO>dir\n Volume in drive C has no label.\n")
    assert err.value.line == 3
    with pytest.raises(ParseError) as err:
        formats.parse_bytes(b"\n\nhello world\n", "notes.txt")
    assert str(err.value).startswith("notes.txt:3:")


def test_run_cut_off_before_its_results_is_a_parse_error_at_the_run():
    text = "C:\\SQLIO>sqlio -kR -Fparam.txt\n" + corpus_text(RANDOM_64K_QD8).split("CUMULATIVE DATA:")[0]
    with pytest.raises(ParseError) as err:
        formats.parse_bytes(text.encode(), "cut.txt")
    assert err.value.line == 2
    assert "no results" in err.value.reason


def test_cut_off_last_run_of_a_batch_is_skipped():
    cut = corpus_text(RANDOM_4K).split("CUMULATIVE DATA:")[0]
    recs = sqlio.parse(corpus_text(RANDOM_64K_QD8) + "\nC:\\SQLIO>sqlio -kR -Fparam.txt\n" + cut)
    assert [r.iops for r in recs] == [14122.49]


def test_result_that_is_not_a_number_is_a_parse_error_at_its_line_when_it_is_the_only_run():
    text = corpus_text(RANDOM_64K_QD8).replace("IOs/sec: 14122.49", "IOs/sec: 1.#INF").split("MBs/sec")[0]
    with pytest.raises(ParseError) as err:
        sqlio.parse(text)
    assert err.value.line == 12
    assert "IOs/sec" in err.value.reason


def test_a_damaged_result_line_leaves_only_its_value_empty_with_a_warning():
    text = corpus_text(RANDOM_64K_QD8).replace("IOs/sec: 14122.49", "IOs/sec: 14122.\u2026")
    parsed = formats.parse_bytes(text.encode(), "cut.txt")
    (rec,) = parsed.records
    assert rec.iops is None
    assert rec.throughput == 882.65  # the run's other results kept
    assert parsed.warnings == ["line 12: SQLIO IOs/sec value '14122.\u2026' is not a number"]


def test_histogram_row_of_the_wrong_length_leaves_the_run_without_a_histogram():
    text = corpus_text(RANDOM_64K_QD8).replace("%:  4 11 10", "%:  4 11")
    parsed = formats.parse_bytes(text.encode(), "short.txt")
    (rec,) = parsed.records
    assert (rec.iops, rec.histogram, rec.latency_p50) == (14122.49, [], None)
    assert parsed.warnings == ["line 20: SQLIO histogram has 24 shares for 25 buckets"]


def test_a_batch_log_keeps_its_other_runs_around_a_damaged_one():
    good = corpus_text(RANDOM_64K_QD8)
    damaged = good.replace("MBs/sec:   882.65", "MBs/sec:   88..").replace("%:  4 11 10", "%:  4 1x 10")
    # A run without its description and without a command line before it says neither read/write nor random.
    orphan = "CUMULATIVE DATA:\nIOs/sec: 100.00\nMBs/sec: 6.25\n"
    text = good + "\n" + damaged + "\n" + orphan + "\n" + good
    parsed = formats.parse_bytes(text.encode(), "batch.txt")
    assert [r.iops for r in parsed.records] == [14122.49, 14122.49, 14122.49]
    assert parsed.records[1].throughput is None and parsed.records[1].histogram == []
    assert parsed.records[2].source_line == _line_of(text, "sqlio v1.5.SG", 2)
    assert parsed.warnings == [
        f"line {_line_of(text, 'MBs/sec:   88..')}: SQLIO MBs/sec value '88..' is not a number",
        f"line {_line_of(text, '%:  4 1x')}: SQLIO histogram share value '1x' is not a number",
        f"line {_line_of(text, 'CUMULATIVE DATA:', 2)}: SQLIO result without its run description ('N threads"
        " reading/writing ...', 'using NKB random IOs') and no echoed command line to take it from",
    ]


def _line_of(text: str, needle: str, nth: int = 0) -> int:
    """1-based line of the nth (0-based) occurrence of `needle`."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    return text.count("\n", 0, at) + 1


def test_a_histogram_row_wrapped_over_two_lines_is_joined():
    text = corpus_text(RANDOM_64K_QD8)
    row = "%:  4 11 10  6  4  2  2  1  1  1  1  1  1  1  1  1  1  1  1  0  0  0  0  0 49"
    labels = "ms: 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24+"
    wrapped = text.replace(row, row[:40] + "\n" + row[40:]).replace(labels, labels[:45] + "\n" + labels[45:])
    assert sqlio.parse(wrapped)[0].histogram == sqlio.parse(text)[0].histogram
    assert formats.parse_bytes(wrapped.encode(), "wrapped.txt").warnings == []


@pytest.mark.parametrize(
    "iops",
    ["1,026,872.50", "1.026.872,50", "1 026 872.50", "1\u00a0026\u00a0872.50", "1\u202f026\u202f872,50"],
)
def test_results_with_thousands_separators_read_right(iops):
    text = corpus_text(RANDOM_64K_QD8).replace("IOs/sec: 14122.49", f"IOs/sec: {iops}")
    assert sqlio.parse(text)[0].iops == 1026872.5


def test_a_decimal_comma_reads_as_one():
    text = corpus_text(RANDOM_64K_QD8).replace("MBs/sec:   882.65", "MBs/sec:   882,65")
    assert sqlio.parse(text)[0].throughput == 882.65


# ---------------------------------------------------------------------------------------------- writer


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_writer_reproduces_corpus_runs_byte_for_byte(name):
    text = corpus_text(name)
    assert writer.write(sqlio.parse(text), echo_commands=False) == text


def test_writer_batch_log_round_trip_keeps_commands_and_order():
    recs = [r for name in sorted(CORPUS) for r in sqlio.parse(corpus_text(name))]
    recs[1].metadata["command_line"] = "sqlio -kR -t64 -s15 -o8 -frandom -b64 -LS -FG:\\param.txt"
    again = sqlio.parse(writer.write(recs))
    assert [r.iops for r in again] == [r.iops for r in recs]
    assert again[1].metadata["command_line"] == recs[1].metadata["command_line"]
    assert [r.to_normalized() | {"source_line": 0, "run_index": 0} for r in again] == [
        r.to_normalized() | {"source_line": 0, "run_index": 0} for r in recs
    ]


def test_writer_rejects_what_sqlio_cannot_run():
    (rec,) = sqlio.parse(corpus_text(RANDOM_64K_QD8))
    rec.operation = "mixed"
    with pytest.raises(ValueError, match="only read or only write"):
        writer.write([rec])


@settings(max_examples=60, deadline=None)
@given(
    threads=st.lists(st.sampled_from([1, 2, 4, 8, 16, 64]), min_size=1, max_size=3, unique=True),
    queue_depths=st.lists(st.integers(1, 256), min_size=1, max_size=4, unique=True),
    block_kib=st.sampled_from([1, 4, 8, 64, 256, 1024]),
    pattern=st.sampled_from(["random", "sequential"]),
    operation=st.sampled_from(["read", "write"]),
    service_time_ms=st.floats(0.02, 20.0),
    seed=st.integers(0, 2**16),
)
def test_round_trip_of_modelled_sweeps(threads, queue_depths, block_kib, pattern, operation, service_time_ms, seed):
    bandwidth = random.Random(seed).choice([100e6, 500e6, 3e9])
    disk = DiskModel("hypothesis disk", service_time_ms=service_time_ms, max_bytes_per_s=bandwidth)
    recs = sweep(
        disk,
        "sqlio",
        pattern=pattern,
        operation=operation,
        block_size_bytes=block_kib * 1024,
        threads=threads,
        queue_depths=queue_depths,
        duration_s=120,
        seed=seed,
    )
    back = sqlio.parse(writer.write(recs))
    assert len(back) == len(recs)
    for want, got in zip(recs, back, strict=True):
        assert (got.pattern, got.operation, got.block_size_bytes) == (pattern, operation, block_kib * 1024)
        assert (got.threads, got.queue_depth, got.duration_s) == (want.threads, want.queue_depth, 120.0)
        assert got.iops == pytest.approx(want.iops, abs=0.005)
        assert got.throughput == pytest.approx(want.throughput, abs=0.005)  # both MiB/s
        # SQLIO prints whole ms, truncated.
        assert want.latency_avg - 1 < got.latency_avg <= want.latency_avg + 1e-9
        assert want.latency_max - 1 < got.latency_max <= want.latency_max + 1e-9
        assert len(got.histogram) == 25
        assert 75 <= sum(s for _, s in got.histogram) <= 100


# ---------------------------------------------------------------------------------------------- sample data


def test_sample_file_is_what_the_writer_makes():
    path = SAMPLE / "sqlio" / "synthetic-p10-sweep.txt"
    (name, content), *_ = writer.sample_files().items()
    assert name == path.name
    assert path.read_bytes() == content.encode("utf-8")  # type: ignore[union-attr]
    assert len(content) < 300_000


def test_sample_sweep():
    path = SAMPLE / "sqlio" / "synthetic-p10-sweep.txt"
    parsed = formats.parse_bytes(path.read_bytes(), str(path))
    assert parsed.format == "sqlio"
    recs: list[IoRecord] = parsed.records  # type: ignore[assignment]
    assert len(recs) == 168
    grid = {(r.block_size_bytes, r.pattern, r.operation, r.threads, r.queue_depth) for r in recs}
    assert len(grid) == 168
    for block, patterns in ((65536, ("random", "sequential")), (8192, ("random",))):
        for pattern in patterns:
            for op in ("read", "write"):
                for t in (1, 2, 4, 8):
                    for qd in (1, 2, 4, 8, 16, 32, 64):
                        assert (block, pattern, op, t, qd) in grid
    # The first run, read by hand from the file (lines 8-28).
    first = recs[0]
    assert first.source_line == 9
    assert first.metadata["command_line"] == "sqlio -kR -t1 -s60 -o1 -frandom -b64 -BH -LS E:\\testfile.dat"
    assert (first.iops, first.throughput, first.latency_avg, first.latency_max) == (172.94, 10.81, 5.0, 46.0)
    for r in recs:
        n = r.to_normalized()
        assert n["iops"] * n["block_size_bytes"] == pytest.approx(n["throughput_bytes_per_s"], abs=0.006 * 2**20)
        assert "command_line_conflicts" not in r.metadata
    # The modelled P10 saturates: 64 KiB random reads gain little past 16 outstanding I/Os.
    by_load = {
        r.threads * r.queue_depth: r.iops
        for r in recs
        if (r.block_size_bytes, r.pattern, r.operation, r.threads) == (65536, "random", "read", 1)
    }
    assert by_load[8] * 1.3 < by_load[16]
    assert by_load[32] < by_load[16] * 1.1


# ---------------------------------------------------------------------------------------------- batch logs
# A batch log as the sample's: runs of SQLIO's own layout, each after its echoed command, among notes, runs of
# other layouts and pasted fragments.

SAMPLE_LOG = SAMPLE / "sqlio" / "synthetic-p10-sweep.txt"


def run_text(index: int) -> str:
    """One run of the sample log, from its echoed command to its `%:` row and newline."""
    text = SAMPLE_LOG.read_text(encoding="utf-8")
    starts = [i + 1 for i in range(len(text)) if text.startswith("\nC:\\SQLIO>sqlio", i)]
    return text[starts[index] : starts[index + 1] - 1]


def test_sample_batch_log_reads_every_run_after_its_command():
    records = sqlio.parse(SAMPLE_LOG.read_text(encoding="utf-8"))
    assert len(records) == 168
    # Lines 8-27 of the file: the first run after three notes, its echoed command on line 8, `sqlio v1.5.SG` on 9.
    first = records[0]
    assert (first.source_line, first.iops, first.throughput, first.queue_depth) == (9, 172.94, 10.81, 1)
    assert first.metadata["command_line"] == "sqlio -kR -t1 -s60 -o1 -frandom -b64 -BH -LS E:\\testfile.dat"
    assert [r.run_index for r in records] == list(range(168))


@pytest.mark.parametrize("pad", [" ", "\u00a0"])
def test_console_copies_padded_with_blanks_read_the_same(pad):
    text = run_text(1)
    padded = "\n".join(line + pad * (80 - len(line)) for line in text.split("\n"))
    assert sqlio.parse(padded) == sqlio.parse(text)


def test_runs_in_other_layouts_between_sqlios_own_runs():
    # Parameter-file runs (corpus), a run pasted without its version line, SQLIO's own runs, notes and prompts.
    corpus = corpus_file("sqlio", "dataelisabeth-random-read-4k-expandfile.txt").read_text(encoding="utf-8")
    pasted = run_text(2).replace("sqlio v1.5.SG\n", "")
    parts = ["C:\\SQLIO>REM mixed\n", run_text(0), corpus, "\n", run_text(1), "note\n", pasted, run_text(3), corpus]
    records = sqlio.parse("".join(parts))
    assert [r.run_index for r in records] == list(range(6))
    assert [r.tool_version for r in records] == ["1.5.SG", "1.5.SG", "1.5.SG", None, "1.5.SG", "1.5.SG"]
    # IOs/sec on lines 19, 40, 61, 82 of the sample log, line 15 of the corpus file.
    assert [r.iops for r in records] == [172.94, 26263.98, 343.44, 620.88, 1007.37, 26263.98]


@pytest.mark.parametrize(
    ("edit", "timer", "cps", "file_size"),
    [
        # The timer ends at the first `for latency timings`; the second is not read.
        (("using system counter", "using a for latency timings for system counter"), "a", None, "20480 MB"),
        # A file size line holding `for latency timings` is read as a (second, ignored) timer line.
        (("for file: E:\\testfile.dat", "for file: E:\\testfile.dat for latency timings"), "system counter",
         "10000000", None),
    ],
)  # fmt: skip
def test_timer_phrase_in_odd_places(edit, timer, cps, file_size):
    (record,) = sqlio.parse(run_text(0).replace(*edit))
    assert record.metadata["latency_timer"] == timer
    assert record.metadata.get("latency_timer_counts_per_second") == cps
    assert record.metadata.get("file_size") == file_size


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (("%:", "%:" + " 1" * 100_000), "SQLIO histogram has 100025 shares for 25 buckets"),
        (("IOs/sec:", "IOs/sec: 1" + "0" * 200_000), "SQLIO IOs/sec value '1000000000000000000000000000000000000000'"),
    ],
)
def test_long_lines_are_warned_about_at_their_line(edit, reason):
    parsed = sqlio.parse(run_text(0).replace(*edit, 1))
    (warning,) = parsed.warnings
    assert warning.split(": ", 1)[1].startswith(reason)


def test_a_long_echoed_command_is_still_the_runs_command():
    (record,) = sqlio.parse(run_text(0).replace("C:\\SQLIO>", "C:\\SQLIO" + "x" * 200_000 + ">", 1))
    assert record.metadata["command_line"].startswith("sqlio -kR -t1 -s60 -o1 -frandom")
