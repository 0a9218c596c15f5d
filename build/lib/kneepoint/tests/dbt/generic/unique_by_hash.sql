{#
    dbt's `unique`, for keys too many to group by value: fct_latency_distribution has ~6 points per io record, 63M
    string keys at 10M fact rows, and grouping them by value outgrows the build's memory limit (512 MB: DuckDB
    fails, "could not allocate block"). Grouping by a 64-bit hash fits; only the rows of a hash seen twice are then
    compared by value, so a hash collision is not reported as a duplicate.
#}
{% test unique_by_hash(model, column_name) %}

with repeated_hashes as (
    select hash({{ column_name }}) as key_hash
    from {{ model }}
    where {{ column_name }} is not null
    group by key_hash
    having count(*) > 1
)

select
    {{ column_name }} as unique_field,
    count(*) as n_records
from {{ model }}
where hash({{ column_name }}) in (select key_hash from repeated_hashes)
group by {{ column_name }}
having count(*) > 1

{% endtest %}
