with source as (
    select * from {{ source('raw', 'raw_io_records') }}
    where {{ stored_by_cutoff() }}
),

converted as (
    select
        file_id,
        record_index,
        run_index,
        source_line,
        tool,
        tool_version,
        target,
        try_cast(started_at as timestamptz) as started_at,
        pattern,
        operation,
        read_pct,
        direction,
        block_size_bytes,
        threads,
        queue_depth,
        duration_s,
        iops,
        {{ to_bytes_per_s('throughput', 'throughput_unit') }} as throughput_bytes_per_s,
        {{ to_ms('latency_avg', 'latency_unit') }} as latency_avg_ms,
        {{ to_ms('latency_min', 'latency_unit') }} as latency_min_ms,
        {{ to_ms('latency_max', 'latency_unit') }} as latency_max_ms,
        {{ to_ms('latency_p50', 'latency_unit') }} as latency_p50_ms,
        {{ to_ms('latency_p95', 'latency_unit') }} as latency_p95_ms,
        {{ to_ms('latency_p99', 'latency_unit') }} as latency_p99_ms,
        {{ to_ms('latency_p999', 'latency_unit') }} as latency_p999_ms,
        throughput_unit as reported_throughput_unit,
        latency_unit as reported_latency_unit,
        coalesce(inferred, []::varchar[]) as inferred
    from source
)

select * from converted
