-- Grain: one row per observed device and interval (file_id, record_index): the production load a Perfmon counter
-- log, an iostat report or SQL Server's file statistics recorded, in the benchmark's words (IOPS, bytes per I/O,
-- read share, mean latency, outstanding I/O). `disk_key` is the file's disk label (and host label), the one a
-- benchmark of the same disk carries: the production-vs-baseline marts place the interval on that disk's curves.
-- `host` is the computer the tool names, else the file's host label, without a SQL Server named instance
-- (macros/observed.sql observed_host: `SQLPROD01\INST1` is the computer SQLPROD01, the instance goes to `instance`
-- and in front of the device, `INST1: SalesDB ...`, so that two instances' files stay apart); `host_key` is it
-- in lower case, what the marts compare (SQLPROD01 and sqlprod01 are one computer).
-- Incremental by file: a change replaces every row of the files it touched; the hooks note the disks those rows
-- belonged to before and after (a relabel moves them), which the production-vs-baseline marts then recompute.
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
with intervals as (
    select * from {{ ref('stg_intervals') }}
    where {{ in_changed_files() }}
),

files as (
    select * from {{ ref('stg_files') }}
    where {{ in_changed_files() }}
),

rates as (
    select
        intervals.*,
        {{ io_per_s('reads_per_s', 'writes_per_s') }} as iops,
        {{ io_per_s('read_bytes_per_s', 'write_bytes_per_s') }} as throughput_bytes_per_s,
        {{ io_weighted_latency_ms('reads_per_s', 'read_latency_ms', 'writes_per_s', 'write_latency_ms') }}
            as latency_avg_ms
    from intervals
),

final as (
    select
        rates.file_id || ':' || rates.record_index as observed_interval_id,
        {{ disk_key('files.disk', 'files.host') }} as disk_key,
        files.disk,
        {{ observed_host('rates.host', 'files.host') }} as host,
        {{ observed_host_key(observed_host('rates.host', 'files.host')) }} as host_key,
        {{ observed_instance('rates.host', 'files.host') }} as instance,
        coalesce({{ observed_instance('rates.host', 'files.host') }} || ': ', '') || rates.device as device,
        rates.device_kind,
        -- Perfmon's _Total instance sums the other instances of its object: never a device of its own
        position('_Total' in rates.device) > 0 as is_total_instance,
        rates.tool,
        rates.tool_version,
        rates.interval_index,
        rates.interval_start,
        rates.interval_start_text,
        rates.interval_s,
        rates.since_boot,
        rates.reads_per_s,
        rates.writes_per_s,
        rates.iops,
        rates.read_bytes_per_s,
        rates.write_bytes_per_s,
        rates.throughput_bytes_per_s,
        {{ bytes_per_io('rates.throughput_bytes_per_s', 'rates.iops') }} as bytes_per_io,
        {{ read_pct_of('rates.reads_per_s', 'rates.iops') }} as read_pct,
        rates.read_latency_ms,
        rates.write_latency_ms,
        rates.latency_avg_ms,
        rates.queue_length,
        rates.utilization_pct,
        coalesce(rates.queue_length, {{ littles_law_outstanding_io('rates.iops', 'rates.latency_avg_ms') }})
            as outstanding_io,
        case
            when rates.queue_length is not null then 'logged'
            when rates.iops is not null and rates.latency_avg_ms is not null then 'littles_law'
        end as outstanding_io_source,
        rates.file_id,
        files.file_name,
        rates.record_index,
        rates.source_line
    from rates
    inner join files using (file_id)
)

select * from final
