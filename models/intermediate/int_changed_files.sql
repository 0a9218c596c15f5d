-- The files this build changes: every file with a change in its window (stored, relabelled or deleted). A file
-- deleted since the last build is here though it is gone from the raw layer: its rows leave the facts.
-- A table, made first in every build: the planner then knows how few files a change touches (PostgreSQL read it as a
-- third of the files through a view, and scanned every raw row of them for one file's change).
{{ config(materialized='table') }}
with changes as (
    select * from {{ ref('stg_file_changes') }}
),

build_window as (
    select * from {{ source('build', 'kneepoint_build_window') }}
)

select distinct changes.file_id
from changes
cross join build_window
where changes.change_seq > build_window.from_seq
