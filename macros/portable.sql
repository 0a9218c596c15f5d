{#- What DuckDB and PostgreSQL say differently, in one place: each macro renders one engine's form
    (adapter.dispatch picks duckdb__ or postgres__). The models are otherwise written in the SQL both engines speak
    (DISTINCT ON, = ANY(array), array_agg, LATERAL, FILTER, NOT EXISTS). -#}

{#- An empty list of text (tags, inferred, tools). -#}
{% macro kp_empty_text_list() -%}
    {{ return(adapter.dispatch('kp_empty_text_list', 'kneepoint')()) }}
{%- endmacro %}
{% macro duckdb__kp_empty_text_list() -%} []::varchar[] {%- endmacro %}
{% macro postgres__kp_empty_text_list() -%} '{}'::text[] {%- endmacro %}

{#- A timestamp read from the tool's text, or null where it is not one. PostgreSQL has no try_cast: the function
    kp_try_timestamptz is created by on-run-start (kp_create_functions). -#}
{% macro kp_try_timestamptz(expr) -%}
    {{ return(adapter.dispatch('kp_try_timestamptz', 'kneepoint')(expr)) }}
{%- endmacro %}
{% macro duckdb__kp_try_timestamptz(expr) -%} try_cast({{ expr }} as timestamptz) {%- endmacro %}
{% macro postgres__kp_try_timestamptz(expr) -%} kp_try_timestamptz({{ expr }}) {%- endmacro %}

{#- A wall-clock time as the tool's clock printed it (a counter log's sample time), or null where the text is not one.
    An offset, where the tool printed one, is dropped on both engines: the time stays the one the log shows. -#}
{% macro kp_try_timestamp(expr) -%}
    {{ return(adapter.dispatch('kp_try_timestamp', 'kneepoint')(expr)) }}
{%- endmacro %}
{% macro duckdb__kp_try_timestamp(expr) -%} try_cast({{ expr }} as timestamp) {%- endmacro %}
{% macro postgres__kp_try_timestamp(expr) -%} kp_try_timestamp({{ expr }}) {%- endmacro %}

{% macro kp_is_nan(expr) -%}
    {{ return(adapter.dispatch('kp_is_nan', 'kneepoint')(expr)) }}
{%- endmacro %}
{% macro duckdb__kp_is_nan(expr) -%} isnan({{ expr }}) {%- endmacro %}
{% macro postgres__kp_is_nan(expr) -%} ({{ expr }} = 'NaN'::double precision) {%- endmacro %}

{% macro kp_is_finite(expr) -%}
    {{ return(adapter.dispatch('kp_is_finite', 'kneepoint')(expr)) }}
{%- endmacro %}
{% macro duckdb__kp_is_finite(expr) -%} isfinite({{ expr }}) {%- endmacro %}
{% macro postgres__kp_is_finite(expr) -%}
    ({{ expr }} not in ('Infinity'::double precision, '-Infinity'::double precision, 'NaN'::double precision))
{%- endmacro %}

{#- The rows of `model` whose `columns` repeat, with how often (tests/dbt/generic/unique_by_hash, which says why).
    DuckDB groups by a 64-bit hash of the key, then compares the rows of a hash seen twice by value; PostgreSQL
    groups by value. -#}
{% macro kp_repeated_keys(model, columns) -%}
    {{ return(adapter.dispatch('kp_repeated_keys', 'kneepoint')(model, columns)) }}
{%- endmacro %}
{% macro duckdb__kp_repeated_keys(model, columns) -%}
with repeated_hashes as (
    select hash({{ columns | join(', ') }}) as key_hash
    from {{ model }}
    group by key_hash
    having count(*) > 1
)

select
    {{ columns | join(', ') }},
    count(*) as n_records
from {{ model }}
where hash({{ columns | join(', ') }}) in (select key_hash from repeated_hashes)
group by {{ columns | join(', ') }}
having count(*) > 1
{%- endmacro %}
{% macro postgres__kp_repeated_keys(model, columns) -%}
select
    {{ columns | join(', ') }},
    count(*) as n_records
from {{ model }}
group by {{ columns | join(', ') }}
having count(*) > 1
{%- endmacro %}

{#- Per value of `key`, the `value` of the row that comes first in the `order` list of expressions (a total order:
    its last expressions break every tie), over the rows `from_where` gives ("from ... where ..."): columns `key`
    and `value`. PostgreSQL: DISTINCT ON. DuckDB: arg_min over the order as one row value, because its DISTINCT ON
    carries every selected column and order expression through an aggregate of its own (at a week of counter
    samples matched against a disk's series, 3x slower). -#}
{% macro kp_first_by(key, value, order, from_where) -%}
    {{ return(adapter.dispatch('kp_first_by', 'kneepoint')(key, value, order, from_where)) }}
{%- endmacro %}
{% macro duckdb__kp_first_by(key, value, order, from_where) -%}
    select {{ key }}, arg_min({{ value }}, ({{ order | join(', ') }})) as {{ value.split('.')[-1] }}
    {{ from_where }}
    group by {{ key }}
{%- endmacro %}
{% macro postgres__kp_first_by(key, value, order, from_where) -%}
    select distinct on ({{ key }}) {{ key }}, {{ value }}
    {{ from_where }}
    order by {{ key }}, {{ order | join(', ') }}
{%- endmacro %}

{#- A double rounded to `digits` decimals, still a double (PostgreSQL rounds numeric only). -#}
{% macro kp_round(expr, digits) -%}
    {{ return(adapter.dispatch('kp_round', 'kneepoint')(expr, digits)) }}
{%- endmacro %}
{% macro duckdb__kp_round(expr, digits) -%} round({{ expr }}, {{ digits }}) {%- endmacro %}
{% macro postgres__kp_round(expr, digits) -%}
    cast(round(cast({{ expr }} as numeric), {{ digits }}) as double precision)
{%- endmacro %}

{#- A number as text, the same on both engines: up to six decimals, no trailing zeros (70, 12.5, 0.001). The
    engines' own text of a double differs (DuckDB writes 70.0, PostgreSQL 70), and series ids and notes hold numbers. -#}
{% macro kp_number_text(expr) -%}
    {{ return(adapter.dispatch('kp_number_text', 'kneepoint')(expr)) }}
{%- endmacro %}
{% macro duckdb__kp_number_text(expr) -%}
    rtrim(rtrim(printf('%.6f', cast({{ expr }} as double)), '0'), '.')
{%- endmacro %}
{% macro postgres__kp_number_text(expr) -%}
    rtrim(rtrim(to_char(cast({{ expr }} as double precision), 'FM999999999999990.000000'), '0'), '.')
{%- endmacro %}

{#- Functions PostgreSQL needs that DuckDB has built in; on-run-start creates them (nothing on DuckDB). -#}
{% macro kp_create_functions() -%}
    {{ return(adapter.dispatch('kp_create_functions', 'kneepoint')()) }}
{%- endmacro %}
{% macro duckdb__kp_create_functions() -%} select 1 {%- endmacro %}
{% macro postgres__kp_create_functions() -%}
    create or replace function {{ target.schema }}.kp_try_timestamptz(value text) returns timestamptz
    language plpgsql immutable as $kp$
    begin
        return value::timestamptz;
    exception when others then
        return null;
    end
    $kp$;
    create or replace function {{ target.schema }}.kp_try_timestamp(value text) returns timestamp
    language plpgsql immutable as $kp$
    begin
        return value::timestamp;
    exception when others then
        return null;
    end
    $kp$
{%- endmacro %}

{#- dbt-postgres reads a column's type from information_schema, which calls every array 'ARRAY'; a unit test's
    fixture rows are then cast to `ARRAY`, which PostgreSQL refuses. Its element type makes the array's name
    (udt_name '_text' -> text[]). The rest is dbt-postgres's own macro. -#}
{% macro postgres__get_columns_in_relation(relation) -%}
  {% call statement('get_columns_in_relation', fetch_result=True) %}
      select
          column_name,
          case when data_type = 'ARRAY' then substring(udt_name from 2) || '[]' else data_type end as data_type,
          character_maximum_length,
          numeric_precision,
          numeric_scale
      from {{ relation.information_schema('columns') }}
      where table_name = '{{ relation.identifier }}'
        {% if relation.schema %}
        and table_schema = '{{ relation.schema }}'
        {% endif %}
      order by ordinal_position
  {% endcall %}
  {% set table = load_result('get_columns_in_relation').table %}
  {{ return(sql_convert_columns_in_relation(table)) }}
{% endmacro %}

{#- `column` is one of the values `subquery` selects (a few keys: the files, series or disks a build changed).
    PostgreSQL plans `in (subquery)` as a join and may hash every row of a large table into it; `= any(array(...))`
    reads the few keys first, so the table's index on the key finds their rows (a one-file change at 1M fact rows:
    a test over fct_latency_distribution took 2.3 s). -#}
{% macro kp_in_set(column, subquery) -%}
    {{ return(adapter.dispatch('kp_in_set', 'kneepoint')(column, subquery)) }}
{%- endmacro %}
{% macro default__kp_in_set(column, subquery) -%}
    {{ column }} in ({{ subquery }})
{%- endmacro %}
{% macro postgres__kp_in_set(column, subquery) -%}
    {{ column }} = any(array({{ subquery }}))
{%- endmacro %}

{#- The model's statistics, right after it is made (dbt_project.yml's post-hook): PostgreSQL's planner reads them
    for the next models and tests; DuckDB keeps its own as it writes. A view has none to gather. An incremental
    model's change of a few files' rows leaves them as they were (analyzing a 1M-row fact cost 0.6 s per change):
    it is analyzed when it is made whole, and PostgreSQL's autovacuum keeps them current after. -#}
{% macro kp_analyze() -%}
    {{ return(adapter.dispatch('kp_analyze', 'kneepoint')()) }}
{%- endmacro %}
{% macro default__kp_analyze() -%}{%- endmacro %}
{% macro postgres__kp_analyze() -%}
    {%- set materialized = model.config.materialized -%}
    {%- if materialized == 'table' or (materialized == 'incremental' and not is_incremental()) -%}
        analyze {{ this }}
    {%- endif -%}
{%- endmacro %}


{#- How many of `columns` (each prefixed with `prefix`) are not null, as an integer; 0 for none. -#}
{% macro count_present(columns, prefix='') -%}
    {%- set terms = [] -%}
    {%- for column in columns -%}
        {%- do terms.append('(case when ' ~ prefix ~ column ~ ' is not null then 1 else 0 end)') -%}
    {%- endfor -%}
    {{ terms | join(' + ') if terms else '0' }}
{%- endmacro %}

{#- PostgreSQL: plan the model's joins without nested loops (a pre-hook; `kp_nested_loops_again()` in the post-hook
    sets the session back: dbt and a replayed build run the next nodes on the same connection). A change's rows are
    read by `file_id = any(array(...))`, whose count the planner cannot know before it runs: it estimates a few
    histogram points where a folder of fio files has hundreds of thousands, and then checks every record against
    every point (64 fio files: 2.2 s instead of 0.4 s; 300 files: 42 s instead of 2.1 s). A hash or merge join
    costs the same whatever the count. DuckDB plans no such loop: nothing to do there. -#}
{% macro kp_without_nested_loops() -%}
    {{ return(adapter.dispatch('kp_without_nested_loops', 'kneepoint')()) }}
{%- endmacro %}
{% macro default__kp_without_nested_loops() -%}{%- endmacro %}
{% macro postgres__kp_without_nested_loops() -%} set enable_nestloop = off {%- endmacro %}
{% macro kp_nested_loops_again() -%}
    {{ return(adapter.dispatch('kp_nested_loops_again', 'kneepoint')()) }}
{%- endmacro %}
{% macro default__kp_nested_loops_again() -%}{%- endmacro %}
{% macro postgres__kp_nested_loops_again() -%} reset enable_nestloop {%- endmacro %}

{#- Indexes on an incremental model's key and on what later models look its rows up by (`indexes` config), on
    PostgreSQL only, one per column: a change deletes the rows of its files or series and its hooks, tests and the
    models after it read them, which without an index scans the whole table (one fio file's change cost 3.7 s in
    fct_io_results at 1M fact rows; the saturation points' read of the changed series there, 0.3 s each). DuckDB
    finds them by its zone maps; an index there would be kept up on every insert and held in memory. -#}
{% macro kp_key_indexes(key, looked_up_by=[]) -%}
    {%- if target.type != 'postgres' -%}{{ return([]) }}{%- endif -%}
    {%- set indexes = [] -%}
    {%- for column in [key] + looked_up_by -%}{%- do indexes.append({'columns': [column]}) -%}{%- endfor -%}
    {{ return(indexes) }}
{%- endmacro %}
