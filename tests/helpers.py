"""Shared test helpers: where the project and the shared corpus are, and how to get at them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data"


def corpus_dir() -> Path:
    """../shared/corpus beside the checkout (or $KNEEPOINT_CORPUS). Absent: skip, or fail under CI's
    KNEEPOINT_REQUIRE_CORPUS=1."""
    path = Path(os.environ.get("KNEEPOINT_CORPUS") or ROOT.parent / "shared" / "corpus")
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
