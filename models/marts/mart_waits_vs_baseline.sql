-- Grain: one row per disk, server and I/O wait type (disk_key, host_key: the computer without case, instance: a
-- SQL Server named instance, wait_type: PAGEIOLATCH_* and WRITELOG of fct_observed_waits) over its sampled intervals (since-boot totals left out, as for the intervals): the mean wait
-- per waiting task and the waiting tasks per second, placed on the same disk's benchmark where the server's file
-- statistics were captured with the waits (the same file and interval, the reader's pairing):
--   a data page read wait (PAGEIOLATCH_*) against the baseline's read latency at the server's reads/s: the nearest
--     series (macros/observed.sql) to its bytes per read as a 100 % read workload;
--   a log write wait (WRITELOG) against the baseline's write latency at its writes/s, as a 100 % write workload;
--   latency_ratio = avg_wait_ms / the baseline's latency at that IOPS; degraded = latency_ratio > var
--   degradation_factor (the intervals' rule). The server's reads and writes are summed over its database files
--   in the interval (they are on the disk the file's label names).
-- Waits without file statistics in their interval have no load to place (nulls). Incremental by disk.
{{ config(
    materialized='incremental', incremental_strategy='replace_changed', unique_key='disk_key',
    indexes=kp_key_indexes('disk_key')
) }}
with waits as (
    select * from {{ ref('fct_observed_waits') }}
    where not since_boot and wait_kind in ('data page read', 'log write') and {{ in_changed_disks() }}
),

file_io as (
    -- the server's I/O to its database files in each interval of a file, what its waits waited on
    select
        file_id,
        interval_index,
        min(interval_start) as interval_start,
        sum(reads_per_s) as reads_per_s,
        sum(writes_per_s) as writes_per_s,
        sum(read_bytes_per_s) as read_bytes_per_s,
        sum(write_bytes_per_s) as write_bytes_per_s
    from {{ ref('fct_observed_intervals') }}
    where tool = 'sqlserver' and not since_boot and {{ in_changed_disks() }}
    group by file_id, interval_index
),

paired as (
    -- each wait interval with the I/O of its direction (an interval of unknown length weighs as one second)
    select
        waits.disk_key,
        waits.disk,
        coalesce(waits.host_key, '') as host_key,
        coalesce(waits.instance, '') as instance,
        waits.wait_type,
        waits.wait_kind,
        -- a wait snapshot's own time, else its file statistics' (the reader times the pair by one of them)
        coalesce(waits.interval_start, file_io.interval_start) as interval_start,
        coalesce(waits.interval_s, 1) as weight_s,
        waits.waiting_tasks_per_s,
        waits.wait_ms_per_s,
        waits.avg_wait_ms,
        case when waits.wait_kind = 'data page read' then file_io.reads_per_s else file_io.writes_per_s end
            as io_per_s,
        case when waits.wait_kind = 'data page read' then file_io.read_bytes_per_s else file_io.write_bytes_per_s end
            as io_bytes_per_s
    from waits
    left join file_io using (file_id, interval_index)
),

wait_types as (
    select
        disk_key || ' | ' || host_key || ' | ' || instance || ' | ' || wait_type as observed_wait_type_id,
        disk_key,
        min(disk) as disk,
        host_key,
        instance,
        wait_type,
        min(wait_kind) as wait_kind,
        count(*) as intervals,
        min(interval_start) as first_interval_start,
        max(interval_start) as last_interval_start,
        sum(waiting_tasks_per_s * weight_s) / nullif(sum(case when waiting_tasks_per_s is not null then weight_s end), 0)
            as waiting_tasks_per_s,
        -- the wait per waiting task over every task; the tool's own averages where it logged no rates
        coalesce(
            sum(wait_ms_per_s * weight_s) / nullif(sum(waiting_tasks_per_s * weight_s), 0),
            avg(avg_wait_ms)
        ) as avg_wait_ms,
        count(io_per_s) as intervals_with_io,
        sum(io_per_s * weight_s) / nullif(sum(case when io_per_s is not null then weight_s end), 0) as iops,
        sum(io_bytes_per_s * weight_s) / nullif(sum(io_per_s * weight_s), 0) as bytes_per_io,
        cast(case when min(wait_kind) = 'data page read' then 100 else 0 end as double precision) as read_pct
    from paired
    group by disk_key, host_key, instance, wait_type
),

host_spellings as (
    {{ observed_host_spellings() }}
),

placed as (
    {{ observed_on_baseline('(select * from wait_types where iops > 0)', 'observed_wait_type_id', 'iops') }}
),

final as (
    select
        t.observed_wait_type_id,
        t.disk_key,
        t.disk,
        -- one spelling of the computer, as mart_headroom's
        coalesce(h.host, '') as host,
        t.host_key,
        t.instance,
        t.wait_type,
        t.wait_kind,
        t.intervals,
        t.first_interval_start,
        t.last_interval_start,
        t.waiting_tasks_per_s,
        t.avg_wait_ms,
        t.intervals_with_io,
        t.iops,
        t.bytes_per_io,
        t.read_pct,
        p.series_id,
        p.baseline_pattern,
        p.baseline_block_size_bytes,
        p.baseline_read_pct,
        p.baseline_direction,
        p.baseline_saturated,
        p.baseline_saturation_iops,
        p.baseline_max_iops,
        p.baseline_latency_at_iops_ms,
        p.beyond_baseline,
        t.avg_wait_ms / nullif(p.baseline_latency_at_iops_ms, 0) as latency_ratio,
        {{ latency_degraded('t.avg_wait_ms / nullif(p.baseline_latency_at_iops_ms, 0)') }} as degraded,
        cast({{ var('degradation_factor') }} as double precision) as degradation_factor
    from wait_types as t
    left join host_spellings as h using (disk_key, host_key)
    left join placed as p using (observed_wait_type_id)
)

select * from final
