-- One row per stored file: its lineage, labels and what it held. Incremental by file.
{{ config(materialized='incremental', incremental_strategy='replace_changed', unique_key='file_id') }}
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
        count(distinct run_index) as io_runs,
        list(distinct tool order by tool) as io_tools
    from io_records
    group by file_id
),

statement_counts as (
    select file_id, count(distinct statement_index) as statements
    from statements
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
        -- the benchmark tools of its records, and `sqlserver` for SET STATISTICS output (the server's own measure)
        coalesce(io_counts.io_tools, []::varchar[])
            || case when coalesce(statement_counts.statements, 0) > 0 then ['sqlserver'] else []::varchar[] end
            as tools
    from files
    left join io_counts using (file_id)
    left join statement_counts using (file_id)
)

select * from final
