{#
    dbt's `unique`, for keys too many to group by value: fct_latency_distribution has ~6 points per io record, 63M
    keys at 10M fact rows, and grouping them by value outgrows the build's memory limit (512 MB: DuckDB fails,
    "could not allocate block"). Grouping by a 64-bit hash of the key's columns fits; only the rows of a hash seen
    twice are then compared by value, so a hash collision is not reported as a duplicate.
#}
{% test unique_by_hash(model, columns) %}

with repeated_hashes as (
    select {{ kp_hash(columns) }} as key_hash
    from {{ model }}
    group by key_hash
    having count(*) > 1
)

select
    {{ columns | join(', ') }},
    count(*) as n_records
from {{ model }}
where {{ kp_hash(columns) }} in (select key_hash from repeated_hashes)
group by {{ columns | join(', ') }}
having count(*) > 1

{% endtest %}
