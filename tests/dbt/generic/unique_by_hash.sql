{#
    dbt's `unique`, for keys too many to group by value: fct_latency_distribution has ~6 points per io record, 63M
    keys at 10M fact rows, and grouping them by value outgrows the build's memory limit (512 MB: DuckDB fails,
    "could not allocate block"). Grouping by a 64-bit hash of the key's columns fits; only the rows of a hash seen
    twice are then compared by value, so a hash collision is not reported as a duplicate.
    PostgreSQL groups by value: its hash aggregate spills to disk past work_mem instead of failing, and one pass
    costs less than hashing every key's text twice (6.3M points at 1M fact rows: 6.3 s instead of 10.8 s).
#}
{% test unique_by_hash(model, columns) %}
{{ kp_repeated_keys(model, columns) }}
{% endtest %}
