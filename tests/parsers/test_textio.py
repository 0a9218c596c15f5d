"""Line ends: decode makes every CR, CRLF and LF one `\\n`; the ingest takes the same steps itself on a large file's
bytes (ingest/load.py, `_prepare`), and must read the same text."""

from __future__ import annotations

import pytest

from kneepoint.ingest.textio import cr_as_lf, decode, lf_line_ends, without_crlf

LINE_ENDS = [
    (b"a\r\nb\r\n", "a\nb\n"),
    (b"a\rb\r", "a\nb\n"),
    (b"a\nb", "a\nb"),
    # a lone CR before a CRLF: two line ends, though dropping the CRLF's CR puts that CR before an LF
    (b"\r\r\n\n\r", "\n\n\n\n"),
    (b"caf\xe9\r\n", "café\n"),  # a code page
    (b"\xef\xbb\xbfa\r\nb", "a\nb"),
    ("a\r\nb\rc".encode("utf-16"), "a\nb\nc"),  # UTF-16's line ends are made on its text
    ("a\r\nb\rc\r\n".encode("utf-16-le"), "a\nb\nc\n"),
]


@pytest.mark.parametrize(("data", "text"), LINE_ENDS)
def test_decode_makes_every_line_end_one_lf(data: bytes, text: str) -> None:
    assert decode(data)[0] == text


@pytest.mark.parametrize(("data", "text"), LINE_ENDS)
def test_the_steps_taken_one_by_one_read_as_decode_reads_the_bytes(data: bytes, text: str) -> None:
    step = without_crlf(data)
    step = cr_as_lf(step)
    assert step == lf_line_ends(data)
    assert decode(step) == decode(data)


def test_bytes_without_a_cr_are_not_copied() -> None:
    data = b"no carriage return\n" * 10
    assert lf_line_ends(data) is data
