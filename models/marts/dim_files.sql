-- One row per stored file: its lineage, labels and what it held. Incremental by file.
{{ config(
    materialized='incremental', incremental_strategy='replace_changed', unique_key='file_id',
    indexes=kp_key_indexes('file_id')
) }}
with files as (
    select * from {{ ref('stg_files') }}
    where {{ in_changed_files() }}
),

io_records as (
    select file_id, run_index, tool from {{ ref('stg_io_records') }}
    where {{ in_changed_files() }}
),

statements as (
    select file_id, statement_index from {{ ref('stg_query_io') }}
    where {{ in_changed_files() }}
    union all
    select file_id, statement_index from {{ ref('stg_query_time') }}
    where {{ in_changed_files() }}
),

io_counts as (
    select
        file_id,
        count(*) as io_records,
        count(distinct run_index) as io_runs
    from io_records
    group by file_id
),

statement_counts as (
    select file_id, count(distinct statement_index) as statements
    from statements
    group by file_id
),

-- the benchmark tools of its records, and `sqlserver` for SET STATISTICS output (the server's own measure)
file_tools as (
    select file_id, tool from io_records
    union
    select file_id, 'sqlserver' from statements
),

tool_lists as (
    select file_id, array_agg(tool order by tool) as tools
    from file_tools
    group by file_id
),

final as (
    select
        files.file_id,
        {{ disk_key('files.disk', 'files.host') }} as disk_key,
        files.file_name,
        files.sha256,
        files.size_bytes,
        files.format,
        files.tool_version,
        files.encoding,
        files.ingested_at,
        files.disk,
        files.host,
        files.tags,
        files.notes,
        files.kneepoint_version,
        coalesce(io_counts.io_records, 0) as io_records,
        coalesce(io_counts.io_runs, 0) as io_runs,
        coalesce(statement_counts.statements, 0) as statements,
        coalesce(tool_lists.tools, {{ kp_empty_text_list() }}) as tools
    from files
    left join io_counts using (file_id)
    left join statement_counts using (file_id)
    left join tool_lists using (file_id)
)

select * from final
