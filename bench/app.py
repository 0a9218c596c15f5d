"""The app as a user meets it: Store → chart, in Debian's chromium (Playwright) against a running `kneepoint app`.

    app.fio     one fio JSON file (sample_data/fio/randread-4k-jobs1.json, made a new file every run)
    app.sqlio   a 200-run SQLIO batch log (5 workloads x threads 1-16 x queue depth 1-128, a new disk each run)

Each run is one worker process: it copies the sample warehouse as `./dev app` leaves it on a fresh machine (the
sample loaded, the project parsed and its manifest kept in dbt's target folder) and starts `kneepoint app` on it.
As a user comes, the browser opens the app (Curves, the landing page, draws the sample's chart), goes to Upload,
chooses the file, types a new disk label once the preview shows; the clock starts as Store is pressed and
stops when the Curves page (the "See the curves" link pressed as soon as it shows) has drawn the chart of the new
disk. Reported: store_s (Store → "Added ..."), chart_s (link → chart drawn) and store_to_chart_s (both, the
target). Starting the server and the browser is not counted; the app's first build is (the app loads dbt in the
background as it starts; a Store pressed before that ends waits for it).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench.harness import PROJECT_ROOT, Spec

CHROMIUM = os.environ.get("KNEEPOINT_CHROMIUM", "/usr/bin/chromium")
SAMPLE_FIO = PROJECT_ROOT / "sample_data" / "fio" / "randread-4k-jobs1.json"
STORE_BUTTON = re.compile(r"^Store \d+ files? and rebuild")


def available() -> str:
    """Why the stage cannot run here, or '' when it can."""
    if not Path(CHROMIUM).exists():
        return f"app stage skipped: no chromium at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "app stage skipped: the playwright package is not installed (./dev setup installs it)"
    return ""


def chains(out_dir: Path) -> list[list[Spec]]:
    # Each run stores into its own copy of the sample folder: the warehouse and dbt's target folder beside it.
    common = {"sample": str(out_dir / "app-sample")}
    return [
        [
            Spec("app.prepare", "app_prepare", common, runs=1, warmup=0),
            Spec("app.fio", "app_store_chart", {**common, "kind": "fio"}),
            Spec("app.sqlio", "app_store_chart", {**common, "kind": "sqlio"}),
        ]
    ]


# --------------------------------------------------------------------------------------------- worker jobs


def job_prepare(args: dict[str, Any]) -> dict[str, Any]:
    """The sample warehouse, as `./dev app` makes it on a fresh machine."""
    from kneepoint.app.sample import load_sample_if_empty

    folder = Path(args["sample"])
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    db = folder / "warehouse.duckdb"
    os.environ["KNEEPOINT_DBT_TARGET"] = str(folder / "dbt-target")
    t0 = time.perf_counter()
    load_sample_if_empty(db)
    return {"stages": {"prepare_s": time.perf_counter() - t0}}


def job_store_chart(args: dict[str, Any]) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="kp-bench-app-") as scratch:
        work = Path(scratch) / "sample"
        shutil.copytree(args["sample"], work)
        db = work / "warehouse.duckdb"
        disk = f"bench app {time.time_ns()}"
        path = _new_file(args["kind"], work, disk)
        file_bytes = path.stat().st_size
        server, url = _start_app(db, work, str(work / "dbt-target"))
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                # As a user comes: the app opens on Curves (the sample's chart drawn), then Upload.
                page.goto(url)
                page.locator(".js-plotly-plot").first.wait_for(timeout=120_000)
                page.get_by_role("link", name="Upload").first.click()
                page.get_by_role("heading", name="Upload").first.wait_for()
                page.set_input_files("input[type=file]", str(path))
                # As a user does: the label typed once the preview shows (typed while the upload's rerun was
                # still drawing the page, the text was sometimes lost), and in before Store is pressed.
                store = page.get_by_role("button", name=STORE_BUTTON)
                store.wait_for(timeout=120_000)
                _app_idle(page)
                label = page.get_by_role("textbox", name="Disk label (required)")
                label.fill(disk)
                label.press("Enter")
                _app_idle(page)
                if label.input_value() != disk:
                    raise RuntimeError(f"the disk label did not take: {label.input_value()!r}")
                t0 = time.perf_counter()
                store.click()
                link = page.get_by_role("link", name=re.compile("^See the curves of"))
                link.wait_for(timeout=300_000)
                t1 = time.perf_counter()
                link.click()
                # The chart of the new disk: a plotly figure whose legend names it.
                page.locator(".js-plotly-plot .legend", has_text=disk[:20]).first.wait_for(timeout=120_000)
                t2 = time.perf_counter()
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)
    return {
        "kind": args["kind"],
        "file_bytes": file_bytes,
        "stages": {"store_s": t1 - t0, "chart_s": t2 - t1, "store_to_chart_s": t2 - t0},
    }


def _app_idle(page: Any, timeout_ms: int = 120_000) -> None:
    """Until the app runs no script: a rerun has time to begin, then Streamlit's running indicator is gone."""
    page.wait_for_timeout(300)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout_ms, polling=100
    )


def _new_file(kind: str, folder: Path, name: str) -> Path:
    if kind == "fio":
        from bench.changes import new_fio_file

        return new_fio_file(SAMPLE_FIO, folder / "randread-4k.json", name.replace(" ", "-"))
    path = folder / "sqlio-batch.txt"
    path.write_text(sqlio_batch_log(note=name), newline="")
    return path


def sqlio_batch_log(note: str = "", runs_per_workload: int = 40) -> str:
    """A SQLIO batch log of 200 runs: 5 workloads (64 KiB random/sequential read/write, 8 KiB random read) x
    threads 1, 2, 4, 8, 16 x queue depth 1-128, on the sample's modelled P10 disk."""
    from kneepoint.ingest.synth import sqlio
    from kneepoint.ingest.synth.disk_model import DiskModel, sweep

    disk = DiskModel("bench P10 (modelled)", service_time_ms=5.0, sigma=0.05, kappa=0.0006, max_bytes_per_s=100e6)
    workloads = [(64, "random", "read"), (64, "random", "write"), (64, "sequential", "read")]
    workloads += [(64, "sequential", "write"), (8, "random", "read")]
    records = []
    for seed, (block_kib, pattern, operation) in enumerate(workloads, start=1):
        records += sweep(
            disk,
            "sqlio",
            pattern=pattern,
            operation=operation,
            block_size_bytes=block_kib * 1024,
            threads=(1, 2, 4, 8, 16),
            seed=seed,
            tool_version=sqlio.VERSION,
            target="E:\\testfile.dat",
        )[:runs_per_workload]
    return sqlio.write(records, notes=["", f"C:\\SQLIO>REM {note}"], newline="\r\n")


def _start_app(db: Path, work: Path, dbt_target: str) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, KNEEPOINT_DB=str(db), KNEEPOINT_DBT_TARGET=dbt_target)
    log = open(work / "app.log", "wb")  # noqa: SIM115 - the server writes to it until it stops
    proc = subprocess.Popen(
        [sys.executable, "-m", "kneepoint.app.cli", "app", "--port", str(port)], env=env, stdout=log, stderr=log
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("app did not start:\n" + (work / "app.log").read_text(errors="replace")[-3000:])
        time.sleep(0.3)


# --------------------------------------------------------------------------------------------- summary


def summarize(m: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for kind in ("fio", "sqlio"):
        g = m.get(f"app.{kind}")
        if g:
            st = g["median"]["stages"]
            out[kind] = {k: round(st[k], 2) for k in ("store_s", "chart_s", "store_to_chart_s")}
            out[kind]["runs"] = g["runs_counted"]
    return out


def targets(app: dict[str, Any], add: Any) -> None:
    """Issue 16's: Store → chart drawn for one fio file <= 3 s, for a 200-run SQLIO batch log <= 4 s."""
    for kind, what, limit in (("fio", "one fio JSON file", 3), ("sqlio", "a 200-run SQLIO batch log", 4)):
        if kind in app:
            seconds = app[kind]["store_to_chart_s"]
            add(f"in the app, Store → chart drawn for {what}", f"<= {limit} s", f"{seconds} s", seconds <= limit)
