-- Grain: one row per measured run and direction (file_id, record_index), with its file's labels, the load it was
-- measured at, its series (macros/saturation.sql) and the Little's-law check of its run.
-- Incremental by file: a change replaces every row of the files it touched; the hooks note the series those rows
-- belonged to before and after (a relabel moves them), which the saturation marts then recompute, and their disks,
-- whose observed load the production-vs-baseline marts place again.
{{
    config(
        materialized='incremental',
        incremental_strategy='replace_changed',
        unique_key='file_id',
        indexes=kp_key_indexes('file_id', looked_up_by=['series_id']),
        pre_hook=["{{ remember_changed_series() }}", "{{ remember_changed_disks() }}"],
        post_hook=["{{ remember_changed_series() }}", "{{ remember_changed_disks() }}"],
    )
}}
with io_records as (
    select * from {{ ref('stg_io_records') }}
    where {{ in_changed_files() }}
),

files as (
    select * from {{ ref('stg_files') }}
    where {{ in_changed_files() }}
),

-- Little's law holds for a run as a whole: its outstanding I/O is shared by every direction, so a 70/30 mix's
-- read row alone gives 0.7. A run (file_id, run_index) is counted once: its `total` row where the tool printed
-- one, else the sum of its read and write rows.
runs_with_total as (
    select distinct file_id, run_index from io_records where direction = 'total'
),

counted as (
    select * from io_records where direction = 'total'
    union all
    select io_records.*
    from io_records
    where io_records.direction is distinct from 'total'
      and not exists (
          select 1 from runs_with_total as t
          where t.file_id = io_records.file_id and t.run_index = io_records.run_index
      )
),

runs as (
    select
        file_id,
        run_index,
        case when count(iops) = count(*) then sum(iops) end as run_iops,
        -- Little's law sums IOPS x mean latency over the directions: the IOPS-weighted mean latency.
        case
            when count(iops) = count(*) and count(latency_avg_ms) = count(*)
                then sum(iops * latency_avg_ms) / nullif(sum(iops), 0)
        end as run_latency_avg_ms,
        -- The directions of one run share its load; rows that disagree leave the run unchecked.
        case
            when count(threads * queue_depth) = count(*)
                and min(threads * queue_depth) = max(threads * queue_depth)
                then min(threads * queue_depth)
        end as run_outstanding_io
    from counted
    group by file_id, run_index
),

labelled as (
    select
        {{ disk_key('files.disk', 'files.host') }} as disk_key,
        files.disk,
        files.host,
        files.file_name,
        io_records.*,
        io_records.threads * io_records.queue_depth as outstanding_io,
        runs.run_iops,
        runs.run_latency_avg_ms,
        -- Little's law: outstanding I/O = IOPS x mean latency. Near 1 for one steady run; far from 1
        -- flags CPU-bound runs, capped queues or unit mistakes.
        case
            when runs.run_outstanding_io > 0 and runs.run_latency_avg_ms is not null and runs.run_iops is not null
                then runs.run_iops * {{ ms_to_s('runs.run_latency_avg_ms') }} / runs.run_outstanding_io
        end as littles_law_ratio
    from io_records
    inner join files using (file_id)
    left join runs using (file_id, run_index)
),

final as (
    select
        {{ io_result_id() }} as io_result_id,
        {{ saturation_series_id() }} as series_id,
        disk_key,
        disk,
        host,
        tool,
        tool_version,
        pattern,
        operation,
        read_pct,
        direction,
        block_size_bytes,
        threads,
        queue_depth,
        outstanding_io,
        duration_s,
        iops,
        throughput_bytes_per_s,
        {{ bytes_to_mb('throughput_bytes_per_s') }} as throughput_mb_per_s,
        {{ bytes_to_mib('throughput_bytes_per_s') }} as throughput_mib_per_s,
        latency_avg_ms,
        latency_min_ms,
        latency_max_ms,
        latency_p50_ms,
        latency_p95_ms,
        latency_p99_ms,
        latency_p999_ms,
        run_iops,
        run_latency_avg_ms,
        littles_law_ratio,
        {{ littles_law_flag('littles_law_ratio') }} as littles_law_flag,
        target,
        started_at,
        inferred,
        reported_throughput_unit,
        file_id,
        file_name,
        record_index,
        run_index,
        source_line
    from labelled
)

select * from final
