"""The browser tests (tests/browser) fail in CI when chromium is missing, and skip, saying why, elsewhere: every one
of them goes through the `browser` fixture (tests/browsing.py), none skips on its own. Run on a chromium path that
does not exist, so no browser starts (a second of pytest per run)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.helpers import ROOT

BROWSER_TESTS = "tests/browser"


def _run_without_chromium(ci: str) -> str:
    env = {**os.environ, "KNEEPOINT_CHROMIUM": str(ROOT / "no-such-chromium"), "CI": ci}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", BROWSER_TESTS],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    return done.stdout + done.stderr


def _collected() -> int:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only", BROWSER_TESTS],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    found = re.search(r"(\d+) tests? collected", done.stdout)
    assert found, done.stdout + done.stderr
    return int(found[1])


@pytest.fixture(scope="module")
def browser_tests() -> int:
    n = _collected()
    assert n > 5
    return n


def test_in_ci_every_browser_test_fails_without_chromium(browser_tests: int):
    out = _run_without_chromium("true")
    assert re.search(rf"\b{browser_tests} errors? in ", out), out[-3000:]
    assert "CI must run the browser tests" in out
    assert " passed" not in out and " skipped" not in out, out[-3000:]


def test_elsewhere_every_browser_test_skips_saying_why(browser_tests: int):
    out = _run_without_chromium("")
    assert re.search(rf"\b{browser_tests} skipped in ", out), out[-3000:]
    assert out.count("no chromium at ") >= 1
