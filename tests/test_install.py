"""kneepoint installs as a package: the wheel built from this checkout, installed into a new virtual environment
outside the checkout, gives a `kneepoint` command that ingests, builds, answers `saturation` and writes a report
on a new warehouse; and it puts one import name, `kneepoint`, into site-packages (no `app`, no `ingest`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, SAMPLE


def _uv() -> str:
    found = shutil.which("uv") or (
        str(ROOT / ".tools" / "bin" / "uv") if (ROOT / ".tools" / "bin" / "uv").exists() else None
    )
    if found is None:
        reason = "uv not found (./dev setup puts it in .tools/)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return found


@pytest.mark.timeout(900)
def test_the_wheel_installs_and_runs_outside_the_checkout(tmp_path: Path) -> None:
    uv = _uv()
    dist = tmp_path / "dist"
    # Through the sdist, as a release is built: the wheel comes from an unpacked sdist in a clean directory, so a
    # stale setuptools build/ folder in the checkout can never put old modules into it.
    subprocess.run([uv, "build", "-o", str(dist), "-q", str(ROOT)], check=True, cwd=ROOT, timeout=300)
    (wheel,) = dist.glob("kneepoint-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(venv)], check=True, timeout=120)
    subprocess.run(
        [uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), str(wheel)], check=True, timeout=600
    )
    site = next((venv / "lib").glob("python3.*/site-packages"))
    ours = {p.name for p in site.iterdir() if p.name in ("app", "ingest", "kneepoint", "models", "macros", "tests")}
    assert ours == {"kneepoint"}, ours

    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KNEEPOINT_") and k != "PYTHONPATH"}
    env |= {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    kneepoint = str(venv / "bin" / "kneepoint")

    def run(*args: str) -> str:
        proc = subprocess.run([kneepoint, *args], capture_output=True, text=True, cwd=work, env=env, timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout

    files = [str(p) for p in sorted((SAMPLE / "fio").glob("randread-*.json"))]
    assert "3 file(s) added" in run("ingest", *files, "--disk", "installed")
    assert "installed" in run("saturation")
    assert "wrote" in run("report", "--out", "report.html")
    assert (work / "report.html").stat().st_size > 0 and (work / "warehouse.duckdb").exists()
    assert "every dbt test passed" in run("build")
