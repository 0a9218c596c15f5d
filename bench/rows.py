"""A warehouse with N fact rows written straight into the raw layer (no files, no parsing), to time the dbt
build, the saturation marts and the app's curve query at 1M and 10M rows.

The rows look like what ingest stores for sweeps of modelled disks: every file is one tool's threads x queue
depth sweep (6 x 8 = 48 runs) of one workload (random/sequential x read/write at 4 KiB or 64 KiB), each
workload swept 3 times per disk (repeats, as users re-run them), so 1M rows are ~870 disks and 10M ~8,700.
IOPS follow the Universal Scalability Law with a bandwidth cap, as `ingest.synth.disk_model.DiskModel.iops`
computes it, with each disk's own service time (0.05-8 ms), contention, coherency and bandwidth (100 MB/s -
3.3 GB/s) drawn from a hash of its number; latency follows from Little's law, percentiles from the mean as
`disk_model.sweep` makes them. Units are stored as each tool prints them: fio B/s and ns, SQLIO and DiskSpd
MiB/s and ms. Each run has 2 metadata rows (command line, latency basis); SQLIO's records (a third) carry
its 25-bucket share histogram, of which the non-empty buckets are stored, as the parser does.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pyarrow as pa

from kneepoint.ingest import schema
from kneepoint.ingest.warehouse import Location, connect, insert_rows, is_postgres, transaction

RUNS_PER_FILE = 48  # threads 1..32 (6) x queue depth 1..128 (8)
SERIES_PER_DISK = 8  # random/sequential x read/write x 4 KiB/64 KiB
SWEEPS_PER_SERIES = 3
FILES_PER_DISK = SERIES_PER_DISK * SWEEPS_PER_SERIES

_SQL = """
CREATE OR REPLACE TEMP TABLE bench_disks AS
SELECT
    d AS disk_no,
    ['fio', 'sqlio', 'diskspd'][d % 3 + 1] AS tool,
    'rows disk #' || lpad(d::VARCHAR, 6, '0') AS disk,
    'rows-host-' || lpad((d % 97)::VARCHAR, 2, '0') AS host,
    -- log-uniform service time 0.05..8 ms; USL contention and coherency; bandwidth cap 100 MB/s..3.3 GB/s
    0.05 * pow(160, (hash(d, 'svc') % 1000000) / 1e6) / 1000 AS service_s,
    0.01 + 0.07 * (hash(d, 'sigma') % 1000000) / 1e6 AS sigma,
    0.00005 + 0.0015 * (hash(d, 'kappa') % 1000000) / 1e6 AS kappa,
    100e6 * pow(33, (hash(d, 'bw') % 1000000) / 1e6) AS max_bytes_per_s,
    0.35 + 1.0 * (hash(d, 'wp') % 1000000) / 1e6 AS write_penalty,
    2.0 + 38.0 * pow((hash(d, 'seq') % 1000000) / 1e6, 3) AS sequential_speedup
FROM range($disks) t(d);

INSERT INTO raw_files BY NAME
SELECT
    lpad(printf('%x', f), 16, '0') AS file_id,
    tool || '-sweep-' || f || CASE tool WHEN 'fio' THEN '.json' ELSE '.txt' END AS name,
    md5(f::VARCHAR) || md5('x' || f) AS sha256,
    CASE tool WHEN 'fio' THEN 48 * 7000 WHEN 'sqlio' THEN 48 * 800 ELSE 48 * 6000 END AS size_bytes,
    CASE tool WHEN 'fio' THEN 'fio_json' ELSE tool END AS format,
    CASE tool WHEN 'fio' THEN '3.33' WHEN 'sqlio' THEN '1.5.SG' ELSE '2.0.21a' END AS tool_version,
    'utf-8' AS encoding,
    TIMESTAMPTZ '2026-01-01 00:00:00+00' + to_seconds(f) AS ingested_at,
    disk,
    host,
    []::VARCHAR[] AS tags,
    NULL AS notes,
    []::VARCHAR[] AS warnings,
    '0.2.0' AS kneepoint_version,
    f + 1 AS stored_seq
FROM range($files) t(f)
JOIN bench_disks ON disk_no = f // $files_per_disk;

-- Each file stored by a change of its own, as ingest records them (ingest/warehouse.py).
INSERT INTO raw_file_changes BY NAME
SELECT stored_seq AS change_seq, file_id, 'stored' AS change, ingested_at AS changed_at FROM raw_files;
SELECT max(nextval('raw_change_seq')) FROM range($files);

INSERT INTO raw_file_contents_part_00001 (file_id, content)
SELECT lpad(printf('%x', f), 16, '0'), 'synthetic rows: no file'::BLOB FROM range($files) t(f);

CREATE OR REPLACE TEMP TABLE bench_runs AS
WITH runs AS (
    SELECT
        f,
        k,
        d.*,
        (f % $files_per_disk) % $series_per_disk AS series,
        [1, 2, 4, 8, 16, 32][k // 8 + 1] AS threads,
        [1, 2, 4, 8, 16, 32, 64, 128][k % 8 + 1] AS queue_depth
    FROM range($files) t(f)
    CROSS JOIN range($runs_per_file) r(k)
    JOIN bench_disks d ON d.disk_no = f // $files_per_disk
),
workload AS (
    SELECT
        *,
        CASE WHEN series % 2 = 0 THEN 'random' ELSE 'sequential' END AS pattern,
        CASE WHEN (series // 2) % 2 = 0 THEN 'read' ELSE 'write' END AS operation,
        CASE WHEN series // 4 = 0 THEN 4096 ELSE 65536 END AS block_size_bytes,
        threads * queue_depth AS outstanding
    FROM runs
),
modelled AS (
    SELECT
        *,
        -- USL in outstanding I/O, capped by bandwidth, with +-2 % run-to-run noise (disk_model.DiskModel.iops)
        least(
            (1.0 / (service_s * CASE operation WHEN 'write' THEN write_penalty ELSE 1 END
                    / CASE pattern WHEN 'sequential' THEN sequential_speedup ELSE 1 END
                    + block_size_bytes / max_bytes_per_s))
                * outstanding / (1 + sigma * (outstanding - 1) + kappa * outstanding * (outstanding - 1)),
            max_bytes_per_s / block_size_bytes
        ) * (0.98 + 0.04 * (hash(f, k) % 1000000) / 1e6) AS iops
    FROM workload
)
SELECT *, outstanding / iops * 1000 AS latency_ms FROM modelled;

INSERT INTO raw_io_records BY NAME
SELECT
    lpad(printf('%x', f), 16, '0') AS file_id,
    k AS record_index,
    k AS run_index,
    1 + 25 * k AS source_line,
    tool,
    CASE tool WHEN 'fio' THEN '3.33' WHEN 'sqlio' THEN '1.5.SG' ELSE '2.0.21a' END AS tool_version,
    CASE tool WHEN 'fio' THEN '/dev/nvme0n1' ELSE 'E:\\testfile.dat' END AS target,
    NULL AS started_at,
    pattern,
    operation,
    CASE operation WHEN 'read' THEN 100.0 ELSE 0.0 END AS read_pct,
    operation AS direction,
    block_size_bytes,
    threads,
    queue_depth,
    60.0 AS duration_s,
    iops,
    iops * block_size_bytes / CASE tool WHEN 'fio' THEN 1 ELSE 1048576 END AS throughput,
    CASE tool WHEN 'fio' THEN 'B/s' ELSE 'MiB/s' END AS throughput_unit,
    CASE tool WHEN 'fio' THEN 'ns' ELSE 'ms' END AS latency_unit,
    latency_ms * f_ AS latency_avg,
    latency_ms * 0.2 * f_ AS latency_min,
    latency_ms * 8 * f_ AS latency_max,
    latency_ms * 0.9 * f_ AS latency_p50,
    latency_ms * 1.8 * f_ AS latency_p95,
    latency_ms * 2.6 * f_ AS latency_p99,
    latency_ms * 4.0 * f_ AS latency_p999,
    []::VARCHAR[] AS inferred
FROM (SELECT *, CASE tool WHEN 'fio' THEN 1e6 ELSE 1 END AS f_ FROM bench_runs);

INSERT INTO raw_run_metadata
SELECT lpad(printf('%x', f), 16, '0'), k, 'command_line',
       tool || ' -t' || threads || ' -o' || queue_depth || ' -b' || (block_size_bytes // 1024) || 'K'
FROM bench_runs
UNION ALL
SELECT lpad(printf('%x', f), 16, '0'), k, 'latency_basis', 'mean: lat; percentiles: clat'
FROM bench_runs;

-- The normal CDF (DuckDB has no erf): the tanh approximation, within 2e-4.
CREATE OR REPLACE TEMP MACRO bench_phi(x) AS 0.5 * (1 + tanh(0.7978845608 * (x + 0.044715 * x * x * x)));

-- SQLIO's histogram: shares (%) of I/Os per 1-ms bucket 0..23 and 24+, truncated to whole percents as SQLIO
-- prints them, around the run's mean (a log-normal with sigma 0.5, as ingest/synth/sqlio.py writes them).
INSERT INTO raw_latency_histograms
SELECT file_id, record_index, bound, 'ms', share, 'share'
FROM (
    SELECT
        lpad(printf('%x', f), 16, '0') AS file_id,
        k AS record_index,
        b + 1.0 AS bound,
        floor(100 * (
            CASE WHEN b = 24 THEN 1.0 ELSE bench_phi((ln(b + 1.0) - mu) / 0.5) END
            - CASE WHEN b = 0 THEN 0.0 ELSE bench_phi((ln(b::DOUBLE) - mu) / 0.5) END
        )) AS share
    FROM (SELECT *, ln(greatest(latency_ms, 0.01)) - 0.125 AS mu FROM bench_runs WHERE tool = 'sqlio')
    CROSS JOIN range(25) h(b)
)
WHERE share > 0;
"""


def make_rows(where: Location, fact_rows: int, scratch: Path) -> dict[str, object]:
    """make_rows_db into a DuckDB file, or for a PostgreSQL warehouse (a new, empty database) made in a DuckDB file
    under `scratch` and copied over table by table (the SQL above is DuckDB's)."""
    if not is_postgres(where):
        return make_rows_db(Path(where), fact_rows)
    started = time.perf_counter()
    made = make_rows_db(scratch, fact_rows)
    copy_raw_layer(scratch, where)
    scratch.unlink()
    return {**made, "seconds": round(time.perf_counter() - started, 2)}


def copy_raw_layer(source: Path, target: Location, batch_rows: int = 200_000) -> None:
    """Every raw table and the change log of the DuckDB warehouse `source` into the empty warehouse `target`, in
    one transaction, in batches of Arrow rows; the change sequence continues after the copied changes."""
    src = connect(source, read_only=True)
    con = connect(target)
    try:
        with transaction(con):
            for table in (*reversed(schema.RAW_TABLES), schema.RAW_FILE_CHANGES.name):
                columns = ", ".join(schema.TABLES[table].column_names)
                for batch in src.sql(f"SELECT {columns} FROM {table}").to_arrow_reader(batch_rows):
                    insert_rows(con, table, pa.Table.from_batches([batch]))
            (last,) = src.execute("SELECT coalesce(max(change_seq), 0) FROM raw_file_changes").fetchone()
            if last:
                con.execute(f"SELECT setval('{schema.CHANGE_SEQUENCE}', ?)", [last])
    finally:
        src.close()
        con.close()


def make_rows_db(path: Path, fact_rows: int) -> dict[str, object]:
    """A fresh warehouse at `path` holding about `fact_rows` raw io records; what went in and how long it took."""
    for p in (path, Path(f"{path}.wal")):
        if p.exists():
            p.unlink()
    files = max(1, round(fact_rows / RUNS_PER_FILE))
    n_disks = -(-files // FILES_PER_DISK)
    started = time.perf_counter()
    con = connect(path)
    try:
        con.execute(f"SET threads = {os.cpu_count() or 2}")
        sql = (
            _SQL.replace("$disks", str(n_disks))
            .replace("$files_per_disk", str(FILES_PER_DISK))
            .replace("$files", str(files))
            .replace("$series_per_disk", str(SERIES_PER_DISK))
            .replace("$runs_per_file", str(RUNS_PER_FILE))
        )
        con.execute(sql)
        con.execute("CHECKPOINT")
        counts = {
            t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0]
            for t in ("raw_files", "raw_io_records", "raw_run_metadata", "raw_latency_histograms")
        }
    finally:
        con.close()
    return {"disks": n_disks, "rows": counts, "seconds": round(time.perf_counter() - started, 2)}
