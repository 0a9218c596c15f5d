"""The shareable HTML report: one self-contained file, summary first, every section, user text escaped."""

from __future__ import annotations

import io
import json
import re
import shutil
import zipfile
from pathlib import Path

import duckdb
import plotly.graph_objects as go
import polars as pl
import pytest

from kneepoint.app import charts
from kneepoint.app import wording as w
from kneepoint.app.cli.main import main
from kneepoint.app.sharing.report import build_report
from kneepoint.ingest import __version__
from tests.helpers import ROOT, SAMPLE
from tests.test_anonymize import build_planted

FIO_DISK = "sample vda (virtio, fio sweep) @ kneepoint-dev-vm"
P10_DISK = "synthetic P10 (modelled) @ synthetic-sql01"
SECTIONS = ["summary", "charts", "saturation", "production", "sql", "conditions", "checks", "appendix", "provenance"]
STRIPE_DISK = "synthetic 4-disk Storage Spaces stripe (modelled) @ synthetic-sql01"


@pytest.fixture(scope="module")
def source(sample_warehouse: Path, tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("report-src") / "source.duckdb"
    shutil.copy(sample_warehouse, db)
    return db


@pytest.fixture(scope="module")
def html(source: Path, tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("report") / "report.html"
    assert main(["report", "--db", str(source), "--out", str(out)]) == 0
    return out.read_text(encoding="utf-8")


def _outside_plotly_js(html: str) -> str:
    start = html.index("<script>")
    return html[:start] + html[html.index("</script>", start) :]


def _figures(html: str) -> list[dict]:
    blocks = re.findall(r'<script type="application/json" class="kp-figure"[^>]*>(.*?)</script>', html, re.S)
    return [json.loads(b) for b in blocks]


def test_sections_in_reading_order(html: str):
    positions = [html.index(f'<section id="{s}">') for s in SECTIONS]
    assert positions == sorted(positions)


def test_summary_gives_each_disk_its_saturation_point(html: str):
    summary = html[html.index('<section id="summary">') : html.index('<section id="charts">')]
    # sample_data/fio/randread-4k-jobs1.json, job randread-4k-qd32 (1 job x iodepth 32): "iops" : 177525.118720
    # and lat_ns "mean" : 180070.443879; QD 64 adds 1.1 %, within the 10 % tolerance: 32 outstanding.
    # Under 5 ms p99: randread-4k-jobs4.json, jobs4 qd64 (256 outstanding), p99 3.457 ms, 150,443 IOPS.
    assert (
        "random read 4 KiB (fio) saturates at 32 outstanding: 177,525 IOPS, 0.18 ms mean (p99 0.208 ms); "
        "the largest load under 5 ms is 256 outstanding: 150,443 IOPS (p99 3.46 ms)." in summary
    )
    for disk in (FIO_DISK, P10_DISK, "synthetic NVMe (modelled) @ synthetic-desktop"):
        assert f"<strong>{disk}</strong>" in summary
    assert summary.count('class="disk-card"') == 4  # sample_data/labels.json: four disks
    # each disk's CrystalDiskMark-style grid: SEQ/RND rows, Read and Write columns, random in IOPS, sequential
    # in MB/s (sample_data/fio/seqread-128k-jobs4.json, jobs4 qd128: 2,869 MB/s)
    assert "RND 4 KiB, best" in summary and "SEQ 128 KiB, best" in summary
    assert "179,510 IOPS" in summary and "2,869 MB/s" in summary


def test_summary_comes_first_and_the_page_fits_the_window_width(html: str):
    assert html.index('<section id="summary">') < html.index('class="chart"')
    # links wrap instead of widening the page
    assert "flex-wrap: wrap" in html and "minmax(min(560px, 100%), 1fr)" in html


def test_self_contained(html: str):
    outside = _outside_plotly_js(html)
    # Nothing to fetch: no external scripts, style sheets, fonts, images or frames.
    assert not re.search(r"<(script|link|img|iframe)[^>]*\b(src|href)=", outside)
    assert "http://" not in outside and "https://" not in outside and "@import" not in outside
    # plotly.js inlined once
    assert html.count("<script>") == 2 and "Plotly.newPlot" in html and len(html) > 3_000_000


def test_charts_are_plotly_figures_of_the_marts(html: str, source: Path):
    figures = _figures(html)
    assert len(figures) > 20
    assert all(f["figure"]["data"] and f["config"]["displaylogo"] is False for f in figures)
    titles = [f["figure"]["layout"]["title"]["text"] for f in figures]
    assert "random read 4 KiB: IOPS vs outstanding I/O" in titles
    # a sequential workload is charted in MB/s (the IOPS chart would be the same curve over the block size)
    assert "sequential read 128 KiB: Throughput (MB/s) vs outstanding I/O" in titles
    assert "sequential read 128 KiB: IOPS vs outstanding I/O" not in titles
    iops = next(f for f in figures if f["figure"]["layout"]["title"]["text"] == titles[0])
    fio_trace = next(t for t in iops["figure"]["data"] if t.get("name") == FIO_DISK)
    con = duckdb.connect(str(source), read_only=True)
    try:
        best = con.execute(
            "SELECT max(iops) FROM fct_io_results WHERE disk_key = ? AND pattern = 'random' AND operation = 'read' "
            "AND block_size_bytes = 4096 AND direction = 'read'",
            [FIO_DISK],
        ).fetchone()[0]
    finally:
        con.close()
    assert max(fio_trace["y"]) == best


def test_production_section_says_each_device_and_draws_it_on_its_baseline(html: str):
    section = html[html.index('<section id="production">') : html.index('<section id="workloads">')]
    assert '<a href="#production">Production vs baseline</a>' in html
    # sample_data/iostat (vda, slower than its cache-fed fio sweep) and sample_data/perfmon (the P10's E: drive)
    assert (
        "<strong>kneepoint-dev-vm · vda</strong>: p95 load is 50,636 IOPS at 0.088 ms in the busiest hour, "
        "2026-11-23 12:00–13:00: 3.5× below saturation; latency at that load is 6.7× the baseline&#39;s — the disk "
        "is slower than when it was benchmarked"
    ) in section
    assert "<strong>SYNTHETIC-SQL01 · PhysicalDisk(1 E:)</strong>: p95 load is 1,107 IOPS at 5.46 ms" in section
    assert (
        "Baseline: random read 8 KiB, the nearest to 8 KiB per I/O, 70% reads. perfmon: 288 intervals, 2026-11-23 "
        "00:00 to 23:55, 12 in the busy hour"
    ) in section
    titles = [f["figure"]["layout"]["title"]["text"] for f in _figures(section)]
    assert titles == [
        f"Production vs baseline on {FIO_DISK}: observed load on random read 4 KiB, mean latency vs IOPS",
        f"Production vs baseline on {FIO_DISK}: observed IOPS and latency over time, against the baseline's saturation",
        f"Production vs baseline on {P10_DISK}: observed load on random read 8 KiB, mean latency vs IOPS",
        f"Production vs baseline on {P10_DISK}: observed IOPS and latency over time, against the baseline's saturation",
    ]
    curve = _figures(section)[0]["figure"]
    cloud = next(t for t in curve["data"] if t["name"] == "kneepoint-dev-vm · vda: 288 observed intervals")
    assert len(cloud["x"]) == 288
    over_time = _figures(section)[3]["figure"]
    assert any(t["name"] == "saturation of the baseline (random read 8 KiB): 2,053 IOPS" for t in over_time["data"])


def test_production_section_says_a_servers_waits(source: Path, tmp_path: Path):
    db = tmp_path / "w.duckdb"
    shutil.copy(source, db)
    dmv = ROOT / "tests" / "fixtures" / "sqlserver_dmv" / "ssms-text-two-snapshots-waitfor.txt"
    assert (
        main(["ingest", str(dmv), "--db", str(db), "--disk", "synthetic P10 (modelled)", "--host", "synthetic-sql01"])
        == 0
    )
    report = build_report(db, disks=[P10_DISK])
    section = report.html[report.html.index('<section id="production">') : report.html.index('<section id="sql">')]
    assert (
        "<strong>SYNTHETIC-SQL01</strong>: PAGEIOLATCH_SH waits 6.17 ms per waiting task (612 "
        "tasks/s) at 748 reads/s: 1.2× the baseline&#39;s read latency at that load (5.11 ms)"
    ) in section
    assert "Baseline: random write 64 KiB, the nearest to 52.2 KiB per I/O, 0% reads." in section


def test_production_section_only_when_a_disk_in_scope_has_observed_load(source: Path):
    report = build_report(source, disks=[STRIPE_DISK])
    assert '<section id="production">' not in report.html and 'href="#production"' not in report.html
    assert not any(c.workload.startswith("Production vs baseline") for c in report.charts)
    report = build_report(source, disks=[P10_DISK])
    assert '<section id="production">' in report.html
    # two charts, named for `kneepoint images` (the title's slug is cut at 60 characters)
    names = [c.name for c in report.charts if c.workload.startswith("Production vs baseline")]
    assert len(names) == 2
    assert names[0].endswith("-production-curve-random-read-8-kib") and names[1].endswith("-production-time")


def test_conditions_checks_and_provenance(html: str, source: Path):
    conditions = html[html.index('<section id="conditions">') : html.index('<section id="checks">')]
    # sample_data/fio/randread-4k-jobs1.json: "fio-3.33", "ioengine" : "libaio", "iodepth" values 1..128
    assert "fio 3.33" in conditions and "libaio" in conditions and "1, 2, 4, 8, 16, 32, 64, 128" in conditions
    # sample_data/crystaldiskmark/synthetic-nvme-cdm8.txt: "Test: 1 GiB (x5) [D: 38% (354/931GiB)]"
    assert "1 GiB (x5) [D: 38% (354/931GiB)]" in conditions
    # sample_data/sqlio/synthetic-p10-sweep.txt: the first command line
    assert "sqlio -kR -t1 -s60 -o1 -frandom -b64 -BH -LS E:\\testfile.dat" in conditions
    # sample_data/diskspd/synthetic-ss-stripe-sweep.txt line 6 (DiskSpd's own 'Command Line:')
    assert "diskspd.exe -c8G -d60 -W5 -b8K -t1 -o1 -r -w0 -Sh -L D:\\diskspd\\testfile.dat" in conditions

    checks = html[html.index('<section id="checks">') : html.index('<section id="appendix">')]
    con = duckdb.connect(str(source), read_only=True)
    try:
        # Little's law is checked per run: a mixed run's read and write rows count once.
        checked, flagged, checked_rows = con.execute(
            "SELECT count(DISTINCT (file_id, run_index)) FILTER (littles_law_ratio IS NOT NULL), "
            "count(DISTINCT (file_id, run_index)) FILTER (littles_law_flag), count(littles_law_ratio) "
            "FROM fct_io_results"
        ).fetchone()
        files = con.execute("SELECT file_name, sha256 FROM dim_files").fetchall()
        runs = con.execute("SELECT count(*) FROM fct_io_results").fetchone()[0]
    finally:
        con.close()
    assert f"{w.plural(checked, 'run')} checked,\n    {flagged} flagged" in checks
    # sample_data/diskspd/synthetic-ss-stripe-mixed-8k.xml: six 70/30 runs, a read and a write row each
    assert checked == checked_rows - 6
    assert "1 MiB/s = 1,048,576 bytes/s" in checks and "1 MB/s = 1,000,000 bytes/s" in checks

    appendix = html[html.index('<section id="appendix">') : html.index('<section id="provenance">')]
    assert f"Every measured run ({runs})" in appendix

    provenance = html[html.index('<section id="provenance">') :]
    for name, sha256 in files:
        assert name in provenance and sha256 in provenance
    assert f"kneepoint {__version__}" in provenance


def test_every_chart_carries_the_whole_plotly_white_template(html: str):
    """app/charts.py assigns a template validated once: each figure still gets all of plotly_white, as when
    update_layout named it."""
    expected = json.loads(go.Figure(layout={"template": "plotly_white"}).to_json())["layout"]["template"]
    figures = _figures(html)
    assert figures and all(f["figure"]["layout"]["template"] == expected for f in figures)


def test_a_change_to_one_figures_template_leaves_the_next_alone():
    first = charts.percentile_figure(pl.DataFrame())
    first.layout.template.layout.paper_bgcolor = "red"
    second = charts.percentile_figure(pl.DataFrame())
    assert second.layout.template.layout.paper_bgcolor == "white"


def test_one_disk_only(source: Path):
    report = build_report(source, disks=[P10_DISK])
    assert report.disk_keys == [P10_DISK] and [d for d, _ in report.summary] == [P10_DISK]
    assert FIO_DISK not in report.html and "randread-4k-jobs1.json" not in report.html
    assert "synthetic-p10-workload.txt" in report.html  # the SQL Server statements are the disk's too


def test_user_text_is_escaped(tmp_path: Path):
    """Labels, tags, notes, file names and run metadata holding markup are shown as text, never run."""
    db = build_planted(tmp_path / "planted.duckdb")
    html = build_report(db).html
    for payload in (
        "<script>alert('kp-xss-disk')",  # disk label
        "<script>alert('kp-xss-notes')",  # notes
        "<b>kp-xss-tag</b>",  # tag
        "<img src=x onerror=alert('kp-xss-file')>",  # file name
        "<svg onload=alert('kp-xss-file2')>",  # file name
        "<script>alert('kp-xss-comment')",  # CrystalDiskMark Comment (run metadata)
        "\"><img src=x onerror=alert('kp-xss-disk2')>",  # disk label breaking out of an attribute
    ):
        assert payload not in html, payload
    # Shown escaped in the page; inside the figures as plotly text (HTML-escaped: plotly draws a subset of HTML in
    # its titles, names and hover text), \u0026-escaped in their JSON, never as markup (\u003cscript).
    assert "&lt;script&gt;alert(&#39;kp-xss-disk&#39;)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(&#39;kp-xss-file&#39;)&gt;" in html
    assert "\\u0026lt;script\\u0026gt;alert('kp-xss-disk')" in html
    assert "\\u003cscript\\u003ealert('kp-xss-disk')" not in html
    assert html.count("<script>") == 2 and html.count("<script") == 2 + len(_figures(html))


def test_disk_without_benchmark_results(tmp_path: Path):
    from kneepoint.ingest.build import build_models
    from kneepoint.ingest.load import ingest_inputs
    from kneepoint.ingest.sources import iter_paths

    db = tmp_path / "sql-only.duckdb"
    report = ingest_inputs(db, iter_paths([SAMPLE / "sqlstats" / "synthetic-p10-workload.txt"]), disk="P10 data")
    assert len(report.added) == 1
    build_models(db).raise_for_failure()
    result = build_report(db)
    assert result.charts == []
    # sample_data/sqlstats/synthetic-p10-workload.txt: three statements (three 'SQL Server Execution Times:')
    assert result.summary == [("P10 data", "no benchmark results, only 3 SQL Server statements.")]
    assert "No workload was measured at two loads or more" in result.html
    assert '<section id="sql">' in result.html and "3 statements" in result.html


def test_share_page_builds_report_bundle_and_image_buttons(warehouse: Path):
    """app/web/views/report.py on the sample warehouse: anonymized report and bundle ready to download."""
    from streamlit.testing.v1 import AppTest

    from tests.helpers import ROOT

    at = AppTest.from_file(str(ROOT / "app" / "web" / "views" / "report.py"), default_timeout=300).run()
    assert not at.exception
    assert at.multiselect[0].value == [
        FIO_DISK,
        "synthetic 4-disk Storage Spaces stripe (modelled) @ synthetic-sql01",
        "synthetic NVMe (modelled) @ synthetic-desktop",
        P10_DISK,
    ]
    at.toggle(key="share_anonymize").set_value(True).run()
    at.text_area(key="share_redact").set_value("randread").run()
    at.button(key="share_build").click().run()
    assert not at.exception and not at.error
    labels = [d.proto.label for d in at.get("download_button")]
    assert labels[0].startswith("Report (HTML") and labels[1].startswith("Bundle (zip")
    assert labels[2:] == ["All charts as PNG (zip)", "All charts as SVG (zip)"]
    summary = [m.value for m in at.markdown if "■" in m.value]
    assert [m.split("**")[1] for m in summary] == [
        "Disk A @ Host 1",
        "Disk B @ Host 2",
        "Disk C @ Host 2",
        "Disk D @ Host 3",
    ]
    built = at.session_state["share_built"]
    # sample_data/labels.json labels and the fio job names (randread-4k-qd1, ...) are gone from both downloads
    bundle = zipfile.ZipFile(io.BytesIO(built["bundle"]))
    for data in (built["html"], *(bundle.read(n) for n in bundle.namelist())):
        assert b"kneepoint-dev-vm" not in data and b"synthetic-sql01" not in data and b"randread" not in data


def test_a_disk_with_production_load_only_says_it_has_no_benchmark(tmp_path: Path):
    from kneepoint.ingest.build import build_models
    from kneepoint.ingest.load import ingest_inputs
    from kneepoint.ingest.sources import iter_paths

    db = tmp_path / "observed-only.duckdb"
    report = ingest_inputs(db, iter_paths([SAMPLE / "iostat"]), disk="vda in production")
    assert len(report.added) >= 1
    build_models(db).raise_for_failure()
    result = build_report(db)
    assert [text for _, text in result.summary] == ["no benchmark results."]
