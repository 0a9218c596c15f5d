{#- Observed production load placed on a disk's benchmark curves, in one place (mart_production_vs_baseline places
    each interval, mart_headroom each host/device's busy-hour percentiles).

    The baseline of an observed load is the series of the same disk (disk_key: the file's labels) nearest to its
    workload: of the pattern var `observed_pattern` (random unless said) where the disk has one, the block size
    nearest to its bytes per I/O (on a log scale: 8 KiB is as far from 4 KiB as from 16 KiB), then the read share
    nearest to its read share, then the smaller block size and the series id (ties). Only series whose IOPS count
    all of their I/O are candidates: direction `total`, or a 100 % read series' reads and a 100 % write series'
    writes (a mixed run's read or write rows alone are part of its load).

    Its saturation IOPS and latency come from mart_saturation_points: the rule (macros/saturation.sql) is never
    re-derived here. The baseline's latency at the observed IOPS is read off the series' curve, the run kept at each
    load (int_saturation_points, the points mart_curve_points marks `kept_at_load`): linear in IOPS on the first
    segment, by load, whose two ends bracket the observed IOPS; below the smallest load's IOPS, that load's latency
    (a lighter load waits no less than the lightest measured); beyond every IOPS the curve reached, unknown
    (`beyond_baseline`). -#}

{#- The rows of `observed` (a relation with `key`, disk_key, bytes_per_io, read_pct and the IOPS in `iops_column`)
    of the disks a build changed, each on its baseline: the nearest series (nearest_baseline_series: series_id and
    the baseline_ columns), and where its IOPS are above zero the baseline's mean latency there and whether they lie
    beyond the curve (baseline_latency_at_iops). Rows without a nearest series are not returned. The marts that
    place observed load (mart_production_vs_baseline, mart_headroom, mart_waits_vs_baseline) read it. -#}
{% macro observed_on_baseline(observed, key, iops_column) -%}
    with series as (
        {{ observed_baseline_series(in_changed_disks()) }}
    ),

    nearest as (
        {{ nearest_baseline_series(observed, key, 'series') }}
    ),

    loaded as (
        select nearest.*, o.{{ iops_column }}
        from nearest
        inner join {{ observed }} as o using ({{ key }})
        where o.{{ iops_column }} > 0
    ),

    curve_segments as (
        {{ observed_curve_segments('series') }}
    ),

    at_iops as (
        {{ baseline_latency_at_iops('loaded', key, iops_column, 'curve_segments') }}
    )

    select nearest.*, at_iops.baseline_latency_at_iops_ms, at_iops.beyond_baseline
    from nearest
    left join at_iops using ({{ key }})
{%- endmacro %}

{#- The candidate series of the disks `where` selects, with what the marts read of their saturation. -#}
{% macro observed_baseline_series(where='true') -%}
    select
        series_id,
        disk_key,
        pattern,
        read_pct,
        block_size_bytes,
        direction,
        saturated,
        iops_at_saturation,
        latency_avg_ms_at_saturation,
        max_iops
    from {{ ref('mart_saturation_points') }}
    where block_size_bytes > 0
      and (direction = 'total' or (direction = 'read' and read_pct = 100) or (direction = 'write' and read_pct = 0))
      and {{ where }}
{%- endmacro %}

{#- Per row of `observed` (its `key` column, with disk_key, bytes_per_io and read_pct), the nearest series of
    `series` (observed_baseline_series). Rows without I/O have no workload to match and get none. -#}
{% macro nearest_baseline_series(observed, key, series) -%}
    {%- set order = [
        "case when s.pattern = '" ~ var("observed_pattern") ~ "' then 0 else 1 end",
        kp_round('abs(ln(cast(s.block_size_bytes as double precision) / o.bytes_per_io))', 9),
        kp_round('abs(s.read_pct - o.read_pct)', 6),
        "s.block_size_bytes",
        "s.series_id",
    ] -%}
    {#- rounded: a workload halfway between two block sizes (8 KiB between 4 and 16) is a tie, whatever the last bit
        of a sum over many intervals (which an incremental build adds up in another order) #}
    select
        nearest.{{ key }},
        s.series_id,
        s.pattern as baseline_pattern,
        s.block_size_bytes as baseline_block_size_bytes,
        s.read_pct as baseline_read_pct,
        s.direction as baseline_direction,
        s.saturated as baseline_saturated,
        s.iops_at_saturation as baseline_saturation_iops,
        s.latency_avg_ms_at_saturation as baseline_saturation_latency_ms,
        s.max_iops as baseline_max_iops
    from (
        {{ kp_first_by(
            'o.' ~ key, 's.series_id', order,
            'from ' ~ observed ~ ' as o inner join ' ~ series ~ ' as s on s.disk_key = o.disk_key'
            ~ ' where o.bytes_per_io > 0 and o.read_pct is not null'
        ) }}
    ) as nearest
    inner join {{ series }} as s using (series_id)
{%- endmacro %}

{#- Per row of `placed` (its `key`, series_id and the observed IOPS in `iops_column`), the baseline's mean latency at
    that IOPS on the series' curve (`segments`: observed_curve_segments), and whether the IOPS lie beyond every IOPS
    the curve reached. -#}
{% macro baseline_latency_at_iops(placed, key, iops_column, segments) -%}
    select
        p.{{ key }},
        case
            when crossing.{{ key }} is not null then crossing.latency_ms
            when p.{{ iops_column }} < ends.first_iops then ends.first_latency_ms
        end as baseline_latency_at_iops_ms,
        crossing.{{ key }} is null and p.{{ iops_column }} > ends.best_iops as beyond_baseline
    from {{ placed }} as p
    inner join (
        select distinct on (series_id)
            series_id,
            iops as first_iops,
            latency_avg_ms as first_latency_ms,
            max(iops) over (partition by series_id) as best_iops
        from {{ segments }}
        order by series_id, outstanding_io
    ) as ends using (series_id)
    left join (
        select distinct on (p.{{ key }})
            p.{{ key }},
            case
                when s.next_iops = s.iops then s.latency_avg_ms
                else s.latency_avg_ms + (p.{{ iops_column }} - s.iops) / (s.next_iops - s.iops)
                    * (s.next_latency_avg_ms - s.latency_avg_ms)
            end as latency_ms
        from {{ placed }} as p
        inner join {{ segments }} as s
            on s.series_id = p.series_id
            and s.next_iops is not null
            and p.{{ iops_column }} between least(s.iops, s.next_iops) and greatest(s.iops, s.next_iops)
        order by p.{{ key }}, s.outstanding_io
    ) as crossing using ({{ key }})
{%- endmacro %}

{#- The curves of the series `series` names, one row per load with the next load's IOPS and latency (what
    baseline_latency_at_iops reads). Loads without a mean latency are not on a latency curve. -#}
{% macro observed_curve_segments(series) -%}
    select
        series_id,
        outstanding_io,
        iops,
        latency_avg_ms,
        lead(iops) over by_load as next_iops,
        lead(latency_avg_ms) over by_load as next_latency_avg_ms
    from {{ ref('int_saturation_points') }}
    where series_id in (select series_id from {{ series }})
      and iops is not null
      and latency_avg_ms is not null
    window by_load as (partition by series_id order by outstanding_io)
{%- endmacro %}

{#- Degraded: the observed latency exceeds the baseline's at the same IOPS by more than the stated factor
    (var degradation_factor, 2 unless said). Unknown where either latency is. -#}
{% macro latency_degraded(ratio_expr) -%}
    ({{ ratio_expr }} > {{ var('degradation_factor') }})
{%- endmacro %}

{#- The busy hour of each disk, host and device of `intervals` (rows with disk_key, host_key, device, interval_start,
    interval_s, iops; host_key never null), and its intervals: the rows of `intervals` in it, with busy_hour_start,
    busy_hour_end and busy_hour_whole_log. The busy hour is the clock hour (14:00–15:00, an interval counted in the
    hour it starts in) whose intervals did the most I/O (IOPS × seconds; the earlier hour of a tie): a clock hour is
    what a DBA's busy-hour report names and what a sliding window over a week of 15 s samples would cost a self-join
    to find. Where the device's intervals cover less than an hour (first start to last end), or none has a time,
    the whole log is its busy hour (start and end: the log's). -#}
{% macro busy_hour_intervals(intervals) -%}
    select
        i.*,
        b.busy_hour_start,
        b.busy_hour_end,
        b.busy_hour_whole_log
    from {{ intervals }} as i
    inner join (
        select
            spans.disk_key,
            spans.host_key,
            spans.device,
            case when spans.whole_log then spans.first_start else hours.hour_start end as busy_hour_start,
            case when spans.whole_log then spans.last_end else hours.hour_start + interval '1 hour' end
                as busy_hour_end,
            spans.whole_log as busy_hour_whole_log
        from (
            select
                disk_key,
                host_key,
                device,
                min(interval_start) as first_start,
                max(interval_start + interval '1 second' * coalesce(interval_s, 0)) as last_end,
                count(interval_start) = 0
                    or max(interval_start + interval '1 second' * coalesce(interval_s, 0))
                    < min(interval_start) + interval '1 hour' as whole_log
            from {{ intervals }}
            group by disk_key, host_key, device
        ) as spans
        left join (
            select distinct on (disk_key, host_key, device)
                disk_key,
                host_key,
                device,
                date_trunc('hour', interval_start) as hour_start
            from {{ intervals }}
            where interval_start is not null
            group by disk_key, host_key, device, date_trunc('hour', interval_start)
            order by disk_key, host_key, device, sum(iops * coalesce(interval_s, 1)) desc, date_trunc('hour', interval_start)
        ) as hours using (disk_key, host_key, device)
    ) as b using (disk_key, host_key, device)
    where b.busy_hour_whole_log or date_trunc('hour', i.interval_start) = b.busy_hour_start
{%- endmacro %}

{#- The computer an observed row names: the tool's host (Perfmon's `\\SQLPROD01\PhysicalDisk...`, iostat's header,
    SQL Server's @@SERVERNAME), else the file's host label, without a SQL Server named instance: `SQLPROD01\INST1`
    runs on the computer SQLPROD01 (observed_instance keeps INST1). Null where neither names one. -#}
{% macro observed_host(tool_host, file_host) -%}
    nullif(split_part(coalesce(nullif({{ tool_host }}, ''), {{ file_host }}), '\', 1), '')
{%- endmacro %}

{% macro observed_instance(tool_host, file_host) -%}
    nullif(split_part(coalesce(nullif({{ tool_host }}, ''), {{ file_host }}), '\', 2), '')
{%- endmacro %}

{#- A computer's name compared without case (Windows writes SQLPROD01, a label or Linux sqlprod01: one computer):
    the marts group hosts by it. -#}
{% macro observed_host_key(host) -%}
    lower(coalesce({{ host }}, ''))
{%- endmacro %}

{#- One spelling per computer of the disks in scope, of every way the disk's intervals and waits wrote it, so that
    mart_headroom and mart_waits_vs_baseline name it alike: in capitals where a tool wrote it so (Windows' own
    SQLPROD01), else in lower case (sqlprod01), else the first of the mixed spellings. Not min(host) alone: its
    order of SQLPROD01 and sqlprod01 is the database's collation's, and DuckDB and PostgreSQL must agree. -#}
{% macro observed_host_spellings() -%}
    select
        disk_key,
        host_key,
        coalesce(
            max(case when host = upper(host) then host end),
            max(case when host = lower(host) then host end),
            min(host)
        ) as host
    from (
        select disk_key, host_key, host from {{ ref('fct_observed_intervals') }} where {{ in_changed_disks() }}
        union all
        select disk_key, host_key, host from {{ ref('fct_observed_waits') }} where {{ in_changed_disks() }}
    ) as named
    group by disk_key, host_key
{%- endmacro %}
