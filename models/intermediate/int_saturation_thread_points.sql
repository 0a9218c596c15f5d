-- One row per series, thread count and queue depth (the best run where one was measured more than once):
-- the points of the per-thread saturation view, where the load is the queue depth.
{{ saturation_points_at_load(ref('fct_io_results'), ['threads', 'queue_depth']) }}
