-- One row per series: its saturation point by the rule at the project's tolerance (var saturation_tolerance),
-- with the USL and Kneedle second opinions beside it. The post-hook stores the same SQL as
-- saturation_points(tol) (macros/saturation.sql), so `kneepoint saturation --tolerance` reads the same rule.
-- Incremental by series: a change recomputes the series whose points it changed.
{{
    config(
        materialized='incremental',
        incremental_strategy='replace_changed',
        unique_key='series_id',
        indexes=kp_key_indexes('series_id'),
        post_hook="{{ create_saturation_points_macro() }}",
    )
}}
{{ saturation_points_sql(ref('int_saturation_points'), ref('mart_usl_fits'), var('saturation_tolerance'),
                         in_changed_series()) }}
