-- The change log up to the build's cut-off: what was stored, relabelled or deleted, in commit order.
with source as (
    select * from {{ source('raw', 'raw_file_changes') }}
    where change_seq <= (select to_seq from {{ source('build', 'kneepoint_build_window') }})
),

renamed as (
    select
        change_seq,
        file_id,
        change,
        changed_at
    from source
)

select * from renamed
