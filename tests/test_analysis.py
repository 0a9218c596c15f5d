"""ingest/analysis.py: the USL fit, the Kneedle knee and the latency target, on plain numbers."""

from __future__ import annotations

import random

import pytest

from ingest.analysis import (
    LatencyPoint,
    fit_usl,
    kneedle_knee,
    latency_target_point,
    series_fits,
    usl_iops,
    usl_note,
)
from ingest.synth.disk_model import DiskModel

LOADS = [1, 2, 4, 8, 16, 32, 64, 128, 256]

# The sample fio sweep's 4 KiB random reads, best IOPS per outstanding I/O (threads x iodepth), read from
# sample_data/fio/randread-4k-jobs{1,2,4}.json ("iops" of each job): 1..64 and 128 from jobs1 (x = iodepth),
# 256 from jobs4 iodepth 64, 512 from jobs4 iodepth 128.
SAMPLE_RANDREAD = {
    1: 74958.76031,
    2: 105767.308173,
    4: 105773.556611,
    8: 151111.472132,
    16: 162605.098725,
    32: 177525.11872,
    64: 179509.622594,
    128: 170328.417896,
    256: 150443.278361,
    512: 152115.41344,
}


@pytest.mark.parametrize(
    ("lambda_iops", "sigma", "kappa"),
    [(1000.0, 0.05, 0.001), (5000.0, 0.02, 0.0001), (200.0, 0.3, 0.01), (80000.0, 0.1, 0.0)],
)
def test_usl_recovers_exact_parameters(lambda_iops: float, sigma: float, kappa: float) -> None:
    iops = [usl_iops(n, lambda_iops, sigma, kappa) for n in LOADS]
    fit = fit_usl(LOADS, iops)
    assert fit is not None
    assert fit.lambda_iops == pytest.approx(lambda_iops, rel=1e-4)
    assert fit.sigma == pytest.approx(sigma, abs=1e-5)
    assert fit.kappa == pytest.approx(kappa, abs=1e-7)
    assert fit.r_squared == pytest.approx(1.0, abs=1e-9)
    if kappa:
        expected_peak = ((1 - sigma) / kappa) ** 0.5  # x* = sqrt((1 - σ) / κ)
        assert fit.peak_outstanding_io == pytest.approx(expected_peak, rel=1e-3)
        assert fit.peak_iops == pytest.approx(usl_iops(expected_peak, lambda_iops, sigma, kappa), rel=1e-4)
    else:
        assert fit.peak_outstanding_io is None and fit.peak_iops is None


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_usl_recovers_disk_model_parameters_through_noise(seed: int) -> None:
    # The synthetic disk model: USL with σ 0.03, κ 0.0004, λ = 1 / 0.2 ms, and ±2% run-to-run noise; the
    # bandwidth cap is set far above so the USL alone shapes the curve.
    disk = DiskModel("model", service_time_ms=0.2, sigma=0.03, kappa=0.0004, max_bytes_per_s=1e15, noise=0.02)
    rng = random.Random(seed)
    iops = [disk.iops(4096, n, rng=rng) for n in LOADS]
    fit = fit_usl(LOADS, iops)
    assert fit is not None
    assert fit.lambda_iops == pytest.approx(5000, rel=0.05)
    assert fit.sigma == pytest.approx(0.03, abs=0.006)
    assert fit.kappa == pytest.approx(0.0004, rel=0.1)
    assert fit.peak_outstanding_io == pytest.approx((0.97 / 0.0004) ** 0.5, rel=0.05)
    assert fit.r_squared > 0.99


def test_usl_needs_four_loads() -> None:
    assert fit_usl([1, 2, 4], [100, 190, 350]) is None
    assert usl_note(None, [1, 2, 4]) == "USL not fitted: it needs at least 4 loads, the series has 3"


def test_usl_on_a_flat_series_has_no_r_squared_and_no_peak() -> None:
    fit = fit_usl([1, 2, 4, 8], [500.0, 500.0, 500.0, 500.0])
    assert fit is not None
    assert fit.r_squared is None
    assert fit.peak_outstanding_io is None
    assert fit.sigma == pytest.approx(1.0, abs=1e-5)  # every extra outstanding I/O fully serialized


def test_usl_on_the_sample_randread_sweep() -> None:
    fit = fit_usl(list(SAMPLE_RANDREAD), list(SAMPLE_RANDREAD.values()))
    assert fit is not None
    # A peak inside the tested range, near the measured maximum (179,510 IOPS at 64).
    assert 32 < fit.peak_outstanding_io < 128
    assert fit.peak_iops == pytest.approx(179509.6, rel=0.1)
    assert fit.r_squared > 0.8
    assert usl_note(fit, list(SAMPLE_RANDREAD)) is None


def test_usl_note_flags_a_poor_fit_and_a_peak_beyond_the_range() -> None:
    fit = fit_usl([1, 2, 4, 8, 16], [100, 300, 150, 320, 140])
    assert fit is not None and fit.r_squared < 0.8
    assert usl_note(fit, [1, 2, 4, 8, 16]).startswith(f"poor fit (R² {fit.r_squared:.2f})")
    rising = [usl_iops(n, 100.0, 0.01, 0.0001) for n in (1, 2, 4, 8)]  # peak at sqrt(0.99 / 0.0001) = 99.5
    fit = fit_usl([1, 2, 4, 8], rising)
    assert usl_note(fit, [1, 2, 4, 8]) == "predicted peak lies beyond the tested range (largest load 8)"


def test_kneedle_on_the_issue_examples_and_the_sample() -> None:
    assert kneedle_knee([1, 4, 8], [94.6, 194.53, 194.69]) == 4
    assert kneedle_knee([1, 4, 8], [25.96, 31.29, 31.31]) == 4
    # 7.8, 7.85, 7.88: the rule says 1; Kneedle's threshold is not crossed on three nearly flat points.
    assert kneedle_knee([1, 4, 8], [7.8, 7.85, 7.88]) is None
    assert kneedle_knee(list(SAMPLE_RANDREAD), list(SAMPLE_RANDREAD.values())) == 32


def test_kneedle_marks_a_knee_in_a_curve_that_keeps_rising() -> None:
    # Kneedle's weakness the mart's kneedle_note states: it finds a bend even where IOPS never level off.
    rising = [usl_iops(n, 5000.0, 0.01, 0.00001) for n in LOADS]
    knee = kneedle_knee(LOADS, rising)
    assert knee in LOADS and knee < LOADS[-1]


def test_kneedle_needs_three_loads_and_a_slope() -> None:
    assert kneedle_knee([1, 2], [100, 200]) is None
    assert kneedle_knee([1, 2, 4, 8], [300, 300, 300, 300]) is None


def test_series_input_is_checked() -> None:
    with pytest.raises(ValueError, match="one point per load"):
        fit_usl([1, 2, 2, 4], [1, 2, 3, 4])
    with pytest.raises(ValueError, match="3 loads but 2"):
        kneedle_knee([1, 2, 4], [1, 2])
    with pytest.raises(ValueError, match="positive"):
        fit_usl([0, 1, 2, 4], [1, 2, 3, 4])
    with pytest.raises(ValueError, match="finite"):
        fit_usl([1, 2, 4, 8], [1, float("nan"), 3, 4])


def test_series_input_order_does_not_matter() -> None:
    loads = list(SAMPLE_RANDREAD)
    iops = list(SAMPLE_RANDREAD.values())
    assert series_fits(loads[::-1], iops[::-1]) == series_fits(loads, iops)


def test_latency_target_takes_the_largest_load_under_the_target() -> None:
    # p99 of the sample's 4 KiB random reads, best run per load (clat_ns "99.000000" of the same jobs as
    # SAMPLE_RANDREAD): under 5 ms the largest load is 256 (3.457 ms); 512 has 6.586 ms.
    points = [
        LatencyPoint(64, 179509.622594, 0.39936, 0.356315),
        LatencyPoint(128, 170328.417896, 1.155072, 0.751182),
        LatencyPoint(256, 150443.278361, 3.457024, 1.701),
        LatencyPoint(512, 152115.41344, 6.586368, 3.3634),
    ]
    found = latency_target_point(points, 5.0)
    assert found is not None
    assert (found.load, found.iops, found.latency_ms, found.latency_metric) == (256, 150443.278361, 3.457024, "p99")
    assert latency_target_point(points, 0.39936) is None  # "under" is strict
    assert latency_target_point(points, 0.4).load == 64


def test_latency_target_falls_back_to_the_mean_and_skips_points_without_latency() -> None:
    points = [
        LatencyPoint(1, 100.0, None, 1.0),
        LatencyPoint(2, 180.0, None, 1.9),
        LatencyPoint(4, 200.0, None, None),
    ]
    found = latency_target_point(points, 2.0)
    assert (found.load, found.latency_metric, found.latency_ms) == (2, "mean", 1.9)
    with pytest.raises(ValueError, match="positive"):
        latency_target_point(points, 0)
