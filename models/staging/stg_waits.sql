-- SQL Server wait statistics as the reader stored them (WaitRecord): one row per wait type and interval, rates per
-- second over the interval.
with source as (
    select * from {{ source('raw', 'raw_waits') }}
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
        wait_type,
        interval_start as interval_start_text,
        {{ kp_try_timestamp('interval_start') }} as interval_start,
        interval_s,
        since_boot,
        waiting_tasks_per_s,
        wait_ms_per_s,
        avg_wait_ms
    from source
)

select * from renamed
