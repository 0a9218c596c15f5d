-- Grain: one row per io record and point of its latency percentile curve (io_result_id, point_index).
-- From a histogram (fio json+ bins: counts; SQLIO 1-ms buckets and DiskSpd %-ile tables: shares), every
-- bucket holding I/O is a point: `percentile` % of the record's I/Os completed within `latency_ms`, the
-- bucket's upper bound. That is how fio derives its own percentiles from the bins, so the curve passes
-- through the ones it prints. A record without a histogram gets the percentiles the tool printed (min as
-- 0, max as 100), so every tool's runs can be drawn.
with io_results as (
    select * from {{ ref('int_io_results') }}
),

histograms as (
    select * from {{ ref('stg_latency_histograms') }}
),

buckets as (
    -- Equal bounds (DiskSpd rows that print the same latency) are one step of the curve.
    select
        file_id,
        record_index,
        bucket_kind,
        bucket_upper_ms,
        sum(bucket_value) as bucket_value
    from histograms
    group by file_id, record_index, bucket_kind, bucket_upper_ms
),

cumulative as (
    select
        *,
        sum(bucket_value) over (
            partition by file_id, record_index
            order by bucket_upper_ms
            rows between unbounded preceding and current row
        ) as cumulative_value,
        -- Shares need not add up to 100 (SQLIO prints rounded whole percents): the curve ends at 100.
        sum(bucket_value) over (partition by file_id, record_index) as total_value
    from buckets
    where bucket_value > 0
),

from_histograms as (
    select
        file_id,
        record_index,
        'histogram' as curve_source,
        bucket_kind as histogram_kind,
        bucket_upper_ms as latency_ms,
        100.0 * cumulative_value / total_value as percentile,
        100.0 * bucket_value / total_value as bucket_share_pct,
        case when bucket_kind = 'count' then bucket_value end as bucket_ios,
        case when bucket_kind = 'count' then total_value end as histogram_ios
    from cumulative
    where total_value > 0
),

printed as (
    select file_id, record_index, 0.0 as percentile, latency_min_ms as latency_ms from io_results
    union all
    select file_id, record_index, 50.0, latency_p50_ms from io_results
    union all
    select file_id, record_index, 95.0, latency_p95_ms from io_results
    union all
    select file_id, record_index, 99.0, latency_p99_ms from io_results
    union all
    select file_id, record_index, 99.9, latency_p999_ms from io_results
    union all
    select file_id, record_index, 100.0, latency_max_ms from io_results
),

from_printed as (
    select
        file_id,
        record_index,
        'printed_percentiles' as curve_source,
        null::varchar as histogram_kind,
        latency_ms,
        percentile,
        null::double as bucket_share_pct,
        null::double as bucket_ios,
        null::double as histogram_ios
    from printed
    where latency_ms is not null
      and not exists (
          select 1 from from_histograms as h
          where h.file_id = printed.file_id and h.record_index = printed.record_index
      )
),

points as (
    select * from from_histograms
    union all
    select * from from_printed
),

numbered as (
    select
        *,
        row_number() over (partition by file_id, record_index order by percentile, latency_ms) - 1 as point_index
    from points
),

final as (
    select
        io.file_id || ':' || io.record_index || ':' || numbered.point_index as latency_point_id,
        io.file_id || ':' || io.record_index as io_result_id,
        numbered.point_index,
        numbered.percentile,
        numbered.latency_ms,
        numbered.curve_source,
        numbered.histogram_kind,
        numbered.bucket_share_pct,
        numbered.bucket_ios,
        numbered.histogram_ios,
        io.disk_key,
        io.disk,
        io.host,
        io.tool,
        io.pattern,
        io.operation,
        io.read_pct,
        io.direction,
        io.block_size_bytes,
        io.threads,
        io.queue_depth,
        io.outstanding_io,
        io.latency_avg_ms,
        io.file_id,
        io.file_name,
        io.record_index,
        io.run_index
    from numbered
    inner join io_results as io using (file_id, record_index)
)

select * from final
