"""The USL fits of the load series (issue 22): the disks' fit (ingest/analytics.py fit_usl_many) with N = the load
(concurrent sessions, virtual users, databases) and X = the throughput per second, as the law was first made for.

ingest/build.py runs refit_loads between its two dbt phases, beside the disks' refit: after int_load_points holds
the points, before mart_load_usl_fits and mart_load_saturation read kneepoint_load_usl_fits.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pyarrow as pa

from kneepoint.ingest.analytics import fit_usl_many, usl_note
from kneepoint.ingest.schema import LOAD_USL_FITS
from kneepoint.ingest.warehouse import connect, insert_rows, transaction

if TYPE_CHECKING:
    from collections.abc import Callable

    from kneepoint.ingest.warehouse import Location


def load_series_fits(series: list[tuple[list[float], list[float], str]]) -> list[dict[str, object]]:
    """The USL columns of each (loads, throughputs per second, what the throughput counts) series, as
    kneepoint_load_usl_fits stores them."""
    rows = []
    fits = fit_usl_many([(loads, throughputs) for loads, throughputs, _ in series])
    for (loads, _, what), fit in zip(series, fits, strict=True):
        rows.append(
            {
                "usl_fitted": fit is not None,
                "usl_lambda_per_s": fit.lambda_iops if fit else None,
                "usl_sigma": fit.sigma if fit else None,
                "usl_kappa": fit.kappa if fit else None,
                "usl_peak_load": fit.peak_outstanding_io if fit else None,
                "usl_peak_throughput_per_s": fit.peak_iops if fit else None,
                "usl_r_squared": fit.r_squared if fit else None,
                "usl_note": usl_note(fit, loads, what=f"{what} per second"),
            }
        )
    return rows


def refit_loads(db: Location, every_series: bool, progress: Callable[[str], None] | None = None) -> float:
    """Fit the USL to the load series whose points this build changed (every series on a full refresh), into
    kneepoint_load_usl_fits in one transaction; the seconds it took."""
    started = time.perf_counter()
    changed = "" if every_series else "WHERE series_id IN (SELECT series_id FROM kneepoint_changed_series)"
    con = connect(db)
    try:
        points = con.execute(
            "SELECT series_id, disk_key, throughput_what, CAST(load AS DOUBLE PRECISION), "
            f"CAST(throughput_per_s AS DOUBLE PRECISION) FROM int_load_points {changed} ORDER BY series_id, load"
        ).fetchall()
        by_series: dict[str, tuple[str, str, list[float], list[float]]] = {}
        for series_id, disk_key, what, load, throughput in points:
            _, _, loads, throughputs = by_series.setdefault(series_id, (disk_key, what, [], []))
            loads.append(load)
            throughputs.append(throughput)
        if by_series and progress is not None:
            progress(f"fitting the USL to {len(by_series)} load series")
        fits = load_series_fits([(loads, xs, what) for _, what, loads, xs in by_series.values()])
        rows = [
            {"series_id": series_id, "disk_key": disk_key, "points": len(loads), **fit}
            for (series_id, (disk_key, _, loads, _)), fit in zip(by_series.items(), fits, strict=True)
        ]
        table = pa.Table.from_pylist(rows, schema=LOAD_USL_FITS.arrow_schema())
        with transaction(con):
            con.execute(f"DELETE FROM kneepoint_load_usl_fits {changed}")
            insert_rows(con, LOAD_USL_FITS.name, table)
    finally:
        con.close()
    return round(time.perf_counter() - started, 4)
