-- Every percentile curve is drawable: percentiles within 0..100, latencies finite and not negative, and along a
-- histogram's curve both rise together and end at 100 %.
with points as (
    select
        *,
        lag(latency_ms) over (partition by io_result_id order by point_index) as previous_latency_ms,
        lag(percentile) over (partition by io_result_id order by point_index) as previous_percentile,
        max(point_index) over (partition by io_result_id) as last_point_index
    from {{ ref('fct_latency_distribution') }}
)

select latency_point_id, curve_source, percentile, latency_ms, 'outside 0..100 %' as problem
from points
where percentile < 0 or percentile > 100.000001

union all

select latency_point_id, curve_source, percentile, latency_ms, 'latency not finite or negative'
from points
where not isfinite(latency_ms) or latency_ms < 0

union all

select latency_point_id, curve_source, percentile, latency_ms, 'histogram curve goes back'
from points
where curve_source = 'histogram'
  and (latency_ms <= previous_latency_ms or percentile <= previous_percentile)

union all

select latency_point_id, curve_source, percentile, latency_ms, 'histogram curve does not end at 100 %'
from points
where curve_source = 'histogram' and point_index = last_point_index and abs(percentile - 100) > 1e-6
