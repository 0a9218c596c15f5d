-- Observed production load as the readers stored it (ingest/records.py IntervalRecord): one row per device and
-- interval, every rate per second over the interval; the sample time read as the tool's clock printed it.
with source as (
    select * from {{ source('raw', 'raw_intervals') }}
    where {{ stored_by_cutoff() }}
),

renamed as (
    select
        file_id,
        record_index,
        interval_index,
        source_line,
        tool,
        tool_version,
        host,
        device,
        device_kind,
        interval_start as interval_start_text,
        {{ kp_try_timestamp('interval_start') }} as interval_start,
        interval_s,
        since_boot,
        reads_per_s,
        writes_per_s,
        read_bytes_per_s,
        write_bytes_per_s,
        read_latency_ms,
        write_latency_ms,
        queue_length,
        utilization_pct
    from source
)

select * from renamed
