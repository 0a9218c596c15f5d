-- Grain: one row per measured run and direction (file_id, record_index).
with io_results as (
    select * from {{ ref('int_io_results') }}
),

final as (
    select
        file_id || ':' || record_index as io_result_id,
        disk_key,
        disk,
        host,
        tool,
        tool_version,
        pattern,
        operation,
        read_pct,
        direction,
        block_size_bytes,
        threads,
        queue_depth,
        outstanding_io,
        duration_s,
        iops,
        throughput_bytes_per_s,
        {{ bytes_to_mb('throughput_bytes_per_s') }} as throughput_mb_per_s,
        {{ bytes_to_mib('throughput_bytes_per_s') }} as throughput_mib_per_s,
        latency_avg_ms,
        latency_min_ms,
        latency_max_ms,
        latency_p50_ms,
        latency_p95_ms,
        latency_p99_ms,
        latency_p999_ms,
        run_iops,
        run_latency_avg_ms,
        littles_law_ratio,
        littles_law_ratio is not null
            and (littles_law_ratio < 0.8 or littles_law_ratio > 1.25) as littles_law_flag,
        target,
        started_at,
        inferred,
        reported_throughput_unit,
        file_id,
        file_name,
        record_index,
        run_index,
        source_line
    from io_results
)

select * from final
