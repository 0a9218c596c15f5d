{#- Unit conversions. The factors live in dbt_project.yml `vars`, the one place they are declared
    (ingest/units.py reads the same vars for `kneepoint parse`). An unknown unit yields NULL, which the
    not_null tests on the staging columns turn into a failing build rather than a silent wrong number. -#}

{% macro _factor_case(unit_expr, factors) -%}
    case {{ unit_expr }}
    {%- for unit, factor in factors.items() %}
        when '{{ unit }}' then {{ factor }}
    {%- endfor %}
    end
{%- endmacro %}

{% macro to_bytes_per_s(value_expr, unit_expr) -%}
    ({{ value_expr }} * {{ _factor_case(unit_expr, var('throughput_units_bytes_per_s')) }})
{%- endmacro %}

{% macro to_ms(value_expr, unit_expr) -%}
    ({{ value_expr }} * {{ _factor_case(unit_expr, var('latency_units_ms')) }})
{%- endmacro %}

{% macro ms_to_s(value_expr) -%}
    ({{ value_expr }} / 1000.0)
{%- endmacro %}

{% macro pages_to_bytes(pages_expr) -%}
    ({{ pages_expr }} * {{ var('sql_server_page_bytes') }})
{%- endmacro %}

{#- Display units: decimal MB (10^6, as CrystalDiskMark and fio's "MB/s") and binary MiB (2^20, as SQLIO
    and DiskSpd) are both offered so a chart can say which one it shows. -#}
{% macro bytes_to_mb(bytes_expr) -%}
    ({{ bytes_expr }} / 1000000.0)
{%- endmacro %}

{% macro bytes_to_mib(bytes_expr) -%}
    ({{ bytes_expr }} / 1048576.0)
{%- endmacro %}
