-- One row per disk label and host: what was measured on it, when, with which tools. A table over dim_files (one
-- row per file), rebuilt by every build: the per-disk sums cost less than tracking which disks a change touched.
with files as (
    select * from {{ ref('dim_files') }}
),

per_disk as (
    select
        disk_key,
        any_value(disk) as disk,
        any_value(host) as host,
        min(ingested_at) as first_seen_at,
        max(ingested_at) as last_seen_at,
        list_sort(list_distinct(flatten(list(tools)))) as tools,
        count(*) as files,
        sum(io_runs)::bigint as runs,
        sum(statements)::bigint as statements
    from files
    group by disk_key
)

select * from per_disk
