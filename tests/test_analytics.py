"""ingest/analytics.py: the USL fit, the Kneedle knee and the latency target, on plain numbers."""

from __future__ import annotations

import math
import random
import warnings
from collections import defaultdict
from collections.abc import Iterator

import duckdb
import numpy as np
import pytest

from bench.rows import make_rows_db
from kneepoint.ingest.analytics import (
    MIN_USL_POINTS,
    LatencyPoint,
    UslFit,
    fit_usl,
    fit_usl_many,
    kneedle_knee,
    latency_target_point,
    series_fits,
    series_fits_many,
    usl_iops,
    usl_note,
)
from kneepoint.ingest.formats import parse_bytes
from kneepoint.ingest.records import IoRecord
from kneepoint.ingest.synth.disk_model import DiskModel
from tests.helpers import SAMPLE

Series = tuple[list[float], list[float]]

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


def test_usl_on_a_falling_series_has_no_peak() -> None:
    # IOPS fall from the first load on: σ stops at its bound 1, X(N) = λ / (1 + κ(N−1)) has no maximum.
    fit = fit_usl([1, 2, 4, 8, 16], [1000, 900, 800, 700, 600])
    assert fit is not None and fit.sigma == 1.0 and fit.kappa > 0
    assert fit.peak_outstanding_io is None and fit.peak_iops is None
    assert usl_note(fit, [1, 2, 4, 8, 16]) == "IOPS fall from the first load on (σ = 1): the fit predicts no peak"


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


# Many series of every shape the marts meet, for the checks against the reference implementations (kneed for
# Kneedle, scipy's least_squares for the USL fit).


@pytest.fixture(scope="module")
def row_generator_series(tmp_path_factory) -> list[Series]:
    """The benchmark's million-row warehouse in miniature (bench/rows.py, 40 disks): per disk and workload the
    best IOPS per outstanding I/O, as int_saturation_points keeps them."""
    db = tmp_path_factory.mktemp("rows") / "rows.duckdb"
    make_rows_db(db, 40 * 24 * 48)
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            """
            select list(load order by load), list(iops order by load)
            from (
                select disk, pattern, operation, block_size_bytes, threads * queue_depth as load,
                    max(iops) as iops
                from raw_io_records as r join raw_files as f using (file_id)
                group by all
            )
            group by disk, pattern, operation, block_size_bytes
            """
        ).fetchall()
    finally:
        con.close()
    return [([float(v) for v in loads], [float(v) for v in iops]) for loads, iops in rows]


def sample_series() -> list[Series]:
    """Every series of the sample data (real fio sweeps and the synthetic tools' files), best IOPS per load."""
    best: dict[tuple, dict[float, float]] = defaultdict(dict)
    for path in sorted(p for p in SAMPLE.glob("*/*") if p.suffix in (".json", ".txt", ".xml")):
        for r in parse_bytes(path.read_bytes(), str(path)).records:
            if not isinstance(r, IoRecord) or not r.iops or not r.threads or not r.queue_depth:
                continue
            key = (path.parent.name, r.pattern, r.operation, r.read_pct, r.block_size_bytes, r.direction)
            load = float(r.threads * r.queue_depth)
            best[key][load] = max(best[key].get(load, 0.0), r.iops)
    return [(list(points), list(points.values())) for points in best.values()]


def disk_model_series(count: int, seed: int) -> Iterator[Series]:
    """Sweeps of modelled disks (ingest/synth/disk_model.py) across the model's range: service time, contention,
    coherency, bandwidth cap, noise, block size, and load grids from short QD sweeps to threads x QD grids."""
    rng = random.Random(seed)
    grids = [
        [1, 2, 4, 8],
        [1, 2, 4, 8, 16],
        [1, 2, 4, 8, 16, 32, 64, 128],
        [2**k for k in range(13)],
        list(range(1, 17)),
        sorted({t * q for t in (1, 2, 4, 8) for q in (1, 2, 4, 8, 16, 32)}),
        [1, 3, 5, 10, 20, 50, 100],
    ]
    for _ in range(count):
        disk = DiskModel(
            "model",
            service_time_ms=10 ** rng.uniform(-1.5, 1),
            sigma=rng.choice([0.0, rng.uniform(0, 0.2)]),
            kappa=rng.choice([0.0, 10 ** rng.uniform(-6, -1.5)]),
            max_bytes_per_s=10 ** rng.uniform(7.5, 10),
            noise=rng.choice([0.0, 0.01, 0.03, 0.1]),
        )
        loads = rng.choice(grids)
        block = rng.choice([4096, 65536, 1048576])
        yield [float(n) for n in loads], [disk.iops(block, n, rng=rng) for n in loads]


def odd_series(count: int, seed: int) -> Iterator[Series]:
    """What real data also holds: pure noise, flat and nearly flat curves, 3 to 5 points, falling curves,
    loads that did nothing, a single outlier."""
    rng = random.Random(seed)
    for i in range(count):
        n = rng.choice([3, 4, 5, 6, 9])
        loads = sorted(rng.sample(range(1, 300), n))
        kind = i % 6
        if kind == 0:
            iops = [rng.uniform(100, 1000) for _ in loads]
        elif kind == 1:
            iops = [500.0 * (1 + rng.uniform(-0.001, 0.001)) for _ in loads]
        elif kind == 2:
            iops = [1000.0 / (1 + 0.01 * x) + rng.uniform(0, 5) for x in loads]
        elif kind == 3:
            iops = [0.0 if rng.random() < 0.3 else rng.uniform(0, 200) for _ in loads]
        elif kind == 4:
            iops = [200.0] * n
            iops[rng.randrange(n)] = 900.0
        else:
            iops = [min(100.0 * x, 3000.0) * (1 + rng.uniform(-0.02, 0.02)) for x in loads]
        yield [float(x) for x in loads], iops


def kneed_knee(loads: list[float], iops: list[float]) -> float | None:
    """The reference: kneed's KneeLocator with its defaults (interp1d, concave, increasing, S = 1, offline)."""
    from kneed import KneeLocator

    order = np.argsort(loads)
    x, y = np.asarray(loads, float)[order], np.asarray(iops, float)[order]
    if len(x) < 3 or y.max() == y.min():
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        knee = KneeLocator(x, y, curve="concave", direction="increasing", S=1.0).knee
    return None if knee is None else float(knee)


def test_kneedle_finds_kneeds_knee_on_every_kind_of_series(row_generator_series: list[Series]) -> None:
    collections = {
        "row generator": row_generator_series,
        "sample data": sample_series(),
        "disk model": list(disk_model_series(400, seed=1)),
        "noisy, flat, short": list(odd_series(300, seed=2)),
    }
    for name, series in collections.items():
        knees = [kneedle_knee(x, y) for x, y in series]
        assert knees == [kneed_knee(x, y) for x, y in series], name
        # Both outcomes occur, so the comparison covers the threshold's two sides.
        assert any(k is None for k in knees) or name == "row generator", name
        assert sum(k is not None for k in knees) > len(series) // 4, name
    assert len(collections["row generator"]) == 40 * 8 and len(collections["sample data"]) >= 10


def scipy_usl_fit(loads: list[float], iops: list[float]) -> UslFit | None:
    """The reference USL fit: scipy's trust-region least_squares per series, finite-difference Jacobian and
    tolerances at 1e-12, from the same two starts, with the same rule for keeping κ."""
    from scipy.optimize import least_squares, nnls

    x, y = np.asarray(loads, float), np.asarray(iops, float)
    if len(x) < MIN_USL_POINTS or y.max() <= 0:
        return None
    scale = float(y.max())
    yn = y / scale
    lam0 = max(float(np.max(yn / x)), 1e-12)
    measured = yn > 0
    z, n = lam0 * x[measured] / yn[measured] - 1, x[measured]

    def fit(with_kappa: bool):
        design = np.stack([n - 1, n * (n - 1)], axis=1) if with_kappa else (n - 1)[:, None]
        coef = np.minimum(nnls(design, z)[0], 1.0)
        k = int(with_kappa)
        results = []
        for start in ([lam0, *coef], [lam0, 0.1, 1e-4][: 2 + k]):
            results.append(
                least_squares(
                    lambda p: p[0] * x / (1 + p[1] * (x - 1) + (p[2] if k else 0.0) * x * (x - 1)) - yn,
                    start,
                    bounds=([1e-12, 0.0] + [0.0] * k, [np.inf, 1.0] + [1.0] * k),
                    x_scale=[max(lam0, 1e-6), 0.1] + [1e-3] * k,
                    xtol=1e-12,
                    ftol=1e-12,
                    gtol=1e-12,
                    max_nfev=2000,
                )
            )
        return min(results, key=lambda r: r.cost)

    best, without_kappa = fit(with_kappa=True), fit(with_kappa=False)
    if without_kappa.cost - best.cost <= 1e-9 * float(np.sum(yn**2)):
        best = without_kappa
    lam, sigma, kappa = [float(v) for v in best.x] + [0.0] * (3 - len(best.x))
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    r_squared = 1 - float(np.sum((best.fun * scale) ** 2)) / ss_tot if ss_tot > 0 else None
    peak = math.sqrt((1 - sigma) / kappa) if kappa > 0 and sigma < 1 else None
    return UslFit(lam * scale, sigma, kappa, r_squared, peak, peak and usl_iops(peak, lam * scale, sigma, kappa))


def test_batched_usl_fit_is_as_good_as_scipy_least_squares(row_generator_series: list[Series]) -> None:
    series = row_generator_series[:60] + sample_series() + list(disk_model_series(120, seed=3))
    series += list(odd_series(60, seed=4))
    fits = fit_usl_many(series)
    compared = with_kappa = 0
    for (loads, iops), fit in zip(series, fits, strict=True):
        reference = scipy_usl_fit(loads, iops)
        assert (fit is None) == (reference is None)
        if fit is None:
            continue
        compared += 1
        # As close to the data as the reference (the batched solver may land deeper in a shallow valley),
        # the same choice of a coherency term, and then the same peak.
        if reference.r_squared is None:
            assert fit.r_squared is None
        else:
            assert fit.r_squared >= reference.r_squared - 1e-6, (loads, iops)
        assert (fit.kappa > 0) == (reference.kappa > 0), (loads, iops)
        if reference.peak_outstanding_io is not None and reference.sigma < 1 - 1e-9:
            with_kappa += 1
            assert fit.peak_outstanding_io == pytest.approx(reference.peak_outstanding_io, rel=0.01), (loads, iops)
            assert fit.peak_iops == pytest.approx(reference.peak_iops, rel=0.01), (loads, iops)
        elif reference.peak_outstanding_io is not None:
            # σ ran into its bound 1 (IOPS falling from the first load on), where the USL has no peak: the
            # batched solver stops on the bound, least_squares a rounding error inside it (its iterates stay
            # strictly inside the bounds), which puts a "peak" at ~1e-8 outstanding I/O.
            assert fit.sigma == 1 and fit.peak_outstanding_io is None, (loads, iops)
    assert compared > 200 and with_kappa > 100


def test_batched_fits_equal_one_by_one_fits() -> None:
    # Series of different lengths share one batch (padded); each must come out as if fitted alone.
    series = list(disk_model_series(30, seed=5)) + [([1, 2, 4], [100.0, 190.0, 350.0]), ([1, 2, 4, 8], [0.0] * 4)]
    rows = series_fits_many(series)
    assert rows[-2]["usl_fitted"] is False and rows[-1]["usl_fitted"] is False
    for (loads, iops), row in zip(series, rows, strict=True):
        alone = series_fits(loads, iops)
        assert row.keys() == alone.keys()
        for key, value in alone.items():
            if isinstance(value, float):
                # The cost is flat to rounding within ~1e-9 of the minimum: where a solver stops in there
                # depends on the order of floating-point sums, not on the other series.
                assert row[key] == pytest.approx(value, rel=1e-7, abs=1e-12), key
            else:
                assert row[key] == value, key
