"""Format registry. Each module in this package is one tool's output format with the same interface:

    NAME: str                                  # the --format name
    detect(text: str) -> float                 # confidence 0..1 that `text` holds this format
    parse(text: str) -> list[Record]           # raises ParseError(reason, line) when nothing is found

and optionally `write(records) -> str` (the generator used for synthetic data and round-trip tests).
Modules are discovered, so adding a format touches no other format.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from types import ModuleType

from ingest.errors import ParseError
from ingest.records import ParsedFile
from ingest.textio import decode

MIN_CONFIDENCE = 0.3


@cache
def registry() -> dict[str, ModuleType]:
    mods: dict[str, ModuleType] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        mods[mod.NAME] = mod
    return dict(sorted(mods.items()))


def names() -> list[str]:
    return list(registry())


def detect(text: str) -> tuple[str, float] | None:
    """The most likely format of `text`, or None when no module is confident enough."""
    best: tuple[str, float] | None = None
    for name, mod in registry().items():
        score = mod.detect(text)
        if score >= MIN_CONFIDENCE and (best is None or score > best[1]):
            best = (name, score)
    return best


def parse_text(text: str, fmt: str | None = None, encoding: str = "utf-8") -> ParsedFile:
    if fmt is None:
        found = detect(text)
        if found is None:
            raise ParseError(
                "no recognizable result: not the output of any known tool (" + ", ".join(names()) + ")",
                line=_first_content_line(text),
            )
        fmt = found[0]
    try:
        mod = registry()[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(names())}") from None
    records = mod.parse(text)
    if not records:
        raise ParseError(f"no {fmt} result found", line=_first_content_line(text))
    return ParsedFile(format=fmt, records=records, encoding=encoding)


def parse_bytes(data: bytes, path: str = "<input>", fmt: str | None = None) -> ParsedFile:
    """Decode and parse one file's bytes; every ParseError names `path`."""
    if not data.strip(b"\x00 \t\r\n"):
        raise ParseError("empty file: no result to read", line=1, path=path)
    if b"\x00" in data[:4096] and not _looks_textual(data):
        raise ParseError("binary file: not the text or JSON output of a benchmark tool", line=1, path=path)
    text, encoding = decode(data)
    try:
        return parse_text(text, fmt, encoding)
    except ParseError as exc:
        raise exc.with_path(path) from None
    except RecursionError:
        raise ParseError("input nests too deeply to read", line=1, path=path) from None


def _looks_textual(data: bytes) -> bool:
    """UTF-16 text has NULs too; decoded, it should be mostly printable."""
    text, _ = decode(data[:4096])
    printable = sum(1 for c in text if c.isprintable() or c in "\n\t")
    return bool(text) and printable > 0.9 * len(text)


def _first_content_line(text: str) -> int:
    for i, line in enumerate(text.split("\n"), 1):
        if line.strip():
            return i
    return 1
