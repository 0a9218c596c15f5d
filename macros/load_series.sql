{#- Load series (issue 22): an application's throughput against its load (concurrent sessions, virtual users,
    databases), judged by the disks' saturation rule (saturation_judged in macros/saturation.sql: one definition).

    A series is (disk_key, workload, load_kind, what the throughput counts); its load is `load` and its throughput
    `throughput_per_s`. Each engine runs the same portable SQL here (window functions, no arg_min): a warehouse
    holds a few load series of a dozen steps, against the disks' millions of runs. -#}

{#- Names a load series in one string; ' | load: ' keeps it apart from any disk series (kneepoint_changed_series
    holds both kinds). -#}
{% macro load_series_id() -%}
    (disk_key || ' | load: ' || case when workload = '' then '' else workload || ' · ' end || load_kind || ' · '
        || throughput_what)
{%- endmacro %}

{% macro load_series_columns() -%}
    {{ return(['series_id', 'disk_key', 'disk', 'host', 'workload', 'load_kind', 'throughput_what']) }}
{%- endmacro %}

{#- One row per series and load: the step with the highest throughput there (ties: the lower mean response time,
    then the earliest stored step), with how many steps measured that load and how many of them Little's law
    checked and flagged. -#}
{% macro load_points_at_load(load_steps, where='true') -%}
    {%- set at_load = 'partition by series_id, load' -%}
    with ranked as (
        select
            *,
            row_number() over (
                {{ at_load }}
                order by throughput_per_s desc, response_avg_ms asc nulls last, file_id, record_index
            ) as rank_at_load,
            count(*) over ({{ at_load }}) as steps_at_load,
            sum(case when littles_law_ratio is not null then 1 else 0 end) over ({{ at_load }}) as checked_at_load,
            sum(case when littles_law_flag then 1 else 0 end) over ({{ at_load }}) as flagged_at_load
        from {{ load_steps }}
        where series_id is not null and throughput_per_s is not null and load > 0 and {{ where }}
    )

    select
        {{ load_series_columns() | join(', ') }},
        load,
        throughput_per_s,
        throughput,
        reported_throughput_unit,
        response_avg_ms,
        response_p95_ms,
        response_p99_ms,
        errors,
        littles_law_ratio,
        cast(steps_at_load as bigint) as steps,
        cast(checked_at_load as bigint) as littles_law_checked_steps,
        cast(flagged_at_load as bigint) as littles_law_flagged_steps,
        load_step_id,
        tool,
        file_id,
        file_name,
        record_index,
        step_index,
        source_line
    from ranked
    where rank_at_load = 1
{%- endmacro %}

{#- mart_load_saturation: per series, the smallest qualifying load's figures (the saturation point), the load of
    the highest throughput (the smaller on a tie), the response time the load to the saturation point cost, the
    Little's-law counts and the USL fit (`fits`). Throughputs are per second and in the series' unit (the unit its
    smallest load was reported in). -#}
{% macro load_saturation_sql(points, fits, tolerance, where='true') -%}
    {%- set series = load_series_columns() -%}
    with {{ saturation_judged(points, ['series_id'], 'load', tolerance, where, 'throughput_per_s') }},

    ranked as (
        select
            *,
            row_number() over (partition by series_id order by load) as load_rank,
            row_number() over (partition by series_id order by throughput_per_s desc, load) as throughput_rank,
            case when qualifies then row_number() over (partition by series_id, qualifies order by load) end
                as qualifying_rank
        from judged
    ),

    per_series as (
        select
            {{ series | join(', ') }},
            string_agg(distinct tool, ', ' order by tool) as tools,
            count(*) as points,
            cast(sum(steps) as bigint) as steps,
            min(load) as min_load,
            max(load) as max_load,
            cast(sum(littles_law_checked_steps) as bigint) as littles_law_checked_steps,
            cast(sum(littles_law_flagged_steps) as bigint) as littles_law_flagged_steps
        from ranked
        group by {{ series | join(', ') }}
    ),

    first_point as (
        select series_id, reported_throughput_unit as throughput_unit, response_avg_ms, response_p95_ms
        from ranked
        where load_rank = 1
    ),

    best as (
        select series_id, load, throughput_per_s from ranked where throughput_rank = 1
    ),

    saturation as (
        select series_id, load, throughput_per_s, response_avg_ms, response_p95_ms, response_p99_ms
        from ranked
        where qualifying_rank = 1
    )

    select
        {%- for c in series %}
        per_series.{{ c }},
        {%- endfor %}
        first_point.throughput_unit,
        per_series.tools,
        per_series.points,
        per_series.steps,
        per_series.min_load,
        per_series.max_load,
        saturation.load is not null as saturated,
        saturation.load as saturation_load,
        saturation.throughput_per_s as throughput_per_s_at_saturation,
        {{ per_s_to_unit('saturation.throughput_per_s', 'first_point.throughput_unit') }} as throughput_at_saturation,
        saturation.response_avg_ms as response_avg_ms_at_saturation,
        saturation.response_p95_ms as response_p95_ms_at_saturation,
        saturation.response_p99_ms as response_p99_ms_at_saturation,
        best.throughput_per_s as max_throughput_per_s,
        {{ per_s_to_unit('best.throughput_per_s', 'first_point.throughput_unit') }} as max_throughput,
        best.load as max_throughput_load,
        -- how much response time the load to the saturation point cost: mean where both points have it, else p95
        coalesce(
            saturation.response_avg_ms / nullif(first_point.response_avg_ms, 0),
            saturation.response_p95_ms / nullif(first_point.response_p95_ms, 0)
        ) as response_growth_to_saturation,
        per_series.littles_law_checked_steps,
        per_series.littles_law_flagged_steps,
        cast({{ tolerance }} as double precision) as tolerance,
        coalesce(fits.usl_fitted, false) as usl_fitted,
        fits.usl_lambda_per_s,
        fits.usl_sigma,
        fits.usl_kappa,
        fits.usl_peak_load,
        fits.usl_peak_throughput_per_s,
        fits.usl_r_squared,
        fits.usl_note
    from per_series
    inner join first_point on first_point.series_id = per_series.series_id
    inner join best on best.series_id = per_series.series_id
    left join saturation on saturation.series_id = per_series.series_id
    left join {{ fits }} as fits on fits.series_id = per_series.series_id
{%- endmacro %}

{#- mart_load_saturation's post-hook: the same SQL stored as load_saturation_points(tol), for `kneepoint saturation
    --tolerance` without dbt (as create_saturation_points_macro does for the disks). -#}
{% macro create_load_saturation_points_macro() -%}
    {{ return(adapter.dispatch('create_saturation_function', 'kneepoint')('load_saturation_points',
        load_saturation_sql(ref('int_load_points').include(database=False),
                            ref('mart_load_usl_fits').include(database=False), 'cast(tol as double precision)'))) }}
{%- endmacro %}
