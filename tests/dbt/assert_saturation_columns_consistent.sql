{{ config(tags=["change_guard"]) }}
-- Columns of one series tell one story: a saturated series has every figure at its saturation point, inside the
-- tested range and below its largest load; a series that is not saturated has none; counts and ranges add up;
-- the USL was fitted exactly where there are 4 loads or more, with σ in 0..1, κ ≥ 0 and a peak only where κ > 0
-- and σ < 1 (at σ = 1 IOPS fall from the first load on).
select series_id, null::integer as threads, 'saturation figures' as problem
from {{ ref('mart_saturation_points') }}
where {{ in_test_scope('series_id') }} and (saturated is distinct from (saturation_outstanding_io is not null)
   or saturated is distinct from (iops_at_saturation is not null)
   or (saturated and not (saturation_outstanding_io >= min_outstanding_io
                          and saturation_outstanding_io < max_outstanding_io))
   or (saturated and iops_at_saturation > max_iops)
   or (not saturated and latency_growth_to_saturation is not null)
   or points < 1 or runs < points or min_outstanding_io > max_outstanding_io
   or littles_law_flagged_runs > runs
   or (points = 1 and saturated))
union all
select s.series_id, null, 'usl fit'
from {{ ref('mart_saturation_points') }} as s
where {{ in_test_scope('series_id') }} and (usl_fitted is distinct from (points >= 4)
   or (usl_fitted and not (usl_sigma between 0 and 1 and usl_kappa >= 0 and usl_lambda_iops > 0))
   or (usl_fitted and (usl_kappa > 0 and usl_sigma < 1) is distinct from (usl_peak_outstanding_io is not null))
   or (kneedle_outstanding_io is not null and not exists (
          select 1 from {{ ref('int_saturation_points') }} as p
          where p.series_id = s.series_id and p.outstanding_io = s.kneedle_outstanding_io
       )))
union all
select series_id, threads, 'per-thread figures'
from {{ ref('mart_saturation_by_threads') }}
where {{ in_test_scope('series_id') }} and (saturated is distinct from (saturation_queue_depth is not null)
   or (saturated and saturation_outstanding_io <> threads * saturation_queue_depth)
   or (saturated and not (saturation_queue_depth >= min_queue_depth and saturation_queue_depth < max_queue_depth))
   or points < 1 or runs < points)
