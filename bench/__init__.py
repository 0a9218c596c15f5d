"""kneepoint's benchmarks: a reproducible corpus generator and a timing harness.

    ./dev bench                      # full size: generate bench/out/corpus (once), measure, write bench/results/
    python -m bench run --size tiny  # what CI runs (no timing assertions)
    python -m bench table FILE.json  # the README's Benchmarks table from a results file

- `generate`: files in every format, from disks modelled by `ingest.synth.disk_model` (saturation included),
  rendered by each format's writer in ingest/synth and laid out the way each tool's users collect them.
- `rows`: 1M / 10M fact rows written straight into the raw tables of a warehouse (no files), to time the dbt
  build, the saturation marts and the app's curve query at scale.
- `harness`: runs every measurement in a fresh child process (`python -m bench.worker`), median of N runs:
  wall time, CPU time, peak memory (`memory`: the process tree, sampled) per child, stage timings from
  inside; parsing per format, the product's ingest (`ingest_inputs`, 1 and 2 workers) end to end, the
  models at scale, and the anchors (fio-plot's JSON import, a bare json.loads loop, DuckDB's read_json)
  over the same fio files. `machine` describes where it ran.
"""
