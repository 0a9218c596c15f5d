{#- A measured run and direction's key, `file_id:record_index`: fct_io_results names its rows by it, and
    fct_latency_distribution names its points' run by it from the staged records, so it need not wait for the facts. -#}
{% macro io_result_id(file_id_expr='file_id', record_index_expr='record_index') -%}
    ({{ file_id_expr }} || ':' || {{ record_index_expr }})
{%- endmacro %}
