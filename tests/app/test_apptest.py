"""Streamlit AppTest: every page renders on the sample warehouse, reads its state from the URL, and the upload,
relabel and delete flows change what the pages show."""

from __future__ import annotations

import html
import io
import json
import zipfile

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from kneepoint.app.web import uploads
from kneepoint.ingest.sources import Limits
from tests.helpers import ROOT, SAMPLE

APP = str(ROOT / "app" / "web" / "streamlit_app.py")
FIO_DISK = "sample vda (virtio, fio sweep) @ kneepoint-dev-vm"
P10_DISK = "synthetic P10 (modelled) @ synthetic-sql01"
STRIPE_DISK = "synthetic 4-disk Storage Spaces stripe (modelled) @ synthetic-sql01"


def new_app(page: str | None = None, **params: str | list[str]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in params.items():
        at.query_params[key] = value
    if page:
        at.switch_page(f"views/{page}.py")
    return at


def figures(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def annotations(fig: dict) -> list[str]:
    return [a.get("text", "") for a in fig["layout"].get("annotations", [])]


def markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def fresh_copy(path, name: str) -> tuple[str, bytes]:
    """A sample file with one byte of whitespace added: same results, but not the stored file's sha256."""
    return name, path.read_bytes().replace(b"\n", b"\n ", 1)


# -- curves ---------------------------------------------------------------------------------------------------


def test_curves_marks_the_saturation_point(warehouse):
    at = new_app().run()
    assert not at.exception
    assert at.multiselect[0].value == [FIO_DISK]
    # sample_data/fio/randread-4k-jobs1.json, job randread-4k-qd32 (1 job x iodepth 32): "iops" : 177525.118720
    # (line 2424) and lat_ns "mean" : 180070.443879 (line 2582); QD 64 adds 1.1 % (179,509 IOPS), within the
    # rule's 10 % tolerance, so 32 outstanding is the saturation point.
    sentence = "saturates at 32 outstanding: 177,525 IOPS, 0.18 ms mean (p99 0.208 ms)"
    assert sentence in markdown(at)
    # the rule, with its tolerance, where the point is shown
    assert any("no larger measured load delivers more than 10% more IOPS" in c.value for c in at.caption)
    figs = figures(at)
    assert len(figs) >= 5  # IOPS, throughput, mean and p99 latency, latency vs IOPS (+ heatmap, percentiles)
    iops = next(f for f in figs if f["layout"]["title"]["text"].startswith("IOPS vs outstanding"))
    # the same sentence above the chart (in its top margin, never over the data)
    assert any(sentence in a for a in annotations(iops))
    assert iops["layout"]["xaxis"]["type"] == "log"
    # hover names the source file and run, in plain numbers
    line = next(t for t in iops["data"] if t["name"] == FIO_DISK)
    assert any("randread-4k-jobs1.json, run " in h for h in line["hovertext"])
    assert any("177,525 IOPS" in h for h in line["hovertext"]) and not any("e+" in h for h in line["hovertext"])
    # every chart has HTML and CSV downloads
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels.count("HTML") == len(figs) and labels.count("CSV") == len(figs)


def test_curves_says_not_saturated(warehouse):
    # sample_data/fio/seqread-128k-*.json: the sequential sweep still gains at its largest load
    at = new_app(disk=FIO_DISK, pattern="sequential", op="read:100", bs="131072", dir="read").run()
    assert not at.exception
    assert "not saturated within the tested range (1–512 outstanding)" in markdown(at)
    iops = figures(at)[0]
    assert any("not saturated within the tested range" in a for a in annotations(iops))


def test_curves_state_comes_from_the_url(warehouse):
    at = new_app(
        disk=[P10_DISK, STRIPE_DISK],
        pattern="random",
        op="read:100",
        bs="8192",
        dir="read",
        mib="true",
        usl="true",
        lataxis="log",
    ).run()
    assert not at.exception
    assert at.multiselect[0].value == [P10_DISK, STRIPE_DISK]
    assert [s.value for s in at.selectbox[:4]] == ["random", "read:100", "8192", "read"]
    titles = [f["layout"]["title"]["text"] for f in figures(at)]
    assert "Throughput (MiB/s) vs outstanding I/O" in titles
    iops = figures(at)[0]
    assert {f"{P10_DISK}: USL model", f"{STRIPE_DISK}: USL model"} <= {t["name"] for t in iops["data"]}
    latency = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("Mean latency (ms) vs out"))
    assert latency["layout"]["yaxis"]["type"] == "log"


def test_curves_write_the_default_series_into_the_url(warehouse):
    # A default depends on the data; the URL names the series so a copied link keeps showing it.
    at = new_app(disk=FIO_DISK).run()
    assert {k: at.query_params[k] for k in ("pattern", "op", "bs", "dir")} == {
        "pattern": "random",
        "op": "read:100",
        "bs": "4096",
        "dir": "read",
    }


def test_curves_per_thread_view(warehouse):
    at = new_app(disk=P10_DISK, pattern="random", op="read:100", bs="8192", dir="read", threads="true").run()
    assert not at.exception
    titles = [f["layout"]["title"]["text"] for f in figures(at)]
    assert "IOPS vs queue depth per thread count" in titles
    per_thread = figures(at)[0]
    # sample_data/sqlio/synthetic-p10-sweep.txt sweeps 1, 2, 4 and 8 threads
    assert {t["name"] for t in per_thread["data"] if not t["name"].endswith("saturation")} >= {
        "1 thread",
        "2 threads",
        "4 threads",
        "8 threads",
    }
    assert any(t["type"] == "heatmap" for f in figures(at) for t in f["data"])


@pytest.mark.parametrize("page", [None, "compare", "sql", "production", "workloads"])
def test_pages_on_an_empty_warehouse(empty_db, page):
    at = new_app(page).run()
    assert not at.exception
    assert "The warehouse is empty" in at.info[0].value


# -- upload ---------------------------------------------------------------------------------------------------


def test_upload_previews_then_stores_and_links_to_the_curves(warehouse):
    at = new_app("upload").run()
    good = fresh_copy(SAMPLE / "fio" / "seqread-128k-jobs2.json", "my-run.json")
    at.file_uploader[0].set_value([good + ("application/json",), ("notes.txt", b"hello\n", "text/plain")]).run()
    assert not at.exception
    preview = at.dataframe[0].value
    assert preview["file"].tolist() == ["my-run.json", "notes.txt"]
    # the file's jobs are fio 3.33 (its "fio version" line), 8 jobs: iodepth 1..128
    assert preview["format"].tolist()[0] == "fio JSON"  # the registry's title, not the module id
    assert preview["tool version"].tolist()[0] == "3.33"
    assert preview["runs"].tolist()[0] == 8
    assert preview["status"].tolist() == ["ready", "error"]
    assert any(e.value.startswith("notes.txt:1:") for e in at.error)

    at.text_input(key="upload_disk").set_value("Premium P10").run()
    at.button[0].click().run()
    assert not at.exception
    # the bad file did not block the good one
    assert any("Added 8 runs for disk **Premium P10** from 1 file." in s.value for s in at.success)
    link = at.get("page_link")[0].proto
    assert link.label == "See the curves of Premium P10"
    assert "disk=Premium+P10" in link.query_string or "disk=Premium%20P10" in link.query_string

    at = new_app(disk="Premium P10").run()
    assert "Premium P10" in at.multiselect[0].options
    assert not at.exception
    assert any(t["name"] == "Premium P10" for f in figures(at) for t in f["data"])


def test_upload_of_stored_bytes_says_where_they_are(warehouse):
    data = (SAMPLE / "sqlio" / "synthetic-p10-sweep.txt").read_bytes()  # stored by the sample data as it is
    at = new_app("upload").run()
    at.file_uploader[0].set_value(("again.txt", data, "text/plain")).run()
    status = at.dataframe[0].value["status"].tolist()[0]
    assert status.startswith("already stored (file ") and "synthetic P10 (modelled)" in status
    at.text_input(key="upload_disk").set_value("Other disk").run()
    at.button[0].click().run()
    assert not at.exception
    assert not at.success
    assert any(i.value.startswith("again.txt: the same bytes are already stored as file") for i in at.info)


def test_upload_without_label_is_refused(warehouse):
    at = new_app("upload").run()
    at.file_uploader[0].set_value(fresh_copy(SAMPLE / "fio" / "seqread-128k-jobs2.json", "x.json") + ("",)).run()
    at.button[0].click().run()
    assert [e.value for e in at.error] == ["A disk label is required: it is how the curves name this disk."]


@pytest.mark.parametrize("payload", [b"", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"])
def test_upload_bad_file_shows_error(warehouse, payload):
    at = new_app("upload").run()
    at.file_uploader[0].set_value(("bad.bin", payload, "application/octet-stream")).run()
    assert not at.exception
    assert any(e.value.startswith("bad.bin:1:") for e in at.error)


def test_upload_zip_suggests_labels_and_refuses_a_bomb(warehouse):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(*fresh_copy(SAMPLE / "sqlio" / "synthetic-p10-sweep.txt", "sweep.txt"))
        zf.writestr("zeros.txt", b"\0" * (4 * 1024 * 1024))  # deflates > 1000:1: refused as a zip bomb
    at = new_app("upload").run()
    at.file_uploader[0].set_value(("batch.zip", buf.getvalue(), "application/zip")).run()
    assert not at.exception
    assert at.dataframe[0].value["file"].tolist() == ["batch.zip!sweep.txt", "batch.zip!zeros.txt"]
    assert any("compression ratio" in e.value and "zip bomb" in e.value for e in at.error)
    # the SQLIO sweep's runs read `E:\testfile.dat` (synthetic-p10-sweep.txt line 11: "1 thread reading for 60
    # secs from file E:\testfile.dat"), so the drive is offered first, before the labels in use
    pills = at.get("button_group")[0].proto
    assert [o.content for o in pills.options][0] == "E:"
    at.button_group[0].set_value("E:").run()  # a clicked suggestion fills the label
    assert at.text_input(key="upload_disk").value == "E:"


def test_preview_refuses_files_over_the_size_limit():
    previews = uploads.preview_upload("big.txt", b"x" * 2048, Limits(max_file_bytes=1024))
    assert len(previews) == 1 and not previews[0].ok
    assert "past the limit" in previews[0].error


# -- compare --------------------------------------------------------------------------------------------------


def test_compare_side_by_side_like_with_like(warehouse):
    at = new_app(
        "compare", disk=[P10_DISK, STRIPE_DISK], pattern="random", op="read:100", bs="8192", dir="read", base=P10_DISK
    ).run()
    assert not at.exception
    table = at.table[0].value
    assert list(table.columns) == ["", P10_DISK, STRIPE_DISK]
    rows = dict(zip(table[""], table[P10_DISK], strict=True))
    other = dict(zip(table[""], table[STRIPE_DISK], strict=True))
    # the baseline carries no difference; the other disk's saturation figures are differences of saturation
    # points (both saturate), its best measured IOPS one of best measured IOPS
    assert not rows["IOPS at saturation (both saturated)"].endswith("%)")
    assert other["IOPS at saturation (both saturated)"].endswith("%)")
    assert other["Best IOPS measured (vs baseline's best)"].endswith("%)")
    bars = figures(at)[0]
    assert bars["layout"]["title"]["text"].startswith("random read 8 KiB: best measured")
    labels = [t["text"][0] for t in bars["data"]]
    assert any(label.endswith("baseline") for label in labels)
    assert any(label.endswith(" %") and ("+" in label or "−" in label) for label in labels)
    # one verdict line per workload, saying what it compares
    assert any("best measured" in m.value and "%" in m.value for m in at.markdown)
    overlaid = figures(at)[1]
    assert {t["name"] for t in overlaid["data"]} >= {P10_DISK, STRIPE_DISK}
    workloads = at.dataframe[0].value  # every workload measured on either disk, where each saturates
    assert (
        workloads.loc[workloads["workload"] == "random read 8 KiB", P10_DISK].tolist()[0].startswith("32 outstanding")
    )


def test_compare_opens_on_disks_that_share_a_workload(warehouse):
    at = new_app("compare").run()
    assert not at.exception
    chosen = at.multiselect[0].value
    assert len(chosen) >= 2
    # the default workload is measured on every disk chosen: no "not measured" disk, a difference per disk
    assert not any(c.value.startswith("Not measured with this workload") for c in at.caption)


# -- SQL workloads --------------------------------------------------------------------------------------------


def test_sql_page_totals_and_statements_on_the_curve(warehouse):
    at = new_app("sql", disk=P10_DISK, pattern="random", op="read:100", bs="8192", dir="read").run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Statements"] == "3"
    # sample_data/sqlstats/synthetic-p10-workload.txt: CPU time 15 + 3420 + 4 + 41875 + 31 + 1840 ms
    assert metrics["CPU time"] == "47,185 ms"
    statements = at.dataframe[0].value
    # statement 1: CPU time = 3420 ms, elapsed time = 293201 ms (lines 13); statement 2: 41875 / 10469 (line 22)
    assert statements["CPU / elapsed"].tolist()[:2] == ["I/O-bound: 1% CPU", "CPU-bound (parallel): 400% CPU"]
    fig = figures(at)[0]
    placed = next(t for t in fig["data"] if t["name"].endswith("statements"))
    # statement 2 read no page from disk; statement 1 read (1138 + 154102) pages x 8 KiB in 293201 ms (lines 10, 13)
    assert [t.split(":")[0] for t in placed["text"]] == ["#1", "#3"]
    assert placed["text"][0] == "#1: 4.34 MB/s, I/O-bound: 1% CPU"
    totals = at.dataframe[1].value
    assert totals["table"].tolist()[-1] == "Total"
    # logical reads 155486 + 4212 + 28904 + 48722 + 0 + 5431 + 1912 (the file's Table lines)
    assert totals["logical reads"].tolist()[-1] == "244,667"


# -- production vs baseline -----------------------------------------------------------------------------------


def test_production_page_places_the_load_on_the_curve(warehouse):
    at = new_app("production").run()
    assert not at.exception
    # the disks with observed load (sample_data/iostat, sample_data/perfmon), the first chosen
    assert at.selectbox[0].options == [FIO_DISK, P10_DISK] and at.selectbox[0].value == FIO_DISK
    # sample_data/iostat/synthetic-vda-day-iostat.txt on the fio sweep's random read 4 KiB curve, whose one I/O in
    # flight took 0.013 ms (randread-4k-jobs1.json) and which saturates at 177,525 IOPS (line 2424)
    sentence = (
        "p95 load is 50,636 IOPS at 0.088 ms in the busiest hour, 2026-11-23 12:00–13:00: 3.5× below saturation; "
        "latency at that load is 6.7× the baseline's — the disk is slower than when it was benchmarked"
    )
    assert f"**kneepoint-dev-vm · vda**: {sentence}" in html.unescape(markdown(at))
    assert "Baseline: random read 4 KiB, the nearest to 4 KiB per I/O, 80% reads." in markdown(at)
    curve, over_time = figures(at)
    names = [t["name"] for t in curve["data"]]
    assert FIO_DISK in names and "saturation point" in names
    cloud = next(t for t in curve["data"] if t["name"] == "kneepoint-dev-vm · vda: 288 observed intervals")
    assert len(cloud["x"]) == 288 and "IOPS at" in cloud["hovertext"][0]
    marks = next(t for t in curve["data"] if t["name"] == "kneepoint-dev-vm · vda: p50 / p95 / p99")
    assert marks["text"] == ["p50", "p95", "p99"]
    assert curve["layout"]["xaxis"]["title"]["text"].startswith("IOPS")
    assert curve["layout"]["yaxis"]["title"]["text"].startswith("Mean latency (ms)")
    # the sentence over the chart too (an exported image says it), in the device's colour
    assert "kneepoint-dev-vm · vda: p95 load is 50,636 IOPS" in html.unescape(" ".join(annotations(curve)))
    line = next(t for t in over_time["data"] if t["name"].startswith("saturation of the baseline"))
    assert line["name"] == "saturation of the baseline (random read 4 KiB): 177,525 IOPS"
    assert line["y"] == [pytest.approx(177525.11872)] * 2
    assert over_time["layout"]["xaxis2"]["title"]["text"] == "Time (the logging tool's clock)"
    # the busy hour the percentiles are over, shaded in both panels and named once
    bands = [(b["x0"], b["x1"]) for b in over_time["layout"]["shapes"]]
    assert bands == [("2026-11-23T12:00:00", "2026-11-23T13:00:00")] * 2
    assert "busiest hour" in annotations(over_time)
    assert over_time["layout"]["yaxis"]["title"]["text"].startswith("IOPS")


def test_production_page_of_a_disk_as_fast_as_benchmarked(warehouse):
    at = new_app("production", disk=P10_DISK).run()
    assert not at.exception
    # sample_data/perfmon: the modelled P10 at the speed its SQLIO sweep measured
    assert (
        "**SYNTHETIC-SQL01 · PhysicalDisk(1 E:)**: p95 load is 1,107 IOPS at 5.46 ms in the busiest hour, "
        "2026-11-23 12:00–13:00: 1.9× below saturation; latency at that load is 0.93× the baseline's, within the 2× "
        "that would mean it degraded"
    ) in html.unescape(markdown(at))
    curve = figures(at)[0]
    assert curve["layout"]["title"]["text"].startswith("Observed load on the baseline, random read 8 KiB")


def test_production_page_says_the_servers_waits_against_the_baseline(warehouse):
    from kneepoint.ingest.load import ingest_inputs
    from kneepoint.ingest.sources import iter_paths

    # two snapshots of SYNTHETIC-SQL01's file and wait statistics, stored on the P10 it runs on
    dmv = ROOT / "tests" / "fixtures" / "sqlserver_dmv" / "ssms-text-two-snapshots-waitfor.txt"
    assert not ingest_inputs(
        warehouse, iter_paths([dmv]), disk="synthetic P10 (modelled)", host="synthetic-sql01"
    ).errors
    at = new_app("production", disk=P10_DISK).run()
    assert not at.exception
    assert "SQL Server waits" in [h.value for h in at.subheader]
    text = html.unescape(markdown(at))
    # 612 tasks a second waited 6.17 ms for the server's 748 reads/s; the P10's 8 KiB reads took 5.11 ms there
    assert (
        "**SYNTHETIC-SQL01**: PAGEIOLATCH_SH waits 6.17 ms per waiting task (612 tasks/s) at 748 "
        "reads/s: 1.2× the baseline's read latency at that load (5.11 ms), within the 2× that would mean it degraded"
    ) in text
    assert "**SYNTHETIC-SQL01**: WRITELOG waits 3.06 ms per waiting task" in text


def test_production_page_without_observed_load_points_to_upload(warehouse):
    at = new_app("production", disk=STRIPE_DISK, alldisks="true").run()
    assert not at.exception
    assert STRIPE_DISK in at.selectbox[0].options and at.selectbox[0].value == STRIPE_DISK
    assert at.info[0].value.startswith("No production load stored for synthetic 4-disk Storage Spaces stripe")
    assert "Perfmon CSV" in at.info[0].value
    assert [link.proto.page for link in at.get("page_link")][-1] == "upload"
    assert not figures(at)


def test_upload_of_a_counter_log_links_to_the_production_page(warehouse):
    log = (SAMPLE / "perfmon" / "synthetic-sql01-e-drive-day.csv").read_bytes() + b"\r\n"  # not the stored sha256
    at = new_app("upload").run()
    # the page lists the production formats among those it reads
    for title in ("Performance Monitor counter log (CSV)", "iostat -x (sysstat)", "SQL Server file and wait stat"):
        assert title in at.markdown[0].value
    at.file_uploader[0].set_value(("stripe-day.csv", log, "text/csv")).run()
    assert at.dataframe[0].value["status"].tolist() == ["ready"]
    at.text_input(key="upload_disk").set_value("synthetic 4-disk Storage Spaces stripe (modelled)")
    at.text_input(key="upload_host").set_value("synthetic-sql01").run()
    at.button[0].click().run()
    assert not at.exception
    # its 288 samples of one disk are observed intervals, not benchmark runs
    assert any(f"Added 288 observed intervals for disk **{STRIPE_DISK.split(' @ ')[0]}" in x.value for x in at.success)
    links = [link.proto for link in at.get("page_link")]
    # a counter log is production load: no link to the SQL workloads page, whose statistics it is not
    assert [link.label.replace("\\", "") for link in links] == [
        f"See the production load of {STRIPE_DISK} against its benchmark"
    ]
    assert links[0].page == "production" and "synthetic-sql01" in links[0].query_string
    at = new_app("production", disk=STRIPE_DISK).run()
    assert not at.exception
    assert "**SYNTHETIC-SQL01 · PhysicalDisk(1 E:)**: p95 load is 1,107 IOPS" in markdown(at)


# -- stored files ---------------------------------------------------------------------------------------------


def _file_id(db, name: str) -> str:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT file_id FROM raw_files WHERE name = ?", [name]).fetchone()[0]
    finally:
        con.close()


def test_data_page_relabel_then_delete(warehouse):
    file_id = _file_id(warehouse, "synthetic-ss-stripe-mixed-8k.xml")
    at = new_app("data", file=file_id).run()
    assert not at.exception
    assert file_id in at.dataframe[0].value["file id"].tolist()
    assert any(b.proto.label == "Download the original file" for b in at.get("download_button"))

    at.button_group[0].set_value("Relabel").run()
    at.text_input[0].set_value("Stripe B")
    at.text_input[1].set_value("")
    at.button[0].click().run()  # the relabel form's submit button
    assert not at.exception
    assert at.success[0].value.startswith("Relabel synthetic-ss-stripe-mixed-8k.xml as Stripe B: done")
    files = at.dataframe[0].value
    assert files.loc[files["file id"] == file_id, "disk"].tolist() == ["Stripe B"]
    # the picker shows the new label at once
    assert any("Stripe B" in o and file_id in o for o in at.selectbox[0].options)

    at = new_app("data", file=file_id, action="Delete").run()
    delete = next(b for b in at.button if b.proto.label == "Delete the file")
    assert delete.disabled  # not before the confirmation
    at.checkbox(key=f"confirm_delete_{file_id}").check().run()
    next(b for b in at.button if b.proto.label == "Delete the file").click().run()
    assert not at.exception
    assert at.success[0].value.startswith("Delete synthetic-ss-stripe-mixed-8k.xml: done")
    assert file_id not in at.dataframe[0].value["file id"].tolist()
    # nothing is chosen next, and the page is back on Download: no other file sits preselected under Delete
    assert at.selectbox[0].value is None and "file" not in at.query_params
    assert at.query_params["action"] == "Download"


def test_data_page_on_an_empty_warehouse(empty_db):
    at = new_app("data").run()
    assert not at.exception
    assert at.info[0].value.startswith("No files stored yet")


def test_upload_page_on_an_empty_warehouse(empty_db):
    at = new_app("upload").run()
    assert not at.exception
    assert at.button[0].disabled  # nothing to store yet


def test_label_suggestions_from_targets():
    previews = [
        uploads.Preview("a", 1, targets=["G:\\testfile.dat", "g:\\other.dat"]),
        uploads.Preview("b", 1, targets=["/dev/nvme0n1", "/mnt/p10/fio.test"]),
    ]
    assert uploads.label_suggestions(previews, ["Premium P10", "G:"]) == [
        "G:",
        "nvme0n1",
        "/mnt/p10",
        "Premium P10",
    ]


def test_tags_are_comma_separated():
    assert uploads.parse_tags("ssd, Storage Spaces,, ssd ") == ["ssd", "Storage Spaces"]


def test_the_app_warms_up_builds_once_per_warehouse(warehouse, monkeypatch):
    """The first page load starts loading dbt for the warehouse in the background; later loads and sessions do not
    start it again."""
    import threading

    warmed: list[object] = []
    done = threading.Event()
    monkeypatch.setattr(uploads, "warm_up", lambda db: (warmed.append(db), done.set()))
    monkeypatch.setattr(uploads, "_WARMING", {})
    new_app().run(timeout=60)
    new_app().run(timeout=60)
    assert done.wait(30)
    assert [str(db) for db in warmed] == [str(warehouse)]
