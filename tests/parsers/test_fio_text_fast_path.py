"""fio_text's fast readers (whole job blocks and group summaries read with a few regex calls) against its line
reader: the same records for every input, down to the last field. Each case here is read twice, once with the
fast readers switched off, and compared field by field (repr: floats exactly, metadata in order)."""

from __future__ import annotations

import re

import pytest

from ingest.errors import ParseError
from ingest.formats import fio_text
from ingest.synth import fio_text as writer
from ingest.synth.disk_model import DiskModel, sweep
from tests.helpers import SAMPLE, corpus_dir
from tests.parsers.test_fio_text import CLONES, PSYNC

SWEEP = (SAMPLE / "fio-text" / "randwrite-4k-sweep.txt").read_text()


def outcome(text: str) -> str:
    try:
        return repr(fio_text.parse(text))
    except ParseError as exc:
        return f"ParseError({exc.reason!r}, line {exc.line})"


def line_by_line(text: str, monkeypatch: pytest.MonkeyPatch) -> str:
    with monkeypatch.context() as m:
        m.setattr(fio_text, "_read_block_body", lambda *args: None)
        m.setattr(fio_text, "_RUN_STATUS", re.compile(""))
        m.setattr(fio_text, "_HEADER_AT", re.compile("(?!)"))
        return outcome(text)


def fast_blocks(text: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """How many job blocks the fast readers took (the body after a `(groupid=` line, the blocks after it)."""
    taken = []
    body, following = fio_text._read_block_body, fio_text._read_next_block
    with monkeypatch.context() as m:
        m.setattr(fio_text, "_read_block_body", lambda *args: taken.append(r := body(*args)) or r)
        m.setattr(fio_text, "_read_next_block", lambda *args: taken.append(r := following(*args)) or r)
        fio_text.parse(text)
    return sum(1 for r in taken if r)


def writer_outputs() -> list[str]:
    out = []
    for operation, group_reporting, unit in [("read", True, "us"), ("mixed", False, "ms"), ("write", True, "ns")]:
        disk = DiskModel("d", service_time_ms=0.5, max_bytes_per_s=2e9)
        recs = sweep(disk, "fio", operation=operation, threads=(2,), queue_depths=(1, 16), latency_unit=unit,
                     tool_version="3.33", duration_s=30)  # fmt: skip
        out.append(writer.write(recs, group_reporting=group_reporting))
    return out


def real_texts() -> list[str]:
    return [SWEEP, CLONES, PSYNC] + [p.read_text() for p in sorted((corpus_dir() / "fio").glob("*.txt"))]


def test_fast_readers_read_real_output_as_the_line_reader(monkeypatch):
    for text in real_texts() + writer_outputs():
        assert outcome(text) == line_by_line(text, monkeypatch)
    # ...and they are what read it: every block of the real sweep (l.12, 35, ..., 347: 14 blocks)
    assert fast_blocks(SWEEP, monkeypatch) == 14


# Edits inside a block of the real sweep: the first (after the `(groupid=` line the line reader matched) or the
# second (a block the fast readers take whole). The first ones make the line reader read the block otherwise
# than one in fio's shape: the fast reader must hand it over. The others it reads itself, as the line reader.
FIRST_BLOCK = SWEEP.index("randwrite-4k-qd1: (groupid=0")
SECOND_BLOCK = SWEEP.index("randwrite-4k-qd2: (groupid=1")
HANDED_OVER = [
    ("   bw (  MiB/s)", "   bw (  MiB/s) x: (groupid=9, jobs=1): err= 0"),  # a result line after all
    ("   iops        :", "   iops        : queue depth will be capped at 1,"),  # fio's note, on a skipped line
    ("  lat (usec)   : 10=", "  lat (usec)   : min=1, 10="),  # not a distribution line for the line reader
    ("  cpu          :", "\n  cpu          :"),  # a blank line inside the block
    ("    clat (usec)", "\x0bclat (usec)"),  # indented with other white space
]
READ_FAST = [
    ("    clat (usec)", "\tclat (usec)"),  # tab-indented line
    ("50.00th=[", "50.0th=["),  # another spelling of the 50th percentile
    ("99.90th=[", "99.9th=[   1], 99.90th=["),  # the 99.9th twice: the line reader keeps the last one
    ("samples=5\n   iops", "samples=5, x(g=1)\n   iops"),  # `(g`, yet not a `name: (groupid=` or `name: (g=` line
    ("  write: IOPS=", "  write: IOPS=1k, BW=4MiB/s (4MB/s)(40MiB/10000msec)\n  write: IOPS="),  # a direction twice
    ("     issued rwts:", "     issued rwts: total=1,2,0,0\n     issued rwts:"),  # the second read line by line
    ("    clat percentiles (usec):", "    clat percentiles (usec):\n     |  1.00th=[" + "9" * 21 + "],"),
]


def edited(old: str, new: str, block: int = FIRST_BLOCK) -> str:
    start = SWEEP.index(old, block)
    return SWEEP[:start] + new + SWEEP[start + len(old) :]


@pytest.mark.parametrize("block", [FIRST_BLOCK, SECOND_BLOCK])
@pytest.mark.parametrize(("old", "new"), HANDED_OVER)
def test_blocks_out_of_shape_go_to_the_line_reader(old, new, block, monkeypatch):
    text = edited(old, new, block)
    assert outcome(text) == line_by_line(text, monkeypatch)
    assert fast_blocks(text, monkeypatch) == 13  # the edited block went line by line


@pytest.mark.parametrize("block", [FIRST_BLOCK, SECOND_BLOCK])
@pytest.mark.parametrize(("old", "new"), READ_FAST)
def test_blocks_in_other_shapes_read_fast(old, new, block, monkeypatch):
    text = edited(old, new, block)
    assert outcome(text) == line_by_line(text, monkeypatch)
    assert fast_blocks(text, monkeypatch) == 14


def test_group_summaries_holding_a_result_line_are_read(monkeypatch):
    # a job's block pasted among the group summaries: the summary skip must not swallow it
    block = SWEEP[FIRST_BLOCK : SWEEP.index("\n", SWEEP.index("latency   :", FIRST_BLOCK)) + 1]
    at = SWEEP.index("\n", SWEEP.index("Run status group 0")) + 1
    text = SWEEP[:at] + block + SWEEP[at:]
    assert outcome(text) == line_by_line(text, monkeypatch)
    assert len(fio_text.parse(text)) == len(fio_text.parse(SWEEP)) + 1


# Edits of the second header line (the first the header reader takes, after the line reader read the first).
SECOND_HEADER = SWEEP.index("randwrite-4k-qd2: (g=1)")
HEADER_EDITS = [
    ("randwrite-4k-qd2: (g=1)", "randwrite 4k qd2: (g=1)"),  # white space in the name
    ("randwrite-4k-qd2: (g=1)", "read: (g=1)"),  # a direction keyword as the name
    ("randwrite-4k-qd2: (g=1)", "x:y: (g=1)"),  # a colon in the name
    ("randwrite-4k-qd2: (g=1)", "  randwrite-4k-qd2: (g=1)"),  # indented
    ("iodepth=2\n", "iodepth=2  \n"),  # trailing white space
    ("iodepth=2\n", "iodepth=2\n...\n"),  # numjobs > 1
    ("iodepth=2\n", "iodepth=2, x: (groupid=1, jobs=1): err= 0\n"),  # a result line after all
]


@pytest.mark.parametrize(("old", "new"), HEADER_EDITS)
def test_header_lines_read_as_the_line_reader(old, new, monkeypatch):
    start = SWEEP.index(old, SECOND_HEADER)
    text = SWEEP[:start] + new + SWEEP[start + len(old) :]
    assert outcome(text) == line_by_line(text, monkeypatch)
