-- Grain: one row per io result whose tool printed IOPS, block size and throughput (none of them inferred): whether
-- IOPS x block size agrees with the throughput within var unit_check_tolerance. Catches MB/MiB and KB/KiB mistakes;
-- the dbt test assert_throughput_matches_iops_x_block_size fails a build on any disagreement, the report shows the
-- checks per tool and unit. Incremental by file.
{{ config(
    materialized='incremental', incremental_strategy='replace_changed', unique_key='file_id',
    indexes=kp_key_indexes('file_id')
) }}
with io_results as (
    select * from {{ ref('fct_io_results') }}
    where {{ in_changed_files() }}
),

printed as (
    select *
    from io_results
    where iops > 0
      and throughput_bytes_per_s > 0
      and block_size_bytes > 0
      and not ('iops' = any(inferred))
      and not ('throughput_bytes_per_s' = any(inferred))
      and not ('block_size_bytes' = any(inferred))
),

checked as (
    select
        io_result_id,
        disk_key,
        tool,
        reported_throughput_unit,
        iops,
        block_size_bytes,
        throughput_bytes_per_s,
        iops * block_size_bytes as iops_x_block_size_bytes_per_s,
        abs(iops * block_size_bytes - throughput_bytes_per_s) / throughput_bytes_per_s as deviation,
        abs(iops * block_size_bytes - throughput_bytes_per_s) / throughput_bytes_per_s
            <= {{ var('unit_check_tolerance') }} as within_tolerance,
        file_id,
        file_name,
        record_index
    from printed
)

select * from checked
