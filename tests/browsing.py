"""A real app server and Debian's chromium driven by Playwright (fixtures, registered once in tests/conftest.py so that
every folder shares one browser: a second sync Playwright in one process fails). Screenshots go to test-artifacts/."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import ROOT

CHROMIUM = os.environ.get("KNEEPOINT_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        reason = f"no chromium at {CHROMIUM} (apt-get install chromium)"
        if os.environ.get("CI"):
            pytest.fail(reason + "; CI must run the browser tests")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def app_server(sample_warehouse, tmp_path) -> Iterator[str]:
    """`kneepoint app` on a free port against a private copy of the sample warehouse."""
    db = tmp_path / "warehouse.duckdb"
    shutil.copy(sample_warehouse, db)
    port = _free_port()
    env = dict(os.environ, KNEEPOINT_DB=str(db))
    log = open(tmp_path / "app.log", "w")  # noqa: SIM115 - outlives this block: the server writes to it
    proc = subprocess.Popen(
        [sys.executable, "-m", "kneepoint.app.cli", "app", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=log,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("app did not start:\n" + (tmp_path / "app.log").read_text())
        time.sleep(0.3)
    try:
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    p = ctx.new_page()
    yield p
    ctx.close()


def screenshot(page, name: str) -> Path:
    """The whole page: Streamlit scrolls inside its main section, so the viewport grows to fit it first."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    size = page.viewport_size
    height = page.evaluate(
        "() => { const m = document.querySelector('[data-testid=stMain]'); return m ? m.scrollHeight : 0 }"
    )
    page.set_viewport_size({"width": size["width"], "height": max(size["height"], min(height + 40, 12_000))})
    page.wait_for_timeout(800)  # plotly redraws at the new size
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(size)
    return path
