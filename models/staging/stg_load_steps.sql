-- Load series as the readers stored them (ingest/records.py LoadRecord): one row per step, what an application did
-- at one load (N sessions, virtual users, databases), its throughput converted to per second (to_per_s over var
-- load_throughput_units_per_s) and what the throughput counts (the unit's "what": transactions, new orders, ...).
with source as (
    select * from {{ source('raw', 'raw_load_steps') }}
    where {{ stored_by_cutoff() }}
),

converted as (
    select
        file_id,
        record_index,
        step_index,
        source_line,
        tool,
        tool_version,
        -- '' is the file's one workload: a series key has no NULL in it
        coalesce(workload, '') as workload,
        load_kind,
        load,
        throughput,
        throughput_unit as reported_throughput_unit,
        {{ throughput_what('throughput_unit') }} as throughput_what,
        {{ to_per_s('throughput', 'throughput_unit') }} as throughput_per_s,
        response_avg_ms,
        response_p50_ms,
        response_p95_ms,
        response_p99_ms,
        duration_s,
        errors
    from source
)

select * from converted
