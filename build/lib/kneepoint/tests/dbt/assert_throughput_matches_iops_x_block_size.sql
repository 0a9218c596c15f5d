{{ config(tags=["change_guard"]) }}
-- Catches MB/MiB and KB/KiB mistakes: where a tool printed IOPS, block size and throughput, IOPS x block size equals
-- the throughput within var unit_check_tolerance (the check itself is mart_unit_checks, read by the report too).
select io_result_id, disk_key, tool, iops, block_size_bytes, throughput_bytes_per_s, deviation
from {{ ref('mart_unit_checks') }}
where {{ in_test_scope('file_id') }}
  and not within_tolerance
