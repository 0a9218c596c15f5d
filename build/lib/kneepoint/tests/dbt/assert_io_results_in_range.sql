{{ config(tags=["change_guard"]) }}
-- Every figure of a run is a possible one: shares within 0..100 %, at least one thread and one outstanding I/O
-- per thread, no negative IOPS, throughput or latency, the operation matching its read share, and the latencies a
-- tool printed in order (min <= mean <= max, p50 <= p95 <= p99 <= p99.9; a percentile may pass the max, since fio
-- and SQLIO print a percentile as the upper bound of its bucket). Rows returned are violations.
with io_results as (
    select * from {{ ref('fct_io_results') }}
    where {{ in_test_scope('file_id') }}
),

problems as (
    select io_result_id, 'read_pct outside 0..100' as problem from io_results where read_pct < 0 or read_pct > 100
    union all
    select io_result_id, 'threads below 1' from io_results where threads < 1
    union all
    select io_result_id, 'queue_depth below 1' from io_results where queue_depth < 1
    union all
    select io_result_id, 'negative iops or throughput' from io_results where iops < 0 or throughput_bytes_per_s < 0
    union all
    select io_result_id, 'negative latency'
    from io_results
    where least(latency_avg_ms, latency_min_ms, latency_max_ms, latency_p50_ms, latency_p95_ms, latency_p99_ms,
                latency_p999_ms) < 0
    union all
    select io_result_id, 'operation does not match read_pct'
    from io_results
    where (operation = 'read' and read_pct <> 100)
       or (operation = 'write' and read_pct <> 0)
    union all
    select io_result_id, 'latencies out of order'
    from io_results
    where latency_min_ms > latency_avg_ms
       or latency_avg_ms > latency_max_ms
       or latency_min_ms > latency_max_ms
       or latency_p50_ms > latency_p95_ms
       or latency_p95_ms > latency_p99_ms
       or latency_p99_ms > latency_p999_ms
)

select * from problems
