"""SQLIO's fast path (a run in SQLIO's own layout read by a few matches) against its line reader.

The line reader strips each line before reading it, so a no-break space at the end of every line changes
nothing for it, while the fast path reads plain ASCII only and leaves such a text to the line reader. The
records of both must be the same, field for field and in the same order (metadata is stored in that order).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.errors import ParseError
from ingest.formats import sqlio
from ingest.synth import sqlio as writer
from ingest.synth.disk_model import DiskModel, sweep
from tests.helpers import SAMPLE, corpus_file

SAMPLE_LOG = SAMPLE / "sqlio" / "synthetic-p10-sweep.txt"


def line_reader_only(text: str) -> str:
    return "\n".join(line + "\u00a0" for line in text.split("\n"))


def read_both(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[list, int]:
    """The records of `text`, checked against the line reader's; and how many runs the fast path read."""
    fast_runs = 0
    block = sqlio._Reader.block

    def counted(self, *args):  # noqa: ANN001, ANN202
        nonlocal fast_runs
        fast_runs += 1
        return block(self, *args)

    with monkeypatch.context() as m:
        m.setattr(sqlio._Reader, "block", counted)
        records = sqlio.parse(text)
        fast = fast_runs
        by_lines = sqlio.parse(line_reader_only(text))
        assert fast_runs == fast, "the line reader's text went through the fast path"
    assert by_lines == records
    assert repr(by_lines) == repr(records)
    return records, fast


def run_text(index: int) -> str:
    """One run of the sample log, from its echoed command to its `%:` row and newline."""
    text = SAMPLE_LOG.read_text(encoding="utf-8")
    starts = [i + 1 for i in range(len(text)) if text.startswith("\nC:\\SQLIO>sqlio", i)]
    return text[starts[index] : starts[index + 1] - 1]


def test_sample_batch_log_is_read_by_the_fast_path(monkeypatch):
    records, fast = read_both(SAMPLE_LOG.read_text(encoding="utf-8"), monkeypatch)
    assert len(records) == fast == 168
    # Lines 8-27 of the file: the first run after three notes, its echoed command on line 8, `sqlio v1.5.SG` on 9.
    first = records[0]
    assert (first.source_line, first.iops, first.throughput, first.queue_depth) == (9, 172.94, 10.81, 1)
    assert first.metadata["command_line"] == "sqlio -kR -t1 -s60 -o1 -frandom -b64 -BH -LS E:\\testfile.dat"
    assert [r.run_index for r in records] == list(range(168))


def test_console_copies_padded_with_spaces_stay_on_the_fast_path(monkeypatch):
    text = "\n".join(line + " " * (80 - len(line)) for line in run_text(1).split("\n"))  # the last one is empty
    records, fast = read_both(text, monkeypatch)
    assert len(records) == fast == 1


def test_runs_in_other_layouts_between_fast_runs(monkeypatch):
    # Parameter-file runs (corpus), a run pasted without its version line, SQLIO's own runs, notes and prompts.
    corpus = corpus_file("sqlio", "dataelisabeth-random-read-4k-expandfile.txt").read_text(encoding="utf-8")
    pasted = run_text(2).replace("sqlio v1.5.SG\n", "")
    parts = ["C:\\SQLIO>REM mixed\n", run_text(0), corpus, "\n", run_text(1), "note\n", pasted, run_text(3), corpus]
    records, fast = read_both("".join(parts), monkeypatch)
    assert fast == 3  # run_text(0), (1) and (3); the pasted one lost its `sqlio v` line
    assert [r.run_index for r in records] == list(range(6))
    assert [r.tool_version for r in records] == ["1.5.SG", "1.5.SG", "1.5.SG", None, "1.5.SG", "1.5.SG"]
    # IOs/sec on lines 19, 40, 61, 82 of the sample log, line 15 of the corpus file.
    assert [r.iops for r in records] == [172.94, 26263.98, 343.44, 620.88, 1007.37, 26263.98]


@pytest.mark.parametrize(
    ("edit", "timer", "cps", "file_size"),
    [
        # The line reader's timer ends at the first `for latency timings`; the second is not read.
        (("using system counter", "using a for latency timings for system counter"), "a", None, "20480 MB"),
        # A file size line holding `for latency timings` is read as a (second, ignored) timer line.
        (("for file: E:\\testfile.dat", "for file: E:\\testfile.dat for latency timings"), "system counter",
         "10000000", None),
    ],
)  # fmt: skip
def test_timer_phrase_is_read_as_the_line_reader_reads_it(edit, timer, cps, file_size, monkeypatch):
    (record,), _ = read_both(run_text(0).replace(*edit), monkeypatch)
    assert record.metadata["latency_timer"] == timer
    assert record.metadata.get("latency_timer_counts_per_second") == cps
    assert record.metadata.get("file_size") == file_size


@pytest.mark.parametrize(
    "edit",
    [
        ("%:", "%:" + " 1" * 100_000),  # a long `%:` row: the line reader says it has too many shares
        ("C:\\SQLIO>", "C:\\SQLIO" + "x" * 200_000 + ">"),  # a long echoed command
        ("IOs/sec:", "IOs/sec: 1" + "0" * 200_000),  # a number too long to read
    ],
)
def test_long_lines_are_read_as_the_line_reader_reads_them(edit, monkeypatch):
    text = run_text(0).replace(*edit, 1)
    try:
        read_both(text, monkeypatch)
    except ParseError as exc:
        with pytest.raises(ParseError) as by_lines:
            sqlio.parse(line_reader_only(text))
        assert (by_lines.value.reason, by_lines.value.line) == (exc.reason, exc.line)


@settings(max_examples=40, deadline=None)
@given(
    threads=st.lists(st.sampled_from([1, 2, 8, 64]), min_size=1, max_size=2, unique=True),
    queue_depths=st.lists(st.integers(1, 256), min_size=1, max_size=3, unique=True),
    block_kib=st.sampled_from([4, 64, 1024]),
    pattern=st.sampled_from(["random", "sequential"]),
    operation=st.sampled_from(["read", "write"]),
    echo_commands=st.booleans(),
    version_header=st.booleans(),
    buffering=st.sampled_from([None, "H"]),
    seed=st.integers(0, 2**16),
)
def test_modelled_sweeps_read_alike(
    threads, queue_depths, block_kib, pattern, operation, echo_commands, version_header, buffering, seed
):
    disk = DiskModel("hypothesis disk", service_time_ms=0.5, max_bytes_per_s=500e6)
    recs = sweep(
        disk,
        "sqlio",
        pattern=pattern,
        operation=operation,
        block_size_bytes=block_kib * 1024,
        threads=threads,
        queue_depths=queue_depths,
        seed=seed,
    )
    text = writer.write(recs, echo_commands=echo_commands, version_header=version_header, buffering=buffering)
    with pytest.MonkeyPatch.context() as monkeypatch:
        back, fast = read_both(text, monkeypatch)
    assert len(back) == len(recs)
    assert fast == (len(recs) if version_header else 0)
