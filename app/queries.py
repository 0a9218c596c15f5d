"""Reads of the marts for the app and the report. SQL lives here, not in the pages; results are polars frames.

The rules the app shows are computed once, in the models (the run a curve goes through, the loads that get a
percentile curve, a statement's place on a curve, the unit check, the saturation point): these reads select them.
The SQL is plain and portable (selects, joins on keys, WHERE / GROUP BY / ORDER BY; lists are passed as repeated
`?` placeholders), so the same reads can run on PostgreSQL. The one exception is the saturation rule at a
tolerance other than the built one: the table macro `saturation_points(tol)` the marts store, as the command
line reads it.

Every read filters in the database (disks, series) so a page never pulls the whole fact table; the pages cache
results by `data_version()` (app/web/state.py). Each read opens and closes its connection, so a `kneepoint ingest`
in a shell can take the write lock between two reads; the app keeps the DuckDB file open for the length of one page
run (app/web/uploads.kept_open), so between two page runs there.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import polars as pl

from kneepoint.ingest.analytics import (
    LatencyPoint,
    LatencyTargetPoint,
    ResponsePoint,
    ResponseTargetPoint,
    latency_target_point,
    response_target_point,
)
from kneepoint.ingest.warehouse import Location, connect, exists, is_postgres, locate


class Series(NamedTuple):
    """One workload: what a curve holds for each disk."""

    pattern: str
    operation: str
    read_pct: float
    block_size_bytes: int
    direction: str


# The filter every series read shares; parameters in Series order.
_SERIES_WHERE = "pattern = ? AND operation = ? AND read_pct = ? AND block_size_bytes = ? AND direction = ?"


def _series_where(prefix: str) -> str:
    """_SERIES_WHERE on the columns of one table of a join (`prefix` 'r.')."""
    return " AND ".join(f"{prefix}{c} = ?" for c in Series._fields)


SERIES_ORDER = "pattern, operation, read_pct DESC, block_size_bytes, direction"


def _in(column: str, values: Sequence[Any]) -> str:
    """`column IN (?, ?, ...)` for `values` (passed as parameters); a list that cannot match when empty."""
    return f"{column} IN ({', '.join('?' * len(values))})" if values else "1 = 0"


def current_db() -> Location:
    return locate()


def data_version(db: Location | None = None) -> tuple[float, float]:
    """Changes whenever the warehouse changes: the cache key for every read. A DuckDB file: its (and its WAL's)
    modification time, read without opening it. PostgreSQL: the newest change and the newest build."""
    db = db or current_db()
    if is_postgres(db):
        if not exists(db):
            return (0.0, 0.0)
        con = connect(db, read_only=True)
        try:
            return con.execute(
                "SELECT (SELECT coalesce(max(change_seq), 0) FROM raw_file_changes), "
                "(SELECT coalesce(max(extract(epoch FROM finished_at)), 0) FROM kneepoint_build_state)"
            ).fetchone()
        finally:
            con.close()
    wal = Path(str(db) + ".wal")
    return (db.stat().st_mtime if db.exists() else 0.0, wal.stat().st_mtime if wal.exists() else 0.0)


def query(sql: str, params: Sequence | None = None, db: Location | None = None) -> pl.DataFrame:
    con = connect(db or current_db())
    try:
        return pl.from_arrow(con.sql(sql, params=list(params or [])).to_arrow_table())
    finally:
        con.close()


def tables(db: Location | None = None) -> frozenset[str]:
    """Tables and views in the warehouse: which marts a page can read (a model may not be built yet)."""
    db = db or current_db()
    if not exists(db):
        return frozenset()
    return frozenset(
        query("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()", db=db)[
            "table_name"
        ].to_list()
    )


def can_write(db: Location | None = None) -> bool:
    """Whether this account may store, relabel and delete files: on PostgreSQL, its privileges on the raw layer
    (or on the schema, before the raw layer exists); a DuckDB file, whether the file (or its folder) is writable.
    Upload and Stored files say so up front instead of failing on Store."""
    db = db or current_db()
    if is_postgres(db):
        sql = (
            "SELECT has_table_privilege('raw_files', 'INSERT') AND has_table_privilege('raw_files', 'DELETE')"
            if "raw_files" in tables(db)
            else "SELECT has_schema_privilege(current_schema(), 'CREATE')"
        )
        return bool(query(f"{sql} AS ok", db=db)["ok"][0])
    return os.access(db if db.exists() else db.parent, os.W_OK)


def has_marts(db: Location | None = None) -> bool:
    return "fct_io_results" in tables(db)


def disk_key(disk: str, host: str | None) -> str:
    """The name the marts give a disk (macro disk_key in macros/labels.sql): `disk`, or `disk @ host`."""
    disk, host = disk.strip(), (host or "").strip()
    return f"{disk} @ {host}" if host else disk


# -- disks and series -------------------------------------------------------------------------------------------


def disks(db: Location | None = None) -> pl.DataFrame:
    """Disks with benchmark results, the ones curves can be drawn for."""
    return query(
        "SELECT * FROM dim_disks WHERE disk_key IN (SELECT disk_key FROM fct_io_results) ORDER BY disk, host",
        db=db,
    )


def all_disk_keys(db: Location | None = None) -> list[str]:
    """Every disk in the models (benchmarks or SQL statements), in one stable order: the order colours follow,
    so a disk keeps its colour on every page."""
    if "dim_disks" not in tables(db):
        return []
    return query("SELECT disk_key FROM dim_disks ORDER BY disk, host", db=db)["disk_key"].to_list()


def disk_labels(db: Location | None = None) -> list[str]:
    """Disk labels already used (raw layer, so it works before the first model build)."""
    db = db or current_db()
    if "raw_files" not in tables(db):
        return []
    return query("SELECT DISTINCT disk FROM raw_files ORDER BY disk", db=db)["disk"].to_list()


def host_labels(db: Location | None = None) -> list[str]:
    db = db or current_db()
    if "raw_files" not in tables(db):
        return []
    return query("SELECT DISTINCT host FROM raw_files WHERE host IS NOT NULL ORDER BY host", db=db)["host"].to_list()


def series_options(disk_keys: Sequence[str], db: Location | None = None) -> pl.DataFrame:
    """Pattern / operation / read % / block size / direction combinations measured on the chosen disks, the
    series measured on the most disks and at the most loads first."""
    keys = list(disk_keys)
    return query(
        f"""
        SELECT pattern, operation, read_pct, block_size_bytes, direction,
               count(DISTINCT outstanding_io) AS loads, count(DISTINCT disk_key) AS disks, count(*) AS runs
        FROM fct_io_results
        WHERE {_in("disk_key", keys)}
        GROUP BY pattern, operation, read_pct, block_size_bytes, direction
        ORDER BY disks DESC, loads DESC, pattern, operation, block_size_bytes, direction
        """,
        keys,
        db=db,
    )


def shared_workload_disks(disk_keys: Sequence[str], db: Location | None = None) -> list[str]:
    """The disks (of `disk_keys`, in their order) that share the workload measured on the most of them: what
    Compare opens on, so its first view compares like with like."""
    keys = list(disk_keys)
    if not keys:
        return []
    options = series_options(keys, db)
    if options.is_empty() or options["disks"][0] < 2:
        return keys[:1]
    top = options.row(0, named=True)
    series = Series(*(top[c] for c in Series._fields))
    measured = set(
        query(
            f"SELECT DISTINCT disk_key FROM fct_io_results WHERE {_in('disk_key', keys)} AND {_SERIES_WHERE}",
            [*keys, *series],
            db=db,
        )["disk_key"].to_list()
    )
    return [k for k in keys if k in measured]


# -- curves -----------------------------------------------------------------------------------------------------


def curve_points(disk_keys: Sequence[str], series: Series, db: Location | None = None) -> pl.DataFrame:
    """Every run of one series on the chosen disks, ordered by load, with the runs the curves go through
    (mart_curve_points): `best_at_load` the run the series' curve and saturation point use at a load,
    `best_for_tool` the one a tool's own line goes through, `best_at_threads_qd` the one per thread count and
    queue depth."""
    keys = list(disk_keys)
    return query(
        f"""
        SELECT r.disk_key, r.disk, r.host, r.tool, r.threads, r.queue_depth, r.outstanding_io,
               r.iops, r.throughput_bytes_per_s, r.throughput_mb_per_s, r.throughput_mib_per_s,
               r.latency_avg_ms, r.latency_p50_ms, r.latency_p95_ms, r.latency_p99_ms, r.latency_p999_ms,
               r.littles_law_ratio, r.file_name, r.file_id, r.record_index, r.run_index, r.source_line,
               c.kept_at_load AS best_at_load, c.kept_for_tool_at_load AS best_for_tool,
               c.kept_at_threads_qd AS best_at_threads_qd
        FROM fct_io_results r
        JOIN mart_curve_points c ON c.io_result_id = r.io_result_id
        WHERE {_in("r.disk_key", keys)} AND {_series_where("r.")}
              AND r.iops IS NOT NULL
        ORDER BY r.disk_key, r.outstanding_io, r.threads, r.tool
        """,
        [*keys, *series],
        db=db,
    )


def saturation(
    disk_keys: Sequence[str], series: Series, db: Location | None = None, tolerance: float | None = None
) -> pl.DataFrame:
    """mart_saturation_points (rule, USL fit, Kneedle) for one series on the chosen disks; at another
    `tolerance`, the same rule through the table macro the mart is built from (as `kneepoint saturation
    --tolerance` reads it)."""
    if "mart_saturation_points" not in tables(db):
        return pl.DataFrame()
    keys = list(disk_keys)
    source, params = "mart_saturation_points", []
    if tolerance is not None and not math.isclose(tolerance, built_tolerance(db)):
        source, params = "saturation_points(?)", [tolerance]
    return query(
        f"SELECT * FROM {source} WHERE {_in('disk_key', keys)} AND {_SERIES_WHERE} ORDER BY disk_key",
        [*params, *keys, *series],
        db=db,
    )


def built_tolerance(db: Location | None = None) -> float:
    """The tolerance the saturation marts were built with (dbt var saturation_tolerance)."""
    from kneepoint.ingest import units

    return units.var("saturation_tolerance")


def saturation_by_threads(disk_keys: Sequence[str], series: Series, db: Location | None = None) -> pl.DataFrame:
    """mart_saturation_by_threads: the saturation per thread count, the load being the queue depth."""
    if "mart_saturation_by_threads" not in tables(db):
        return pl.DataFrame()
    keys = list(disk_keys)
    return query(
        f"SELECT * FROM mart_saturation_by_threads WHERE {_in('disk_key', keys)} AND {_SERIES_WHERE} "
        "ORDER BY disk_key, threads",
        [*keys, *series],
        db=db,
    )


def target_columns(found: LatencyTargetPoint | None, target_ms: float, threads: int | None = None) -> dict:
    """The latency-target columns of a series (the command line's --latency-target-ms and the app's)."""
    out: dict[str, Any] = {
        "latency_target_ms": target_ms,
        "latency_target_metric": found.latency_metric if found else None,
        "latency_target_outstanding_io": (int(found.load) * (threads or 1)) if found else None,
        "iops_at_latency_target": found.iops if found else None,
        "latency_ms_at_latency_target": found.latency_ms if found else None,
    }
    if threads is not None:
        out["latency_target_queue_depth"] = int(found.load) if found else None
    return out


def latency_target(
    disk_keys: Sequence[str], series: Series | None, target_ms: float, db: Location | None = None
) -> dict[tuple[str, str], dict]:
    """Per disk and series (series_id): the largest measured load whose p99 latency (mean where the tool gave
    no p99) stays under `target_ms`, and its IOPS (ingest/analytics.latency_target_point over the run the curve
    keeps at each load, int_saturation_points). `series` None: every series of the disks."""
    keys = list(disk_keys)
    where = _in("disk_key", keys) + (f" AND {_SERIES_WHERE}" if series else "")
    rows = query(
        f"""
        SELECT disk_key, series_id, outstanding_io, iops, latency_p99_ms, latency_avg_ms
        FROM int_saturation_points WHERE {where}
        ORDER BY disk_key, series_id, outstanding_io
        """,
        [*keys, *(series or ())],
        db=db,
    )
    points: dict[tuple[str, str], list[LatencyPoint]] = {}
    for disk, series_id, load, iops, p99, avg in rows.rows():
        points.setdefault((disk, series_id), []).append(LatencyPoint(load, iops, p99, avg))
    return {k: target_columns(latency_target_point(p, target_ms), target_ms) for k, p in points.items()}


# -- load series (an application's throughput against sessions, virtual users, databases) ---------------------

LOAD_SERIES_ORDER = "disk_key, workload, load_kind, throughput_what"


def load_disks(db: Location | None = None) -> list[str]:
    """The configurations (disk keys) that hold a load series."""
    if "mart_load_saturation" not in tables(db):
        return []
    return query("SELECT DISTINCT disk_key FROM mart_load_saturation ORDER BY disk_key", db=db)["disk_key"].to_list()


def load_saturation(
    disk_keys: Sequence[str], db: Location | None = None, tolerance: float | None = None
) -> pl.DataFrame:
    """mart_load_saturation (the disks' rule over load and throughput, the USL fit) for the chosen configurations;
    at another `tolerance`, the same rule through the table macro the mart is built from."""
    if "mart_load_saturation" not in tables(db):
        return pl.DataFrame()
    keys = list(disk_keys)
    source, params = "mart_load_saturation", []
    if tolerance is not None and not math.isclose(tolerance, built_tolerance(db)):
        source, params = "load_saturation_points(?)", [tolerance]
    return query(
        f"SELECT * FROM {source} WHERE {_in('disk_key', keys)} ORDER BY {LOAD_SERIES_ORDER}", [*params, *keys], db=db
    )


def load_points(disk_keys: Sequence[str], db: Location | None = None) -> pl.DataFrame:
    """int_load_points of the chosen configurations: one point per series and load, the curves' points."""
    if "int_load_points" not in tables(db):
        return pl.DataFrame()
    keys = list(disk_keys)
    return query(
        f"SELECT * FROM int_load_points WHERE {_in('disk_key', keys)} ORDER BY {LOAD_SERIES_ORDER}, load", keys, db=db
    )


def load_target_columns(
    found: ResponseTargetPoint | None, target_ms: float, throughput_unit: str, points: Sequence[ResponsePoint]
) -> dict:
    """The response-time-target columns of a load series (the command line's --latency-target-ms and the app's):
    the most throughput with the response time under the target, in the series' unit and per second, and how many
    of the series' loads had a response time to hold to it."""
    from kneepoint.app.wording import per_s_in_unit

    timed = sum(any(v is not None for v in (p.response_p99_ms, p.response_p95_ms, p.response_avg_ms)) for p in points)
    return {
        "latency_target_ms": target_ms,
        "latency_target_timed_loads": timed,
        "latency_target_metric": found.response_metric if found else None,
        "latency_target_load": found.load if found else None,
        "throughput_per_s_at_latency_target": found.throughput_per_s if found else None,
        "throughput_at_latency_target": per_s_in_unit(found.throughput_per_s, throughput_unit) if found else None,
        "latency_ms_at_latency_target": found.response_ms if found else None,
    }


def load_response_target(points: pl.DataFrame, units: dict[str, str], target_ms: float) -> dict[str, dict]:
    """Per load series (series_id, its unit in `units`): the most throughput among the loads whose response time
    stays under `target_ms` (ingest/analytics.response_target_point over int_load_points)."""
    by_series: dict[str, list[ResponsePoint]] = {}
    for r in points.iter_rows(named=True) if not points.is_empty() else ():
        by_series.setdefault(r["series_id"], []).append(
            ResponsePoint(
                r["load"], r["throughput_per_s"], r["response_p99_ms"], r["response_p95_ms"], r["response_avg_ms"]
            )
        )
    return {
        series_id: load_target_columns(
            response_target_point(by_series.get(series_id, []), target_ms),
            target_ms,
            unit,
            by_series.get(series_id, []),
        )
        for series_id, unit in units.items()
    }


def saturation_overview(disk_keys: Sequence[str], db: Location | None = None) -> pl.DataFrame:
    """Every series' saturation point on the chosen disks: the compare page's and the report's table of all
    workloads."""
    if "mart_saturation_points" not in tables(db):
        return pl.DataFrame()
    keys = list(disk_keys)
    return query(
        f"SELECT * FROM mart_saturation_points WHERE {_in('disk_key', keys)} ORDER BY {SERIES_ORDER}, disk_key",
        keys,
        db=db,
    )


def disk_grid(disk_keys: Sequence[str], db: Location | None = None) -> pl.DataFrame:
    """The CrystalDiskMark-style summary of each disk: per pure read or write workload (pattern and block size),
    the run at its best measured IOPS (mart_saturation_points.max_iops_outstanding_io) and the one at its lowest
    load, with their IOPS, throughput and latency (int_saturation_points keeps one run per load)."""
    if "mart_saturation_points" not in tables(db):
        return pl.DataFrame()
    keys = list(disk_keys)
    return query(
        f"""
        SELECT s.disk_key, s.pattern, s.operation, s.block_size_bytes, s.tools, s.points,
               CASE WHEN p.outstanding_io = s.max_iops_outstanding_io THEN 'best' ELSE 'lowest' END AS grid_load,
               p.outstanding_io, p.threads, p.queue_depth, p.iops, p.throughput_bytes_per_s, p.latency_avg_ms,
               p.latency_p99_ms, p.tool
        FROM mart_saturation_points s
        JOIN int_saturation_points p
          ON p.series_id = s.series_id
         AND (p.outstanding_io = s.max_iops_outstanding_io OR p.outstanding_io = s.min_outstanding_io)
        WHERE {_in("s.disk_key", keys)} AND s.operation IN ('read', 'write') AND s.direction = s.operation
        ORDER BY s.disk_key, s.pattern DESC, s.block_size_bytes DESC, s.operation, p.outstanding_io DESC
        """,
        keys,
        db=db,
    )


def latency_percentiles(
    disk_keys: Sequence[str], series: Series, every_load: bool = False, db: Location | None = None
) -> pl.DataFrame:
    """fct_latency_distribution for the run each curve goes through: at the loads mart_percentile_loads picks
    (the lowest, the saturation point, the highest), or at every load (int_saturation_points); the run's load and
    tool from fct_io_results. (Joined by file too: on PostgreSQL the facts are indexed by file.)"""
    if "fct_latency_distribution" not in tables(db):
        return pl.DataFrame()
    keys = list(disk_keys)
    source = "int_saturation_points" if every_load else "mart_percentile_loads"
    return query(
        f"""
        SELECT k.disk_key, r.outstanding_io, r.threads, r.queue_depth, d.percentile, d.latency_ms, d.curve_source,
               r.latency_avg_ms, r.tool, k.file_name, r.run_index, d.io_result_id
        FROM {source} k
        JOIN fct_io_results r ON r.file_id = k.file_id AND r.io_result_id = k.io_result_id
        JOIN fct_latency_distribution d ON d.file_id = k.file_id AND d.io_result_id = k.io_result_id
        WHERE {_in("k.disk_key", keys)} AND {_series_where("k.")}
        ORDER BY k.disk_key, r.outstanding_io, d.point_index
        """,
        [*keys, *series],
        db=db,
    )


# -- production against the baseline ----------------------------------------------------------------------------


def observed_disks(db: Location | None = None) -> list[str]:
    """Disks with observed production load (Perfmon, iostat, SQL Server file statistics) in mart_headroom."""
    if "mart_headroom" not in tables(db):
        return []
    return query("SELECT DISTINCT disk_key FROM mart_headroom ORDER BY disk_key", db=db)["disk_key"].to_list()


def headroom(disk_keys: Sequence[str], db: Location | None = None) -> pl.DataFrame:
    """mart_headroom of the chosen disks, one row per host and device: the busy-hour percentiles, the baseline
    series they were placed on (with its operation, for its name) and headroom / degradation."""
    if "mart_headroom" not in tables(db):
        return pl.DataFrame()
    keys = list(disk_keys)
    return query(
        f"""
        SELECT h.*, s.operation AS baseline_operation
        FROM mart_headroom h
        LEFT JOIN mart_saturation_points s ON s.series_id = h.series_id
        WHERE {_in("h.disk_key", keys)}
        ORDER BY h.disk_key, h.host, h.device
        """,
        keys,
        db=db,
    )


def waits(disk_keys: Sequence[str], db: Location | None = None) -> pl.DataFrame:
    """mart_waits_vs_baseline of the chosen disks, one row per server and I/O wait type (PAGEIOLATCH_*,
    WRITELOG): the wait per waiting task against the baseline's latency at the server's load."""
    if "mart_waits_vs_baseline" not in tables(db):
        return pl.DataFrame()
    keys = list(disk_keys)
    return query(
        f"""
        SELECT * FROM mart_waits_vs_baseline
        WHERE {_in("disk_key", keys)}
        ORDER BY disk_key, host, instance, wait_type
        """,
        keys,
        db=db,
    )


# Intervals of one device drawn one by one up to this many; beyond, each of DRAWN_STRETCHES equal stretches of its
# log's time is drawn by its extremes. A week at 15 s is 40,320 intervals per device: more points than a chart is
# pixels wide, and seconds to read, build and send.
DRAWN_INTERVALS = 1200
DRAWN_STRETCHES = 300


def observed_intervals(disk_keys: Sequence[str], db: Location | None = None) -> pl.DataFrame:
    """The observed intervals of the chosen disks that are samples of the load (the since-boot averages and
    Perfmon's _Total instance left out, as mart_headroom's percentiles leave them), in time order per device, with
    their place on the baseline where they had I/O (mart_production_vs_baseline), as the charts draw them.

    A device's intervals are all there up to DRAWN_INTERVALS. A longer log's time (its intervals' order where no
    time was logged) is cut into DRAWN_STRETCHES equal stretches, and of each only the intervals holding its lowest
    and highest IOPS and its lowest and highest latency are kept: real intervals, with their file line, and a line
    through them in time order looks at a chart's width as the line through every interval, every peak kept.
    `device_intervals` counts the device's intervals, `all_drawn` says whether they are all here. The percentiles
    (mart_headroom) count every interval."""
    if "fct_observed_intervals" not in tables(db):
        return pl.DataFrame()
    keys = list(disk_keys)
    device = "disk_key, host_key, device"
    return query(
        f"""
        WITH samples AS (
            SELECT observed_interval_id, disk_key, lower(coalesce(host, '')) AS host_key, device, iops,
                   latency_avg_ms, coalesce(extract(epoch FROM interval_start), interval_index) AS at_s
            FROM fct_observed_intervals
            WHERE {_in("disk_key", keys)} AND NOT since_boot AND NOT is_total_instance
        ),
        spans AS (
            SELECT {device}, count(*) AS device_intervals, min(at_s) AS first_s, max(at_s) AS last_s
            FROM samples
            GROUP BY {device}
        ),
        stretched AS (
            SELECT samples.*, spans.device_intervals,
                   floor((at_s - first_s) * {DRAWN_STRETCHES} / nullif(last_s - first_s, 0)) AS stretch
            FROM samples
            INNER JOIN spans USING ({device})
        ),
        extremes AS (
            SELECT {device}, stretch, min(iops) AS iops_low, max(iops) AS iops_high,
                   min(latency_avg_ms) AS latency_low, max(latency_avg_ms) AS latency_high
            FROM stretched
            WHERE device_intervals > {DRAWN_INTERVALS}
            GROUP BY {device}, stretch
        ),
        drawn AS (
            SELECT s.observed_interval_id, s.device_intervals
            FROM stretched AS s
            LEFT JOIN extremes AS e
                ON e.disk_key = s.disk_key AND e.host_key = s.host_key AND e.device = s.device
                AND e.stretch = s.stretch
            WHERE s.device_intervals <= {DRAWN_INTERVALS}
               OR s.iops IN (e.iops_low, e.iops_high) OR s.latency_avg_ms IN (e.latency_low, e.latency_high)
        )
        SELECT o.disk_key, o.host, o.device, o.device_kind, o.tool, o.interval_start, o.interval_start_text,
               o.interval_index, o.interval_s, o.iops, o.throughput_bytes_per_s, o.bytes_per_io, o.read_pct,
               o.latency_avg_ms, o.outstanding_io, o.file_name, o.source_line,
               p.series_id, p.baseline_latency_at_iops_ms, p.latency_ratio, p.degraded,
               d.device_intervals, d.device_intervals <= {DRAWN_INTERVALS} AS all_drawn
        FROM drawn AS d
        INNER JOIN fct_observed_intervals AS o ON o.observed_interval_id = d.observed_interval_id
        LEFT JOIN mart_production_vs_baseline AS p ON p.observed_interval_id = d.observed_interval_id
        ORDER BY o.disk_key, o.host, o.device, o.interval_start, o.file_name, o.interval_index
        """,
        keys,
        db=db,
    )


def baseline_series(headroom_rows: pl.DataFrame) -> list[Series]:
    """The benchmark series the devices of `headroom_rows` (queries.headroom) were placed on, each once, in the
    rows' order: the curves the page and the report draw them on."""
    if headroom_rows.is_empty():
        return []
    columns = ("baseline_pattern", "baseline_operation", "baseline_read_pct", "baseline_block_size_bytes")
    rows = headroom_rows.drop_nulls("series_id").select(*columns, "baseline_direction").rows()
    return list(dict.fromkeys(Series(p, o, float(r), int(b), d) for p, o, r, b, d in rows))


# -- checks -----------------------------------------------------------------------------------------------------


def unit_checks(disk_keys: Sequence[str], db: Location | None = None) -> pl.DataFrame:
    """mart_unit_checks per tool and printed unit: records checked, off by more than the tolerance, the largest
    deviation."""
    keys = list(disk_keys)
    return query(
        f"""
        SELECT tool, reported_throughput_unit, count(*) AS checked,
               count(*) FILTER (WHERE NOT within_tolerance) AS mismatched, max(deviation) AS max_deviation
        FROM mart_unit_checks WHERE {_in("disk_key", keys)}
        GROUP BY tool, reported_throughput_unit ORDER BY tool, reported_throughput_unit
        """,
        keys,
        db=db,
    )


def unit_mismatches(disk_keys: Sequence[str], db: Location | None = None) -> pl.DataFrame:
    """The runs mart_unit_checks finds off, with their workload and source."""
    keys = list(disk_keys)
    return query(
        f"""
        SELECT r.*, u.deviation FROM mart_unit_checks u JOIN fct_io_results r ON r.io_result_id = u.io_result_id
        WHERE {_in("u.disk_key", keys)} AND NOT u.within_tolerance
        ORDER BY r.disk_key, r.file_name, r.record_index
        """,
        keys,
        db=db,
    )


# -- stored files -----------------------------------------------------------------------------------------------


def stored_files(db: Location | None = None) -> pl.DataFrame:
    """Stored files from the raw layer (so the list works even when a model build failed), with their runs or
    statements and whether their original bytes are kept (a file imported from an anonymized bundle has none)."""
    from kneepoint.ingest.warehouse import list_files

    db = db or current_db()
    if "raw_files" not in tables(db):
        return pl.DataFrame()
    con = connect(db)
    try:
        rows = list_files(con)
        runs = dict(
            con.execute(
                """
                SELECT file_id, count(*) FROM (
                    SELECT DISTINCT file_id, 'io' AS kind, run_index AS i FROM raw_io_records
                    UNION SELECT DISTINCT file_id, 'sql', statement_index FROM raw_query_io
                    UNION SELECT DISTINCT file_id, 'sql', statement_index FROM raw_query_time
                ) AS units GROUP BY file_id
                """
            ).fetchall()
        )
        with_bytes = {r[0] for r in con.execute("SELECT file_id FROM raw_file_contents").fetchall()}
    finally:
        con.close()
    if not rows:
        return pl.DataFrame()
    df = pl.DataFrame(rows, infer_schema_length=None)
    return df.with_columns(
        pl.col("file_id").replace_strict(runs, default=0, return_dtype=pl.Int64).alias("runs"),
        pl.col("file_id").is_in(list(with_bytes)).alias("original_bytes"),
    )


def stored_by_sha256(sha256s: Sequence[str], db: Location | None = None) -> dict[str, tuple[str, str]]:
    """Which of these byte strings are already stored: sha256 -> (file_id, disk). Not cached: it must be fresh."""
    db = db or current_db()
    if not sha256s or "raw_files" not in tables(db):
        return {}
    df = query(f"SELECT sha256, file_id, disk FROM raw_files WHERE {_in('sha256', sha256s)}", list(sha256s), db=db)
    return {s: (f, d) for s, f, d in df.rows()}


def file_content(file_id: str, db: Location | None = None) -> tuple[str, bytes]:
    """The original bytes of a stored file, with its stored name."""
    from kneepoint.ingest.warehouse import file_content as _file_content

    con = connect(db or current_db())
    try:
        return _file_content(con, file_id)
    finally:
        con.close()


# -- SQL Server statistics --------------------------------------------------------------------------------------


def _statements_where(disk_keys: Sequence[str], file_id: str | None, prefix: str = "") -> tuple[str, list]:
    where = _in(f"{prefix}disk_key", disk_keys) + (f" AND {prefix}file_id = ?" if file_id else "")
    return where, [*disk_keys, *([file_id] if file_id else [])]


def sql_disks(db: Location | None = None) -> list[str]:
    """Disks with SET STATISTICS output stored."""
    if "fct_query_time" not in tables(db):
        return []
    return query("SELECT DISTINCT disk_key FROM fct_query_time ORDER BY disk_key", db=db)["disk_key"].to_list()


def sql_files(disk_keys: Sequence[str], db: Location | None = None) -> pl.DataFrame:
    where, params = _statements_where(list(disk_keys), None)
    return query(
        f"""
        SELECT file_id, min(file_name) AS file_name, min(disk_key) AS disk_key, count(*) AS statements
        FROM fct_query_time WHERE {where} GROUP BY file_id ORDER BY file_name
        """,
        params,
        db=db,
    )


def statements(disk_keys: Sequence[str], file_id: str | None = None, db: Location | None = None) -> pl.DataFrame:
    """fct_query_time: one row per statement, in file order."""
    where, params = _statements_where(list(disk_keys), file_id)
    return query(
        f"SELECT * FROM fct_query_time WHERE {where} ORDER BY disk_key, file_name, statement_index", params, db=db
    )


def statement_tables(disk_keys: Sequence[str], file_id: str | None = None, db: Location | None = None) -> pl.DataFrame:
    """fct_query_io: one row per table line, with its statement's totals beside it."""
    where, params = _statements_where(list(disk_keys), file_id)
    return query(
        f"SELECT * FROM fct_query_io WHERE {where} ORDER BY disk_key, file_name, statement_index, table_row",
        params,
        db=db,
    )


IO_COUNTERS = (
    "scan_count",
    "logical_reads",
    "physical_reads",
    "page_server_reads",
    "read_ahead_reads",
    "page_server_read_ahead_reads",
    "lob_logical_reads",
    "lob_physical_reads",
    "lob_read_ahead_reads",
    "segment_reads",
    "segment_skipped",
    "pages_read",
    "read_bytes",
)


def table_totals(disk_keys: Sequence[str], file_id: str | None = None, db: Location | None = None) -> pl.DataFrame:
    """I/O per table summed over the statements, as StatisticsParser's closing 'Totals' grid, with a Total row
    and each table's share of the logical reads."""
    where, params = _statements_where(list(disk_keys), file_id)
    sums = ", ".join(f"CAST(sum({c}) AS BIGINT) AS {c}" for c in IO_COUNTERS)
    per_table = query(
        f"""
        SELECT table_name, count(DISTINCT statement_id) AS statements, {sums}
        FROM fct_query_io WHERE {where}
        GROUP BY table_name ORDER BY logical_reads DESC NULLS LAST, table_name
        """,
        params,
        db=db,
    )
    statement_count = query(
        f"SELECT count(DISTINCT statement_id) AS n FROM fct_query_io WHERE {where}", params, db=db
    ).item()
    total = per_table.select(
        pl.lit("Total").alias("table_name"),
        pl.lit(statement_count).alias("statements"),
        *(pl.col(c).sum().cast(pl.Int64) for c in IO_COUNTERS),
    )
    out = pl.concat([per_table, total.cast(per_table.schema)], how="vertical")
    all_reads = per_table["logical_reads"].sum()
    return out.with_columns(
        (100.0 * pl.col("logical_reads") / all_reads if all_reads else pl.lit(None, pl.Float64)).alias(
            "logical_reads_pct"
        )
    )


def time_totals(disk_keys: Sequence[str], file_id: str | None = None, db: Location | None = None) -> dict:
    """CPU and elapsed times summed over the statements (StatisticsParser's compile / execution totals), and the
    workload's effective read throughput: bytes read over the execution time of the statements that read."""
    where, params = _statements_where(list(disk_keys), file_id)
    reading = "execution_elapsed_ms > 0 AND pages_read IS NOT NULL"
    df = query(
        f"""
        SELECT count(*) AS statements,
               count(execution_elapsed_ms) AS timed,
               sum(compile_cpu_ms) AS compile_cpu_ms, sum(compile_elapsed_ms) AS compile_elapsed_ms,
               sum(execution_cpu_ms) AS execution_cpu_ms, sum(execution_elapsed_ms) AS execution_elapsed_ms,
               sum(total_cpu_ms) AS total_cpu_ms, sum(total_elapsed_ms) AS total_elapsed_ms,
               CAST(sum(logical_reads) AS BIGINT) AS logical_reads, CAST(sum(pages_read) AS BIGINT) AS pages_read,
               CAST(sum(read_bytes) AS DOUBLE PRECISION) AS read_bytes,
               CAST(sum(read_bytes) FILTER (WHERE {reading}) AS DOUBLE PRECISION)
                   / nullif(sum(execution_elapsed_ms) FILTER (WHERE {reading}), 0) * 1000
                   AS effective_read_bytes_per_s
        FROM fct_query_time WHERE {where}
        """,
        params,
        db=db,
    )
    return df.row(0, named=True)


def statements_on_curve(
    disk_keys: Sequence[str], series: Series, file_id: str | None = None, db: Location | None = None
) -> pl.DataFrame:
    """mart_statements_on_curve for one series: each statement's effective read throughput placed on its disk's
    throughput curve (`curve_outstanding_io`: where the curve reaches it; null past the curve's best)."""
    where, params = _statements_where(list(disk_keys), file_id)
    return query(
        f"""
        SELECT * FROM mart_statements_on_curve WHERE {where} AND {_SERIES_WHERE}
        ORDER BY disk_key, file_name, statement_index
        """,
        [*params, *series],
        db=db,
    )


def warehouse_label() -> str:
    """The warehouse as the pages name it (a PostgreSQL URL without its password)."""
    return str(current_db())
