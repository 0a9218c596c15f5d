{{ config(tags=["change_guard"]) }}
-- The production-vs-baseline rules, checked row by row against their inputs (the marts compute them with window
-- functions and DISTINCT ON, macros/observed.sql): an interval's IOPS are its reads and writes and its outstanding
-- I/O the logged queue or Little's law; the baseline's saturation figures are mart_saturation_points' own (never
-- re-derived); headroom and the flag follow from them (a SQL Server wait's too); the busy hour is the clock hour
-- with the most I/O; and no candidate series of the disk is nearer to the workload than the one chosen. Rows
-- returned are violations.
with intervals as (
    select * from {{ ref('fct_observed_intervals') }}
    where {{ in_test_scope('file_id') }}
),

placed as (
    select * from {{ ref('mart_production_vs_baseline') }}
    where {{ in_test_scope('disk_key') }}
),

headroom as (
    select * from {{ ref('mart_headroom') }}
    where {{ in_test_scope('disk_key') }}
),

waits as (
    select * from {{ ref('mart_waits_vs_baseline') }}
    where {{ in_test_scope('disk_key') }}
),

series as (
    select * from {{ ref('mart_saturation_points') }}
),

-- each clock hour of each device of the disks in scope (every file of them, not only the changed ones), what the
-- busy hour is chosen among
device_hours as (
    select
        disk_key,
        host_key,
        device,
        date_trunc('hour', interval_start) as hour_start,
        sum(iops * coalesce(interval_s, 1)) as io,
        count(*) as intervals
    from {{ ref('fct_observed_intervals') }}
    where not since_boot and not is_total_instance and iops is not null and interval_start is not null
      and disk_key in (select disk_key from headroom)
    group by disk_key, host_key, device, date_trunc('hour', interval_start)
),

problems as (
    select observed_interval_id as row_id, 'iops is not reads + writes' as problem
    from intervals
    where reads_per_s is not null and writes_per_s is not null
      and abs(iops - (reads_per_s + writes_per_s)) > 1e-9 * greatest(iops, 1)
    union all
    select observed_interval_id, 'outstanding_io is neither the logged queue nor Little''s law'
    from intervals
    where (outstanding_io_source = 'logged' and outstanding_io is distinct from queue_length)
       or (outstanding_io_source = 'littles_law'
           and abs(outstanding_io - iops * latency_avg_ms / 1000.0) > 1e-9 * greatest(outstanding_io, 1))
    union all
    select observed_interval_id, 'mean latency outside the read and write latencies'
    from intervals
    where latency_avg_ms < least(coalesce(read_latency_ms, write_latency_ms), coalesce(write_latency_ms, read_latency_ms)) - 1e-9
       or latency_avg_ms > greatest(coalesce(read_latency_ms, write_latency_ms), coalesce(write_latency_ms, read_latency_ms)) + 1e-9
    union all
    select p.observed_interval_id, 'saturation figures differ from mart_saturation_points'
    from placed as p
    inner join series as s using (series_id)
    where p.baseline_saturation_iops is distinct from s.iops_at_saturation
       or p.baseline_saturated is distinct from s.saturated
       or p.disk_key <> s.disk_key
    union all
    select observed_interval_id, 'headroom or degraded do not follow from their figures'
    from placed
    where abs(headroom - baseline_saturation_iops / iops) > 1e-9 * headroom
       or degraded is distinct from (latency_ratio > degradation_factor)
    union all
    select h.observed_device_id, 'headroom or degraded do not follow from their figures'
    from headroom as h
    left join series as s using (series_id)
    where h.baseline_saturation_iops is distinct from s.iops_at_saturation
       or abs(h.headroom - h.baseline_saturation_iops / h.iops_p95) > 1e-9 * h.headroom
       or h.degraded is distinct from (h.latency_ratio > h.degradation_factor)
    union all
    select t.observed_wait_type_id, 'a wait''s ratio or flag does not follow from its figures'
    from waits as t
    left join series as s using (series_id)
    where t.baseline_saturation_iops is distinct from s.iops_at_saturation
       or abs(t.latency_ratio - t.avg_wait_ms / t.baseline_latency_at_iops_ms) > 1e-9 * t.latency_ratio
       or t.degraded is distinct from (t.latency_ratio > t.degradation_factor)
       or t.read_pct <> case when t.wait_kind = 'data page read' then 100 else 0 end
    union all
    -- the busy hour holds the percentiles' intervals, and no other clock hour of the device did more I/O
    select h.observed_device_id, 'the busy hour is not the clock hour with the most I/O'
    from headroom as h
    left join device_hours as busy
        on busy.disk_key = h.disk_key and busy.host_key = h.host_key and busy.device = h.device
        and busy.hour_start = h.busy_hour_start
    where not h.busy_hour_whole_log
      and (busy.hour_start is null
           or busy.intervals <> h.busy_hour_intervals
           or busy.io < (
               select max(o.io) from device_hours as o
               where o.disk_key = h.disk_key and o.host_key = h.host_key and o.device = h.device
           ) - 1e-9 * busy.io)
    union all
    select observed_device_id, 'the busy hour is not a clock hour'
    from headroom
    where not busy_hour_whole_log
      and (busy_hour_start <> date_trunc('hour', busy_hour_start) or busy_hour_end <> busy_hour_start + interval '1 hour')
    union all
    -- one computer is one host whatever the case its tools and labels wrote it in, and never its SQL Server instance
    select observed_interval_id, 'the host is not the computer without its instance, or host_key not it in lower case'
    from intervals
    where position('\' in coalesce(host, '')) > 0
       or host_key <> lower(coalesce(host, ''))
    union all
    -- a candidate of the same disk, pattern preference and direction rule nearer in block size (log scale)
    select p.observed_interval_id, 'a nearer series in block size was not chosen'
    from placed as p
    inner join series as s on s.disk_key = p.disk_key
    where (s.direction = 'total' or (s.direction = 'read' and s.read_pct = 100) or (s.direction = 'write' and s.read_pct = 0))
      and s.block_size_bytes > 0
      and (s.pattern = '{{ var("observed_pattern") }}') = (p.baseline_pattern = '{{ var("observed_pattern") }}')
      and abs(ln(cast(s.block_size_bytes as double precision) / p.bytes_per_io))
          < abs(ln(cast(p.baseline_block_size_bytes as double precision) / p.bytes_per_io)) - 1e-9
)

select * from problems
