with source as (
    select * from {{ source('raw', 'raw_query_io') }}
    where {{ stored_by_cutoff() }}
),

renamed as (
    select
        file_id,
        record_index,
        statement_index,
        source_line,
        table_name,
        scan_count,
        logical_reads,
        physical_reads,
        page_server_reads,
        read_ahead_reads,
        page_server_read_ahead_reads,
        lob_logical_reads,
        lob_physical_reads,
        lob_page_server_reads,
        lob_read_ahead_reads,
        lob_page_server_read_ahead_reads,
        segment_reads,
        segment_skipped,
        tool_version,
        language
    from source
)

select * from renamed
