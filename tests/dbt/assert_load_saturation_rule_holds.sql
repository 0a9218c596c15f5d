{{ config(tags=["change_guard"]) }}
-- The disks' rule on the load series, checked point by point without window functions (the mart computes it with
-- them, macros/saturation.sql saturation_judged): a load qualifies when a larger load was measured and none of
-- the larger loads beats its throughput by more than the tolerance; the saturation point is the smallest
-- qualifying load, with that load's measured throughput. Rows returned are series where the mart says otherwise.
with points as (
    select series_id, load, throughput_per_s from {{ ref('int_load_points') }}
    where {{ in_test_scope('series_id') }}
),

tolerance as (
    select series_id, tolerance from {{ ref('mart_load_saturation') }}
    where {{ in_test_scope('series_id') }}
),

qualifying as (
    select p.series_id, min(p.load) as first_qualifying_load
    from points as p
    inner join tolerance as t using (series_id)
    where exists (select 1 from points as q where q.series_id = p.series_id and q.load > p.load)
      and not exists (
            select 1
            from points as q
            where q.series_id = p.series_id
              and q.load > p.load
              and q.throughput_per_s > (1 + t.tolerance) * p.throughput_per_s
        )
    group by p.series_id
)

select s.series_id, s.saturated, s.saturation_load, q.first_qualifying_load
from {{ ref('mart_load_saturation') }} as s
left join qualifying as q using (series_id)
where {{ in_test_scope('series_id') }}
  and (s.saturated is distinct from (q.first_qualifying_load is not null)
   or s.saturation_load is distinct from q.first_qualifying_load
   or (s.saturated and not exists (
        select 1 from points as p
        where p.series_id = s.series_id and p.load = s.saturation_load
          and p.throughput_per_s = s.throughput_per_s_at_saturation
      )))
