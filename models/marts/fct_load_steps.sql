-- Grain: one row per load step (file_id, record_index), with its file's labels, its load series and the Little's-law
-- check of the step. A load series is (disk_key, workload, load_kind, what the throughput counts): the disk label
-- names the configuration the application ran on ("Azure P30" against "Azure P40 stripe").
-- Incremental by file, like fct_io_results: a change replaces every row of the files it touched; the hooks note
-- the series those rows belonged to before and after (a relabel moves them), which the load marts then recompute.
{{
    config(
        materialized='incremental',
        incremental_strategy='replace_changed',
        unique_key='file_id',
        indexes=kp_key_indexes('file_id', looked_up_by=['series_id']),
        pre_hook="{{ remember_changed_series() }}",
        post_hook="{{ remember_changed_series() }}",
    )
}}
with load_steps as (
    select * from {{ ref('stg_load_steps') }}
    where {{ in_changed_files() }}
),

files as (
    select * from {{ ref('stg_files') }}
    where {{ in_changed_files() }}
),

labelled as (
    select
        {{ disk_key('files.disk', 'files.host') }} as disk_key,
        files.disk,
        files.host,
        files.file_name,
        load_steps.*,
        {{ littles_law_load_ratio('load_steps.load_kind', 'load_steps.load', 'load_steps.throughput_per_s',
                                  'load_steps.response_avg_ms') }} as littles_law_ratio
    from load_steps
    inner join files using (file_id)
),

final as (
    select
        file_id || ':' || record_index as load_step_id,
        -- a step without a throughput is on no curve
        case when throughput_what is not null then {{ load_series_id() }} end as series_id,
        disk_key,
        disk,
        host,
        tool,
        tool_version,
        workload,
        load_kind,
        load,
        throughput,
        reported_throughput_unit,
        throughput_what,
        throughput_per_s,
        response_avg_ms,
        response_p50_ms,
        response_p95_ms,
        response_p99_ms,
        duration_s,
        errors,
        littles_law_ratio,
        {{ littles_law_flag('littles_law_ratio') }} as littles_law_flag,
        file_id,
        file_name,
        record_index,
        step_index,
        source_line
    from labelled
)

select * from final
