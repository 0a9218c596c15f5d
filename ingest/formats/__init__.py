"""Format registry. Each module in this package is one tool's output format, with one interface (see _template.py,
which a new format starts from):

    NAME: str                                  # the --format name
    TITLE: str                                 # its name for people ("fio JSON")
    TOOLS: tuple[str, ...]                     # the `tool` values its IoRecords carry
    HOST_KEYS, USER_KEYS: frozenset[str]       # metadata keys (their last dotted part, lower case) holding a host or
                                               # user name: what anonymization replaces
    RESULT_KEY_PREFIXES, RESULT_KEYS           # metadata keys that are results, not test conditions: what the report
                                               # leaves out of a file's conditions
    detect(text: str) -> float                 # confidence 0..1 that `text` holds this format
    parse(text: str) -> list[Record]           # raises ParseError(reason, line) when nothing is found; may return
                                               # records.ParsedRecords, whose warnings (`line N: ...`, lines it
                                               # skipped while keeping the rest) reach ParsedFile.warnings

and optionally
    parse_document(text: str) -> list[Record] | None   # parse(text) when the text is exactly one document
                                                       # (JSON, XML) and nothing else, else None
    OPTIONS: tuple[str, ...]                           # the parse options it takes (load_table's column mapping:
                                                       # parse(text, options)), stored with the file
    refusal_hint(text: str) -> str | None              # for a text no format recognized: what to give so that
                                                       # this one reads it (the column mapping of a bare table)

A whole JSON or XML document cannot hold another tool's output, so a text one module reads as a document is
neither run through every detector nor checked for a second tool: that is most of the cost of reading a small
file (7 detectors scan each text). Modules are discovered (those starting with `_` are not formats), so adding a
format touches no other format.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable
from functools import cache
from types import ModuleType

from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats._common import first_content_line
from kneepoint.ingest.records import ParsedFile, Record
from kneepoint.ingest.textio import decode

# What every format module declares (see _template.py).
REQUIRED = (
    "NAME", "TITLE", "TOOLS", "HOST_KEYS", "USER_KEYS", "RESULT_KEY_PREFIXES", "RESULT_KEYS", "detect", "parse",
)  # fmt: skip

MIN_CONFIDENCE = 0.3
# Every detector reads at least this many characters from the head of a text: a text this short was read whole.
WHOLE_TEXT_DETECTED = 65536
_HEAD_OVERLAP = 4096


@cache
def registry() -> dict[str, ModuleType]:
    mods: dict[str, ModuleType] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        missing = [attr for attr in REQUIRED if not hasattr(mod, attr)]
        if missing:
            raise TypeError(
                f"format module {mod.__name__} lacks {', '.join(missing)} (see ingest/formats/_template.py)"
            )
        mods[mod.NAME] = mod
    return dict(sorted(mods.items()))


@cache
def _document_readers() -> list[tuple[str, Callable[[str], list[Record] | None]]]:
    """(name, parse_document) of the formats that have one."""
    return [(name, mod.parse_document) for name, mod in registry().items() if hasattr(mod, "parse_document")]


def names() -> list[str]:
    return list(registry())


def titles() -> dict[str, str]:
    """Format name -> its name for people, e.g. "sqlstats" -> "SQL Server STATISTICS IO/TIME"."""
    return {name: mod.TITLE for name, mod in registry().items()}


def tools() -> list[str]:
    """Every `tool` value an IoRecord can carry, sorted."""
    return sorted({tool for mod in registry().values() for tool in mod.TOOLS})


def host_keys() -> frozenset[str]:
    """Run-metadata keys that hold a host name, as the last dotted part of the key, in lower case."""
    return frozenset().union(*(mod.HOST_KEYS for mod in registry().values()))


def user_keys() -> frozenset[str]:
    """Run-metadata keys that hold a user name, as the last dotted part of the key, in lower case."""
    return frozenset().union(*(mod.USER_KEYS for mod in registry().values()))


def result_key_prefixes() -> tuple[str, ...]:
    """Prefixes of the run-metadata keys that are results (`read.iops`) rather than test conditions, sorted."""
    return tuple(sorted({p for mod in registry().values() for p in mod.RESULT_KEY_PREFIXES}))


def result_keys() -> tuple[str, ...]:
    """Whole run-metadata keys that are results rather than test conditions, sorted."""
    return tuple(sorted({k for mod in registry().values() for k in mod.RESULT_KEYS}))


def detect_all(text: str, besides: str | None = None) -> list[tuple[str, float]]:
    """Every format (but `besides`) confident enough about `text`, the most likely first (ties: registry order)."""
    scores = [(name, mod.detect(text)) for name, mod in registry().items() if name != besides]
    return sorted((s for s in scores if s[1] >= MIN_CONFIDENCE), key=lambda s: -s[1])


def option_formats() -> dict[str, tuple[str, ...]]:
    """The formats that take parse options, and the options each takes."""
    return {name: tuple(mod.OPTIONS) for name, mod in registry().items() if getattr(mod, "OPTIONS", ())}


def check_parse_options(fmt: str | None, options: dict[str, str]) -> str:
    """The format that will read a text given `options`, the options checked by it (its check_options, when it has
    one): ValueError saying what is wrong, before any file is read."""
    fmt = _options_format(fmt, options)
    check = getattr(registry()[fmt], "check_options", None)
    if check is not None:
        check(options)
    return fmt


def _options_format(fmt: str | None, options: dict[str, str]) -> str:
    """The format that reads a text given `options` (the one whose OPTIONS hold them all); ValueError if none does."""
    takers = [name for name, known in option_formats().items() if set(options) <= set(known)]
    if fmt is None and len(takers) == 1:
        return takers[0]
    if fmt is not None and fmt in takers:
        return fmt
    keys = ", ".join(sorted(options))
    if fmt is not None:
        raise ValueError(f"format {fmt} takes no parse options ({keys})")
    raise ValueError(f"no format takes the parse options {keys}")


def parse_text(
    text: str, fmt: str | None = None, encoding: str = "utf-8", options: dict[str, str] | None = None
) -> ParsedFile:
    """`options`: parse options (load_table's column mapping); given, they name the format that takes them and the
    text is read by it alone (the user said what it is)."""
    found: list[tuple[str, float]] | None = None
    if options:
        fmt = _options_format(fmt, options)
        records = registry()[fmt].parse(text, options)
        return ParsedFile(format=fmt, records=records, encoding=encoding, warnings=_warnings(records))
    if fmt is None:
        for name, read_document in _document_readers():
            if records := read_document(text):
                return ParsedFile(format=name, records=records, encoding=encoding, warnings=_warnings(records))
        found = detect_all(text)
        if not found:
            hints = [hint for mod in registry().values() if (hint := getattr(mod, "refusal_hint", _no_hint)(text))]
            raise ParseError(
                "no recognizable result: not the output of any known tool ("
                + ", ".join(names())
                + ")"
                + "".join(f"; {hint}" for hint in hints),
                line=first_content_line(text),
            )
        fmt = found[0][0]
    try:
        mod = registry()[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(names())}") from None
    records = mod.parse(text)
    if not records:
        raise ParseError(f"no {fmt} result found", line=first_content_line(text))
    if found is not None:
        _refuse_mixed(text, fmt, records, {name for name, _ in found[1:]})
    return ParsedFile(format=fmt, records=records, encoding=encoding, warnings=_warnings(records))


def _no_hint(text: str) -> None:
    return None


def _warnings(records: list[Record]) -> list[str]:
    """The warnings a parser returned with its records (records.ParsedRecords), else none."""
    return list(getattr(records, "warnings", ()))


def _refuse_mixed(text: str, fmt: str, records: list, others: set[str]) -> None:
    """A file holding two tools' outputs would be stored as one format and the other tool's results lost
    without a word: refuse it, pointing at where the second output starts (`--format` reads one of them).

    Detectors read the head of a text, so besides the whole (`others`: the formats detected in it) the other
    output of a text longer than every detector's head is looked for before the first record and from the last
    one on. No real single-tool output
    scores for a second format."""
    lines = [r.source_line or 1 for r in records]
    first, last = min(lines), max(lines)
    if len(text) > WHOLE_TEXT_DETECTED:
        parts = [text[: _offset_of_line(text, first)]]
        if last > 1:
            # Every detector has read the head already: the part from the last record on is read from a little
            # before the head's end (a line cut there), not again from where it starts.
            tail = max(_offset_of_line(text, last, near_end=True), WHOLE_TEXT_DETECTED - _HEAD_OVERLAP)
            parts.append(text[text.rfind("\n", 0, tail) + 1 :])
        others = others | {name for part in parts if part.strip() for name, _ in detect_all(part, besides=fmt)}
    for other in sorted(others - {fmt}):
        try:
            other_records = registry()[other].parse(text)
        except ParseError:
            continue  # look-alike lines without a result: nothing of the other tool is lost
        if not other_records:
            continue
        (a, line_a), (b, line_b) = sorted(
            [(fmt, first), (other, min(r.source_line or 1 for r in other_records))], key=lambda s: s[1]
        )
        raise ParseError(
            f"this file mixes the output of two tools: {a} (from line {line_a}) and {b} (from line {line_b}); "
            "split it and ingest each part (or read one of them with --format)",
            line=line_b,
        )


def _offset_of_line(text: str, line: int, near_end: bool = False) -> int:
    """Character offset where 1-based `line` starts (the end of the text past its last line). `near_end`: the line
    is near the end of a long text, so it is split from the end (the last record's line of a long file)."""
    if line <= 1:
        return 0
    if near_end:
        lines = text.count("\n") + 1
        if line > lines:
            return len(text)
        offset = len(text)
        for _ in range(lines - line + 1):
            offset = text.rfind("\n", 0, offset)
        return offset + 1
    # Line end by line end (here and above): a split would copy the rest of a large text.
    offset = -1
    for _ in range(line - 1):
        offset = text.find("\n", offset + 1)
        if offset < 0:
            return len(text)
    return offset + 1


def parse_bytes(
    data: bytes, path: str = "<input>", fmt: str | None = None, options: dict[str, str] | None = None
) -> ParsedFile:
    """Decode and parse one file's bytes; every ParseError names `path`. `options`: see parse_text."""
    text, encoding = decode_input(data, path)
    return parse_decoded(text, encoding, path, fmt, options)


def decode_input(data: bytes, path: str = "<input>") -> tuple[str, str]:
    """A file's bytes as text with `\\n` line ends and the encoding they were read with; ParseError (naming `path`)
    for an empty or binary file. parse_bytes' first half: a caller that holds large bytes lets them go between."""
    check_input(data, path)
    return decode(data)


def check_input(data: bytes, path: str = "<input>") -> None:
    """ParseError (naming `path`) for an empty or binary file: what decode_input refuses before decoding."""
    if _NOT_BLANK.search(data) is None:
        raise ParseError("empty file: no result to read", line=1, path=path)
    if b"\x00" in data[:4096] and not _looks_textual(data):
        raise ParseError("binary file: not the text or JSON output of a benchmark tool", line=1, path=path)


# Searched, not stripped: strip copies a file's bytes when they end with a line end.
_NOT_BLANK = re.compile(rb"[^\x00 \t\r\n]")


def parse_decoded(
    text: str, encoding: str, path: str = "<input>", fmt: str | None = None, options: dict[str, str] | None = None
) -> ParsedFile:
    """Parse decode_input's text; every ParseError names `path`."""
    try:
        return parse_text(text, fmt, encoding, options)
    except ParseError as exc:
        raise exc.with_path(path) from None
    except RecursionError:
        raise ParseError("input nests too deeply to read", line=1, path=path) from None


def _looks_textual(data: bytes) -> bool:
    """UTF-16 text has NULs too; decoded, it should be mostly printable."""
    text, _ = decode(data[:4096])
    printable = sum(map(str.isprintable, text)) + text.count("\n") + text.count("\t")
    return bool(text) and printable > 0.9 * len(text)
