"""The suite's own rules, checked on small pytest runs of their own (a second or two each):

- the browser tests (tests/browser) fail in CI when chromium is missing, and skip, saying why, elsewhere: every one
  of them goes through the `browser` fixture (tests/browsing.py), none skips on its own. Run on a chromium path
  that does not exist, so no browser starts;
- a test that leaves the environment or the current folder changed fails (tests/conftest.py
  environment_left_as_found), and the next test does not inherit the change."""

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


LEAKS = """
import os


def test_leaks_the_warehouse():
    os.environ["KNEEPOINT_DB"] = "/nowhere/stale.duckdb"


def test_runs_after_the_leak():
    assert "KNEEPOINT_DB" not in os.environ


def test_moves_to_another_folder(tmp_path):
    os.chdir(tmp_path)


def test_changes_both_through_monkeypatch(monkeypatch, tmp_path):
    monkeypatch.setenv("KNEEPOINT_DB", str(tmp_path / "w.duckdb"))
    monkeypatch.chdir(tmp_path)
"""


def test_a_test_that_leaks_the_environment_or_the_folder_fails(tmp_path):
    (tmp_path / "test_leaks.py").write_text(LEAKS, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest", "-rA", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k != "KNEEPOINT_DB"},
        timeout=300,
    )
    out = done.stdout
    assert "ERROR at teardown of test_leaks_the_warehouse" in out, out[-3000:]
    assert "environment left changed: ['KNEEPOINT_DB']" in out
    assert "ERROR at teardown of test_moves_to_another_folder" in out
    assert "current folder left changed: " in out
    assert re.search(r"\b4 passed, 2 errors in ", out), out[-3000:]
