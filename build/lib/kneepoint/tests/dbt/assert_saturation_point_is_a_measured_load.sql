{{ config(tags=["change_guard"]) }}
-- A saturation point is one of the series' measured loads, with that load's figures: never an interpolated or
-- invented x. Rows returned are violations (per series, then per series and thread count).
select s.series_id, null::integer as threads, s.saturation_outstanding_io as load
from {{ ref('mart_saturation_points') }} as s
where s.saturated and {{ in_test_scope('series_id') }}
  and not exists (
      select 1
      from {{ ref('int_saturation_points') }} as p
      where p.series_id = s.series_id
        and p.outstanding_io = s.saturation_outstanding_io
        and p.iops = s.iops_at_saturation
        and p.threads = s.saturation_threads
        and p.queue_depth = s.saturation_queue_depth
  )
union all
select t.series_id, t.threads, t.saturation_queue_depth
from {{ ref('mart_saturation_by_threads') }} as t
where t.saturated and {{ in_test_scope('series_id') }}
  and not exists (
      select 1
      from {{ ref('int_saturation_thread_points') }} as p
      where p.series_id = t.series_id
        and p.threads = t.threads
        and p.queue_depth = t.saturation_queue_depth
        and p.iops = t.iops_at_saturation
        and p.outstanding_io = t.saturation_outstanding_io
  )
