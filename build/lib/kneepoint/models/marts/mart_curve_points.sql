-- Grain: one row per measured run and direction (fct_io_results.io_result_id): which runs the curves go through
-- where several share a load. `kept_at_load` is the run int_saturation_points keeps for its series and outstanding
-- I/O (the highest IOPS, macros/saturation.sql), `kept_at_threads_qd` the one int_saturation_thread_points keeps per
-- thread count and queue depth. The app's curves and the report join this to fct_io_results, so the curve, the
-- marked saturation point and the percentile curves are the same run. A view over the tables it reads.
{{ config(materialized='view') }}
with io_results as (
    select io_result_id, series_id, disk_key, outstanding_io, threads, queue_depth from {{ ref('fct_io_results') }}
),

kept_at_load as (
    select io_result_id from {{ ref('int_saturation_points') }}
),

kept_at_threads_qd as (
    select io_result_id from {{ ref('int_saturation_thread_points') }}
)

select
    io_results.*,
    io_results.io_result_id in (select io_result_id from kept_at_load) as kept_at_load,
    io_results.io_result_id in (select io_result_id from kept_at_threads_qd) as kept_at_threads_qd
from io_results
