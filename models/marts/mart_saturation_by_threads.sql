-- One row per series and thread count, the load being the queue depth: a threads x QD sweep read as
-- "whatever the thread count, it saturates at N outstanding requests". Same rule, same tolerance as
-- mart_saturation_points; the post-hook stores it as saturation_by_threads(tol).
-- Incremental by series.
{{
    config(
        materialized='incremental',
        incremental_strategy='replace_changed',
        unique_key='series_id',
        indexes=kp_key_indexes('series_id'),
        post_hook="{{ create_saturation_by_threads_macro() }}",
    )
}}
{{ saturation_by_threads_sql(ref('int_saturation_thread_points'), var('saturation_tolerance'), in_changed_series()) }}
