-- Grain: one row per measured run and direction (fct_io_results.io_result_id): which runs the curves go through
-- where several share a load. `kept_at_load` is the run int_saturation_points keeps for its series and outstanding
-- I/O (the highest IOPS, macros/saturation.sql), `kept_at_threads_qd` the one int_saturation_thread_points keeps per
-- thread count and queue depth, `kept_for_tool_at_load` the one a tool's own line goes through (the same order
-- within the runs of one tool): points measured by different tools are never joined by one line. The app's curves
-- and the report join this to fct_io_results, so the curve, the marked saturation point and the percentile curves
-- are the same run. A view over the tables it reads.
{{ config(materialized='view') }}
with io_results as (
    select
        io_result_id,
        series_id,
        disk_key,
        tool,
        outstanding_io,
        threads,
        queue_depth,
        iops,
        latency_avg_ms,
        file_id,
        record_index
    from {{ ref('fct_io_results') }}
),

kept_at_load as (
    select io_result_id from {{ ref('int_saturation_points') }}
),

kept_at_threads_qd as (
    select io_result_id from {{ ref('int_saturation_thread_points') }}
),

-- the saturation marts' order (macros/saturation.sql: highest IOPS, then lower mean latency, then the earliest
-- stored record), within each tool
ranked_per_tool as (
    select
        io_result_id,
        row_number() over (
            partition by series_id, tool, outstanding_io
            order by iops desc, latency_avg_ms asc nulls last, file_id, record_index
        ) as rank_for_tool
    from io_results
    where iops is not null and outstanding_io > 0
)

select
    io_results.io_result_id,
    io_results.series_id,
    io_results.disk_key,
    io_results.tool,
    io_results.outstanding_io,
    io_results.threads,
    io_results.queue_depth,
    io_results.io_result_id in (select io_result_id from kept_at_load) as kept_at_load,
    io_results.io_result_id in (select io_result_id from kept_at_threads_qd) as kept_at_threads_qd,
    coalesce(ranked_per_tool.rank_for_tool = 1, false) as kept_for_tool_at_load
from io_results
left join ranked_per_tool using (io_result_id)
