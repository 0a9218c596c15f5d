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
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# Three parameters need at least one point more to say anything about the fit's quality.
MIN_USL_POINTS = 4
# Kneedle compares each point with the chord from the first to the last: two points have no bend.
MIN_KNEEDLE_POINTS = 3
# Kneedle's sensitivity: how many points' worth of flattening make a knee (the paper's and kneed's default).
S_KNEEDLE = 1.0
# Below this R² the curve does not follow the USL closely enough for its peak to mean much.
USL_POOR_FIT_R_SQUARED = 0.8


@dataclass(frozen=True, slots=True)
class UslFit:
    """X(N) = λN / (1 + σ(N−1) + κN(N−1)), N = outstanding I/O, X = IOPS."""

    lambda_iops: float  # IOPS one outstanding I/O would deliver without contention
    sigma: float  # contention: the share of work that serializes
    kappa: float  # coherency: the cost each outstanding I/O adds to every other
    r_squared: float | None  # None when the IOPS do not vary at all
    # sqrt((1−σ)/κ); None without a coherency term, or with σ = 1 (IOPS falling from the first load): no peak
    peak_outstanding_io: float | None
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
    return fit_usl_many([(loads, iops)])[0]


def fit_usl_many(series: Sequence[tuple[Sequence[float], Sequence[float]]]) -> list[UslFit | None]:
    """fit_usl of many (loads, IOPS) series at once: one batched solver run over all of them (a mart holds
    thousands of series of a dozen points; fitting them one by one spends its time in per-call overhead)."""
    sorted_series = [_series(loads, iops) for loads, iops in series]
    fitted = [i for i, (x, y) in enumerate(sorted_series) if len(x) >= MIN_USL_POINTS and y.max() > 0]
    fits: list[UslFit | None] = [None] * len(series)
    if not fitted:
        return fits
    width = max(len(sorted_series[i][0]) for i in fitted)
    # Padding points sit at load 1 with weight 0: they add nothing to any residual or derivative.
    x = np.ones((len(fitted), width))
    y = np.zeros((len(fitted), width))
    weight = np.zeros((len(fitted), width))
    for row, i in enumerate(fitted):
        xs, ys = sorted_series[i]
        x[row, : len(xs)], y[row, : len(ys)], weight[row, : len(xs)] = xs, ys, 1.0
    # Fit on IOPS scaled to the peak so the three parameters are of comparable size.
    scale = y.max(axis=1)
    y = y / scale[:, None]

    # Four fits per series in one batch: with and without κ, each from two starts. σ and κ trade off along
    # shallow valleys on short sweeps: a second, generic start guards against the linearized one landing in
    # the wrong valley.
    with_kappa_start = _linearized_start(x, y, weight, with_kappa=True)
    without_kappa_start = _linearized_start(x, y, weight, with_kappa=False)
    generic = np.column_stack([with_kappa_start[:, 0], np.full(len(x), 0.1), np.full(len(x), 1e-4)])
    starts = np.concatenate([with_kappa_start, generic, without_kappa_start, generic * [1.0, 1.0, 0.0]])
    kappa_free = np.repeat([True, True, False, False], len(x))
    params, cost = _fit_usl_batch(np.tile(x, (4, 1)), np.tile(y, (4, 1)), np.tile(weight, (4, 1)), starts, kappa_free)
    params, cost = params.reshape(4, len(x), 3), cost.reshape(4, len(x))
    # Ties go to the linearized start.
    with_kappa = np.where(cost[1] < cost[0], 1, 0)
    without_kappa = np.where(cost[3] < cost[2], 3, 2)
    rows = np.arange(len(x))
    # κ is kept only where it improves the fit: a coherency term the data does not need would put a peak
    # at sqrt((1−σ)/κ) that nothing measured supports (astronomically far out, or at a flat series' start).
    keep_kappa = cost[without_kappa, rows] - cost[with_kappa, rows] > 1e-9 * np.sum(y**2, axis=1)
    chosen = np.where(keep_kappa, with_kappa, without_kappa)
    best, best_cost = params[chosen, rows], cost[chosen, rows]

    for row, i in enumerate(fitted):
        lam, sigma, kappa = (float(v) for v in best[row])
        ys = sorted_series[i][1]
        lambda_iops = lam * float(scale[row])
        ss_res = 2.0 * float(best_cost[row]) * float(scale[row]) ** 2
        ss_tot = float(np.sum((ys - ys.mean()) ** 2))
        r_squared = 1.0 - ss_res / ss_tot if ss_tot > 0 else None
        peak_x = peak_y = None
        if kappa > 0 and sigma < 1:
            peak_x = math.sqrt((1 - sigma) / kappa)
            peak_y = usl_iops(peak_x, lambda_iops, sigma, kappa)
        fits[i] = UslFit(lambda_iops, sigma, kappa, r_squared, peak_x, peak_y)
    return fits


# Bounds of (λ, σ, κ), λ in IOPS scaled to the series' peak.
_USL_LOWER = np.array([1e-12, 0.0, 0.0])
_USL_UPPER = np.array([np.inf, 1.0, 1.0])
_LM_MAX_ITERATIONS = 500


def _usl_residuals(x: np.ndarray, y: np.ndarray, weight: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Residuals (model − measured) of each series at parameters p (one row of λ, σ, κ per series), and the
    USL denominators 1 + σ(N−1) + κN(N−1) the Jacobian reuses."""
    denominator = 1 + p[:, 1:2] * (x - 1) + p[:, 2:3] * x * (x - 1)
    return weight * (p[:, 0:1] * x / denominator - y), denominator


def _usl_jacobian(x: np.ndarray, weight: np.ndarray, p: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """∂residual/∂(λ, σ, κ), analytic: ∂X/∂λ = N/D, ∂X/∂σ = −λN(N−1)/D², ∂X/∂κ = N · ∂X/∂σ."""
    d_lambda = weight * x / denominator
    d_sigma = -p[:, 0:1] * d_lambda * (x - 1) / denominator
    return np.stack([d_lambda, d_sigma, d_sigma * x], axis=2)


def _fit_usl_batch(
    x: np.ndarray, y: np.ndarray, weight: np.ndarray, start: np.ndarray, kappa_free: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Bounded Levenberg–Marquardt, one problem per row, all rows at once; returns the parameters and the
    cost (half the sum of squared residuals) of each row.

    Bounds are kept by projection: a parameter at its bound whose gradient points out of the box is held there
    for the step (as is κ where kappa_free is False), the others take the damped Gauss–Newton step, and the
    result is clipped into the box. Damping follows Nielsen's gain-ratio rule, scaled by diag(JᵀJ)
    (Marquardt), so λ, σ and κ, orders of magnitude apart, need no manual scaling. A row stops when a step
    no longer lowers its cost by more than rounding, or when no damping finds a lower cost."""
    rows = len(x)
    p = np.clip(start, _USL_LOWER, _USL_UPPER)
    p[~kappa_free, 2] = 0.0
    residuals, denominator = _usl_residuals(x, y, weight, p)
    cost = 0.5 * np.einsum("bm,bm->b", residuals, residuals)
    damping = np.full(rows, 1e-3)
    damping_growth = np.full(rows, 2.0)
    todo = np.arange(rows)
    eye = np.eye(3)
    for _ in range(_LM_MAX_ITERATIONS):
        if not todo.size:
            break
        xs, ys, ws, ps = x[todo], y[todo], weight[todo], p[todo]
        jacobian = _usl_jacobian(xs, ws, ps, denominator[todo])
        gradient = np.einsum("bmi,bm->bi", jacobian, residuals[todo])
        hessian = np.einsum("bmi,bmj->bij", jacobian, jacobian)
        held = (
            ((ps <= _USL_LOWER) & (gradient > 0))
            | ((ps >= _USL_UPPER) & (gradient < 0))
            | np.column_stack([np.zeros((len(todo), 2), bool), ~kappa_free[todo]])
        )
        moving = ~held
        diagonal = np.diagonal(hessian, axis1=1, axis2=2)
        # A parameter the residuals do not depend on (zero column) still needs a damping term to stay solvable.
        diagonal = np.maximum(diagonal, 1e-12 * diagonal.max(axis=1, keepdims=True) + 1e-300)
        system = hessian + damping[todo, None, None] * diagonal[:, :, None] * eye
        system = system * (moving[:, :, None] & moving[:, None, :]) + eye * held[:, :, None]
        rhs = -np.where(held, 0.0, gradient)[..., None]
        try:
            step = np.linalg.solve(system, rhs)[..., 0]
        except np.linalg.LinAlgError:  # a system singular to rounding: the least-norm step instead
            step = (np.linalg.pinv(system) @ rhs)[..., 0]
        trial = np.clip(ps + step, _USL_LOWER, _USL_UPPER)
        step = trial - ps
        trial_residuals, trial_denominator = _usl_residuals(xs, ys, ws, trial)
        trial_cost = 0.5 * np.einsum("bm,bm->b", trial_residuals, trial_residuals)
        reduction = cost[todo] - trial_cost
        predicted = -np.einsum("bi,bi->b", gradient, step) - 0.5 * np.einsum("bi,bij,bj->b", step, hessian, step)
        gain = np.divide(reduction, predicted, out=np.zeros_like(reduction), where=predicted > 0)
        accepted = (reduction > 0) & (gain > 0)

        taken = todo[accepted]
        p[taken] = trial[accepted]
        cost[taken] = trial_cost[accepted]
        residuals[taken] = trial_residuals[accepted]
        denominator[taken] = trial_denominator[accepted]
        damping[taken] = np.maximum(damping[taken] * np.maximum(1 / 3, 1 - (2 * gain[accepted] - 1) ** 3), 1e-12)
        damping_growth[taken] = 2.0
        refused = todo[~accepted]
        damping[refused] *= damping_growth[refused]
        damping_growth[refused] *= 2.0

        converged = (accepted & (reduction <= 1e-15 * (cost[todo] + reduction))) | (damping[todo] > 1e12)
        todo = todo[~converged]
    return p, cost


def _linearized_start(x: np.ndarray, y: np.ndarray, weight: np.ndarray, with_kappa: bool) -> np.ndarray:
    """Starting points (λ, σ, κ per row): X(N)/N <= λ at every N (the denominator is >= 1), so λ starts at
    the best per-I/O rate; then λN/X − 1 = σ(N−1) + κN(N−1) is linear in σ and κ, solved by non-negative
    least squares over the points that delivered any IOPS."""
    lam0 = np.maximum(np.max(y / x, axis=1), 1e-12)
    measured = (weight > 0) & (y > 0)
    z = np.where(measured, lam0[:, None] * x / np.where(measured, y, 1.0) - 1, 0.0)
    a = np.where(measured, x - 1, 0.0)
    b = a * x
    if with_kappa:
        sigma0, kappa0 = _nnls_two_columns(a, b, z)
    else:
        sigma0, kappa0 = _nnls_one_column(a, z), np.zeros(len(x))
    return np.column_stack([lam0, np.minimum(sigma0, 1.0), np.minimum(kappa0, 1.0)])


def _nnls_one_column(a: np.ndarray, z: np.ndarray) -> np.ndarray:
    """argmin over c >= 0 of |a c − z|², per row."""
    aa = np.einsum("bm,bm->b", a, a)
    return np.maximum(np.divide(np.einsum("bm,bm->b", a, z), aa, out=np.zeros(len(a)), where=aa > 0), 0.0)


def _nnls_two_columns(a: np.ndarray, b: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """argmin over c, d >= 0 of |a c + b d − z|², per row: the problem is convex, so its minimum is the best of
    the unconstrained solution (where it is non-negative) and the minima on the two edges c = 0 and d = 0."""
    aa, ab, bb = (np.einsum("bm,bm->b", u, v) for u, v in ((a, a), (a, b), (b, b)))
    az, bz = np.einsum("bm,bm->b", a, z), np.einsum("bm,bm->b", b, z)
    determinant = aa * bb - ab * ab
    regular = determinant > 1e-12 * np.maximum(aa * bb, 1e-300)
    safe = np.where(regular, determinant, 1.0)
    inner = np.column_stack([(bb * az - ab * bz) / safe, (aa * bz - ab * az) / safe])
    candidates = np.stack(
        [
            inner,
            np.column_stack([_nnls_one_column(a, z), np.zeros(len(a))]),
            np.column_stack([np.zeros(len(a)), _nnls_one_column(b, z)]),
        ]
    )
    feasible = np.stack([regular & np.all(inner >= 0, axis=1), np.ones(len(a), bool), np.ones(len(a), bool)])
    fitted = candidates[..., 0:1] * a + candidates[..., 1:2] * b
    misfit = np.where(feasible, np.sum((fitted - z) ** 2, axis=2), np.inf)
    best = np.argmin(misfit, axis=0)
    coefficients = candidates[best, np.arange(len(a))]
    return coefficients[:, 0], coefficients[:, 1]


def usl_note(fit: UslFit | None, loads: Sequence[float], what: str = "IOPS") -> str | None:
    """What a reader should know before trusting the fit; None when there is nothing to add. `what`: the
    series' throughput in words (a load series says "throughput")."""
    if fit is None:
        return f"USL not fitted: it needs at least {MIN_USL_POINTS} loads, the series has {len(loads)}"
    notes = []
    if fit.r_squared is not None and fit.r_squared < USL_POOR_FIT_R_SQUARED:
        notes.append(
            f"poor fit (R² {fit.r_squared:.2f}): the curve does not follow the USL "
            "(noise, a cache or a bandwidth cap), so its peak means little"
        )
    if fit.peak_outstanding_io is None and fit.kappa > 0:
        notes.append(f"{what} fall from the first load on (σ = 1): the fit predicts no peak")
    elif fit.peak_outstanding_io is None:
        notes.append(
            f"no coherency term (κ = 0): the fit predicts no peak, {what} level off towards "
            f"λ/σ = {fit.lambda_iops / fit.sigma:,.0f}"
            if fit.sigma > 0
            else "no contention or coherency: the fit predicts linear scaling"
        )
    elif fit.peak_outstanding_io > max(loads):
        notes.append(f"predicted peak lies beyond the tested range (largest load {max(loads):g})")
    return "; ".join(notes) or None


def kneedle_knee(loads: Sequence[float], iops: Sequence[float]) -> float | None:
    """The Kneedle knee (concave increasing, S = 1, offline) of IOPS against load, as one of the measured loads.

    Run on the loads as measured (linear axis), as the method is published: on a log axis a curve that is
    still rising shows a knee at its first point. None with fewer than MIN_KNEEDLE_POINTS loads, a flat
    curve, or no knee above Kneedle's threshold.

    Satopää et al., "Finding a 'Kneedle' in a Haystack" (2011), as kneed (its reference implementation) runs
    it with interp_method="interp1d", online=False: normalize both axes to 0..1; the difference curve is
    y − x; its local maxima and minima compare each point with both neighbours (ties count, the ends with
    their one neighbour); walking from the first maximum, a maximum sets the threshold at its difference
    minus S x the mean x step and arms the detection, a minimum disarms it; the knee is the last maximum
    when the next point's difference falls below the threshold. kneed costs milliseconds per call in
    overhead; a mart fits thousands of series (tests/test_analysis.py checks both agree)."""
    x, y = _series(loads, iops)
    if len(x) < MIN_KNEEDLE_POINTS or y.max() == y.min():
        return None
    x_normalized = (x - x.min()) / (x.max() - x.min())
    difference = (y - y.min()) / (y.max() - y.min()) - x_normalized
    before = np.concatenate([difference[:1], difference[:-1]])
    after = np.concatenate([difference[1:], difference[-1:]])
    is_maximum = (difference >= before) & (difference >= after)
    is_minimum = (difference <= before) & (difference <= after)
    if not is_maximum.any():
        return None
    drop = S_KNEEDLE * abs(np.diff(x_normalized).mean())
    armed, threshold, knee = True, 0.0, 0
    for i in range(int(np.argmax(is_maximum)), len(x) - 1):
        if is_maximum[i]:
            armed, threshold, knee = True, difference[i] - drop, i
        if is_minimum[i]:
            armed, threshold = False, 0.0
        if armed and difference[i + 1] < threshold:
            return float(x[knee])
    return None


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
    return series_fits_many([(loads, iops)])[0]


def series_fits_many(series: Sequence[tuple[Sequence[float], Sequence[float]]]) -> list[dict[str, object]]:
    """series_fits of many series, the USL fits batched (fit_usl_many)."""
    rows = []
    for (loads, iops), fit in zip(series, fit_usl_many(series), strict=True):
        rows.append(
            {
                "usl_fitted": fit is not None,
                "usl_lambda_iops": fit.lambda_iops if fit else None,
                "usl_sigma": fit.sigma if fit else None,
                "usl_kappa": fit.kappa if fit else None,
                "usl_peak_outstanding_io": fit.peak_outstanding_io if fit else None,
                "usl_peak_iops": fit.peak_iops if fit else None,
                "usl_r_squared": fit.r_squared if fit else None,
                "usl_note": usl_note(fit, loads),
                "kneedle_outstanding_io": kneedle_knee(loads, iops),
            }
        )
    return rows


@dataclass(frozen=True, slots=True)
class ResponsePoint:
    """One point of a load series: its load, throughput per second and response times (ms)."""

    load: float
    throughput_per_s: float
    response_p99_ms: float | None
    response_p95_ms: float | None
    response_avg_ms: float | None


@dataclass(frozen=True, slots=True)
class ResponseTargetPoint:
    """The most throughput a load series delivers with its response time under a target, and at which load."""

    load: float
    throughput_per_s: float
    response_ms: float
    response_metric: str  # "p99", "p95", or "mean": the strictest the point has


def response_target_point(points: Sequence[ResponsePoint], target_ms: float) -> ResponseTargetPoint | None:
    """The load series' highest throughput among the loads whose response time (p99, else p95, else the mean) is
    under `target_ms`; the smaller load on a tie. Unlike a disk's latency target (the largest load under it), an
    application past its peak delivers less at a larger load, so the answer is the best throughput, not the last
    load. Points without a response time are skipped; None when no point meets the target."""
    if not (target_ms > 0 and math.isfinite(target_ms)):
        raise ValueError(f"response-time target must be a positive number of ms, not {target_ms!r}")
    best: ResponseTargetPoint | None = None
    for p in sorted(points, key=lambda p: p.load):
        measured = [
            (v, m)
            for v, m in ((p.response_p99_ms, "p99"), (p.response_p95_ms, "p95"), (p.response_avg_ms, "mean"))
            if v is not None
        ]
        if not measured:
            continue
        response, metric = measured[0]
        if response < target_ms and (best is None or p.throughput_per_s > best.throughput_per_s):
            best = ResponseTargetPoint(p.load, p.throughput_per_s, response, metric)
    return best
