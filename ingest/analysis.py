"""Second opinions on a series' saturation, beside the rule (which lives in SQL, macros/saturation.sql):
a Universal Scalability Law fit, the Kneedle knee, and the largest load that meets a latency target.

Pure functions on plain data (loads and IOPS as sequences of numbers); no I/O. A series is one disk's points
of one workload, one point per load, load = outstanding I/O (threads x queue depth).

    >>> fit = fit_usl([1, 2, 4, 8, 16, 32], [usl_iops(n, 1000.0, 0.05, 0.001) for n in (1, 2, 4, 8, 16, 32)])
    >>> round(fit.sigma, 4), round(fit.kappa, 5), round(fit.peak_outstanding_io, 1)
    (0.05, 0.001, 30.8)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# Three parameters need at least one point more to say anything about the fit's quality.
MIN_USL_POINTS = 4
# Kneedle compares each point with the chord from the first to the last: two points have no bend.
MIN_KNEEDLE_POINTS = 3
# Below this R² the curve does not follow the USL closely enough for its peak to mean much.
USL_POOR_FIT_R_SQUARED = 0.8


@dataclass(frozen=True, slots=True)
class UslFit:
    """X(N) = λN / (1 + σ(N−1) + κN(N−1)), N = outstanding I/O, X = IOPS."""

    lambda_iops: float  # IOPS one outstanding I/O would deliver without contention
    sigma: float  # contention: the share of work that serializes
    kappa: float  # coherency: the cost each outstanding I/O adds to every other
    r_squared: float | None  # None when the IOPS do not vary at all
    peak_outstanding_io: float | None  # sqrt((1−σ)/κ); None without a coherency term (no peak)
    peak_iops: float | None


@dataclass(frozen=True, slots=True)
class LatencyPoint:
    load: float  # outstanding I/O (the queue depth in a per-thread view)
    iops: float
    latency_p99_ms: float | None
    latency_avg_ms: float | None


@dataclass(frozen=True, slots=True)
class LatencyTargetPoint:
    """The largest load whose latency stays under the target, and what it delivers."""

    load: float
    iops: float
    latency_ms: float
    latency_metric: str  # "p99", or "mean" where the tool gave no p99 for that point


def usl_iops(outstanding_io: float, lambda_iops: float, sigma: float, kappa: float) -> float:
    n = outstanding_io
    return lambda_iops * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def _series(loads: Sequence[float], iops: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """The points sorted by load; a series has one point per load (the caller keeps the best run)."""
    if len(loads) != len(iops):
        raise ValueError(f"{len(loads)} loads but {len(iops)} IOPS values")
    x = np.asarray(loads, dtype=float)
    y = np.asarray(iops, dtype=float)
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("loads and IOPS must be finite numbers")
    if np.any(x <= 0) or np.any(y < 0):
        raise ValueError("loads must be positive and IOPS not negative")
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    if np.any(np.diff(x) == 0):
        raise ValueError("a series has one point per load: keep the best run of each load first")
    return x, y


def fit_usl(loads: Sequence[float], iops: Sequence[float]) -> UslFit | None:
    """Least-squares USL fit; None with fewer than MIN_USL_POINTS loads or no IOPS at all."""
    from scipy.optimize import least_squares

    x, y = _series(loads, iops)
    if len(x) < MIN_USL_POINTS or y.max() <= 0:
        return None
    # Fit on IOPS scaled to the peak so the three parameters are of comparable size.
    scale = float(y.max())
    yn = y / scale

    def residuals(p: np.ndarray) -> np.ndarray:
        lam, sigma, kappa = p if len(p) == 3 else (*p, 0.0)
        return lam * x / (1 + sigma * (x - 1) + kappa * x * (x - 1)) - yn

    def best_fit(with_kappa: bool):
        k = 1 if with_kappa else 0
        lam0, sigma0, kappa0 = _linearized_start(x, yn, with_kappa)
        best = None
        # σ and κ trade off along shallow valleys on short sweeps: a second, generic start guards against the
        # linearized one landing in the wrong valley.
        for start in ([lam0, sigma0, kappa0][: 2 + k], [lam0, 0.1, 1e-4][: 2 + k]):
            res = least_squares(
                residuals,
                start,
                bounds=([1e-12, 0.0] + [0.0] * k, [np.inf, 1.0] + [1.0] * k),
                method="trf",
                x_scale=[max(lam0, 1e-6), 0.1] + [1e-3] * k,
                xtol=1e-12,
                ftol=1e-12,
                gtol=1e-12,
                max_nfev=2000,
            )
            if best is None or res.cost < best.cost:
                best = res
        return best

    best = best_fit(with_kappa=True)
    without_kappa = best_fit(with_kappa=False)
    # κ is kept only where it improves the fit: a coherency term the data does not need would put a peak
    # at sqrt((1−σ)/κ) that nothing measured supports (astronomically far out, or at a flat series' start).
    if without_kappa.cost - best.cost <= 1e-9 * float(np.sum(yn**2)):
        best = without_kappa
    lam, sigma, kappa = [float(v) for v in best.x] + [0.0] * (3 - len(best.x))
    lambda_iops = lam * scale
    ss_res = float(np.sum((best.fun * scale) ** 2))
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    r_squared = 1.0 - ss_res / ss_tot if ss_tot > 0 else None
    peak_x = peak_y = None
    if kappa > 0 and sigma < 1:
        peak_x = math.sqrt((1 - sigma) / kappa)
        peak_y = usl_iops(peak_x, lambda_iops, sigma, kappa)
    return UslFit(lambda_iops, sigma, kappa, r_squared, peak_x, peak_y)


def _linearized_start(x: np.ndarray, y: np.ndarray, with_kappa: bool) -> tuple[float, float, float]:
    """A starting point for the fit: X(N)/N <= λ at every N (the denominator is >= 1), so λ starts at the best
    per-I/O rate; then λN/X − 1 = σ(N−1) + κN(N−1) is linear in σ and κ, solved by non-negative least squares."""
    from scipy.optimize import nnls

    lam0 = max(float(np.max(y / x)), 1e-12)
    measured = y > 0
    z = lam0 * x[measured] / y[measured] - 1
    n = x[measured]
    design = np.stack([n - 1, n * (n - 1)], axis=1) if with_kappa else (n - 1)[:, None]
    coef = nnls(design, z)[0] if len(n) else np.zeros(design.shape[1])
    sigma0 = min(float(coef[0]), 1.0)
    kappa0 = min(float(coef[1]), 1.0) if with_kappa else 0.0
    return lam0, sigma0, kappa0


def usl_note(fit: UslFit | None, loads: Sequence[float]) -> str | None:
    """What a reader should know before trusting the fit; None when there is nothing to add."""
    if fit is None:
        return f"USL not fitted: it needs at least {MIN_USL_POINTS} loads, the series has {len(loads)}"
    notes = []
    if fit.r_squared is not None and fit.r_squared < USL_POOR_FIT_R_SQUARED:
        notes.append(
            f"poor fit (R² {fit.r_squared:.2f}): the curve does not follow the USL "
            "(noise, a cache or a bandwidth cap), so its peak means little"
        )
    if fit.peak_outstanding_io is None:
        notes.append(
            "no coherency term (κ = 0): the fit predicts no peak, IOPS level off towards "
            f"λ/σ = {fit.lambda_iops / fit.sigma:,.0f}"
            if fit.sigma > 0
            else "no contention or coherency: the fit predicts linear scaling"
        )
    elif fit.peak_outstanding_io > max(loads):
        notes.append(f"predicted peak lies beyond the tested range (largest load {max(loads):g})")
    return "; ".join(notes) or None


def kneedle_knee(loads: Sequence[float], iops: Sequence[float]) -> float | None:
    """The Kneedle knee (kneed, concave increasing, S = 1) of IOPS against load, as one of the measured loads.

    Run on the loads as measured (linear axis), as the method is published: on a log axis a curve that is
    still rising shows a knee at its first point. None with fewer than MIN_KNEEDLE_POINTS loads, a flat
    curve, or no knee above Kneedle's threshold."""
    from kneed import KneeLocator

    x, y = _series(loads, iops)
    if len(x) < MIN_KNEEDLE_POINTS or y.max() == y.min():
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kneed warns when it finds no knee; None says so
        knee = KneeLocator(x, y, curve="concave", direction="increasing", S=1.0).knee
    if knee is None:
        return None
    return float(x[int(np.argmin(np.abs(x - float(knee))))])


def latency_target_point(points: Sequence[LatencyPoint], target_ms: float) -> LatencyTargetPoint | None:
    """The largest load whose p99 latency (mean where the point has no p99) is under `target_ms`.

    Points without any latency are skipped; None when no point meets the target."""
    if not (target_ms > 0 and math.isfinite(target_ms)):
        raise ValueError(f"latency target must be a positive number of ms, not {target_ms!r}")
    best: LatencyTargetPoint | None = None
    for p in points:
        if p.latency_p99_ms is not None:
            latency, metric = p.latency_p99_ms, "p99"
        elif p.latency_avg_ms is not None:
            latency, metric = p.latency_avg_ms, "mean"
        else:
            continue
        if latency < target_ms and (best is None or p.load > best.load):
            best = LatencyTargetPoint(p.load, p.iops, latency, metric)
    return best


def series_fits(loads: Sequence[float], iops: Sequence[float]) -> dict[str, object]:
    """The USL and Kneedle columns of one series, as mart_usl_fits stores them."""
    fit = fit_usl(loads, iops)
    knee = kneedle_knee(loads, iops)
    return {
        "usl_fitted": fit is not None,
        "usl_lambda_iops": fit.lambda_iops if fit else None,
        "usl_sigma": fit.sigma if fit else None,
        "usl_kappa": fit.kappa if fit else None,
        "usl_peak_outstanding_io": fit.peak_outstanding_io if fit else None,
        "usl_peak_iops": fit.peak_iops if fit else None,
        "usl_r_squared": fit.r_squared if fit else None,
        "usl_note": usl_note(fit, loads),
        "kneedle_outstanding_io": knee,
    }
