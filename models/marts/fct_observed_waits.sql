-- Grain: one row per SQL Server wait type and interval (file_id, record_index), with the file's disk label: what a
-- DBA compares with the benchmark beside the file statistics (PAGEIOLATCH_* about the reads' latency, WRITELOG the
-- log's writes). The host as fct_observed_intervals names it (the computer, its instance apart, host_key without
-- case). Incremental by file; the hooks note the disks of the changed files, as fct_observed_intervals'
-- do, which mart_waits_vs_baseline then recomputes (a file of waits alone changes its disk's waits).
{{
    config(
        materialized='incremental',
        incremental_strategy='replace_changed',
        unique_key='file_id',
        indexes=kp_key_indexes('file_id'),
        pre_hook="{{ remember_changed_disks() }}",
        post_hook="{{ remember_changed_disks() }}",
    )
}}
with waits as (
    select * from {{ ref('stg_waits') }}
    where {{ in_changed_files() }}
),

files as (
    select * from {{ ref('stg_files') }}
    where {{ in_changed_files() }}
),

final as (
    select
        waits.file_id || ':' || waits.record_index as observed_wait_id,
        {{ disk_key('files.disk', 'files.host') }} as disk_key,
        files.disk,
        {{ observed_host('waits.host', 'files.host') }} as host,
        {{ observed_host_key(observed_host('waits.host', 'files.host')) }} as host_key,
        {{ observed_instance('waits.host', 'files.host') }} as instance,
        waits.wait_type,
        case
            when waits.wait_type like 'PAGEIOLATCH%' then 'data page read'
            when waits.wait_type = 'WRITELOG' then 'log write'
            when waits.wait_type = 'IO_COMPLETION' then 'other I/O'
            else 'other'
        end as wait_kind,
        waits.tool,
        waits.tool_version,
        waits.interval_index,
        waits.interval_start,
        waits.interval_start_text,
        waits.interval_s,
        waits.since_boot,
        waits.waiting_tasks_per_s,
        waits.wait_ms_per_s,
        waits.avg_wait_ms,
        waits.file_id,
        files.file_name,
        waits.record_index,
        waits.source_line
    from waits
    inner join files using (file_id)
)

select * from final
