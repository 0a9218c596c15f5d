{{ config(tags=["change_guard"]) }}
-- No file's rows are stored or counted twice, none is left behind: the same bytes are one file (sha256), and
-- every fact holds exactly the rows its file has in the raw layer as of the build's cut-off (a fan-out in a join,
-- a file stored twice, or the rows of a deleted or relabelled file an incremental build forgot, show here).
with raw_io as (
    select file_id, count(*) as n from {{ ref('stg_io_records') }} where {{ in_test_scope('file_id') }} group by file_id
),

fct_io as (
    select file_id, count(*) as n from {{ ref('fct_io_results') }} where {{ in_test_scope('file_id') }} group by file_id
),

raw_query_io as (
    select file_id, count(*) as n from {{ ref('stg_query_io') }} where {{ in_test_scope('file_id') }} group by file_id
),

fct_query_io as (
    select file_id, count(*) as n from {{ ref('fct_query_io') }} where {{ in_test_scope('file_id') }} group by file_id
),

files as (
    select file_id from {{ ref('stg_files') }} where {{ in_test_scope('file_id') }}
),

dim_files as (
    select file_id from {{ ref('dim_files') }} where {{ in_test_scope('file_id') }}
)

select 'sha256 stored twice' as problem, sha256 as key, count(*) as n
from {{ ref('dim_files') }}
group by sha256
having count(*) > 1

union all

select 'fct_io_results rows differ from raw_io_records', file_id, coalesce(fct_io.n, 0) - coalesce(raw_io.n, 0)
from raw_io
full outer join fct_io using (file_id)
where coalesce(fct_io.n, 0) <> coalesce(raw_io.n, 0)

union all

select 'fct_query_io rows differ from raw_query_io', file_id, coalesce(fct_query_io.n, 0) - coalesce(raw_query_io.n, 0)
from raw_query_io
full outer join fct_query_io using (file_id)
where coalesce(fct_query_io.n, 0) <> coalesce(raw_query_io.n, 0)

union all

select 'dim_files differs from the stored files', file_id, 1
from files
full outer join dim_files using (file_id)
where files.file_id is null or dim_files.file_id is null
