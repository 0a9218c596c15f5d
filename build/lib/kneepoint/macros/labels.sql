{#- How the app, the CLI and the report name a disk: `disk`, or `disk @ host` when a host was given. -#}
{% macro disk_key(disk_expr, host_expr) -%}
    ({{ disk_expr }} || case when coalesce({{ host_expr }}, '') = '' then '' else ' @ ' || {{ host_expr }} end)
{%- endmacro %}
