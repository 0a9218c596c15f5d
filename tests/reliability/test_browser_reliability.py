"""Reliability and security against a real `kneepoint app` server, in Debian's chromium: the server's own defences
(loopback only, XSRF protection on, a 500 MB upload refused), four sessions uploading at once, the command line
ingesting while the app is open (each side waits and succeeds, or says "warehouse busy"; nothing lost), and
labels and file names made of HTML, JS, SQL and Markdown shown as text on every page and in the report."""

from __future__ import annotations

import asyncio
import http.client
import re
import shutil
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote_plus, urlencode, urlsplit

import pytest

from kneepoint.app import queries
from kneepoint.ingest.warehouse import connect, list_files
from tests.browsing import CHROMIUM, CHROMIUM_ARGS, screenshot
from tests.helpers import SAMPLE
from tests.reliability.conftest import AppServer, start_ingest
from tests.reliability.inputs import (
    HTML_PAYLOAD,
    expected_by_file_id,
    hostile_file_names,
    hostile_labels,
    variant,
    write_batch,
)
from tests.reliability.test_crash_safety import rows_per_file

pytestmark = pytest.mark.browser

STORE_BUTTON = re.compile(r"^Store \d+ files? and rebuild")
ADDED = re.compile(r"Added [\d,]+ runs? for disk")
BUSY = re.compile(r"warehouse busy: .* is held by process \d+ ")
# One file per session, each a different tool's output (distinct bytes from any other test's copies).
SESSION_FILES = [
    SAMPLE / "sqlio" / "synthetic-p10-sweep.txt",
    SAMPLE / "diskspd" / "synthetic-ss-stripe-sweep.txt",
    SAMPLE / "crystaldiskmark" / "synthetic-nvme-cdm8.txt",
    SAMPLE / "fio" / "randread-4k-jobs2.json",
]


def listening(port: int) -> list[str]:
    """Local address (hex, as /proc/net/tcp* write it) of every socket listening on `port`, IPv4 and IPv6."""
    out = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, port_hex = fields[1].rsplit(":", 1)
            if int(port_hex, 16) == port and fields[3] == "0A":  # 0A: LISTEN
                out.append(address)
    return out


def peak_rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status)[1]) / 1024


def wait_idle(page, timeout_ms: int = 180_000) -> None:
    page.wait_for_selector("[data-testid='stApp']", timeout=timeout_ms)
    page.wait_for_timeout(300)  # let a rerun begin: nothing on the page tells 'not begun' from 'done'
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout_ms, polling=200
    )


def wait_stable(page, quiet_ms: int = 1000, timeout_s: float = 60) -> None:
    """Until the page's main section has stopped changing for `quiet_ms` (Streamlit draws a page in pieces)."""
    size = "() => document.querySelector('[data-testid=\"stMain\"]')?.innerHTML.length ?? 0"
    deadline = time.monotonic() + timeout_s
    last, since = page.evaluate(size), time.monotonic()
    while time.monotonic() < deadline:
        page.wait_for_timeout(200)
        now = page.evaluate(size)
        if now != last:
            last, since = now, time.monotonic()
        elif (time.monotonic() - since) * 1000 >= quiet_ms:
            return
    raise AssertionError("the page kept changing")


def prepare_upload(page, url: str, path: Path, disk: str) -> None:
    """The upload page with `path` chosen and the disk label typed: one click from storing."""
    page.goto(url + "/upload")
    wait_idle(page)
    page.set_input_files("input[type=file]", str(path))
    page.get_by_role("button", name=STORE_BUTTON).wait_for(timeout=180_000)
    label = page.get_by_role("textbox", name="Disk label (required)")
    label.fill(disk)
    label.press("Enter")
    wait_idle(page)


# --- the server's own defences -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def plain_app(tmp_path_factory, browser):
    """One server, on a new warehouse, for the tests that store nothing."""
    tmp = tmp_path_factory.mktemp("plain-app")
    server = AppServer(tmp / "w.duckdb", tmp / "app.log", {})
    yield server
    server.stop()


def test_the_app_listens_on_loopback_only(plain_app):
    assert listening(plain_app.port) == ["0100007F"]  # 127.0.0.1; not 0.0.0.0, not ::


def test_xsrf_protection_refuses_an_upload_without_the_token(plain_app):
    for headers in ({}, {"X-Xsrftoken": "forged", "Cookie": "_streamlit_xsrf=forged"}):
        request = urllib.request.Request(
            f"{plain_app.url}/_stcore/upload_file/any-session/any-file", data=b"x", method="PUT", headers=headers
        )
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(request, timeout=30)
        assert err.value.code == 403 and b"XSRF" in err.value.read()


def test_a_500_mb_upload_is_refused_before_it_is_read(page, plain_app, tmp_path):
    huge = tmp_path / "huge-result.txt"
    with open(huge, "wb") as fh:
        fh.truncate(500 * 1024 * 1024)  # sparse: 500 MB to whoever reads it, no disk used
    small = tmp_path / "sqlio.txt"
    small.write_bytes(variant((SAMPLE / "sqlio" / "synthetic-p10-sweep.txt").read_bytes(), 7))

    page.goto(plain_app.url + "/upload")
    wait_idle(page)
    # A small upload first: its request shows the session's upload URL and XSRF token, for the replay below.
    uploads: list = []
    page.on("request", lambda r: uploads.append(r) if "/_stcore/upload_file/" in r.url else None)
    page.set_input_files("input[type=file]", str(small))
    page.get_by_role("button", name=STORE_BUTTON).wait_for(timeout=120_000)
    before_mb = peak_rss_mb(plain_app.pid)

    # In the browser: the uploader refuses it by size and says so; nothing reaches the server.
    page.set_input_files("input[type=file]", str(huge))
    page.get_by_text(re.compile(r"File must be .*or smaller")).first.wait_for(timeout=60_000)

    # A client that ignores the page and sends it anyway: refused on its Content-Length, before the body.
    (request,) = uploads[:1]
    target = urlsplit(request.url)
    headers = request.all_headers()
    cookies = page.context.cookies(plain_app.url)
    conn = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
    conn.putrequest("PUT", target.path)
    conn.putheader("Content-Type", "multipart/form-data; boundary=x")
    conn.putheader("Content-Length", str(500 * 1024 * 1024))
    conn.putheader("X-Xsrftoken", headers.get("x-xsrftoken", ""))
    conn.putheader("Cookie", "; ".join(f"{c['name']}={c['value']}" for c in cookies))
    conn.endheaders()
    conn.send(b"--x\r\n")
    response = conn.getresponse()
    assert response.status == 413, (response.status, response.read()[:200])
    conn.close()
    assert peak_rss_mb(plain_app.pid) < before_mb + 100


# --- four sessions at once -----------------------------------------------------------------------------------


async def _prepare_session(browser, url: str, path: Path, disk: str):
    ctx = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await ctx.new_page()
    await page.goto(url + "/upload")
    await page.wait_for_selector("[data-testid='stApp']", timeout=180_000)
    await page.set_input_files("input[type=file]", str(path))
    await page.get_by_role("button", name=STORE_BUTTON).wait_for(timeout=120_000)
    label = page.get_by_role("textbox", name="Disk label (required)")
    await label.fill(disk)
    await label.press("Enter")
    await page.wait_for_timeout(300)  # let a rerun begin: nothing on the page tells 'not begun' from 'done'
    await page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=180_000, polling=200
    )
    return ctx, page


async def _four_sessions(url: str, paths: list[Path], disks: list[str]) -> list[str]:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            sessions = await asyncio.gather(
                *(_prepare_session(browser, url, p, d) for p, d in zip(paths, disks, strict=True))
            )
            # Every session is ready: all four press Store at the same moment.
            await asyncio.gather(*(page.get_by_role("button", name=STORE_BUTTON).click() for _, page in sessions))
            await asyncio.gather(*(page.get_by_text(ADDED).first.wait_for(timeout=300_000) for _, page in sessions))
            texts = [await page.get_by_text(ADDED).first.inner_text() for _, page in sessions]
            for ctx, _ in sessions:
                await ctx.close()
            return texts
        finally:
            await browser.close()


def test_four_browser_sessions_uploading_at_once_all_land(start_app, browser, tmp_path):
    # An existing warehouse, as the app's first start leaves it (it loads the sample data): four pages opening a
    # new one at once hit the schema race that test_concurrency.py's xfail describes.
    db = tmp_path / "w.duckdb"
    connect(db).close()
    app = start_app(db)
    paths = []
    for i, src in enumerate(SESSION_FILES):
        path = tmp_path / f"session{i}-{src.name}"
        path.write_bytes(variant(src.read_bytes(), 40 + i))
        paths.append(path)
    # One session's label is made of payloads: the success message shows it as text.
    disks = [f"concurrent disk {i}" for i in range(len(paths) - 1)] + [hostile_labels("sessions")["disk"]]
    # Playwright's async API on its own thread (the sync `browser` fixture owns this one's event loop).
    texts: list[str] = []
    runner = threading.Thread(target=lambda: texts.extend(asyncio.run(_four_sessions(app.url, paths, disks))))
    runner.start()
    runner.join(timeout=600)
    assert len(texts) == len(paths), "the four sessions did not finish (see the output above)"
    for disk, text in zip(disks, texts, strict=True):
        assert f"for disk {as_streamlit_shows(disk)} from 1 file." in text, text

    stored, contents, hashes = rows_per_file(app.db)
    assert stored == expected_by_file_id(paths)  # each upload whole, nothing else
    assert contents == len(stored) and all(a == b for a, b in hashes)
    con = connect(app.db, read_only=True)
    try:
        by_disk = {f["disk"]: f["name"] for f in list_files(con)}
        in_marts = con.execute("SELECT count(*) FROM dim_files").fetchall()[0][0]
    finally:
        con.close()
    assert by_disk == {d: p.name for d, p in zip(disks, paths, strict=True)}
    assert in_marts == len(paths)  # the last build saw all four


# --- the command line while the app is open ------------------------------------------------------------------


def test_cli_and_app_take_turns_and_say_when_the_warehouse_is_busy(page, browser, start_app, tmp_path):
    """The app's connections wait 1 s. While a CLI ingest holds the warehouse (from its first file to the end of
    its build), a page that reads says "warehouse busy", and Store says so too, without a traceback and keeping
    the files and label; once the CLI is done, Store again goes through. While the app stores and builds, a CLI
    that may wait 1 s says "warehouse busy" naming the app's process, and one that may wait longer waits and
    lands after it. Every file of every side ends up stored, whole, once."""
    # Its own dbt target folder: no change build recorded there (ingest/replay.py), so the app's builds run dbt and
    # hold the warehouse for seconds, long enough for a CLI to find it busy.
    app = start_app(KNEEPOINT_LOCK_WAIT_S="1", KNEEPOINT_DBT_TARGET=str(tmp_path / "app-dbt-target"))
    cli_batch = write_batch(tmp_path / "cli", 14)
    late_batch = write_batch(tmp_path / "late", 3)
    for p in late_batch:
        p.write_bytes(variant(p.read_bytes(), 77))
    upload = tmp_path / "app-upload-sqlio.txt"
    upload.write_bytes(variant((SAMPLE / "sqlio" / "synthetic-p10-sweep.txt").read_bytes(), 60))
    prepare_upload(page, app.url, upload, "app disk")

    # 1. The CLI holds the warehouse. Its own dbt target folder too: no recorded first build (ingest/replay.py).
    holder = start_ingest(
        app.db, tmp_path / "cli", "cli disk", 900, env={"KNEEPOINT_DBT_TARGET": str(tmp_path / "cli-dbt-target")}
    )
    assert holder.stdout is not None
    first = holder.stdout.readline()
    assert first.startswith("added"), first + (holder.stderr.read() if holder.stderr else "")
    reader = browser.new_page()
    reader.goto(app.url + "/data")
    reader.get_by_text(re.compile(rf"warehouse busy: .* held by process {holder.pid} ")).first.wait_for(timeout=60_000)
    assert reader.locator("[data-testid='stException']").count() == 0  # a message, not a traceback
    page.get_by_role("button", name=STORE_BUTTON).click()
    busy = page.get_by_text(re.compile(rf"warehouse busy: .* held by process {holder.pid} "))
    busy.first.wait_for(timeout=120_000)
    wait_idle(page)
    assert holder.poll() is None, "the CLI had finished: the message did not come while it held the warehouse"
    assert page.locator("[data-testid='stException']").count() == 0  # a message, not a traceback
    assert page.get_by_text("Nothing was stored. The files and labels stay here").count() == 1
    screenshot(page, "reliability-warehouse-busy")
    out, err = holder.communicate(timeout=1800)
    assert holder.returncode == 0, err
    assert "14 file(s) added" in out and "models up to date" in out

    # 2. The app holds the warehouse: Store again, with the files and label still there.
    assert page.get_by_role("textbox", name="Disk label (required)").input_value() == "app disk"
    page.get_by_role("button", name=STORE_BUTTON).click()
    page.get_by_text("Files stored; building the models…").first.wait_for(timeout=300_000)
    refused = start_ingest(app.db, tmp_path / "late", "late disk", 1)
    waiting = start_ingest(app.db, tmp_path / "late", "late disk", 900, "--no-build")
    out, err = refused.communicate(timeout=600)
    assert refused.returncode == 1 and out == "", out + err
    assert err.splitlines()[-1].startswith(f"kneepoint: warehouse busy: {app.db} is held by process {app.pid} ("), err
    page.get_by_text(ADDED).first.wait_for(timeout=900_000)
    assert "for disk app disk from 1 file." in page.get_by_text(ADDED).first.inner_text()
    out, err = waiting.communicate(timeout=1800)
    assert waiting.returncode == 0 and "3 file(s) added" in out, err

    # 3. The page that said busy reads again; every file of every side is there, whole.
    reader.goto(app.url + f"/?disk={quote_plus('cli disk')}")
    wait_idle(reader)
    reader.wait_for_selector(".js-plotly-plot .legend", timeout=120_000)
    assert "cli disk" in reader.locator(".js-plotly-plot .legend").first.text_content()
    reader.close()
    assert rows_per_file(app.db)[0] == expected_by_file_id([*cli_batch, upload, *late_batch])


# --- injection -----------------------------------------------------------------------------------------------

# Set by any payload that runs (inputs.py); a dialog would be a payload too.
XSS_PROBE = "() => window.__kp_xss === undefined"


def _assert_inert(page, where: str, dialogs: list[str]) -> None:
    assert page.evaluate(XSS_PROBE), f"{where}: a payload ran (window.__kp_xss = {page.evaluate('window.__kp_xss')})"
    assert not dialogs, f"{where}: {dialogs}"
    assert page.locator("[data-testid='stException']").count() == 0, where


def test_hostile_labels_and_names_are_text_on_every_page_and_in_the_report(page, start_app, injected, tmp_path):
    """The injection warehouse (conftest.py `injected`: payload labels, tags, notes and file names, stored through
    the CLI and the upload path) in the app: no payload runs on any page that shows them, nor in the exported
    report opened from disk; the upload page shows hostile file names as text."""
    db = tmp_path / "w.duckdb"
    shutil.copy(injected["db"], db)
    labels = injected["cli_labels"]
    key = queries.disk_key(labels["disk"], labels["host"])
    app = start_app(db)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

    # Every page that shows a label, a file name or a note; the Curves page on a series with a saturation point,
    # whose sentence names the disk.
    saturated = queries.saturation_overview([key], db).row(0, named=True)
    series = urlencode(
        {
            "disk": key,
            "pattern": saturated["pattern"],
            "op": f"{saturated['operation']}:{saturated['read_pct']:g}",
            "bs": saturated["block_size_bytes"],
            "dir": saturated["direction"],
        }
    )
    # a file stored with the CLI's hostile labels: the Stored files page shows its notes once it is chosen
    stored = queries.stored_files(db)
    first_file = stored.filter(stored["notes"] == labels["notes"])["file_id"][0]
    visits = {
        "curves": (f"/?{series}", ".js-plotly-plot .legend"),
        "compare": (f"/compare?disk={quote_plus(key)}", None),
        "share": (f"/share?disk={quote_plus(key)}", None),
        "data": ("/data", "[data-testid='stDataFrame']"),
        # the Stored files page chooses no file by itself (a delete never leaves the next one preselected)
        "data relabel": (f"/data?action=Relabel&file={first_file}", "[data-testid='stForm']"),
        "data delete": (f"/data?action=Delete&file={first_file}", "[data-testid='stCheckbox']"),
    }
    # The payload's <img> drawn as an element (a label read as HTML), page by page.
    markup: dict[str, int] = {}
    for where, (path, last) in visits.items():
        page.goto(app.url + path)
        wait_idle(page)
        if last:
            page.wait_for_selector(last, timeout=120_000)
        wait_stable(page)
        _assert_inert(page, where, dialogs)
        markup[where] = page.locator("[data-testid='stMain'] img[src='x']").count()
    page.goto(app.url + f"/?{series}")
    wait_idle(page)
    page.wait_for_selector(".js-plotly-plot .legend", timeout=120_000)
    assert HTML_PAYLOAD in page.locator(".js-plotly-plot .legend").first.text_content()  # as text
    screenshot(page, "reliability-hostile-curves")
    page.goto(app.url + f"/data?file={first_file}")
    wait_idle(page)
    page.get_by_text(as_streamlit_shows(labels["notes"].splitlines()[0])).first.wait_for(timeout=60_000)

    # The upload page: hostile names, one unreadable, previewed (storing them is test_injection.py's).
    up = tmp_path / "up"
    up.mkdir()
    bad = up / hostile_file_names()[1]
    bad.write_bytes(b"no result here\n")
    good = up / hostile_file_names()[3]
    good.write_bytes(variant((SAMPLE / "sqlio" / "synthetic-p10-sweep.txt").read_bytes(), 450))
    page.goto(app.url + "/upload")
    wait_idle(page)
    page.set_input_files("input[type=file]", [str(bad), str(good)])
    sent_name = bad.name.replace('"', "%22")  # Chromium sends a `"` in a file name as %22
    page.get_by_text(f"{sent_name}:1: no recognizable result").first.wait_for(timeout=120_000)
    page.get_by_role("button", name=STORE_BUTTON).wait_for(timeout=120_000)
    _assert_inert(page, "upload preview", dialogs)
    markup["upload preview"] = page.locator("[data-testid='stMain'] img[src='x']").count()
    screenshot(page, "reliability-hostile-upload")

    # The exported report, opened from disk as a reader would.
    page.goto(injected["report"].as_uri())
    page.wait_for_selector("body[data-charts-done]", timeout=180_000)  # the report's script drew every chart
    _assert_inert(page, "report", dialogs)
    assert labels["disk"] in page.locator("body").inner_text()
    assert page.locator("img[src='x']").count() == 0
    # No page draws a label's HTML (the Curves page's sentences allow HTML for their swatch: labels are escaped).
    assert not any(markup.values()), (markup, CURVES_MARKUP)


# Streamlit's typography on Markdown text (its frontend's list, in the order it applies them).
_STREAMLIT_SIGNS = (("<->", "\u2194"), ("->", "\u2192"), ("<-", "\u2190"), ("--", "\u2014"), (">=", "\u2265"),
                    ("<=", "\u2264"), ("~=", "\u2248"))  # fmt: skip


def as_streamlit_shows(text: str) -> str:
    """Streamlit draws ` -- ` as a dash and ` -> `, ` <= `... as arrows and signs in any Markdown text, escaped or
    not (typography, not markup): what a label looks like on the page."""
    for plain, drawn in _STREAMLIT_SIGNS:
        text = re.sub(rf"(^|\s){re.escape(plain)}(\s|$)", rf"\g<1>{drawn}\g<2>", text)
    return text


CURVES_MARKUP = (
    "app/web/views/curves.py writes each disk's saturation sentence with st.markdown(..., unsafe_allow_html=True) and "
    "the disk label unescaped: a label's HTML becomes elements (Streamlit strips event handlers, so no script "
    "runs). Fix in the reliability report: html.escape() the label (and the notes) inside that Markdown."
)
