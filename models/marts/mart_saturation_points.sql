-- One row per series: its saturation point by the rule at the project's tolerance (var saturation_tolerance),
-- with the USL and Kneedle second opinions beside it. The rule is the DuckDB table macro saturation_points(tol)
-- that the pre-hook stores (macros/saturation.sql), so `kneepoint saturation --tolerance` reads the same SQL.
{{ config(pre_hook="{{ create_saturation_points_macro() }}") }}
-- depends_on: {{ ref('int_saturation_points') }}
-- depends_on: {{ ref('mart_usl_fits') }}
select * from saturation_points({{ var('saturation_tolerance') }})
