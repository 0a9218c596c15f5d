{{ config(tags=["change_guard"]) }}
-- Catches MB/MiB and KiB/KB mistakes: where a tool printed both IOPS and throughput (neither inferred),
-- IOPS x block size must equal throughput within 2%.
select io_result_id, disk, tool, iops, block_size_bytes, throughput_bytes_per_s
from {{ ref('fct_io_results') }}
where {{ in_test_scope('file_id') }}
  and iops > 0
  and throughput_bytes_per_s > 0
  and block_size_bytes > 0
  and not list_contains(inferred, 'iops')
  and not list_contains(inferred, 'throughput_bytes_per_s')
  and not list_contains(inferred, 'block_size_bytes')
  and abs(iops * block_size_bytes - throughput_bytes_per_s) > 0.02 * throughput_bytes_per_s
