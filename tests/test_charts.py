"""The chart functions the pages and the report share: points always visible, notes beside the data, plain numbers
in hover text, one line per tool, labels shown as text in every plotly text field; and the wording they use."""

from __future__ import annotations

import json

import polars as pl
import pytest

from kneepoint.app import charts
from kneepoint.app import wording as w

LINK = '<a href="http://127.0.0.1:9/leak">x</a>'


def _points(rows: list[dict]) -> pl.DataFrame:
    """Runs as queries.curve_points returns them (best_for_tool / best_at_load as mart_curve_points marks them)."""
    base = {
        "disk": "d",
        "host": None,
        "throughput_bytes_per_s": None,
        "latency_p50_ms": None,
        "latency_p95_ms": None,
        "latency_p999_ms": None,
        "littles_law_ratio": None,
        "file_id": "f",
        "record_index": 0,
        "run_index": 0,
        "source_line": 10,
        "best_at_threads_qd": True,
    }
    out = []
    for r in rows:
        row = {**base, **r}
        row.setdefault("throughput_mb_per_s", row["iops"] * 4096 / 1e6)
        row.setdefault("throughput_mib_per_s", row["iops"] * 4096 / 2**20)
        row.setdefault("best_at_load", True)
        row.setdefault("best_for_tool", True)
        out.append(row)
    return pl.DataFrame(out, infer_schema_length=None)


def _run(disk: str, tool: str, threads: int, qd: int, iops: float, latency: float, **extra) -> dict:
    return {
        "disk_key": disk,
        "tool": tool,
        "threads": threads,
        "queue_depth": qd,
        "outstanding_io": threads * qd,
        "iops": iops,
        "latency_avg_ms": latency,
        "latency_p99_ms": latency * 2,
        "file_name": f"{tool}.txt",
        **extra,
    }


def _not_saturated(disk: str, load: int, iops: float) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {
                "disk_key": disk,
                "saturated": False,
                "min_outstanding_io": load,
                "max_outstanding_io": load,
                "max_iops": iops,
                "max_iops_outstanding_io": load,
                "usl_fitted": False,
            }
        ]
    )


def test_a_single_point_is_drawn_inside_the_axes_and_above_every_note():
    # one fio file at 16 outstanding: its only point, and the "not saturated" sentence
    points = _points([_run("one fio file", "fio", 1, 16, 282_734.4, 0.381)])
    fig = charts.curve_figure(points, "iops", _not_saturated("one fio file", 16, 282_734.4))
    (trace,) = [t for t in fig.data if t.name == "one fio file"]
    assert trace.mode == "markers" and trace.cliponaxis is False
    low, high = fig.layout.yaxis.range
    assert low <= 0 and high > 282_734.4 * 1.05  # room above the point
    x_low, x_high = fig.layout.xaxis.range  # log10 units
    assert x_low < 1.2041 < x_high  # log10(16)
    # the note sits in the top margin (paper y >= 1, anchored at its bottom), never over the plot area
    (note,) = fig.layout.annotations
    assert "not saturated: only measured at 16 outstanding (282,734 IOPS)" in note.text
    assert note.yref == "paper" and note.y >= 1 and note.yanchor == "bottom"
    assert fig.layout.margin.t >= charts.TOP_MARGIN + charts.NOTE_LINE_PX


def test_hover_text_is_plain_numbers():
    points = _points(
        [_run("nvme", "fio", 1, q, iops, lat) for q, iops, lat in [(1, 74_959.2, 0.0132), (16, 282_734.4, 0.381)]]
    )
    for metric in ("iops", "throughput_mb", "latency_avg"):
        spec = charts.curve_figure(points, metric).to_plotly_json()
        hover = [h for t in spec["data"] for h in (t.get("hovertext") or [])]
        assert hover and not any("e+" in h or "e-" in h for h in hover)
        # no side box ('<extra>' empty): the text holds the disk's name, so the chart's edge cannot cut it
        assert all(t["hovertemplate"].endswith("<extra></extra>") for t in spec["data"] if "hovertemplate" in t)
    iops_hover = charts.curve_figure(points, "iops").data[0].hovertext
    assert "16 outstanding (1 thread × QD 16): 282,734 IOPS" in iops_hover[1]
    assert "0.381 ms mean" in charts.curve_figure(points, "latency_avg").data[0].hovertext[1]
    assert "1,158 MB/s" in charts.curve_figure(points, "throughput_mb").data[0].hovertext[1]


def test_points_of_two_tools_are_never_joined():
    # CrystalDiskMark Q1T1 and Q32T16, SQLIO with 64 threads: three loads, two tools, two lines
    points = _points(
        [
            _run("nvme", "crystaldiskmark", 1, 1, 60_000, 0.05),
            _run("nvme", "crystaldiskmark", 16, 32, 600_000, 0.8),
            _run("nvme", "sqlio", 64, 1, 300_000, 0.2),
            # a second SQLIO run at the same load: not on the line, a hollow circle
            _run("nvme", "sqlio", 32, 2, 250_000, 0.25, best_at_load=False, best_for_tool=False),
        ]
    )
    fig = charts.curve_figure(points, "iops")
    lines = {t.name: list(t.x) for t in fig.data if t.legendgroup == "nvme"}
    assert lines == {"nvme · crystaldiskmark": [1, 512], "nvme · sqlio": [64]}
    symbols = {t.name: t.marker.symbol for t in fig.data if t.legendgroup == "nvme"}
    assert symbols["nvme · crystaldiskmark"] != symbols["nvme · sqlio"]
    (others,) = [t for t in fig.data if t.legendgroup == "others"]
    assert others.showlegend and "other threads × QD" in others.name and others.marker.symbol == "circle-open"


def test_latency_axis_is_log_when_it_spans_more_than_ten_times_and_says_ms():
    points = _points([_run("hdd", "fio", 1, q, 100 * q, 0.05 * q**2) for q in (1, 2, 4, 8, 16, 32)])
    fig = charts.curve_figure(points, "latency_avg", log_y=None)
    assert fig.layout.yaxis.type == "log"
    assert all("μ" not in t and "e" not in t for t in fig.layout.yaxis.ticktext)
    assert "0.1" in fig.layout.yaxis.ticktext and "10" in fig.layout.yaxis.ticktext
    flat = _points([_run("ssd", "fio", 1, q, 100 * q, 0.2 + 0.01 * q) for q in (1, 2, 4)])
    assert charts.curve_figure(flat, "latency_avg", log_y=None).layout.yaxis.type != "log"
    assert charts.METRICS["throughput_mb"][1] == "Throughput, MB/s (10⁶ bytes)"


def test_labels_are_text_in_every_plotly_field():
    points = _points(
        [
            _run(LINK, "fio", 1, 1, 1000, 1.0, file_name=LINK),
            _run(LINK, "fio", 1, 4, 3000, 2.0, file_name=LINK),
            _run(LINK, "sqlio", 2, 4, 2000, 3.0, file_name=LINK),
        ]
    )
    saturation = pl.DataFrame(
        [
            {
                "disk_key": LINK,
                "saturated": True,
                "saturation_outstanding_io": 4,
                "saturation_threads": 1,
                "saturation_queue_depth": 4,
                "iops_at_saturation": 3000.0,
                "throughput_bytes_per_s_at_saturation": 3000 * 4096.0,
                "latency_avg_ms_at_saturation": 2.0,
                "latency_p99_ms_at_saturation": 4.0,
                "min_outstanding_io": 1,
                "max_outstanding_io": 8,
                "max_iops": 3000.0,
                "max_iops_outstanding_io": 4,
                "usl_fitted": False,
                "pattern": "random",
                "block_size_bytes": 4096,
            }
        ]
    )
    dist = pl.DataFrame(
        {
            "disk_key": [LINK] * 2,
            "outstanding_io": [4, 4],
            "percentile": [50.0, 99.0],
            "latency_ms": [1.0, 4.0],
            "curve_source": ["percentiles"] * 2,
            "file_name": [LINK] * 2,
            "run_index": [0, 0],
        }
    )
    statements = pl.DataFrame(
        {
            "disk_key": [LINK],
            "effective_read_bytes_per_s": [5e6],
            "cpu_to_elapsed": [0.1],
            "label": [LINK],
            "curve_outstanding_io": [0.5],
        }
    )
    figures = [
        charts.curve_figure(points, "iops", saturation, usl=True),
        charts.latency_vs_iops_figure(points, saturation),
        charts.threads_figure(points, "iops"),
        charts.iops_heatmap(points, LINK),
        charts.percentile_figure(dist),
        charts.statements_on_curve_figure(points, statements, saturation=saturation),
        charts.compare_figure(charts.compare_rows(saturation, LINK), LINK, f"compared with {LINK}"),
    ]
    for fig in figures:
        text = json.dumps(fig.to_plotly_json(), default=str)
        assert "<a href" not in text, fig.layout.title.text
        assert "&lt;a href=" in text


def test_statements_left_of_the_curve_widen_the_axis():
    points = _points([_run("p10", "sqlio", 1, q, 100 * q, 1.0) for q in (1, 2, 4)])
    statements = pl.DataFrame(
        {
            "disk_key": ["p10"],
            "effective_read_bytes_per_s": [1e5],
            "cpu_to_elapsed": [0.01],
            "label": ["#1: 0.1 MB/s, I/O-bound: 1% CPU"],
            "curve_outstanding_io": [0.25],
        }
    )
    fig = charts.statements_on_curve_figure(points, statements)
    assert fig.layout.xaxis.range[0] < -0.6  # log10(0.25)
    placed = next(t for t in fig.data if t.name == "p10: statements")
    assert placed.textposition[0].endswith("right") and placed.cliponaxis is False


@pytest.mark.parametrize(
    ("value", "text"),
    [(282_734.4, "282,734"), (0.381, "0.381"), (4.25, "4.25"), (12.34, "12.3"), (0.00012, "0.00012"), (0, "0")],
)
def test_plain_numbers(value, text):
    assert w.plain(value) == text


def test_wording():
    assert w.fmt_throughput(1_534e6) == "1,534 MB/s" and w.fmt_throughput(4.34e6) == "4.34 MB/s"
    assert w.fmt_int(17_853_887) == "17,853,887" and w.fmt_int(None) == w.DASH
    assert w.fmt_pct_diff(1.32) == "+32 %" and w.fmt_pct_diff(0.88) == "−12 %" and w.fmt_pct_diff(1.0) == "±0 %"
    assert w.tested_range(16, 16, 1, 1) == "only at 16 outstanding (1 run)"
    assert w.tested_range(1, 512, 10, 24) == "1–512 outstanding (10 loads, 24 runs)"
    assert w.plural(1, "load") == "1 load" and w.plural(2, "run") == "2 runs"
    assert w.workload_title("random", "mixed", 70, 8192, "write") == "random 70% read mix 8 KiB (write I/Os)"
    assert w.slug("Random read 4 KiB: IOPS") == "random-read-4-kib-iops"
    assert w.littles_law_bounds() == "0.8–1.25"  # dbt_project.yml vars
    assert w.statement_status({"execution_elapsed_ms": None}) == "not timed"
    assert w.statement_status({"failed": True, "error_number": 207, "execution_elapsed_ms": 0}) == "failed (Msg 207)"
    assert w.esc(LINK) == '&lt;a href="http://127.0.0.1:9/leak"&gt;x&lt;/a&gt;'


# -- production against the baseline ----------------------------------------------------------------------------


def _saturated(disk: str, load: int, iops: float, latency: float) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {
                "disk_key": disk,
                "saturated": True,
                "saturation_outstanding_io": load,
                "iops_at_saturation": iops,
                "latency_avg_ms_at_saturation": latency,
                "latency_p99_ms_at_saturation": None,
                "min_outstanding_io": 1,
                "max_outstanding_io": 64,
                "usl_fitted": False,
            }
        ]
    )


def _headroom(host: str = "sql01", device: str = "PhysicalDisk(1 E:)", **extra) -> dict:
    """A mart_headroom row as queries.headroom returns it."""
    return {
        "disk_key": "d",
        "host": host,
        "device": device,
        "tool": "perfmon",
        "intervals": 3,
        "iops_p50": 200.0,
        "iops_p95": 900.0,
        "iops_p99": 950.0,
        "latency_avg_ms_p50": 4.0,
        "latency_avg_ms_p95": 6.0,
        "latency_avg_ms_p99": 6.5,
        "series_id": "s",
        "baseline_pattern": "random",
        "baseline_operation": "read",
        "baseline_read_pct": 100.0,
        "baseline_block_size_bytes": 4096,
        "baseline_direction": "read",
        "baseline_saturated": True,
        "baseline_saturation_iops": 100_000.0,
        "baseline_max_iops": 110_000.0,
        "headroom": 111.0,
        "headroom_at_least": None,
        "beyond_baseline": False,
        "latency_ratio": 3.0,
        "degraded": True,
        "degradation_factor": 2.0,
        **extra,
    }


def _observed(host: str, device: str, iops: list[float], latency: list[float], timed: bool = True) -> pl.DataFrame:
    """Intervals as queries.observed_intervals returns them, a minute apart."""
    from datetime import datetime, timedelta

    start = datetime(2026, 11, 23, 9, 0)
    return pl.DataFrame(
        [
            {
                "disk_key": "d",
                "host": host,
                "device": device,
                "interval_start": start + timedelta(minutes=i) if timed else None,
                "interval_index": i,
                "iops": x,
                "latency_avg_ms": y,
                "file_name": "log.csv",
                "source_line": i + 3,
            }
            for i, (x, y) in enumerate(zip(iops, latency, strict=True))
        ],
        schema_overrides={"interval_start": pl.Datetime("us")},
    )


def _baseline() -> pl.DataFrame:
    return _points(
        [
            _run("d", "fio", 1, qd, iops, lat)
            for qd, iops, lat in ((1, 20_000.0, 0.05), (4, 60_000.0, 0.07), (16, 100_000.0, 0.16), (64, 105_000.0, 0.6))
        ]
    )


def test_production_curve_puts_the_cloud_and_its_percentiles_on_the_baseline():
    intervals = _observed("sql01", "PhysicalDisk(1 E:)", [150.0, 220.0, 0.0, 940.0], [4.0, 4.5, None, 6.4])
    fig = charts.production_curve_figure(
        _baseline(), _saturated("d", 16, 100_000.0, 0.16), intervals, pl.DataFrame([_headroom()]), {"d": "#1f77b4"}
    ).to_plotly_json()
    by_name = {t["name"]: t for t in fig["data"]}
    # an interval without I/O has no place on a latency-vs-IOPS chart
    cloud = by_name["sql01 · PhysicalDisk(1 E:): 3 observed intervals"]
    assert list(cloud["x"]) == [150.0, 220.0, 940.0] and cloud["marker"]["color"] == charts.DEVICE_PALETTE[0]
    assert cloud["hovertext"][0] == (
        "<b>sql01 · PhysicalDisk(1 E:)</b><br>2026-11-23 09:00:00: 150 IOPS at 4 ms mean<br>log.csv, line 3"
    )
    marks = by_name["sql01 · PhysicalDisk(1 E:): p50 / p95 / p99"]
    assert list(marks["x"]) == [200.0, 900.0, 950.0] and list(marks["y"]) == [4.0, 6.0, 6.5]
    assert list(marks["text"]) == ["p50", "p95", "p99"]
    assert list(marks["marker"]["symbol"]) == ["circle", "square", "triangle-up"]
    # the saturation point, and the baseline's latency below its lightest load (what the cloud is compared with)
    assert list(by_name["saturation point"]["x"]) == [100_000.0]
    lightest = next(t for t in fig["data"] if t.get("line", {}).get("dash") == "dot")
    assert list(lightest["x"]) == [150.0, 20_000.0] and list(lightest["y"]) == [0.05, 0.05]
    # production far below the benchmark's loads: both axes on a log scale, each with its unit
    assert fig["layout"]["xaxis"]["type"] == "log" and fig["layout"]["xaxis"]["title"]["text"] == "IOPS, log"
    assert fig["layout"]["yaxis"]["title"]["text"] == "Mean latency (ms), log"
    notes = " ".join(a["text"] for a in fig["layout"]["annotations"])
    assert (
        "saturates at 16 outstanding: 100,000 IOPS" in notes
        and "sql01 · PhysicalDisk(1 E:): p95 load is 900 IOPS" in notes
    )


def test_a_week_of_intervals_is_drawn_with_webgl_arrays_and_one_hover_template():
    """Past WEBGL_POINTS a device's intervals go to plotly as arrays with one hover template, not a text per point
    (a week at 15 s for 8 disks made a 200 MB figure that took seconds to build)."""
    n = charts.WEBGL_POINTS + 1
    intervals = _observed("sql01", "PhysicalDisk(1 E:)", [100.0 + i for i in range(n)], [4.0] * n)
    headroom = pl.DataFrame([_headroom()])
    curve = charts.production_curve_figure(_baseline(), _saturated("d", 16, 100_000.0, 0.16), intervals, headroom)
    time = charts.production_time_figure(intervals, headroom)
    clouds = [t for fig in (curve, time) for t in fig.data if t.type == "scattergl"]
    assert len(clouds) == 3  # the curve's cloud, and IOPS and latency over time
    for trace in clouds:
        assert len(trace.y) == n and trace.hovertext is None
        assert trace.hovertemplate.startswith("<b>sql01 · PhysicalDisk(1 E:)</b><br>")
    assert "IOPS at" in clouds[0].hovertemplate and clouds[0].x[0] == 100.0


def test_production_charts_show_labels_as_text():
    host = LINK
    fig = charts.production_curve_figure(
        _baseline(),
        _saturated("d", 16, 100_000.0, 0.16),
        _observed(host, "sda", [150.0], [4.0]),
        pl.DataFrame([_headroom(host=host, device="sda")]),
    )
    time = charts.production_time_figure(_observed(host, "sda", [150.0], [4.0]), pl.DataFrame([_headroom(host=host)]))
    for figure in (fig, time):
        assert LINK not in json.dumps(figure.to_plotly_json())


def test_production_time_chart_draws_the_saturation_line_over_the_observed_load():
    rows = pl.DataFrame([_headroom(), _headroom(device="PhysicalDisk(2 F:)")])
    intervals = pl.concat(
        [
            _observed("sql01", "PhysicalDisk(1 E:)", [150.0, 900.0], [4.0, 6.0]),
            _observed("sql01", "PhysicalDisk(2 F:)", [50.0, 60.0], [1.0, 1.2]),
        ]
    )
    fig = charts.production_time_figure(intervals, rows, "#1f77b4", charts.device_colors(rows, "#1f77b4"))
    data = fig.to_plotly_json()["data"]
    # one line per device in each panel, its legend entry once; the baseline's line drawn once for both devices
    assert [t["name"] for t in data if t.get("showlegend") is not False] == [
        "sql01 · PhysicalDisk(1 E:)",
        "sql01 · PhysicalDisk(2 F:)",
        "saturation of the baseline (random read 4 KiB): 100,000 IOPS",
    ]
    line = data[-1]
    assert list(line["y"]) == [100_000.0, 100_000.0] and line["line"]["color"] == "#1f77b4"
    assert line["yaxis"] == "y" and data[1]["yaxis"] == "y2"  # the IOPS panel; the latency one below
    layout = fig.to_plotly_json()["layout"]
    assert layout["xaxis2"]["title"]["text"] == "Time (the logging tool's clock)"
    assert layout["yaxis"]["title"]["text"] == "IOPS, log" and layout["yaxis2"]["title"]["text"] == "Mean latency (ms)"
    # a baseline that did not saturate: its best, said so
    unsaturated = rows.with_columns(pl.lit(False).alias("baseline_saturated"))
    untimed = _observed("sql01", "PhysicalDisk(1 E:)", [150.0, 900.0], [4.0, 6.0], timed=False)
    fig = charts.production_time_figure(untimed, unsaturated).to_plotly_json()
    assert fig["data"][-1]["name"] == "the baseline's best (random read 4 KiB, not saturated): 110,000 IOPS"
    assert fig["layout"]["xaxis2"]["title"]["text"] == "Interval in the log (no timestamps logged)"


def test_device_colours_are_never_the_disks():
    rows = pl.DataFrame([_headroom(device=f"sd{c}") for c in "abc"])
    colors = charts.device_colors(rows, charts.DEVICE_PALETTE[0])
    assert list(colors) == ["sql01 · sda", "sql01 · sdb", "sql01 · sdc"]
    assert charts.DEVICE_PALETTE[0] not in colors.values() and len(set(colors.values())) == 3


def test_production_time_chart_shades_each_devices_busy_hour():
    from datetime import datetime

    hour = {"busy_hour_start": datetime(2026, 11, 23, 9), "busy_hour_end": datetime(2026, 11, 23, 10)}
    whole = {"busy_hour_start": datetime(2026, 11, 23, 9), "busy_hour_end": datetime(2026, 11, 23, 9, 2)}
    rows = pl.DataFrame(
        [
            _headroom(busy_hour_whole_log=False, **hour),
            _headroom(device="PhysicalDisk(2 F:)", busy_hour_whole_log=True, **whole),
        ]
    )
    intervals = pl.concat(
        [
            _observed("sql01", "PhysicalDisk(1 E:)", [150.0, 900.0], [4.0, 6.0]),
            _observed("SQL01", "PhysicalDisk(2 F:)", [50.0, 60.0], [1.0, 1.2]),
        ]
    )
    fig = charts.production_time_figure(intervals, rows).to_plotly_json()["layout"]
    # E:'s hour in both panels; F:'s whole log (its busy hour) is not marked, so the band is named for E: alone
    assert [(s["x0"], s["x1"], s["yref"]) for s in fig["shapes"]] == [
        (hour["busy_hour_start"], hour["busy_hour_end"], "y domain"),
        (hour["busy_hour_start"], hour["busy_hour_end"], "y2 domain"),
    ]
    # said short over the band, whose it is on hover
    assert [(a["text"], a["hovertext"]) for a in fig["annotations"] if "busiest" in a["text"]] == [
        ("busiest hour", "busiest hour of sql01 · PhysicalDisk(1 E:)")
    ]
    # the axis spans the log, not padding around the saturation line's label
    assert (
        fig["xaxis"]["range"]
        == fig["xaxis2"]["range"]
        == [
            min(intervals["interval_start"]),
            max(intervals["interval_start"]),
        ]
    )
    # F:'s intervals are drawn though their host is written in capitals (one computer in any case)
    assert sum(1 for t in charts.production_time_figure(intervals, rows).data if t.name.endswith("F:)")) == 2


def test_busy_hours_side_by_side_share_one_label_and_many_devices_leave_the_plot_its_room():
    """A week of eight devices: the busy hours 12:00 and 13:00 of one day are two bands under one label (two would
    be written over each other), a day later another label; the curve's notes and legend leave out what the
    sentences above the chart say, so the plot keeps its height."""
    from datetime import datetime, timedelta

    def at(day: int, hour: int) -> dict:
        start = datetime(2026, 11, day, hour)
        return {"busy_hour_start": start, "busy_hour_end": start + timedelta(hours=1), "busy_hour_whole_log": False}

    rows = pl.DataFrame(
        [_headroom(device=f"PhysicalDisk({i} {chr(69 + i)}:)", **at(23 if i < 3 else 25, 12 + i % 2)) for i in range(8)]
    )
    intervals = pl.concat(
        [_observed("sql01", r["device"], [150.0, 900.0], [4.0, 6.0]) for r in rows.iter_rows(named=True)]
    )
    layout = charts.production_time_figure(intervals, rows).to_plotly_json()["layout"]
    assert len(layout["shapes"]) == 2 * 4  # four distinct hours, in both panels
    said = [a for a in layout["annotations"] if a["text"] == "busiest hour"]
    assert [a["hovertext"].count("PhysicalDisk") for a in said] == [3, 5]
    curve = charts.production_curve_figure(_baseline(), _saturated("d", 16, 100_000.0, 0.16), intervals, rows)
    assert [t.name for t in curve.data if t.showlegend is not False and "observed" in t.name][0].endswith(
        "2 observed intervals"
    )
    assert not any("p50 / p95 / p99" in t.name and t.showlegend is not False for t in curve.data)
    notes = " ".join(a.text for a in curve.layout.annotations)
    assert "saturates at 16 outstanding" in notes and "p95 load" not in notes
    assert curve.layout.height > charts.LAYOUT["height"]


def test_every_tool_has_a_marker_of_its_own():
    from kneepoint.ingest import formats

    symbols = charts.tool_symbols(formats.tools())
    assert len(set(symbols.values())) == len(formats.tools()) and "diamond" not in symbols.values()
