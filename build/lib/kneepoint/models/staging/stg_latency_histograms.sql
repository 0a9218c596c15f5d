with source as (
    select * from {{ source('raw', 'raw_latency_histograms') }}
    where {{ stored_by_cutoff() }}
),

converted as (
    select
        file_id,
        record_index,
        {{ to_ms('bound', 'bound_unit') }} as bucket_upper_ms,
        value as bucket_value,
        kind as bucket_kind
    from source
)

select * from converted
