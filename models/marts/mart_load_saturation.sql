-- One row per load series: where more load stops adding throughput, by the disks' saturation rule at the project's
-- tolerance (var saturation_tolerance; the rule is written once, macros/saturation.sql saturation_judged), with the
-- USL fit beside it. The post-hook stores the same SQL as load_saturation_points(tol), so `kneepoint saturation
-- --tolerance` reads the same rule. Incremental by series: a change recomputes the series whose points it changed.
{{
    config(
        materialized='incremental',
        incremental_strategy='replace_changed',
        unique_key='series_id',
        indexes=kp_key_indexes('series_id'),
        post_hook="{{ create_load_saturation_points_macro() }}",
    )
}}
{{ load_saturation_sql(ref('int_load_points'), ref('mart_load_usl_fits'), var('saturation_tolerance'),
                       in_changed_series()) }}
