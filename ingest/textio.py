"""Bytes to text as users have them: BOMs, UTF-16 without BOM, Windows code pages, CRLF.

Every parser sees `\\n`-separated text, so line numbers mean the same thing for every format.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator

_CYRILLIC_PAIR = re.compile(r"[\u0410-\u044f\u0401\u0451]{2,}")


def lines_holding(text: str, literal: str, end: int | None = None) -> Iterator[int]:
    """Start offsets of the lines of text[:end] that hold `literal`, in order, each once.

    Detectors match their line pattern at these offsets instead of searching with a MULTILINE `^`, which would make
    re attempt a match at every character of a large file of another tool."""
    end = len(text) if end is None else min(end, len(text))
    i = text.find(literal, 0, end)
    while i >= 0:
        start = text.rfind("\n", 0, i) + 1
        yield start
        stop = text.find("\n", i, end)
        if stop < 0:
            return
        i = text.find(literal, stop, end)


# iter_lines splits a text this many characters at a time.
LINE_BLOCK = 1 << 20


def iter_lines(text: str) -> Iterator[str]:
    """text.split("\\n"), one block of about LINE_BLOCK characters at a time. A list of every line of a 100 MB log
    is ~3.7M strings, three times the text's size beside it; a parser reading line by line holds one block's."""
    start = 0
    while (end := text.find("\n", start + LINE_BLOCK)) >= 0:
        yield from text[start:end].split("\n")
        start = end + 1
    yield from text[start:].split("\n")


def find_rare(text: str, literal: str, k: int, end: int | None = None) -> int:
    """text.find(literal, 0, end), found by scanning for literal[k], a character rare in other tools' outputs.

    Detectors look for their tool's words in every file of unknown format, most of them large outputs of other
    tools: a one-character scan reads those at memory speed, where CPython's str.find of a longer literal reads them
    several times slower. A text where that character is common (one per 512 characters without the literal) is
    left to str.find."""
    n = len(text) if end is None else max(0, min(end, len(text)))
    if n <= 8192:
        return text.find(literal, 0, n)  # a short text is read quickly either way
    rare = literal[k]
    last = n - len(literal) + k + 1  # past the last place literal[k] can be with the literal inside text[:n]
    i = text.find(rare, k, last)
    for _ in range(n >> 9):
        if i < 0 or text.startswith(literal, i - k):
            return i if i < 0 else i - k
        i = text.find(rare, i + 1, last)
    return -1 if i < 0 else text.find(literal, i - k, n)


def decode(data: bytes) -> tuple[str, str]:
    """Return (text with `\n` line ends, encoding name)."""
    if utf16 := _utf16(data):
        bom = data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
        return _lf_text((data[2:] if bom else data).decode(utf16, errors="replace")), utf16
    data = lf_line_ends(data)
    if data.startswith(codecs.BOM_UTF8):
        return _without_nul(data[3:].decode("utf-8", errors="replace")), "utf-8-sig"
    try:
        text, enc = data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        text, enc = _damaged_utf8(data) or _single_byte(data)
    return _without_nul(text), enc


def lf_line_ends(data: bytes) -> bytes:
    """`data` with the `\n` line ends decode makes on the bytes (UTF-8 and the code pages: a CR or LF byte is that
    character and never part of another one): each CRLF made LF, then each CR left (old Mac line ends) made LF.
    UTF-16's are made on its text, so its bytes come back as they are, as do bytes without a CR. Each step is a copy:
    a caller that holds a large file's bytes takes the steps itself (`data = without_crlf(data)`, then `data =
    cr_as_lf(data)`), so that it holds two of the bytes, their copies and the text at once, never three."""
    return cr_as_lf(without_crlf(data))


def without_crlf(data: bytes) -> bytes:
    """lf_line_ends' first step: each CRLF made LF."""
    if b"\r" not in data or _utf16(data):
        return data
    return data.replace(b"\r\n", b"\n")


def cr_as_lf(data: bytes) -> bytes:
    """lf_line_ends' second step, on what without_crlf gave back: each CR left made LF (a CR that the first step put
    before an LF, `\r\r\n`, is a line end of its own)."""
    if b"\r" not in data or _utf16(data):
        return data
    return data.replace(b"\r", b"\n")


def _utf16(data: bytes) -> str | None:
    """The UTF-16 encoding of `data` (a BOM, or NULs in every other byte), else None."""
    if data.startswith(codecs.BOM_UTF8):
        return None
    if data.startswith(codecs.BOM_UTF16_LE):
        return "utf-16-le"
    if data.startswith(codecs.BOM_UTF16_BE):
        return "utf-16-be"
    return _utf16_without_bom(data) if data.find(b"\x00", 0, 4096) >= 0 else None


def _lf_text(text: str) -> str:
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _without_nul(text)


def _without_nul(text: str) -> str:
    return text.replace("\x00", "") if "\x00" in text else text


def _utf16_without_bom(data: bytes) -> str | None:
    """ASCII-heavy UTF-16 has a NUL in every other byte."""
    sample = data[:4096]
    if len(sample) < 8:
        return None
    even_nuls = sample[0::2].count(0)
    odd_nuls = sample[1::2].count(0)
    half = len(sample) / 2
    if odd_nuls > 0.4 * half and even_nuls < 0.05 * half:
        return "utf-16-le"
    if even_nuls > 0.4 * half and odd_nuls < 0.05 * half:
        return "utf-16-be"
    return None


def _damaged_utf8(data: bytes) -> tuple[str, str] | None:
    """UTF-8 with a few bad bytes (output cut in the middle of a character, a stray byte): more valid
    multi-byte characters than invalid bytes. Read as a code page, its accented keywords ('ejecución')
    would turn to mojibake and their lines would no longer be recognized."""
    text = data.decode("utf-8", errors="replace")
    invalid = text.count("\ufffd") - data.count("\ufffd".encode())
    multibyte = len(text) - len(text.encode("ascii", "ignore")) - text.count("\ufffd")
    return (text, "utf-8") if multibyte > invalid else None


def _single_byte(data: bytes) -> tuple[str, str]:
    """Windows-1251 (Russian) or Windows-1252 (Western): Cyrillic text decodes to Cyrillic words."""
    as_1251 = data.decode("cp1251", errors="replace")
    high = sum(1 for b in data if b >= 0xC0)
    cyrillic_in_words = sum(len(m) for m in _CYRILLIC_PAIR.findall(as_1251))
    if high and cyrillic_in_words > 0.6 * high:
        return as_1251, "cp1251"
    return data.decode("cp1252", errors="replace"), "cp1252"


_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([kmgtp]?)(i?)(b?)\s*$", re.IGNORECASE)
_POW = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}


def size_to_bytes(value: str, base: int = 1024) -> int:
    """'4k', '64KB', '1MiB', '512' -> bytes. Block sizes in these tools are binary unless `base` says not."""
    m = _SIZE.match(value)
    if not m:
        raise ValueError(f"not a size: {value!r}")
    number, prefix, binary, _ = m.groups()
    factor = (1024 if binary else base) ** _POW[prefix.lower()]
    return int(round(float(number) * factor))
