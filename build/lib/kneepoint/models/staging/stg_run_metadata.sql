with source as (
    select * from {{ source('raw', 'raw_run_metadata') }}
    where {{ stored_by_cutoff() }}
),

renamed as (
    select
        file_id,
        run_index,
        key as metadata_key,
        value as metadata_value
    from source
)

select * from renamed
