-- Every io measurement with its file's labels and the load it was measured at.
with io_records as (
    select * from {{ ref('stg_io_records') }}
),

files as (
    select * from {{ ref('stg_files') }}
),

joined as (
    select
        {{ disk_key('files.disk', 'files.host') }} as disk_key,
        files.disk,
        files.host,
        io_records.*,
        io_records.threads * io_records.queue_depth as outstanding_io,
        files.file_name
    from io_records
    inner join files using (file_id)
),

with_checks as (
    select
        *,
        -- Little's law: outstanding I/O = IOPS x mean latency. Near 1 for one steady run; far from 1
        -- flags CPU-bound runs, capped queues or unit mistakes.
        case
            when outstanding_io > 0 and latency_avg_ms is not null and iops is not null
                then iops * {{ ms_to_s('latency_avg_ms') }} / outstanding_io
        end as littles_law_ratio
    from joined
)

select * from with_checks
