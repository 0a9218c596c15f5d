-- One row per disk label and host: what was measured on it, when, with which tools.
with files as (
    select * from {{ ref('dim_files') }}
),

io_results as (
    select disk, host, tool from {{ ref('fct_io_results') }}
),

per_disk as (
    select
        disk,
        host,
        min(ingested_at) as first_seen_at,
        max(ingested_at) as last_seen_at,
        count(*) as files,
        sum(io_runs)::bigint as runs,
        sum(statements)::bigint as statements
    from files
    group by disk, host
),

tools as (
    select disk, host, list(distinct tool order by tool) as tools
    from (
        select disk, host, tool from io_results
        union all
        -- SET STATISTICS output is SQL Server's own measurement of the disk
        select disk, host, 'sqlserver' as tool from files where statements > 0
    )
    group by disk, host
),

final as (
    select
        {{ disk_key('per_disk.disk', 'per_disk.host') }} as disk_key,
        per_disk.disk,
        per_disk.host,
        per_disk.first_seen_at,
        per_disk.last_seen_at,
        coalesce(tools.tools, []::varchar[]) as tools,
        per_disk.files,
        per_disk.runs,
        per_disk.statements
    from per_disk
    left join tools using (disk, host)
)

select * from final
