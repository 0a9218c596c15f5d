-- No file's rows are stored twice: one (file, run, direction, record) per fact row, and no two files share bytes.
select file_id, run_index, direction, count(*) as n
from {{ ref('fct_io_results') }}
group by file_id, run_index, direction
having count(*) > 1
union all
select sha256 as file_id, null, null, count(*)
from {{ ref('dim_files') }}
group by sha256
having count(*) > 1
