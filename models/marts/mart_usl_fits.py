"""One row per series: the Universal Scalability Law fit of IOPS against outstanding I/O and the Kneedle knee,
second opinions beside the saturation rule (mart_saturation_points joins them). The arithmetic is in
ingest/analysis.py; this model only feeds it the series' points (int_saturation_points, one per load)."""

from itertools import groupby

import pyarrow as pa

from ingest.analysis import series_fits_many

KEY = ("series_id", "disk_key", "pattern", "operation", "read_pct", "block_size_bytes", "direction")

SCHEMA = pa.schema(
    [
        ("series_id", pa.string()),
        ("disk_key", pa.string()),
        ("pattern", pa.string()),
        ("operation", pa.string()),
        ("read_pct", pa.float64()),
        ("block_size_bytes", pa.int64()),
        ("direction", pa.string()),
        ("points", pa.int64()),
        ("usl_fitted", pa.bool_()),
        ("usl_lambda_iops", pa.float64()),
        ("usl_sigma", pa.float64()),
        ("usl_kappa", pa.float64()),
        ("usl_peak_outstanding_io", pa.float64()),
        ("usl_peak_iops", pa.float64()),
        ("usl_r_squared", pa.float64()),
        ("usl_note", pa.string()),
        ("kneedle_outstanding_io", pa.float64()),
    ]
)


def model(dbt, session):
    dbt.config(materialized="table")
    rows = (
        dbt.ref("int_saturation_points")
        .project(", ".join(KEY) + ", outstanding_io, iops")
        .order("series_id, outstanding_io")
        .fetchall()
    )
    keys, series = [], []
    for key, group in groupby(rows, key=lambda r: r[: len(KEY)]):
        points = list(group)
        keys.append(key)
        series.append(([float(p[len(KEY)]) for p in points], [float(p[len(KEY) + 1]) for p in points]))
    # All series at once: the USL fits run as one batch (ingest.analysis.fit_usl_many).
    out: dict[str, list] = {f.name: [] for f in SCHEMA}
    for key, (loads, _), fits in zip(keys, series, series_fits_many(series), strict=True):
        row = {**dict(zip(KEY, key, strict=True)), "points": len(loads), **fits}
        for name, values in out.items():
            values.append(row[name])
    return pa.table(out, schema=SCHEMA)
