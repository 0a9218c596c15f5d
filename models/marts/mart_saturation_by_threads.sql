-- One row per series and thread count, the load being the queue depth: a threads x QD sweep read as
-- "whatever the thread count, it saturates at N outstanding requests". Same rule, same tolerance as
-- mart_saturation_points (the DuckDB table macro saturation_by_threads(tol), macros/saturation.sql).
{{ config(pre_hook="{{ create_saturation_by_threads_macro() }}") }}
-- depends_on: {{ ref('int_saturation_thread_points') }}
select * from saturation_by_threads({{ var('saturation_tolerance') }})
