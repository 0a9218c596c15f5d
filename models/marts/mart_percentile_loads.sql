-- Grain: one row per series and load worth a latency percentile curve: the smallest load measured, the saturation
-- point (at the project's tolerance) and the largest load, with the run kept there (int_saturation_points). The
-- curves page and the report draw these three, not every load. Incremental by series.
{{ config(
    materialized='incremental', incremental_strategy='replace_changed', unique_key='series_id',
    indexes=kp_key_indexes('series_id')
) }}
with saturation as (
    select * from {{ ref('mart_saturation_points') }}
    where {{ in_changed_series() }}
),

points as (
    select * from {{ ref('int_saturation_points') }}
    where {{ in_changed_series() }}
),

roles as (
    select series_id, min_outstanding_io as outstanding_io, 'lowest load' as load_role, 1 as role_order
    from saturation
    union all
    select series_id, saturation_outstanding_io, 'saturation point', 2
    from saturation
    where saturated
    union all
    select series_id, max_outstanding_io, 'highest load', 3
    from saturation
),

-- a load that is two of these (the saturation point at the smallest load) is drawn once, under its first role
first_role as (
    select series_id, outstanding_io, min(role_order) as role_order
    from roles
    group by series_id, outstanding_io
)

select
    points.series_id,
    points.disk_key,
    points.pattern,
    points.operation,
    points.read_pct,
    points.block_size_bytes,
    points.direction,
    points.outstanding_io,
    roles.load_role,
    roles.role_order,
    points.io_result_id,
    points.file_id,
    points.file_name
from first_role
inner join roles using (series_id, outstanding_io, role_order)
inner join points using (series_id, outstanding_io)
