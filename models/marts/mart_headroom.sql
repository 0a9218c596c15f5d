-- Grain: one row per disk, host and device (disk_key, host_key: the host without case, device) with observed load:
-- its busy-hour percentiles
-- (p50 / p95 / p99 of IOPS and of mean latency over the intervals of its busy hour, macros/observed.sql
-- busy_hour_intervals: the clock hour with the most I/O, the whole log where it covers less than an hour; the
-- since_boot averages and Perfmon's _Total instances left out), placed on the nearest benchmark series of the same
-- disk (macros/observed.sql; the workload being the device's bytes per I/O and read share over its busy hour):
--   headroom       = the series' saturation IOPS (mart_saturation_points) / the observed p95 IOPS
--   latency_ratio  = the observed p95 latency / the baseline's latency at the observed p95 IOPS
--   degraded       = latency_ratio > var degradation_factor (2 unless said)
-- Where the series does not saturate within its tested range, headroom is unknown and headroom_at_least bounds it
-- with the highest IOPS measured. Incremental by disk, like mart_production_vs_baseline.
{{ config(
    materialized='incremental', incremental_strategy='replace_changed', unique_key='disk_key',
    indexes=kp_key_indexes('disk_key')
) }}
with intervals as (
    select
        disk_key,
        disk,
        coalesce(host_key, '') as host_key,
        coalesce(host, '') as host,
        device,
        device_kind,
        tool,
        interval_start,
        interval_s,
        iops,
        reads_per_s,
        throughput_bytes_per_s,
        latency_avg_ms,
        outstanding_io_source
    from {{ ref('fct_observed_intervals') }}
    where not since_boot and not is_total_instance and iops is not null and {{ in_changed_disks() }}
),

busy_hour as (
    {{ busy_hour_intervals('intervals') }}
),

spans as (
    select
        disk_key,
        host_key,
        device,
        count(*) as intervals,
        min(interval_start) as first_interval_start,
        max(interval_start) as last_interval_start
    from intervals
    group by disk_key, host_key, device
),

busy_devices as (
    select
        disk_key || ' | ' || host_key || ' | ' || device as observed_device_id,
        disk_key,
        min(disk) as disk,
        host_key,
        device,
        min(device_kind) as device_kind,
        min(tool) as tool,
        min(busy_hour_start) as busy_hour_start,
        min(busy_hour_end) as busy_hour_end,
        bool_and(busy_hour_whole_log) as busy_hour_whole_log,
        count(*) as busy_hour_intervals,
        percentile_cont(0.5) within group (order by iops) as iops_p50,
        percentile_cont(0.95) within group (order by iops) as iops_p95,
        percentile_cont(0.99) within group (order by iops) as iops_p99,
        percentile_cont(0.5) within group (order by latency_avg_ms) as latency_avg_ms_p50,
        percentile_cont(0.95) within group (order by latency_avg_ms) as latency_avg_ms_p95,
        percentile_cont(0.99) within group (order by latency_avg_ms) as latency_avg_ms_p99,
        -- the device's workload over its busy hour: bytes and reads over every I/O (an interval of unknown length
        -- weighs as one second)
        sum(throughput_bytes_per_s * coalesce(interval_s, 1)) / nullif(sum(iops * coalesce(interval_s, 1)), 0)
            as bytes_per_io,
        100.0 * sum(coalesce(reads_per_s, 0) * coalesce(interval_s, 1)) / nullif(sum(iops * coalesce(interval_s, 1)), 0)
            as read_pct,
        max(case when outstanding_io_source = 'logged' then 1 else 0 end) = 1 as queue_length_logged
    from busy_hour
    group by disk_key, host_key, device
),

host_spellings as (
    {{ observed_host_spellings() }}
),

devices as (
    -- one spelling of the computer's name for every way its tools and labels wrote it
    select
        busy_devices.*,
        coalesce(host_spellings.host, '') as host,
        spans.intervals,
        spans.first_interval_start,
        spans.last_interval_start
    from busy_devices
    inner join spans using (disk_key, host_key, device)
    left join host_spellings using (disk_key, host_key)
),

placed as (
    {{ observed_on_baseline('devices', 'observed_device_id', 'iops_p95') }}
),

final as (
    select
        d.observed_device_id,
        d.disk_key,
        d.disk,
        d.host,
        d.host_key,
        d.device,
        d.device_kind,
        d.tool,
        d.intervals,
        d.first_interval_start,
        d.last_interval_start,
        d.busy_hour_start,
        d.busy_hour_end,
        d.busy_hour_whole_log,
        d.busy_hour_intervals,
        d.iops_p50,
        d.iops_p95,
        d.iops_p99,
        d.latency_avg_ms_p50,
        d.latency_avg_ms_p95,
        d.latency_avg_ms_p99,
        d.bytes_per_io,
        d.read_pct,
        d.queue_length_logged,
        p.series_id,
        p.baseline_pattern,
        p.baseline_block_size_bytes,
        p.baseline_read_pct,
        p.baseline_direction,
        p.baseline_saturated,
        p.baseline_saturation_iops,
        p.baseline_saturation_latency_ms,
        p.baseline_max_iops,
        p.baseline_latency_at_iops_ms as baseline_latency_at_p95_iops_ms,
        p.beyond_baseline,
        p.baseline_saturation_iops / nullif(d.iops_p95, 0) as headroom,
        case when not p.baseline_saturated then p.baseline_max_iops / nullif(d.iops_p95, 0) end as headroom_at_least,
        d.latency_avg_ms_p95 / nullif(p.baseline_latency_at_iops_ms, 0) as latency_ratio,
        {{ latency_degraded('d.latency_avg_ms_p95 / nullif(p.baseline_latency_at_iops_ms, 0)') }} as degraded,
        cast({{ var('degradation_factor') }} as double precision) as degradation_factor
    from devices as d
    left join placed as p using (observed_device_id)
)

select * from final
