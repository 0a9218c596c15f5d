-- One row per series and outstanding I/O (threads x queue depth): where several runs share one load
-- (2 threads x QD 16 and 4 x 8, or the same sweep stored twice), the run with the highest IOPS.
-- The saturation rule (macros/saturation.sql) and the USL / Kneedle fits (mart_usl_fits) read these points.
-- Incremental by series: a change recomputes the series whose points it changed.
{{ config(
    materialized='incremental', incremental_strategy='replace_changed', unique_key='series_id',
    indexes=kp_key_indexes('series_id')
) }}
{{ saturation_points_at_load(ref('fct_io_results'), ['outstanding_io'], in_changed_series()) }}
