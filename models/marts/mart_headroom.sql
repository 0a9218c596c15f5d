-- Grain: one row per disk, host and device (disk_key, host, device) with observed load: its busy-hour percentiles
-- (p50 / p95 / p99 of IOPS and of mean latency over its intervals, leaving out the since_boot averages and
-- Perfmon's _Total instances), placed on the nearest benchmark series of the same disk (macros/observed.sql; the
-- workload being the device's bytes per I/O and read share over all of those intervals):
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
    select * from {{ ref('fct_observed_intervals') }}
    where not since_boot and not is_total_instance and iops is not null and {{ in_changed_disks() }}
),

devices as (
    select
        disk_key || ' | ' || coalesce(host, '') || ' | ' || device as observed_device_id,
        disk_key,
        min(disk) as disk,
        coalesce(host, '') as host,
        device,
        min(device_kind) as device_kind,
        min(tool) as tool,
        count(*) as intervals,
        min(interval_start) as first_interval_start,
        max(interval_start) as last_interval_start,
        percentile_cont(0.5) within group (order by iops) as iops_p50,
        percentile_cont(0.95) within group (order by iops) as iops_p95,
        percentile_cont(0.99) within group (order by iops) as iops_p99,
        percentile_cont(0.5) within group (order by latency_avg_ms) as latency_avg_ms_p50,
        percentile_cont(0.95) within group (order by latency_avg_ms) as latency_avg_ms_p95,
        percentile_cont(0.99) within group (order by latency_avg_ms) as latency_avg_ms_p99,
        -- the device's workload over its intervals: bytes and reads over every I/O (an interval of unknown length
        -- weighs as one second)
        sum(throughput_bytes_per_s * coalesce(interval_s, 1)) / nullif(sum(iops * coalesce(interval_s, 1)), 0)
            as bytes_per_io,
        100.0 * sum(coalesce(reads_per_s, 0) * coalesce(interval_s, 1)) / nullif(sum(iops * coalesce(interval_s, 1)), 0)
            as read_pct,
        max(case when outstanding_io_source = 'logged' then 1 else 0 end) = 1 as queue_length_logged
    from intervals
    group by disk_key, coalesce(host, ''), device
),

series as (
    {{ observed_baseline_series(in_changed_disks()) }}
),

nearest as (
    {{ nearest_baseline_series('devices', 'observed_device_id', 'series') }}
),

placed as (
    select nearest.*, devices.iops_p95
    from nearest
    inner join devices using (observed_device_id)
    where devices.iops_p95 > 0
),

curve_segments as (
    {{ observed_curve_segments('series') }}
),

at_iops as (
    {{ baseline_latency_at_iops('placed', 'observed_device_id', 'iops_p95', 'curve_segments') }}
),

final as (
    select
        d.observed_device_id,
        d.disk_key,
        d.disk,
        d.host,
        d.device,
        d.device_kind,
        d.tool,
        d.intervals,
        d.first_interval_start,
        d.last_interval_start,
        d.iops_p50,
        d.iops_p95,
        d.iops_p99,
        d.latency_avg_ms_p50,
        d.latency_avg_ms_p95,
        d.latency_avg_ms_p99,
        d.bytes_per_io,
        d.read_pct,
        d.queue_length_logged,
        n.series_id,
        n.baseline_pattern,
        n.baseline_block_size_bytes,
        n.baseline_read_pct,
        n.baseline_direction,
        n.baseline_saturated,
        n.baseline_saturation_iops,
        n.baseline_saturation_latency_ms,
        n.baseline_max_iops,
        a.baseline_latency_at_iops_ms as baseline_latency_at_p95_iops_ms,
        a.beyond_baseline,
        n.baseline_saturation_iops / nullif(d.iops_p95, 0) as headroom,
        case when not n.baseline_saturated then n.baseline_max_iops / nullif(d.iops_p95, 0) end as headroom_at_least,
        d.latency_avg_ms_p95 / nullif(a.baseline_latency_at_iops_ms, 0) as latency_ratio,
        {{ latency_degraded('d.latency_avg_ms_p95 / nullif(a.baseline_latency_at_iops_ms, 0)') }} as degraded,
        cast({{ var('degradation_factor') }} as double precision) as degradation_factor
    from devices as d
    left join nearest as n using (observed_device_id)
    left join at_iops as a using (observed_device_id)
)

select * from final
