-- One row per series, thread count and queue depth (the best run where one was measured more than once):
-- the points of the per-thread saturation view, where the load is the queue depth. Incremental by series.
{{ config(
    materialized='incremental', incremental_strategy='replace_changed', unique_key='series_id',
    indexes=kp_key_indexes('series_id')
) }}
{{ saturation_points_at_load(ref('fct_io_results'), ['threads', 'queue_depth'], in_changed_series()) }}
