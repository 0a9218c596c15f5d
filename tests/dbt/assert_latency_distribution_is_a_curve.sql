{{ config(tags=["change_guard"]) }}
-- Every percentile curve is drawable: percentiles within 0..100, latencies finite and not negative, and along a
-- histogram's curve both rise together and end at 100 %. (The order along a curve is checked on the histogram
-- points alone: the printed percentiles are fixed values in rising order, and sorting them too tripled the cost.)
-- Each point set is read by one select, its problems named by a case: a set read twice is held whole by
-- PostgreSQL (6.3M points at 1M fact rows, a third of the test's time).
with points as (
    select io_result_id, point_index, curve_source, percentile, latency_ms from {{ ref('fct_latency_distribution') }}
    where {{ in_test_scope('file_id') }}
),

histogram_points as (
    select
        io_result_id,
        point_index,
        curve_source,
        percentile,
        latency_ms,
        lag(latency_ms) over curve as previous_latency_ms,
        lag(percentile) over curve as previous_percentile,
        lead(point_index) over curve is null as last_point
    from {{ ref('fct_latency_distribution') }}
    where curve_source = 'histogram' and {{ in_test_scope('file_id') }}
    window curve as (partition by io_result_id order by point_index)
)

select
    io_result_id,
    point_index,
    curve_source,
    percentile,
    latency_ms,
    case
        when percentile < 0 or percentile > 100.000001 then 'outside 0..100 %'
        else 'latency not finite or negative'
    end as problem
from points
where percentile < 0 or percentile > 100.000001 or not {{ kp_is_finite('latency_ms') }} or latency_ms < 0

union all

select
    io_result_id,
    point_index,
    curve_source,
    percentile,
    latency_ms,
    case
        when latency_ms <= previous_latency_ms or percentile <= previous_percentile then 'histogram curve goes back'
        else 'histogram curve does not end at 100 %'
    end
from histogram_points
where
    latency_ms <= previous_latency_ms
    or percentile <= previous_percentile
    or (last_point and abs(percentile - 100) > 1e-6)
