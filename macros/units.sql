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

{#- Observed load (Perfmon, iostat, SQL Server file statistics): every rate is per second over its interval. The
    I/Os of an interval are its reads and writes; a direction the tool did not log counts as unknown, not as 0. -#}
{% macro io_per_s(reads_expr, writes_expr) -%}
    (case when {{ reads_expr }} is not null or {{ writes_expr }} is not null
        then coalesce({{ reads_expr }}, 0) + coalesce({{ writes_expr }}, 0) end)
{%- endmacro %}

{#- Bytes per I/O of an interval: its throughput over its IOPS; null where it did no I/O. -#}
{% macro bytes_per_io(bytes_per_s_expr, iops_expr) -%}
    ({{ bytes_per_s_expr }} / nullif({{ iops_expr }}, 0))
{%- endmacro %}

{#- Share of reads in percent, 0..100; null where the interval did no I/O. -#}
{% macro read_pct_of(reads_expr, iops_expr) -%}
    (100.0 * {{ reads_expr }} / nullif({{ iops_expr }}, 0))
{%- endmacro %}

{#- The mean latency of every I/O of an interval: the read and write latencies weighted by their I/O rates. A
    direction without I/O weighs nothing; one with I/O but no latency logged leaves the mean unknown. -#}
{% macro io_weighted_latency_ms(reads_expr, read_ms_expr, writes_expr, write_ms_expr) -%}
    (case
        when coalesce({{ reads_expr }}, 0) + coalesce({{ writes_expr }}, 0) <= 0 then null
        when coalesce({{ reads_expr }}, 0) > 0 and {{ read_ms_expr }} is null then null
        when coalesce({{ writes_expr }}, 0) > 0 and {{ write_ms_expr }} is null then null
        else (
            (case when coalesce({{ reads_expr }}, 0) > 0 then {{ reads_expr }} * {{ read_ms_expr }} else 0 end)
            + (case when coalesce({{ writes_expr }}, 0) > 0 then {{ writes_expr }} * {{ write_ms_expr }} else 0 end)
        ) / (coalesce({{ reads_expr }}, 0) + coalesce({{ writes_expr }}, 0))
    end)
{%- endmacro %}

{#- Load series (raw_load_steps): a throughput in a load-throughput unit (`transactions/min`, `new orders/min`, ...)
    to per second, and back to the unit a series shows; the "what" of a unit is what it counts (`transactions`). -#}
{% macro to_per_s(value_expr, unit_expr) -%}
    ({{ value_expr }} * {{ _factor_case(unit_expr, var('load_throughput_units_per_s')) }})
{%- endmacro %}

{% macro per_s_to_unit(per_s_expr, unit_expr) -%}
    ({{ per_s_expr }} / {{ _factor_case(unit_expr, var('load_throughput_units_per_s')) }})
{%- endmacro %}

{% macro throughput_what(unit_expr) -%}
    split_part({{ unit_expr }}, '/', 1)
{%- endmacro %}
