with files as (
    select * from {{ ref('stg_files') }}
),

io_counts as (
    select file_id, count(*) as io_records, count(distinct run_index) as io_runs
    from {{ ref('stg_io_records') }}
    group by file_id
),

query_counts as (
    select file_id, count(distinct statement_index) as statements
    from (
        select file_id, statement_index from {{ ref('stg_query_io') }}
        union all
        select file_id, statement_index from {{ ref('stg_query_time') }}
    )
    group by file_id
),

final as (
    select
        files.file_id,
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
        coalesce(query_counts.statements, 0) as statements
    from files
    left join io_counts using (file_id)
    left join query_counts using (file_id)
)

select * from final
