-- No file's rows are stored or counted twice: the same bytes are one file (sha256), and every mart holds
-- exactly the rows its file has in the raw layer (a fan-out in a join, or a file stored twice, shows here).
with raw_io as (
    select file_id, count(*) as n from {{ source('raw', 'raw_io_records') }} group by file_id
),

fct_io as (
    select file_id, count(*) as n from {{ ref('fct_io_results') }} group by file_id
),

raw_query_io as (
    select file_id, count(*) as n from {{ source('raw', 'raw_query_io') }} group by file_id
),

fct_query_io as (
    select file_id, count(*) as n from {{ ref('fct_query_io') }} group by file_id
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
