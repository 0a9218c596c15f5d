{#- Little's law: a steady run keeps outstanding I/O = IOPS x mean latency, so their ratio is near 1. A run outside
    the bounds (vars littles_law_ratio_min / _max, inclusive) is flagged: CPU-bound, a capped queue, or a unit
    mistake. The bounds are declared once, in dbt_project.yml; everything else reads the flag. -#}
{% macro littles_law_flag(ratio_expr) -%}
    ({{ ratio_expr }} is not null
        and ({{ ratio_expr }} < {{ var('littles_law_ratio_min') }} or {{ ratio_expr }} > {{ var('littles_law_ratio_max') }}))
{%- endmacro %}
