with source as (
    select * from {{ source('raw', 'raw_query_time') }}
    where {{ stored_by_cutoff() }}
),

renamed as (
    select
        file_id,
        record_index,
        statement_index,
        source_line,
        phase,
        cpu_ms,
        elapsed_ms,
        tool_version,
        language,
        error_number
    from source
)

select * from renamed
