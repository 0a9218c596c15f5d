{#- The saturation rule, in one place.

    A series is one disk's (and host's) results of one workload: pattern, operation, read_pct, block_size_bytes,
    direction. Its load is outstanding I/O (threads x queue depth); per load it keeps the run with the highest
    IOPS. Its saturation point, for a tolerance ε, is the smallest load that has a larger load measured and
    for which no larger load delivers more than (1 + ε) x its IOPS. None qualifying: not saturated within the
    tested range, and no point is invented.

    The marts render the rule at the project's tolerance (var `saturation_tolerance`) over their refs, so dbt's
    unit tests can feed it rows. `kneepoint saturation --tolerance` needs it at any tolerance from a read-only
    connection, without a dbt compile (seconds) or a rebuild: the marts' post-hooks also store the same rendered
    SQL in the warehouse as `saturation_points(tol)` and `saturation_by_threads(tol)` (DuckDB table macros,
    PostgreSQL functions). Python never re-implements the rule. Tables are named without the database in them, so
    they still work when the warehouse file is copied or renamed. -#}

{% macro saturation_series_columns() -%}
    {{ return(['series_id', 'disk_key', 'disk', 'host', 'pattern', 'operation', 'read_pct', 'block_size_bytes',
               'direction']) }}
{%- endmacro %}

{#- Names a series in one string: the key the marts join and test uniqueness on. Numbers are written the same way on
    every engine (kp_number_text). -#}
{% macro saturation_series_id() -%}
    (disk_key || ' | ' || pattern || ' ' || operation || ' ' || {{ kp_number_text('read_pct') }} || '% read '
        || block_size_bytes || ' B ' || direction)
{%- endmacro %}

{#- The columns of the run kept at each load. -#}
{% macro saturation_kept_columns() -%}
    {{ return(['outstanding_io', 'threads', 'queue_depth', 'iops', 'throughput_bytes_per_s', 'latency_avg_ms',
               'latency_p99_ms', 'littles_law_ratio', 'io_result_id', 'tool', 'file_id', 'file_name', 'run_index',
               'source_line']) }}
{%- endmacro %}

{#- One row per series and load: the run with the highest IOPS at that load (ties: lower mean latency, then the
    earliest stored record; a NaN IOPS first, as a descending sort puts it), with how many runs and which tools
    measured that load. The order is the rule; each engine picks the run its own way (kp_best_runs). -#}
{% macro saturation_points_at_load(io_results, load_columns, where='true') -%}
    {%- set partition = saturation_series_columns()[1:] + load_columns -%}
    with best_runs as (
        {{ adapter.dispatch('kp_best_runs', 'kneepoint')(io_results, partition, where) }}
    )

    select
        {{ saturation_series_id() }} as series_id,
        {{ saturation_series_columns()[1:] | join(', ') }},
        {%- for c in saturation_kept_columns() if c not in ('io_result_id', 'tool', 'file_id', 'file_name',
                                                             'run_index', 'source_line') %}
        {{ c }},
        {%- endfor %}
        runs,
        tools,
        littles_law_flagged_runs,
        io_result_id,
        tool,
        file_id,
        file_name,
        run_index,
        source_line
    from best_runs
{%- endmacro %}

{#- DuckDB: one GROUP BY, the best run an arg_min over the rule's order (a window ranking every run sorted them
    all: seconds at 10M fact rows). -#}
{% macro duckdb__kp_best_runs(io_results, partition, where) -%}
    {%- set kept = saturation_kept_columns() -%}
    select
        {{ partition | join(', ') }},
        runs,
        tools,
        littles_law_flagged_runs,
        {%- for c in kept %}
        best.{{ c }} as {{ c }}{{ ',' if not loop.last }}
        {%- endfor %}
    from (
        select
            {{ partition | join(', ') }},
            count(*) as runs,
            array_agg(distinct tool order by tool) as tools,
            count(*) filter (where littles_law_flag) as littles_law_flagged_runs,
            arg_min(
                { {%- for c in kept %}'{{ c }}': {{ c }}{{ ', ' if not loop.last }}{% endfor -%} },
                {'iops_is_number': not isnan(iops), 'lower_iops': -iops, 'no_latency': latency_avg_ms is null,
                 'latency_avg_ms': latency_avg_ms, 'file_id': file_id, 'record_index': record_index}
            ) as best
        from {{ io_results }}
        where iops is not null and outstanding_io > 0 and {{ where }}
        group by {{ partition | join(', ') }}
    ) as loads
{%- endmacro %}

{#- PostgreSQL: one GROUP BY with the counts per load and the best run's id, the first of an aggregate in the rule's
    order; then that run's columns by its id. (DISTINCT ON sorted every run with all its columns, and the counts
    sorted them again: 8.7 s at 1M fact rows, now 4.7 s.) -#}
{% macro postgres__kp_best_runs(io_results, partition, where) -%}
    {%- set kept = saturation_kept_columns() -%}
    select
        {%- for c in partition %}
        loads.{{ c }},
        {%- endfor %}
        loads.runs,
        loads.tools,
        loads.littles_law_flagged_runs,
        {%- for c in kept if c not in partition %}
        best.{{ c }}{{ ',' if not loop.last }}
        {%- endfor %}
    from (
        select
            {{ partition | join(', ') }},
            count(*) as runs,
            array_agg(distinct tool order by tool) as tools,
            count(*) filter (where littles_law_flag) as littles_law_flagged_runs,
            (array_agg(io_result_id order by iops desc, latency_avg_ms asc nulls last, file_id, record_index))[1]
                as best_io_result_id
        from {{ io_results }}
        where iops is not null and outstanding_io > 0 and {{ where }}
        group by {{ partition | join(', ') }}
    ) as loads
    -- `where` again: a change build finds the few runs it changed by their index, not among every run.
    inner join (select * from {{ io_results }} where {{ where }}) as best on best.io_result_id = loads.best_io_result_id
{%- endmacro %}

{#- The rule itself, written once: the CTEs `points` (the rows of `points` that `where` keeps, each with the best
    throughput of the larger loads of its series) and `judged` (each point with `qualifies`: a larger load was
    measured and none of them beats this point by more than the tolerance). Disks measure throughput in IOPS over
    outstanding I/O (saturation_rule); load series in `throughput_per_s` over their load (load_saturation_sql). -#}
{% macro saturation_judged(points, series_columns, load_column, tolerance, where='true', throughput_column='iops') -%}
    points as (
        select
            *,
            max({{ throughput_column }}) over (
                partition by {{ series_columns | join(', ') }}
                order by {{ load_column }}
                rows between 1 following and unbounded following
            ) as best_throughput_beyond
        from {{ points }}
        where {{ where }}
    ),

    judged as (
        select
            *,
            -- the rule: a larger load was measured, and none of them beats this point by more than the tolerance
            coalesce(best_throughput_beyond <= (1 + {{ tolerance }}) * {{ throughput_column }}, false) as qualifies
        from points
    )
{%- endmacro %}

{#- The rule over one row per series and load (`points`), grouped by `series_columns`, the load being
    `load_column`; `tolerance` is a SQL expression. The rule itself (`qualifies`) is written once; each engine then
    picks the rows it names its own way (kp_rule_per_series). -#}
{% macro saturation_rule(points, series_columns, load_column, tolerance, where='true') -%}
    {%- set partition = series_columns | join(', ') -%}
    with {{ saturation_judged(points, series_columns, load_column, tolerance, where) }},

    per_series as (
        {{ adapter.dispatch('kp_rule_per_series', 'kneepoint')(series_columns, load_column) }}
    )

    select
        {{ partition }},
        tools,
        points,
        runs,
        min_{{ load_column }},
        max_{{ load_column }},
        saturation_{{ load_column }} is not null as saturated,
        saturation_outstanding_io,
        saturation_threads,
        saturation_queue_depth,
        iops_at_saturation,
        throughput_bytes_per_s_at_saturation,
        latency_avg_ms_at_saturation,
        latency_p99_ms_at_saturation,
        max_iops,
        max_iops_{{ load_column }},
        -- how much latency the load to the saturation point cost: mean latency where both points have it,
        -- else p99
        coalesce(
            latency_avg_ms_at_saturation / nullif(first_latency_avg_ms, 0),
            latency_p99_ms_at_saturation / nullif(first_latency_p99_ms, 0)
        ) as latency_growth_to_saturation,
        littles_law_flagged_runs,
        cast({{ tolerance }} as double precision) as tolerance
    from per_series
{%- endmacro %}

{#- Per series: the smallest qualifying load's figures (the saturation point), the smallest load's latencies, the
    load of the highest IOPS (the smaller on a tie), and the counts. DuckDB: one GROUP BY with arg_min over structs
    (a struct, not arg_min per column: arg_min skips a NULL latency and would take another row's). -#}
{% macro duckdb__kp_rule_per_series(series_columns, load_column) -%}
    {%- set point = "{'outstanding_io': outstanding_io, 'threads': threads, 'queue_depth': queue_depth,
        'iops': iops, 'throughput_bytes_per_s': throughput_bytes_per_s, 'latency_avg_ms': latency_avg_ms,
        'latency_p99_ms': latency_p99_ms}" -%}
    select
        {{ series_columns | join(', ') }},
        tools,
        points,
        runs,
        min_{{ load_column }},
        max_{{ load_column }},
        saturation['{{ load_column }}'] as saturation_{{ load_column }},
        {%- if load_column != 'outstanding_io' %}
        saturation['outstanding_io'] as saturation_outstanding_io,
        {%- endif %}
        saturation['threads'] as saturation_threads,
        {%- if load_column != 'queue_depth' %}
        saturation['queue_depth'] as saturation_queue_depth,
        {%- endif %}
        saturation['iops'] as iops_at_saturation,
        saturation['throughput_bytes_per_s'] as throughput_bytes_per_s_at_saturation,
        saturation['latency_avg_ms'] as latency_avg_ms_at_saturation,
        saturation['latency_p99_ms'] as latency_p99_ms_at_saturation,
        first_point['latency_avg_ms'] as first_latency_avg_ms,
        first_point['latency_p99_ms'] as first_latency_p99_ms,
        max_iops,
        max_iops_{{ load_column }},
        littles_law_flagged_runs
    from (
        select
            {{ series_columns | join(', ') }},
            list_sort(list_distinct(flatten(list(tools)))) as tools,
            count(*) as points,
            cast(sum(runs) as bigint) as runs,
            min({{ load_column }}) as min_{{ load_column }},
            max({{ load_column }}) as max_{{ load_column }},
            arg_min({{ point }}, {{ load_column }}) filter (where qualifies) as saturation,
            arg_min({{ point }}, {{ load_column }}) as first_point,
            max(iops) as max_iops,
            arg_max({{ load_column }}, {'iops': iops, 'smaller_load_first': -{{ load_column }}})
                as max_iops_{{ load_column }},
            cast(sum(littles_law_flagged_runs) as bigint) as littles_law_flagged_runs
        from judged
        group by {{ series_columns | join(', ') }}
    ) as rule
{%- endmacro %}

{#- PostgreSQL: the same rows picked by DISTINCT ON (by load, qualifying first; by IOPS, the smaller load first). -#}
{% macro postgres__kp_rule_per_series(series_columns, load_column) -%}
    {%- set partition = series_columns | join(', ') -%}
    {%- set key = ['series_id'] + (['threads'] if 'threads' in series_columns else []) -%}
    select
        {%- for c in series_columns %}
        counts.{{ c }},
        {%- endfor %}
        coalesce(tools.tools, {{ kp_empty_text_list() }}) as tools,
        counts.points,
        counts.runs,
        counts.min_{{ load_column }},
        counts.max_{{ load_column }},
        saturation.{{ load_column }} as saturation_{{ load_column }},
        {%- if load_column != 'outstanding_io' %}
        saturation.outstanding_io as saturation_outstanding_io,
        {%- endif %}
        saturation.threads as saturation_threads,
        {%- if load_column != 'queue_depth' %}
        saturation.queue_depth as saturation_queue_depth,
        {%- endif %}
        saturation.iops as iops_at_saturation,
        saturation.throughput_bytes_per_s as throughput_bytes_per_s_at_saturation,
        saturation.latency_avg_ms as latency_avg_ms_at_saturation,
        saturation.latency_p99_ms as latency_p99_ms_at_saturation,
        first_point.latency_avg_ms as first_latency_avg_ms,
        first_point.latency_p99_ms as first_latency_p99_ms,
        counts.max_iops,
        best.{{ load_column }} as max_iops_{{ load_column }},
        counts.littles_law_flagged_runs
    from (
        select
            {{ partition }},
            count(*) as points,
            cast(sum(runs) as bigint) as runs,
            min({{ load_column }}) as min_{{ load_column }},
            max({{ load_column }}) as max_{{ load_column }},
            max(iops) as max_iops,
            cast(sum(littles_law_flagged_runs) as bigint) as littles_law_flagged_runs
        from judged
        group by {{ partition }}
    ) as counts
    left join (  -- a series whose points name no tool keeps its row
        select {{ key | join(', ') }}, array_agg(distinct tool order by tool) as tools
        from (select {{ key | join(', ') }}, unnest(tools) as tool from judged) as point_tools
        group by {{ key | join(', ') }}
    ) as tools using ({{ key | join(', ') }})
    inner join (
        select distinct on ({{ key | join(', ') }}) {{ key | join(', ') }}, latency_avg_ms, latency_p99_ms
        from judged
        order by {{ key | join(', ') }}, {{ load_column }}
    ) as first_point using ({{ key | join(', ') }})
    inner join (
        select distinct on ({{ key | join(', ') }}) {{ key | join(', ') }}, {{ load_column }}
        from judged
        order by {{ key | join(', ') }}, iops desc, {{ load_column }}
    ) as best using ({{ key | join(', ') }})
    left join (
        select distinct on ({{ key | join(', ') }})
            {{ key | join(', ') }},
            {%- if 'threads' not in key %}
            threads,
            {%- endif %}
            outstanding_io,
            queue_depth,
            iops,
            throughput_bytes_per_s,
            latency_avg_ms,
            latency_p99_ms
        from judged
        where qualifies
        order by {{ key | join(', ') }}, {{ load_column }}
    ) as saturation using ({{ key | join(', ') }})
{%- endmacro %}

{#- mart_saturation_points: the rule per series, with the USL and Kneedle second opinions beside it (mart_usl_fits).
    Kneedle's disagreement is worded here because it depends on the tolerance. -#}
{% macro saturation_points_sql(points, fits, tolerance, where='true') -%}
    {%- set series = saturation_series_columns() -%}
    with rule as (
        {{ saturation_rule(points, series, 'outstanding_io', tolerance, where) }}
    )

    select
        rule.series_id,
        rule.disk_key,
        rule.disk,
        rule.host,
        rule.tools,
        rule.pattern,
        rule.operation,
        rule.read_pct,
        rule.block_size_bytes,
        rule.direction,
        rule.points,
        rule.runs,
        rule.min_outstanding_io,
        rule.max_outstanding_io,
        rule.saturated,
        rule.saturation_outstanding_io,
        rule.saturation_threads,
        rule.saturation_queue_depth,
        rule.iops_at_saturation,
        rule.throughput_bytes_per_s_at_saturation,
        rule.latency_avg_ms_at_saturation,
        rule.latency_p99_ms_at_saturation,
        rule.max_iops,
        rule.max_iops_outstanding_io,
        rule.latency_growth_to_saturation,
        rule.littles_law_flagged_runs,
        rule.tolerance,
        fits.usl_fitted,
        fits.usl_lambda_iops,
        fits.usl_sigma,
        fits.usl_kappa,
        fits.usl_peak_outstanding_io,
        fits.usl_peak_iops,
        fits.usl_r_squared,
        fits.usl_note,
        fits.kneedle_outstanding_io,
        fits.kneedle_outstanding_io is not distinct from cast(rule.saturation_outstanding_io as double precision) as kneedle_agrees,
        case
            when fits.kneedle_outstanding_io is not distinct from cast(rule.saturation_outstanding_io as double precision)
                then null
            when rule.points < 3
                then 'Kneedle needs at least 3 loads; the series has ' || rule.points
            when fits.kneedle_outstanding_io is null
                then 'Kneedle finds no knee above its threshold in ' || rule.points
                    || ' loads, though the rule does: with few points the threshold is rarely crossed'
            when not rule.saturated
                then 'Kneedle marks ' || cast(fits.kneedle_outstanding_io as bigint)
                    || ' outstanding, but a larger load still adds more than '
                    || {{ kp_number_text(kp_round('rule.tolerance * 100', 1)) }}
                    || '% IOPS: Kneedle finds a bend in any rising curve, and with only ' || rule.points
                    || ' loads its knee is one of them, moved by the noise of a single point'
            else 'Kneedle marks ' || cast(fits.kneedle_outstanding_io as bigint) || ' outstanding, the rule '
                || rule.saturation_outstanding_io || ': Kneedle takes the sharpest bend of the normalized curve, '
                || 'not where IOPS stop rising, and with only ' || rule.points
                || ' loads its knee is one of them, moved by the noise of a single point'
        end as kneedle_note
    from rule
    left join {{ fits }} as fits using (series_id)
{%- endmacro %}

{#- mart_saturation_by_threads: the rule per series and thread count, the load being the queue depth;
    `saturates_at_same_outstanding_io` reads a threads x QD sweep as "whatever the thread count, it saturates at
    N outstanding requests". -#}
{% macro saturation_by_threads_sql(points, tolerance, where='true') -%}
    {%- set series = saturation_series_columns() + ['threads'] -%}
    with rule as (
        {{ saturation_rule(points, series, 'queue_depth', tolerance, where) }}
    )

    select
        series_id,
        disk_key,
        disk,
        host,
        tools,
        pattern,
        operation,
        read_pct,
        block_size_bytes,
        direction,
        threads,
        points,
        runs,
        min_queue_depth,
        max_queue_depth,
        saturated,
        saturation_queue_depth,
        saturation_outstanding_io,
        iops_at_saturation,
        throughput_bytes_per_s_at_saturation,
        latency_avg_ms_at_saturation,
        latency_p99_ms_at_saturation,
        max_iops,
        max_iops_queue_depth,
        latency_growth_to_saturation,
        littles_law_flagged_runs,
        count(*) over (partition by series_id) as thread_counts,
        count(*) over (partition by series_id) > 1
            and bool_and(saturated) over (partition by series_id)
            and min(saturation_outstanding_io) over (partition by series_id)
                = max(saturation_outstanding_io) over (partition by series_id)
            as saturates_at_same_outstanding_io,
        tolerance
    from rule
{%- endmacro %}

{#- post-hooks of the two marts: the same SQL stored in the warehouse, callable at any tolerance without dbt: DuckDB
    table macros, PostgreSQL set-returning functions (of the mart's own row type). -#}
{% macro create_saturation_points_macro() -%}
    {{ return(adapter.dispatch('create_saturation_function', 'kneepoint')('saturation_points',
        saturation_points_sql(ref('int_saturation_points').include(database=False),
                              ref('mart_usl_fits').include(database=False), 'cast(tol as double precision)'))) }}
{%- endmacro %}

{% macro create_saturation_by_threads_macro() -%}
    {{ return(adapter.dispatch('create_saturation_function', 'kneepoint')('saturation_by_threads',
        saturation_by_threads_sql(ref('int_saturation_thread_points').include(database=False),
                                  'cast(tol as double precision)'))) }}
{%- endmacro %}

{% macro duckdb__create_saturation_function(name, sql) -%}
    create or replace macro {{ name }}(tol) as table {{ sql }}
{%- endmacro %}

{#- Dropped first: a rebuilt mart is a new table, and the function returns the old one's row type until then. -#}
{% macro postgres__create_saturation_function(name, sql) -%}
    drop function if exists {{ this.schema }}.{{ name }}(double precision);
    create function {{ this.schema }}.{{ name }}(tol double precision) returns setof {{ this }}
    language sql stable as $kneepoint$ {{ sql }} $kneepoint$
{%- endmacro %}
