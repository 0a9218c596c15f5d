-- The files stored up to the build's cut-off, with their labels.
with source as (
    select * from {{ source('raw', 'raw_files') }}
    where {{ stored_by_cutoff() }}
),

renamed as (
    select
        file_id,
        name as file_name,
        sha256,
        size_bytes,
        format,
        tool_version,
        encoding,
        ingested_at,
        disk,
        coalesce(host, '') as host,
        coalesce(tags, []::varchar[]) as tags,
        notes,
        kneepoint_version,
        stored_seq
    from source
)

select * from renamed
