-- One row per series: the Universal Scalability Law fit of IOPS against outstanding I/O and the Kneedle knee, second
-- opinions beside the saturation rule (mart_saturation_points joins them). The fits are computed outside dbt, by the
-- same Python on every engine (ingest/analytics.py, run by ingest/build.py between the models that make the points
-- and those that read the fits): a least-squares fit has no portable SQL. This model presents them. Incremental by
-- series, like the points they are fitted to.
{{ config(
    materialized='incremental', incremental_strategy='replace_changed', unique_key='series_id',
    indexes=kp_key_indexes('series_id')
) }}
-- depends_on: {{ ref('int_saturation_points') }}
select * from {{ source('build', 'kneepoint_usl_fits') }}
where {{ in_changed_series() }}
