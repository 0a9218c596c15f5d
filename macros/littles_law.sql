{#- Little's law: a steady run keeps outstanding I/O = IOPS x mean latency, so their ratio is near 1. A run outside
    the bounds (vars littles_law_ratio_min / _max, inclusive) is flagged: CPU-bound, a capped queue, or a unit
    mistake. The bounds are declared once, in dbt_project.yml; everything else reads the flag. -#}
{% macro littles_law_flag(ratio_expr) -%}
    ({{ ratio_expr }} is not null
        and ({{ ratio_expr }} < {{ var('littles_law_ratio_min') }} or {{ ratio_expr }} > {{ var('littles_law_ratio_max') }}))
{%- endmacro %}

{#- Little's law the other way round: the mean outstanding I/O of an observed interval from its IOPS and mean
    latency, where the tool logs no queue length. -#}
{% macro littles_law_outstanding_io(iops_expr, latency_ms_expr) -%}
    ({{ iops_expr }} * {{ ms_to_s(latency_ms_expr) }})
{%- endmacro %}

{#- Little's law for a load series: sessions = throughput x response time where each unit of load is one session
    waiting for its answer (concurrent sessions, virtual users). A database or an instance runs sessions of its own,
    which the load does not count: those steps are not checked. -#}
{% macro littles_law_unchecked_load_kinds() -%}
    ('databases', 'instances')
{%- endmacro %}

{% macro littles_law_load_ratio(load_kind_expr, load_expr, throughput_per_s_expr, response_ms_expr) -%}
    (case
        when {{ load_kind_expr }} not in {{ littles_law_unchecked_load_kinds() }} and {{ load_expr }} > 0
            then {{ throughput_per_s_expr }} * {{ ms_to_s(response_ms_expr) }} / {{ load_expr }}
    end)
{%- endmacro %}
