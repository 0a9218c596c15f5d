"""Shared test helpers: where the project and the shared corpus are, and how to get at them."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data"


def _corpus_path() -> Path:
    return Path(os.environ.get("KNEEPOINT_CORPUS") or ROOT.parent / "shared" / "corpus")


def corpus_names(folder: str, pattern: str) -> list:
    """The names of a corpus folder's files matching `pattern`, for a parametrize (read while pytest collects, where
    corpus_dir() cannot skip). Without the corpus one case, None, whose corpus_file() call skips or fails."""
    path = _corpus_path() / folder
    if not path.is_dir():
        return [pytest.param(None, id="no-corpus")]
    return sorted(p.name for p in path.glob(pattern))


def corpus_dir() -> Path:
    """../shared/corpus beside the checkout (or $KNEEPOINT_CORPUS). Absent: skip, or fail under CI's
    KNEEPOINT_REQUIRE_CORPUS=1."""
    path = _corpus_path()
    if not path.is_dir():
        reason = f"real-world corpus not found at {path} (it lives in ../shared/corpus beside the checkout)"
        if os.environ.get("KNEEPOINT_REQUIRE_CORPUS") == "1":
            pytest.fail(reason + "; KNEEPOINT_REQUIRE_CORPUS=1 makes that a failure")
        pytest.skip(reason)
    return path


def corpus_file(*parts: str) -> Path:
    path = corpus_dir().joinpath(*parts)
    assert path.is_file(), f"corpus file missing: {path}"
    return path


@contextmanager
def hang_guard(seconds: float, what: str) -> Iterator[None]:
    """Fail (TimeoutError) when the block has not returned after `seconds`: a bound on a hang, not a timing. Main
    thread only (SIGALRM)."""

    def on_alarm(_signum: int, _frame: object) -> None:
        raise TimeoutError(f"{what}: still running after {seconds:g} s (a hang)")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def rows(con, sql: str, params: list | None = None) -> list[dict]:
    """A query's rows as dicts by column name (a DuckDB connection)."""
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
