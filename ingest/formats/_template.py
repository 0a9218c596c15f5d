"""TOOL NAME's OUTPUT KIND (which versions), e.g. "mytool 1.x text output (`mytool --report`)".

A new format starts as a copy of this file under ingest/formats/<name>.py (the registry discovers every module whose
name does not start with `_`; this one is skipped). A new format is three files: this parser, its fixtures
(tests/fixtures/<name>/*.<ext> with the expected records beside each, see tests/parsers/test_golden.py) and its
behaviour tests (tests/parsers/test_<name>.py). Add its bench spec to bench/generate.py `SPECS` once a writer lands in
ingest/synth/<name>.py.

Input (a short real example, trimmed)::

    mytool 1.2
    read: 1234.5 IOPS, 4.8 MiB/s, 0.81 ms

Records (normalized; one per result line)::

    {"record": "io", "tool": "mytool", "tool_version": "1.2", "run_index": 0, "source_line": 2,
     "pattern": "random", "operation": "read", "read_pct": 100.0, "direction": "read", "iops": 1234.5,
     "throughput_bytes_per_s": 5033164.8, "latency_avg_ms": 0.81, "inferred": ["block_size_bytes"], ...}

Rules: what each field is read from, what is inferred (and listed in `inferred`), what is skipped, and which
ParseError a damaged input gets (reason and line). A damaged line that costs only itself is skipped with a warning
(`records.add_line_warning(warnings, line, what)`) and parse returns `records.ParsedRecords(records, warnings)`;
numbers as people paste them are read by `_common.read_number` (decimals) or `_common.read_grouped_int` (counts).
"""

from __future__ import annotations

import re

from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats._common import first_content_line
from kneepoint.ingest.records import IoRecord

NAME = "mytool"  # the --format name: the module's name
TITLE = "mytool text"  # its name for people (upload page, report)
TOOLS = ("mytool",)  # every `tool` value its IoRecords carry (dbt's accepted values come from these)
# Run-metadata keys holding a host or user name, as the last dotted part of the key in lower case
# (`system.computer_name` -> "computer_name"): anonymization replaces their values.
HOST_KEYS: frozenset[str] = frozenset()
USER_KEYS: frozenset[str] = frozenset()
# Run-metadata keys that are results (`read.iops`), not test conditions: the report leaves them out of a file's
# conditions. Prefixes end with a dot.
RESULT_KEY_PREFIXES: tuple[str, ...] = ()
RESULT_KEYS: tuple[str, ...] = ()

_VERSION = re.compile(r"^mytool (?P<version>\d+\.\d+)")
_RESULT = re.compile(r"^(?P<direction>read|write): (?P<iops>\d+(?:\.\d+)?) IOPS")


def detect(text: str) -> float:
    """Confidence 0..1 that `text` holds this format. Every file of unknown format passes through every detector:
    read a bounded head (a few 64 KiB) and look for the tool's own words before matching any line."""
    head = text[:65536]
    if "mytool" not in head:
        return 0.0
    return 0.9 if _RESULT.search(head) else 0.5


def parse(text: str) -> list[IoRecord]:
    """The records of `text`, in file order; ParseError(reason, line) when none can be read."""
    return _Reader().read(text)


class _Reader:
    """A line dispatcher: the state between lines (the run being read) lives here, one method per line kind."""

    def __init__(self) -> None:
        self.records: list[IoRecord] = []
        self.version: str | None = None

    def read(self, text: str) -> list[IoRecord]:
        for number, raw in enumerate(text.split("\n"), 1):
            line = raw.strip()
            if line:
                self.line(line, number)
        if not self.records:
            raise ParseError("no mytool result found", first_content_line(text))
        return self.records

    def line(self, line: str, number: int) -> None:
        if m := _VERSION.match(line):
            self.version = m["version"]
        elif m := _RESULT.match(line):
            self.records.append(
                IoRecord(  # keyword-built, only the fields the tool prints or the rules infer
                    tool="mytool",
                    tool_version=self.version,
                    run_index=len(self.records),
                    source_line=number,
                    pattern="random",
                    operation=m["direction"],  # type: ignore[arg-type]
                    read_pct=100.0 if m["direction"] == "read" else 0.0,
                    direction=m["direction"],  # type: ignore[arg-type]
                    block_size_bytes=None,
                    threads=None,
                    queue_depth=None,
                    iops=float(m["iops"]),
                    throughput=None,
                    inferred=["block_size_bytes"],
                )
            )


# Optional: a format whose whole text is one document (JSON, XML) may also define
#
#     def parse_document(text: str) -> list[IoRecord] | None:
#         """parse(text) when the text is exactly one document and nothing else, else None."""
#
# which the registry tries before running every detector (nothing of another tool can hide in such a text).
