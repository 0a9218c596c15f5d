"""The Workloads page (Streamlit AppTest): load series of two configurations compared, saturation marked and said,
the USL overlay, a response-time target; and what the page says without load series."""

from __future__ import annotations

import html

import pytest

from kneepoint.ingest.build import build_models
from kneepoint.ingest.warehouse import connect
from tests.app.test_apptest import annotations, figures, markdown, new_app
from tests.loads import sessions_sweep, store_loads, without_load_series

P30, P40 = "Azure P30", "Azure P40 stripe"


@pytest.fixture
def loads_warehouse(warehouse):
    """The sample warehouse with one sweep of 1–12 sessions on each of two configurations (P40 scales further), in
    place of the sample's own load series."""
    con = connect(without_load_series(warehouse))
    try:
        store_loads(con, sessions_sweep(), disk=P30, name="p30.csv")
        store_loads(con, sessions_sweep(sigma=0.02, kappa=0.004), disk=P40, name="p40.csv")
    finally:
        con.close()
    build_models(warehouse).raise_for_failure()
    return warehouse


def test_workloads_page_compares_configurations(loads_warehouse):
    at = new_app("workloads").run()
    assert not at.exception, at.exception
    assert at.multiselect[0].value == [P30, P40]
    assert at.selectbox[0].value == "queries against concurrent sessions"
    text = html.unescape(markdown(at))
    assert f"**{P30}**: saturates at " in text and f"**{P40}**: " in text
    assert "USL: the fitted USL model peaks at " in text
    assert "The saturation load is the smallest load" in " ".join(c.value for c in at.caption)
    throughput, response = figures(at)
    names = [t["name"] for t in throughput["data"]]
    assert {P30, P40, f"{P30}: USL model", "saturation point"} <= set(names)
    assert throughput["layout"]["yaxis"]["title"]["text"] == "Throughput (queries/min)"
    assert throughput["layout"]["xaxis"]["title"]["text"] == "Concurrent sessions"
    assert any(a.startswith("<span") and "saturates at" in a for a in annotations(throughput))
    assert {f"{P30} · p95", f"{P40} · p95"} <= {t["name"] for t in response["data"]}
    diamond = next(t for t in throughput["data"] if t["name"] == "saturation point")
    assert diamond["marker"]["symbol"] == "diamond"


def test_workloads_page_reads_its_state_from_the_url_and_a_response_target(loads_warehouse):
    at = new_app("workloads", config=[P40], usl="false").run()
    assert not at.exception
    assert at.multiselect[0].value == [P40]
    throughput, _ = figures(at)
    assert not any("USL" in t["name"] for t in throughput["data"])
    at.number_input[0].set_value(4000.0).run()
    assert "Response-time target: the most under 4000 ms is " in html.unescape(markdown(at))


def test_workloads_page_without_load_series_points_to_upload(warehouse):
    without_load_series(warehouse)
    at = new_app("workloads").run()
    assert not at.exception
    assert at.info[0].value.startswith("No load series stored yet.")


def test_workloads_page_on_an_empty_warehouse(empty_db):
    at = new_app("workloads").run()
    assert not at.exception
    assert "The warehouse is empty" in at.info[0].value
