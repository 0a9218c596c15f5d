-- Grain: one row per io record and point of its latency percentile curve (io_result_id, point_index).
-- From a histogram (fio json+ bins: counts; SQLIO 1-ms buckets and DiskSpd %-ile tables: shares), every
-- bucket holding I/O is a point: `percentile` % of the record's I/Os completed within `latency_ms`, the
-- bucket's upper bound. That is how fio derives its own percentiles from the bins, so the curve passes
-- through the ones it prints. A record without a histogram gets the percentiles the tool printed (min as
-- 0, max as 100), so every tool's runs can be drawn.
-- Nothing of the record is repeated per point (millions of rows): its load, workload, tool and labels are in
-- fct_io_results, joined by io_result_id. (Carrying them doubled the rows' width and cost ~1 s of a 1M-row build.)
-- Its key is (io_result_id, point_index), without a column of its own: a text key made of the two (63M strings at
-- 10M fact rows) cost a quarter of the model's time, and its test as much again.
-- Incremental by file, like the facts it reads.
-- On PostgreSQL, finding the records without a histogram needs a plan without nested loops (macros/portable.sql).
{{ config(
    materialized='incremental', incremental_strategy='replace_changed', unique_key='file_id',
    indexes=kp_key_indexes('file_id'),
    pre_hook=["{{ kp_without_nested_loops() }}"],
    post_hook=["{{ kp_nested_loops_again() }}"]
) }}
-- The staged records, not fct_io_results: the points need only a run's key and printed percentiles, so this model
-- (the longest of a full build) runs beside the facts instead of after them.
with io_records as (
    select * from {{ ref('stg_io_records') }}
    where {{ in_changed_files() }}
),

histograms as (
    select * from {{ ref('stg_latency_histograms') }}
    where {{ in_changed_files() }}
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
    having sum(bucket_value) > 0
),

cumulative as (
    select
        *,
        sum(bucket_value) over upward as cumulative_value,
        -- Shares need not add up to 100 (SQLIO prints rounded whole percents): the curve ends at 100.
        sum(bucket_value) over (partition by file_id, record_index) as total_value,
        -- Every bucket holds I/O, so the cumulative share rises with the bound: the bound's rank is the point's.
        row_number() over upward - 1 as point_index
    from buckets
    window upward as (
        partition by file_id, record_index
        order by bucket_upper_ms
        rows between unbounded preceding and current row
    )
),

from_histograms as (
    select
        file_id,
        record_index,
        point_index,
        100.0 * cumulative_value / total_value as percentile,
        bucket_upper_ms as latency_ms,
        'histogram' as curve_source,
        bucket_kind as histogram_kind,
        100.0 * bucket_value / total_value as bucket_share_pct,
        case when bucket_kind = 'count' then bucket_value end as bucket_ios,
        case when bucket_kind = 'count' then total_value end as histogram_ios
    from cumulative
    where total_value > 0
),

-- The printed percentiles of the records without a histogram curve, in rising order, the missing ones left out.
without_histogram as (
    select io_records.*
    from io_records
    where not exists (
        select 1 from from_histograms as h
        where h.point_index = 0 and h.file_id = io_records.file_id and h.record_index = io_records.record_index
    )
),

printed as (
    -- A point's index counts the printed percentiles below it: no sort of millions of rows to number them.
    {%- set percentiles = [
        (0.0, 'latency_min_ms'), (50.0, 'latency_p50_ms'), (95.0, 'latency_p95_ms'),
        (99.0, 'latency_p99_ms'), (99.9, 'latency_p999_ms'), (100.0, 'latency_max_ms'),
    ] %}
    select
        {{ io_result_id('r.file_id', 'r.record_index') }} as io_result_id,
        r.file_id,
        p.point_index,
        cast(p.percentile as double precision) as percentile,
        p.latency_ms
    from without_histogram as r
    cross join lateral (
        values
        {%- for percentile, column in percentiles %}
            ({{ percentile }}, r.{{ column }}, {{ count_present(percentiles[:loop.index0] | map(attribute=1), 'r.') }})
            {%- if not loop.last %},{% endif %}
        {%- endfor %}
    ) as p (percentile, latency_ms, point_index)
    where p.latency_ms is not null
),

final as (
    -- A histogram is stored with its record, in the same transaction, so its points need no join to find their
    -- run (the relationship test in _readings.yml checks that every point has one).
    select
        {{ io_result_id() }} as io_result_id,
        point_index,
        percentile,
        latency_ms,
        curve_source,
        histogram_kind,
        bucket_share_pct,
        bucket_ios,
        histogram_ios,
        file_id
    from from_histograms

    union all

    select
        io_result_id,
        point_index,
        percentile,
        latency_ms,
        'printed_percentiles',
        cast(null as varchar),
        cast(null as double precision),
        cast(null as double precision),
        cast(null as double precision),
        file_id
    from printed
)

select * from final
