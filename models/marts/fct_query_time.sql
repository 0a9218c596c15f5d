-- Grain: one row per SQL statement (file_id, statement_index) with STATISTICS TIME or IO output: its
-- compile and execution times, the I/O totals over its tables, and what they say about the disk:
-- effective read throughput (pages read x 8 KiB / execution elapsed) and CPU / elapsed. A statement that failed
-- (SQL Server printed an error for it) is marked so, with its error number, and says nothing of the disk.
-- Incremental by file: a change replaces every row of the files it touched.
{{ config(
    materialized='incremental', incremental_strategy='replace_changed', unique_key='file_id',
    indexes=kp_key_indexes('file_id')
) }}
with query_time as (
    select * from {{ ref('stg_query_time') }}
    where {{ in_changed_files() }}
),

query_io as (
    select * from {{ ref('fct_query_io') }}
    where {{ in_changed_files() }}
),

files as (
    select * from {{ ref('stg_files') }}
    where {{ in_changed_files() }}
),

times as (
    -- A statement may print several blocks of one phase (a procedure's inner statements): summed.
    select
        file_id,
        statement_index,
        min(source_line) as first_time_line,
        sum(cpu_ms) filter (where phase = 'compile') as compile_cpu_ms,
        sum(elapsed_ms) filter (where phase = 'compile') as compile_elapsed_ms,
        sum(cpu_ms) filter (where phase = 'execution') as execution_cpu_ms,
        sum(elapsed_ms) filter (where phase = 'execution') as execution_elapsed_ms,
        count(*) filter (where phase = 'execution') as execution_blocks,
        min(tool_version) as tool_version,
        min(language) as language
    from query_time
    group by file_id, statement_index
),

io as (
    select
        file_id,
        statement_index,
        min(source_line) as first_io_line,
        count(*) as tables,
        sum(scan_count) as scan_count,
        sum(logical_reads) as logical_reads,
        sum(physical_reads) as physical_reads,
        sum(read_ahead_reads) as read_ahead_reads,
        sum(page_server_reads) as page_server_reads,
        sum(page_server_read_ahead_reads) as page_server_read_ahead_reads,
        sum(lob_logical_reads) as lob_logical_reads,
        sum(lob_physical_reads) as lob_physical_reads,
        sum(lob_read_ahead_reads) as lob_read_ahead_reads,
        sum(pages_read) as pages_read,
        sum(lob_pages_read) as lob_pages_read,
        sum(segment_reads) as segment_reads,
        sum(segment_skipped) as segment_skipped,
        min(tool_version) as tool_version,
        min(language) as language
    from query_io
    group by file_id, statement_index
),

failures as (
    -- The error a failed statement printed; a failed statement without a time block of its own has one execution
    -- record without times, which is no block.
    select
        file_id,
        statement_index,
        min(error_number) as error_number,
        count(*) filter (where phase = 'execution' and elapsed_ms is null) as timeless_blocks
    from query_time
    where error_number is not null
    group by file_id, statement_index
),

statements as (
    select
        file_id,
        statement_index,
        least(times.first_time_line, io.first_io_line) as source_line,
        times.compile_cpu_ms,
        times.compile_elapsed_ms,
        times.execution_cpu_ms,
        times.execution_elapsed_ms,
        times.execution_blocks - coalesce(failures.timeless_blocks, 0) as execution_blocks,
        failures.error_number,
        coalesce(io.tables, 0) as tables,
        io.scan_count,
        io.logical_reads,
        io.physical_reads,
        io.read_ahead_reads,
        io.page_server_reads,
        io.page_server_read_ahead_reads,
        io.lob_logical_reads,
        io.lob_physical_reads,
        io.lob_read_ahead_reads,
        io.pages_read,
        io.lob_pages_read,
        io.segment_reads,
        io.segment_skipped,
        coalesce(times.tool_version, io.tool_version) as tool_version,
        coalesce(times.language, io.language) as language
    from times
    full outer join io using (file_id, statement_index)
    left join failures using (file_id, statement_index)
),

final as (
    select
        s.file_id || ':' || s.statement_index as statement_id,
        {{ disk_key('files.disk', 'files.host') }} as disk_key,
        files.disk,
        files.host,
        s.statement_index,
        s.compile_cpu_ms,
        s.compile_elapsed_ms,
        s.execution_cpu_ms,
        s.execution_elapsed_ms,
        case when s.compile_cpu_ms is not null or s.execution_cpu_ms is not null
            then coalesce(s.compile_cpu_ms, 0) + coalesce(s.execution_cpu_ms, 0)
        end as total_cpu_ms,
        case when s.compile_elapsed_ms is not null or s.execution_elapsed_ms is not null
            then coalesce(s.compile_elapsed_ms, 0) + coalesce(s.execution_elapsed_ms, 0)
        end as total_elapsed_ms,
        s.execution_blocks,
        s.error_number is not null as failed,
        s.error_number,
        s.tables,
        s.scan_count,
        s.logical_reads,
        s.physical_reads,
        s.read_ahead_reads,
        s.page_server_reads,
        s.page_server_read_ahead_reads,
        s.lob_logical_reads,
        s.lob_physical_reads,
        s.lob_read_ahead_reads,
        s.pages_read,
        {{ pages_to_bytes('s.pages_read') }} as read_bytes,
        s.lob_pages_read,
        s.segment_reads,
        s.segment_skipped,
        -- Reads happen while the statement executes; compile time is not I/O time. A failed statement's times
        -- measure its failure, not the disk.
        case when s.execution_elapsed_ms > 0 and s.pages_read is not null and s.error_number is null
            then {{ pages_to_bytes('s.pages_read') }} / {{ ms_to_s('s.execution_elapsed_ms') }}
        end as effective_read_bytes_per_s,
        -- Above 1: parallel plan; well below 1: the statement waited (on I/O, locks, the client).
        case when s.execution_elapsed_ms > 0 and s.error_number is null
            then s.execution_cpu_ms / s.execution_elapsed_ms
        end as cpu_to_elapsed,
        s.tool_version,
        s.language,
        s.file_id,
        files.file_name,
        s.source_line
    from statements as s
    inner join files using (file_id)
)

select * from final
