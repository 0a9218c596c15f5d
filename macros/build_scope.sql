{#- What one build covers, in one place.

    ingest/build.py writes the build's window before dbt runs (source build.kneepoint_build_window): the changes
    numbered from_seq < change_seq <= to_seq (raw_file_changes). Files stored after to_seq was read wait for the
    next build, never half in this one (the cut-off); the staging models see the raw layer as of to_seq.

    Incremental models are keyed by file (the facts and dim_files: every row of a changed file is replaced) or by
    series (the saturation marts: every row of a series whose points changed is recomputed). A full refresh
    rebuilds them from everything up to to_seq. The same window scopes the dbt tests of a change to the rows it
    changed (get_where_subquery below); `kneepoint build` sets the scope to every row. -#}

{#- The raw layer as of the build's cut-off: rows of the files stored up to to_seq. -#}
{% macro stored_by_cutoff(file_id_column='file_id') -%}
    {{ file_id_column }} in (
        select file_id
        from {{ source('raw', 'raw_files') }}
        where stored_seq <= (select to_seq from {{ source('build', 'kneepoint_build_window') }})
    )
{%- endmacro %}

{#- The rows an incremental model (re)builds: every row on a full refresh, the changed files' otherwise. -#}
{#- (The ref and the source are read unconditionally: dbt learns a model's dependencies when it parses it, where
    is_incremental() is false.) -#}
{% macro in_changed_files(file_id_column='file_id') -%}
    {%- set changed_files = ref('int_changed_files') -%}
    {%- if is_incremental() -%}
        {{ kp_in_set(file_id_column, 'select file_id from ' ~ changed_files) }}
    {%- else -%}
        true
    {%- endif -%}
{%- endmacro %}

{#- The same for the models keyed by series: the series whose points the facts' hooks found changed. -#}
{% macro in_changed_series(series_id_column='series_id') -%}
    {%- set changed_series = source('build', 'kneepoint_changed_series') -%}
    {%- if is_incremental() -%}
        {{ kp_in_set(series_id_column, 'select series_id from ' ~ changed_series) }}
    {%- else -%}
        true
    {%- endif -%}
{%- endmacro %}

{#- The same for the models keyed by disk (the production-vs-baseline marts): the disks whose observed intervals or
    benchmark series the facts' hooks found changed. -#}
{% macro in_changed_disks(disk_key_column='disk_key') -%}
    {%- set changed_disks = source('build', 'kneepoint_changed_disks') -%}
    {%- if is_incremental() -%}
        {{ kp_in_set(disk_key_column, 'select disk_key from ' ~ changed_disks) }}
    {%- else -%}
        true
    {%- endif -%}
{%- endmacro %}

{#- Incremental strategy `replace_changed`: delete every row of the changed keys (a deleted file's too, which the
    new rows cannot name), insert the rebuilt ones. `unique_key` is `file_id`, `series_id` or `disk_key`. -#}
{% macro get_incremental_replace_changed_sql(arg_dict) -%}
    {%- set target = arg_dict['target_relation'] -%}
    {%- set columns = get_quoted_csv(arg_dict['dest_columns'] | map(attribute='name')) -%}
    {%- set key = arg_dict['unique_key'] -%}
    delete from {{ target }} where {{ changed_keys(key) }};
    insert into {{ target }} ({{ columns }}) select {{ columns }} from {{ arg_dict['temp_relation'] }}
{%- endmacro %}

{% macro changed_keys(key) -%}
    {%- if key == 'file_id' -%}
        {{ kp_in_set('file_id', 'select file_id from ' ~ ref('int_changed_files')) }}
    {%- elif key == 'series_id' -%}
        {{ kp_in_set('series_id', 'select series_id from ' ~ source('build', 'kneepoint_changed_series')) }}
    {%- elif key == 'disk_key' -%}
        {{ kp_in_set('disk_key', 'select disk_key from ' ~ source('build', 'kneepoint_changed_disks')) }}
    {%- else -%}
        {{ exceptions.raise_compiler_error("replace_changed needs unique_key file_id, series_id or disk_key, not "
                                           ~ key) }}
    {%- endif -%}
{%- endmacro %}

{#- fct_io_results' hooks, inside its transaction: the series of the changed files before the change (a relabel
    moves a file's rows to another series, a delete takes them away) and after it. The saturation marts
    recompute exactly those. The list is kept until the build succeeds (ingest/build.py empties it), so a build
    killed half-way still knows, when it runs again, the series it had started to change. -#}
{% macro remember_changed_series() -%}
    {%- set changed_files = ref('int_changed_files') -%}
    {%- if is_incremental() -%}
        insert into {{ source('build', 'kneepoint_changed_series') }}
        select distinct series_id from {{ this }} where {{ changed_keys('file_id') }} and series_id is not null
    {%- endif -%}
{%- endmacro %}

{#- The facts' hooks, inside their transaction: the disks of the changed files before the change (a relabel moves
    a file to another disk, a delete takes it away) and after it. The production-vs-baseline marts recompute
    those disks, which the build forgets when it succeeds, as it forgets the series. -#}
{% macro remember_changed_disks() -%}
    {%- set changed_files = ref('int_changed_files') -%}
    {%- if is_incremental() -%}
        insert into {{ source('build', 'kneepoint_changed_disks') }}
        select distinct disk_key from {{ this }} where {{ changed_keys('file_id') }} and disk_key is not null
    {%- endif -%}
{%- endmacro %}

{#- dbt's generic tests read `get_where_subquery(model)`: here the tested model is narrowed to the rows this build
    changed (its yml `meta: {change_key: file_id | series_id}`), unless the window's test_scope is 'all'. The
    build's tables are named directly (build_relation): a test's dependencies are fixed when dbt parses it. -#}
{% macro default__get_where_subquery(relation) -%}
    {%- set where = config.get('where', '') -%}
    {%- set key = change_key_of(relation) if execute else none -%}
    {%- set conditions = [] -%}
    {%- if where -%}{%- do conditions.append('(' ~ where ~ ')') -%}{%- endif -%}
    {%- if key -%}{%- do conditions.append(in_test_scope(key)) -%}{%- endif -%}
    {%- if conditions -%}
        {%- do return('(select * from ' ~ relation ~ ' where ' ~ conditions | join(' and ') ~ ') dbt_subquery') -%}
    {%- else -%}
        {%- do return(relation) -%}
    {%- endif -%}
{%- endmacro %}

{% macro change_key_of(relation) -%}
    {%- for node in graph.nodes.values() if node.resource_type == 'model' and node.alias == relation.identifier -%}
        {%- do return(node.config.meta.get('change_key')) -%}
    {%- endfor -%}
    {%- do return(none) -%}
{%- endmacro %}

{#- A row a test reads: one of a file or series this build changed, or any row when the build tests them all. The
    scope is read when the test runs (not a subquery in the test: an OR over a subquery keeps PostgreSQL's planner
    from joining, and a test over every row then took minutes). Read from the build's own tables, which exist
    before any model: a test may run before int_changed_files. -#}
{% macro in_test_scope(key) -%}
    {%- if execute and test_scope() == 'all' -%}
        true
    {%- elif key == 'file_id' -%}
        {{ kp_in_set('file_id', 'select c.file_id from ' ~ build_relation('raw_file_changes') ~ ' as c, '
                     ~ build_relation('kneepoint_build_window') ~ ' as w'
                     ~ ' where c.change_seq > w.from_seq and c.change_seq <= w.to_seq') }}
    {%- elif key == 'disk_key' -%}
        {{ kp_in_set('disk_key', 'select disk_key from ' ~ build_relation('kneepoint_changed_disks')) }}
    {%- else -%}
        {{ kp_in_set('series_id', 'select series_id from ' ~ build_relation('kneepoint_changed_series')) }}
    {%- endif -%}
{%- endmacro %}

{% macro test_scope() -%}
    {%- set found = run_query('select test_scope from ' ~ build_relation('kneepoint_build_window')) -%}
    {{ return(found.columns[0].values()[0] if found.rows | length else 'changed') }}
{%- endmacro %}

{% macro build_relation(name) -%}
    {{ api.Relation.create(database=target.database, schema=target.schema, identifier=name) }}
{%- endmacro %}
