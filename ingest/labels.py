"""What users call their disks, hosts and files: labels are checked here, once, before anything is stored (by the
command line, the app and bundle import alike).

A label is a name, not a document: the models repeat a disk label on every result row, and one label of 130,000
characters made every later build run out of memory. Hence the limits; a label past one is refused with a clear
message and nothing is stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MAX_LABEL_CHARS = 200  # a disk, host or tag
MAX_NOTES_CHARS = 10_000


class LabelError(ValueError):
    """A label that cannot be stored (empty disk label, too long)."""


@dataclass(frozen=True, slots=True)
class Labels:
    disk: str
    host: str | None = None
    tags: tuple[str, ...] = ()
    notes: str | None = None


def check_labels(
    disk: str | None, host: str | None = None, tags: Sequence[str] = (), notes: str | None = None
) -> Labels:
    """The labels as stored (trimmed; an empty host is none), or LabelError saying which one is wrong."""
    if disk is None or not _text("disk label", disk).strip():
        raise LabelError("a disk label is required (--disk LABEL), e.g. 'P10 premium SSD'")
    disk = disk.strip()
    _check_length("disk label", disk, MAX_LABEL_CHARS)
    host = _text("host label", host).strip() or None if host else None
    if host is not None:
        _check_length("host label", host, MAX_LABEL_CHARS)
    if isinstance(tags, str):
        raise LabelError("the tags are one text, not a list of tags")
    clean_tags = tuple(t.strip() for t in tags if t and _text("tag", t).strip())
    for tag in clean_tags:
        _check_length("tag", tag, MAX_LABEL_CHARS)
    if notes is not None:
        _check_length("notes", _text("notes", notes), MAX_NOTES_CHARS)
    return Labels(disk, host, clean_tags, notes)


def check_label(kind: str, value: str) -> str:
    """One label (a relabel's disk or host), trimmed."""
    value = value.strip()
    _check_length(kind, value, MAX_LABEL_CHARS)
    return value


def _text(kind: str, value: object) -> str:
    # A bundle's or another warehouse's columns may hold anything (a number where a label belongs).
    if not isinstance(value, str):
        raise LabelError(f"the {kind} is not text but {type(value).__name__} {str(value)[:40]!r}")
    return value


def _check_length(kind: str, value: str, limit: int) -> None:
    if len(value) > limit:
        raise LabelError(f"the {kind} is {len(value):,} characters long; the limit is {limit:,}")
