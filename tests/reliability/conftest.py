"""Shared fixtures of the reliability tests. The browser ones are tests/browser's (a real `kneepoint app` server,
Debian's chromium); the long variants run with KNEEPOINT_LONG=1."""

from __future__ import annotations

import os
import sys

from tests.browser.conftest import app_server, browser, page  # noqa: F401 - fixtures shared with tests/browser

LONG = os.environ.get("KNEEPOINT_LONG") == "1"
KNEEPOINT = [sys.executable, "-m", "app.cli"]


def size(short: int, long: int) -> int:
    """A test's budget: `short` in CI, `long` with KNEEPOINT_LONG=1."""
    return long if LONG else short
