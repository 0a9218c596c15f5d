-- One row per load series and load: where several steps share one load (the same sweep stored twice, two files of
-- one configuration), the step with the highest throughput (ties: the lower mean response time, then the earliest
-- stored). The saturation rule (load_saturation_sql) and the USL fits (mart_load_usl_fits) read these points.
-- Incremental by series: a change recomputes the series whose points it changed.
{{ config(
    materialized='incremental', incremental_strategy='replace_changed', unique_key='series_id',
    indexes=kp_key_indexes('series_id')
) }}
{{ load_points_at_load(ref('fct_load_steps'), in_changed_series()) }}
