-- Grain: one row per SQL statement that read pages (fct_query_time, effective read throughput above 0) and series
-- measured on the same disk: where the statement's read throughput sits on that series' throughput curve.
-- `curve_outstanding_io` is the load at which the curve (the run kept per load, int_saturation_points) first reaches
-- the statement's throughput, interpolated on the log2 load axis; below the curve's smallest load it scales down in
-- proportion (throughput grows with load there); null when the statement read faster than the curve ever went.
-- "This query read 155,000 pages in 5 minutes: is the disk the bottleneck?" is read here. Rebuilt by every build:
-- statements and series of a disk are few.
with statements as (
    select * from {{ ref('fct_query_time') }}
    where effective_read_bytes_per_s > 0
),

curve as (
    select
        series_id,
        disk_key,
        pattern,
        operation,
        read_pct,
        block_size_bytes,
        direction,
        outstanding_io::double as x,
        throughput_bytes_per_s as y
    from {{ ref('int_saturation_points') }}
    where throughput_bytes_per_s > 0
),

segments as (
    select
        series_id,
        x as x0,
        y as y0,
        lead(x) over by_load as x1,
        lead(y) over by_load as y1
    from curve
    window by_load as (partition by series_id order by x)
),

ends as (
    select
        series_id,
        disk_key,
        pattern,
        operation,
        read_pct,
        block_size_bytes,
        direction,
        min(x) as x_min,
        arg_min(y, x) as y_min,
        max(y) as curve_best_bytes_per_s
    from curve
    group by series_id, disk_key, pattern, operation, read_pct, block_size_bytes, direction
),

pairs as (
    select statements.statement_id, statements.effective_read_bytes_per_s, ends.*
    from statements
    inner join ends using (disk_key)
),

-- the first segment, by load, whose throughputs bracket the statement's
crossings as (
    select
        pairs.statement_id,
        pairs.series_id,
        arg_min({'x0': segments.x0, 'y0': segments.y0, 'x1': segments.x1, 'y1': segments.y1}, segments.x0) as segment
    from pairs
    inner join segments
        on segments.series_id = pairs.series_id
        and segments.y1 is not null
        and segments.y1 <> segments.y0
        and pairs.effective_read_bytes_per_s between least(segments.y0, segments.y1) and greatest(segments.y0, segments.y1)
    group by pairs.statement_id, pairs.series_id
),

placed as (
    select
        pairs.*,
        case
            when pairs.effective_read_bytes_per_s <= pairs.y_min
                then pairs.x_min * pairs.effective_read_bytes_per_s / pairs.y_min
            else pow(
                2,
                log2(crossings.segment.x0)
                + (pairs.effective_read_bytes_per_s - crossings.segment.y0) / (crossings.segment.y1 - crossings.segment.y0)
                * (log2(crossings.segment.x1) - log2(crossings.segment.x0))
            )
        end as curve_outstanding_io
    from pairs
    left join crossings using (statement_id, series_id)
),

final as (
    select
        placed.statement_id,
        placed.series_id,
        placed.disk_key,
        placed.pattern,
        placed.operation,
        placed.read_pct,
        placed.block_size_bytes,
        placed.direction,
        placed.effective_read_bytes_per_s,
        placed.curve_best_bytes_per_s,
        placed.curve_outstanding_io,
        statements.file_id,
        statements.file_name,
        statements.statement_index,
        statements.source_line,
        statements.cpu_to_elapsed,
        statements.execution_cpu_ms,
        statements.execution_elapsed_ms,
        statements.pages_read
    from placed
    inner join statements using (statement_id)
)

select * from final
