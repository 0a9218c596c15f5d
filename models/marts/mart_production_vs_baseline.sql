-- Grain: one row per observed interval (fct_observed_intervals) placed on its disk's benchmark curve: the nearest
-- series of the same disk (macros/observed.sql), its saturation IOPS and latency (mart_saturation_points), the
-- baseline's mean latency at the interval's IOPS, headroom (saturation IOPS / the interval's IOPS) and the
-- degradation flag (latency above the baseline's at that IOPS by more than var degradation_factor). An interval
-- without I/O, or of a disk with no benchmark, is not placed; on a series without latencies it is placed with no
-- baseline latency (macros/observed.sql observed_on_baseline). since_boot and _Total intervals are placed and
-- flagged: the time chart shows them, the percentiles of mart_headroom leave them out.
-- Incremental by disk: a change recomputes every row of the disks whose observed intervals or series it changed.
{{ config(
    materialized='incremental', incremental_strategy='replace_changed', unique_key='disk_key',
    indexes=kp_key_indexes('disk_key')
) }}
with observed as (
    select * from {{ ref('fct_observed_intervals') }}
    where iops > 0 and {{ in_changed_disks() }}
),

placed as (
    {{ observed_on_baseline('observed', 'observed_interval_id', 'iops') }}
),

final as (
    select
        o.observed_interval_id,
        o.disk_key,
        o.disk,
        o.host,
        o.device,
        o.device_kind,
        o.is_total_instance,
        o.tool,
        o.interval_index,
        o.interval_start,
        o.interval_s,
        o.since_boot,
        o.iops,
        o.throughput_bytes_per_s,
        o.bytes_per_io,
        o.read_pct,
        o.latency_avg_ms,
        o.outstanding_io,
        o.outstanding_io_source,
        p.series_id,
        p.baseline_pattern,
        p.baseline_block_size_bytes,
        p.baseline_read_pct,
        p.baseline_direction,
        p.baseline_saturated,
        p.baseline_saturation_iops,
        p.baseline_saturation_latency_ms,
        p.baseline_max_iops,
        p.baseline_latency_at_iops_ms,
        p.beyond_baseline,
        p.baseline_saturation_iops / o.iops as headroom,
        o.latency_avg_ms / nullif(p.baseline_latency_at_iops_ms, 0) as latency_ratio,
        {{ latency_degraded('o.latency_avg_ms / nullif(p.baseline_latency_at_iops_ms, 0)') }} as degraded,
        cast({{ var('degradation_factor') }} as double precision) as degradation_factor,
        o.file_id,
        o.file_name,
        o.record_index,
        o.source_line
    from observed as o
    inner join placed as p using (observed_interval_id)
)

select * from final
