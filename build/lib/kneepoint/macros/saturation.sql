{#- The saturation rule, in one place.

    A series is one disk's (and host's) results of one workload: pattern, operation, read_pct, block_size_bytes,
    direction. Its load is outstanding I/O (threads x queue depth); per load it keeps the run with the highest
    IOPS. Its saturation point, for a tolerance ε, is the smallest load that has a larger load measured and
    for which no larger load delivers more than (1 + ε) x its IOPS. None qualifying: not saturated within the
    tested range, and no point is invented.

    The marts render the rule at the project's tolerance (var `saturation_tolerance`) over their refs, so dbt's
    unit tests can feed it rows. `kneepoint saturation --tolerance` needs it at any tolerance from a read-only
    connection, without a dbt compile (seconds) or a rebuild: the marts' pre-hooks also store the same rendered
    SQL in the warehouse as the table macros `saturation_points(tol)` and `saturation_by_threads(tol)`. Python
    never re-implements the rule. Tables are named without the database in the stored macros, so they still work
    when the warehouse file is copied or renamed. -#}

{% macro saturation_series_columns() -%}
    {{ return(['series_id', 'disk_key', 'disk', 'host', 'pattern', 'operation', 'read_pct', 'block_size_bytes',
               'direction']) }}
{%- endmacro %}

{#- Names a series in one string: the key the marts join and test uniqueness on. -#}
{% macro saturation_series_id() -%}
    (disk_key || ' | ' || pattern || ' ' || operation || ' ' || read_pct || '% read ' || block_size_bytes
        || ' B ' || direction)
{%- endmacro %}

{#- One row per series and load: the run with the highest IOPS at that load (ties: lower mean latency, then
    the earliest stored record), with how many runs and which tools measured that load. One GROUP BY: the best
    run is an arg_min over that order (a window ranking every run sorted all of them). -#}
{% macro saturation_points_at_load(io_results, load_columns, where='true') -%}
    {%- set partition = saturation_series_columns()[1:] + load_columns -%}
    {%- set kept = ['outstanding_io', 'threads', 'queue_depth', 'iops', 'throughput_bytes_per_s', 'latency_avg_ms',
                    'latency_p99_ms', 'littles_law_ratio', 'io_result_id', 'tool', 'file_id', 'file_name',
                    'run_index', 'source_line'] -%}
    with loads as (
        select
            {{ partition | join(', ') }},
            count(*) as runs,
            list_sort(list_distinct(list(tool))) as tools,
            count(*) filter (where littles_law_flag) as littles_law_flagged_runs,
            -- ORDER BY iops DESC, latency_avg_ms NULLS LAST, file_id, record_index as a key to minimize
            -- (NaN IOPS first, as DESC puts them)
            arg_min(
                { {%- for c in kept %}'{{ c }}': {{ c }}{{ ', ' if not loop.last }}{% endfor -%} },
                {'iops_is_number': not isnan(iops), 'lower_iops': -iops, 'no_latency': latency_avg_ms is null,
                 'latency_avg_ms': latency_avg_ms, 'file_id': file_id, 'record_index': record_index}
            ) as best
        from {{ io_results }}
        where iops is not null and outstanding_io > 0 and {{ where }}
        group by {{ partition | join(', ') }}
    )

    select
        {{ saturation_series_id() }} as series_id,
        {{ saturation_series_columns()[1:] | join(', ') }},
        best.outstanding_io as outstanding_io,
        best.threads as threads,
        best.queue_depth as queue_depth,
        best.iops as iops,
        best.throughput_bytes_per_s as throughput_bytes_per_s,
        best.latency_avg_ms as latency_avg_ms,
        best.latency_p99_ms as latency_p99_ms,
        best.littles_law_ratio as littles_law_ratio,
        runs,
        tools,
        littles_law_flagged_runs,
        best.io_result_id as io_result_id,
        best.tool as tool,
        best.file_id as file_id,
        best.file_name as file_name,
        best.run_index as run_index,
        best.source_line as source_line
    from loads
{%- endmacro %}

{#- The rule over one row per series and load (`points`), grouped by `series_columns`, the load being
    `load_column`; `tolerance` is a SQL expression. -#}
{% macro saturation_rule(points, series_columns, load_column, tolerance, where='true') -%}
    {%- set partition = series_columns | join(', ') -%}
    {%- set point = "{'outstanding_io': outstanding_io, 'threads': threads, 'queue_depth': queue_depth,
        'iops': iops, 'throughput_bytes_per_s': throughput_bytes_per_s, 'latency_avg_ms': latency_avg_ms,
        'latency_p99_ms': latency_p99_ms}" -%}
    with points as (
        select
            *,
            max(iops) over (
                partition by {{ partition }}
                order by {{ load_column }}
                rows between 1 following and unbounded following
            ) as best_iops_beyond
        from {{ points }}
        where {{ where }}
    ),

    judged as (
        select
            *,
            -- the rule: a larger load was measured, and none of them beats this point by more than the tolerance
            coalesce(best_iops_beyond <= (1 + {{ tolerance }}) * iops, false) as qualifies
        from points
    ),

    per_series as (
        select
            {{ partition }},
            list_sort(list_distinct(flatten(list(tools)))) as tools,
            count(*) as points,
            sum(runs)::bigint as runs,
            min({{ load_column }}) as min_{{ load_column }},
            max({{ load_column }}) as max_{{ load_column }},
            -- struct, not arg_min per column: arg_min skips a NULL latency and would take another row's
            arg_min({{ point }}, {{ load_column }}) filter (where qualifies) as saturation,
            arg_min({{ point }}, {{ load_column }}) as first_point,
            max(iops) as max_iops,
            arg_max({{ load_column }}, {'iops': iops, 'smaller_load_first': -{{ load_column }}})
                as max_iops_{{ load_column }},
            sum(littles_law_flagged_runs)::bigint as littles_law_flagged_runs
        from judged
        group by {{ partition }}
    )

    select
        {{ partition }},
        tools,
        points,
        runs,
        min_{{ load_column }},
        max_{{ load_column }},
        saturation is not null as saturated,
        saturation['outstanding_io'] as saturation_outstanding_io,
        saturation['threads'] as saturation_threads,
        saturation['queue_depth'] as saturation_queue_depth,
        saturation['iops'] as iops_at_saturation,
        saturation['throughput_bytes_per_s'] as throughput_bytes_per_s_at_saturation,
        saturation['latency_avg_ms'] as latency_avg_ms_at_saturation,
        saturation['latency_p99_ms'] as latency_p99_ms_at_saturation,
        max_iops,
        max_iops_{{ load_column }},
        -- how much latency the load to the saturation point cost: mean latency where both points have it,
        -- else p99
        coalesce(
            saturation['latency_avg_ms'] / nullif(first_point['latency_avg_ms'], 0),
            saturation['latency_p99_ms'] / nullif(first_point['latency_p99_ms'], 0)
        ) as latency_growth_to_saturation,
        littles_law_flagged_runs,
        ({{ tolerance }})::double as tolerance
    from per_series
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
        fits.kneedle_outstanding_io is not distinct from rule.saturation_outstanding_io::double as kneedle_agrees,
        case
            when fits.kneedle_outstanding_io is not distinct from rule.saturation_outstanding_io::double then null
            when rule.points < 3
                then 'Kneedle needs at least 3 loads; the series has ' || rule.points
            when fits.kneedle_outstanding_io is null
                then 'Kneedle finds no knee above its threshold in ' || rule.points
                    || ' loads, though the rule does: with few points the threshold is rarely crossed'
            when not rule.saturated
                then 'Kneedle marks ' || fits.kneedle_outstanding_io::bigint
                    || ' outstanding, but a larger load still adds more than ' || round(rule.tolerance * 100, 1)
                    || '% IOPS: Kneedle finds a bend in any rising curve, and with only ' || rule.points
                    || ' loads its knee is one of them, moved by the noise of a single point'
            else 'Kneedle marks ' || fits.kneedle_outstanding_io::bigint || ' outstanding, the rule '
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

{#- pre-hooks of the two marts: the same SQL stored as table macros over the built tables, at any tolerance. -#}
{% macro create_saturation_points_macro() -%}
    create or replace macro saturation_points(tol) as table
    {{ saturation_points_sql(ref('int_saturation_points').include(database=False),
                             ref('mart_usl_fits').include(database=False), 'tol::double') }}
{%- endmacro %}

{% macro create_saturation_by_threads_macro() -%}
    create or replace macro saturation_by_threads(tol) as table
    {{ saturation_by_threads_sql(ref('int_saturation_thread_points').include(database=False), 'tol::double') }}
{%- endmacro %}
