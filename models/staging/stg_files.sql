with source as (
    select * from {{ source('raw', 'raw_files') }}
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
        kneepoint_version
    from source
)

select * from renamed
