{#
    dbt's `not_null` for the columns of one model that are never null, in one read of it: one test per model
    instead of one per column (~200 tests, each a dbt node of its own: ~7 s of a full build at 1M fact rows on
    DuckDB, more on PostgreSQL; a view such as mart_curve_points computed its windows again for every one).
    A failure names each column that holds a null, with how many rows (one row per such column).
#}
{% test not_null_columns(model, columns) %}

with null_counts as (
    select
        {%- for column in columns %}
        sum(case when {{ column }} is null then 1 else 0 end) as {{ adapter.quote('nulls_' ~ column) }}
        {%- if not loop.last %},{% endif %}
        {%- endfor %}
    from {{ model }}
)

{% for column in columns -%}
select '{{ column }}' as null_column, {{ adapter.quote('nulls_' ~ column) }} as null_rows
from null_counts
where {{ adapter.quote('nulls_' ~ column) }} > 0
{% if not loop.last %}union all
{% endif -%}
{%- endfor %}

{% endtest %}
