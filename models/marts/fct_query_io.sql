-- Grain: one row per table line of SET STATISTICS IO output (file_id, record_index), as StatisticsParser lists
-- them per statement, with the statement's totals beside each line (StatisticsParser's "Total" row) and the
-- line's share of the statement's logical reads. Pages read = physical + read-ahead reads (8 KiB pages).
-- Incremental by file: a change replaces every row of the files it touched.
{{ config(
    materialized='incremental', incremental_strategy='replace_changed', unique_key='file_id',
    indexes=kp_key_indexes('file_id')
) }}
with query_io as (
    select * from {{ ref('stg_query_io') }}
    where {{ in_changed_files() }}
),

files as (
    select * from {{ ref('stg_files') }}
    where {{ in_changed_files() }}
),

lines as (
    select
        *,
        -- null only when the line printed neither (a columnstore `Segment reads` line)
        case when physical_reads is not null or read_ahead_reads is not null
            then coalesce(physical_reads, 0) + coalesce(read_ahead_reads, 0)
        end as pages_read,
        case when lob_physical_reads is not null or lob_read_ahead_reads is not null
            then coalesce(lob_physical_reads, 0) + coalesce(lob_read_ahead_reads, 0)
        end as lob_pages_read
    from query_io
),

with_statement as (
    select
        *,
        row_number() over statement_lines as table_row,
        count(*) over statement as statement_tables,
        coalesce(sum(scan_count) over statement, 0) as statement_scan_count,
        coalesce(sum(logical_reads) over statement, 0) as statement_logical_reads,
        coalesce(sum(physical_reads) over statement, 0) as statement_physical_reads,
        coalesce(sum(read_ahead_reads) over statement, 0) as statement_read_ahead_reads,
        coalesce(sum(pages_read) over statement, 0) as statement_pages_read,
        coalesce(sum(lob_logical_reads) over statement, 0) as statement_lob_logical_reads,
        coalesce(sum(lob_pages_read) over statement, 0) as statement_lob_pages_read
    from lines
    window
        statement as (partition by file_id, statement_index),
        statement_lines as (partition by file_id, statement_index order by record_index)
),

final as (
    select
        s.file_id || ':' || s.record_index as query_io_id,
        s.file_id || ':' || s.statement_index as statement_id,
        {{ disk_key('files.disk', 'files.host') }} as disk_key,
        files.disk,
        files.host,
        s.statement_index,
        s.table_row,
        s.table_name,
        s.scan_count,
        s.logical_reads,
        s.physical_reads,
        s.page_server_reads,
        s.read_ahead_reads,
        s.page_server_read_ahead_reads,
        s.lob_logical_reads,
        s.lob_physical_reads,
        s.lob_page_server_reads,
        s.lob_read_ahead_reads,
        s.lob_page_server_read_ahead_reads,
        s.segment_reads,
        s.segment_skipped,
        s.pages_read,
        {{ pages_to_bytes('s.pages_read') }} as read_bytes,
        s.lob_pages_read,
        case when s.statement_logical_reads > 0
            then {{ kp_round('100.0 * coalesce(s.logical_reads, 0) / s.statement_logical_reads', 3) }}
        end as logical_reads_pct_of_statement,
        s.statement_tables,
        s.statement_scan_count,
        s.statement_logical_reads,
        s.statement_physical_reads,
        s.statement_read_ahead_reads,
        s.statement_pages_read,
        {{ pages_to_bytes('s.statement_pages_read') }} as statement_read_bytes,
        s.statement_lob_logical_reads,
        s.statement_lob_pages_read,
        s.tool_version,
        s.language,
        s.file_id,
        files.file_name,
        s.record_index,
        s.source_line
    from with_statement as s
    inner join files using (file_id)
)

select * from final
