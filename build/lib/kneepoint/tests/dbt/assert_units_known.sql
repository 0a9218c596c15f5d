{{ config(tags=["change_guard"]) }}
-- Every unit in the raw layer has a factor in dbt_project.yml vars: an unknown one would turn a figure into
-- NULL in staging without a word. (ingest refuses such records; this guards files stored by older versions.)
select file_id, record_index, 'throughput_unit' as column_name, throughput_unit as unit
from {{ source('raw', 'raw_io_records') }}
where {{ in_test_scope('file_id') }}
  and throughput is not null
  and (throughput_unit is null or throughput_unit not in (
    {%- for unit in var('throughput_units_bytes_per_s') %}'{{ unit }}'{{ "," if not loop.last }}{% endfor -%}
  ))

union all

select file_id, record_index, 'latency_unit', latency_unit
from {{ source('raw', 'raw_io_records') }}
where {{ in_test_scope('file_id') }}
  and (latency_unit is null or latency_unit not in (
    {%- for unit in var('latency_units_ms') %}'{{ unit }}'{{ "," if not loop.last }}{% endfor -%}
))

union all

select file_id, record_index, 'bound_unit', bound_unit
from {{ source('raw', 'raw_latency_histograms') }}
where {{ in_test_scope('file_id') }}
  and bound_unit not in (
    {%- for unit in var('latency_units_ms') %}'{{ unit }}'{{ "," if not loop.last }}{% endfor -%}
)
