{{ config(tags=["change_guard"]) }}
-- Little's law on the load steps: where each unit of load is one waiting session (not databases or instances) and
-- the step has a response time, its ratio is throughput per second x mean response time (s) / load, and the step
-- is flagged exactly when the ratio lies outside vars littles_law_ratio_min..max. Rows returned are steps where
-- the fact says otherwise.
select load_step_id, load_kind, load, throughput_per_s, response_avg_ms, littles_law_ratio, littles_law_flag
from {{ ref('fct_load_steps') }}
where {{ in_test_scope('file_id') }}
  and (
      (load_kind in {{ littles_law_unchecked_load_kinds() }} and littles_law_ratio is not null)
      or (load_kind not in {{ littles_law_unchecked_load_kinds() }} and load > 0
          and abs(littles_law_ratio - throughput_per_s * response_avg_ms / 1000.0 / load)
              > 1e-9 * (throughput_per_s * response_avg_ms / 1000.0 / load))
      or littles_law_flag is distinct from (
          littles_law_ratio is not null
          and (littles_law_ratio < {{ var('littles_law_ratio_min') }}
               or littles_law_ratio > {{ var('littles_law_ratio_max') }}))
  )
