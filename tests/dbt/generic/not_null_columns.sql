{#
    dbt's `not_null` for several columns of one model in one read: a view such as mart_curve_points computes its
    windows again for every test that reads it (four not_null tests cost ~4 s of a full build at 1M fact rows).
    Rows returned are those with a null in any of `columns`.
#}
{% test not_null_columns(model, columns) %}

select *
from {{ model }}
where {% for column in columns %}{{ column }} is null{% if not loop.last %} or {% endif %}{% endfor %}

{% endtest %}
