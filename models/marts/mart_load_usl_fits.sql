-- One row per load series: the Universal Scalability Law fit of throughput per second against the load (N = the
-- sessions, virtual users or databases), a second opinion beside the saturation rule (mart_load_saturation joins
-- it). Fitted outside dbt by the disks' own code (ingest/load_fits.py over ingest/analytics.py, run by
-- ingest/build.py between the two dbt phases); this model presents the fits. Incremental by series.
{{ config(
    materialized='incremental', incremental_strategy='replace_changed', unique_key='series_id',
    indexes=kp_key_indexes('series_id')
) }}
-- depends_on: {{ ref('int_load_points') }}
select * from {{ source('build', 'kneepoint_load_usl_fits') }}
where {{ in_changed_series() }}
