"""One row per series: the Universal Scalability Law fit of IOPS against outstanding I/O and the Kneedle knee,
second opinions beside the saturation rule (mart_saturation_points joins them). The arithmetic is in
ingest/analytics.py; this model only feeds it the series' points (int_saturation_points, one per load).
Incremental by series, like the points it reads: a change refits the series whose points it changed."""

import pyarrow as pa

from kneepoint.ingest.analytics import series_fits_many

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
    dbt.config(materialized="incremental", incremental_strategy="replace_changed", unique_key="series_id")
    points = dbt.ref("int_saturation_points")
    if dbt.is_incremental:
        points = points.join(dbt.source("build", "kneepoint_changed_series"), "series_id", how="semi")
    # The keys once per series and the points as two float arrays, both in series_id order: at 10M fact rows the
    # 0.9M points fetched as tuples of nine Python values took hundreds of MB.
    keys = points.aggregate(", ".join(KEY) + ", count(*) AS n", ", ".join(KEY)).order("series_id").fetchall()
    numbers = points.query(
        "points", "SELECT outstanding_io::DOUBLE AS x, iops::DOUBLE AS y FROM points ORDER BY series_id, outstanding_io"
    ).fetchnumpy()
    series, start = [], 0
    for key in keys:
        end = start + key[-1]
        series.append((numbers["x"][start:end].tolist(), numbers["y"][start:end].tolist()))
        start = end
    # All series at once: the USL fits run as one batch (ingest.analysis.fit_usl_many).
    out: dict[str, list] = {f.name: [] for f in SCHEMA}
    for key, (loads, _), fits in zip(keys, series, series_fits_many(series), strict=True):
        row = {**dict(zip(KEY, key[:-1], strict=True)), "points": len(loads), **fits}
        for name, values in out.items():
            values.append(row[name])
    return pa.table(out, schema=SCHEMA)
