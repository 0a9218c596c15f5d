{{ config(tags=["change_guard"]) }}
-- The rule, checked point by point without window functions (the marts compute it with them, in
-- macros/saturation.sql). A load qualifies when a larger load was measured and none of the larger loads
-- beats its IOPS by more than the tolerance; the saturation point is the smallest qualifying load, and a
-- series with none is not saturated. Rows returned are series where the mart says otherwise.
with points as (
    select series_id, outstanding_io, iops from {{ ref('int_saturation_points') }}
    where {{ in_test_scope('series_id') }}
),

tolerance as (
    select series_id, tolerance from {{ ref('mart_saturation_points') }}
    where {{ in_test_scope('series_id') }}
),

qualifying as (
    select p.series_id, min(p.outstanding_io) as first_qualifying_load
    from points as p
    inner join tolerance as t using (series_id)
    where exists (
            select 1 from points as q where q.series_id = p.series_id and q.outstanding_io > p.outstanding_io
        )
      and not exists (
            select 1
            from points as q
            where q.series_id = p.series_id
              and q.outstanding_io > p.outstanding_io
              and q.iops > (1 + t.tolerance) * p.iops
        )
    group by p.series_id
)

select s.series_id, s.saturated, s.saturation_outstanding_io, q.first_qualifying_load
from {{ ref('mart_saturation_points') }} as s
left join qualifying as q using (series_id)
where {{ in_test_scope('series_id') }}
  and (s.saturated is distinct from (q.first_qualifying_load is not null)
   or s.saturation_outstanding_io is distinct from q.first_qualifying_load)
