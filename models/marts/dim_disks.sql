-- One row per disk label and host: what was measured on it, when, with which tools. A table over dim_files (one
-- row per file), rebuilt by every build: the per-disk sums cost less than tracking which disks a change touched.
with files as (
    select * from {{ ref('dim_files') }}
),

disk_tools as (
    select disk_key, array_agg(distinct tool order by tool) as tools
    from (select disk_key, unnest(tools) as tool from files) as file_tools
    group by disk_key
),

per_disk as (
    select
        disk_key,
        min(disk) as disk,
        min(host) as host,
        min(ingested_at) as first_seen_at,
        max(ingested_at) as last_seen_at,
        count(*) as files,
        cast(sum(io_runs) as bigint) as runs,
        cast(sum(statements) as bigint) as statements
    from files
    group by disk_key
),

final as (
    select
        per_disk.disk_key,
        per_disk.disk,
        per_disk.host,
        per_disk.first_seen_at,
        per_disk.last_seen_at,
        coalesce(disk_tools.tools, {{ kp_empty_text_list() }}) as tools,
        per_disk.files,
        per_disk.runs,
        per_disk.statements
    from per_disk
    left join disk_tools using (disk_key)
)

select * from final
