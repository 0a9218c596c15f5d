"""fio-plot's JSON import over the benchmark's fio files, timed. Runs in fio-plot's own venv (bench/.venv-fioplot),
so it imports nothing from kneepoint.

    python fioplot_driver.py DIR...   # prints one JSON line: seconds per stage, files and rows loaded

fio-plot loads one rw mode per invocation (`-r randread`): `getdata.get_json_data(settings)` lists the JSON files
of the input directories (`jsonimport.list_json_files`, which json.loads each candidate to read its options),
imports the matching ones (`jsonimport.import_json_dataset`, json.load each again) and flattens them
(`jsonparsing.parse_json_data`). Loading every file takes one pass per rw mode, as fio-plot users run it;
those are the same three calls, made here directly so that a folder without a mode is not a fatal error.
"""

from __future__ import annotations

import json
import sys
import time


def main(dirs: list[str]) -> None:
    from fio_plot.fiolib import jsonimport, jsonparsing

    stages = {"list_s": 0.0, "import_s": 0.0, "parse_s": 0.0}
    files = rows = 0
    started = time.perf_counter()
    for rw in ("randread", "randwrite", "read", "write"):
        settings = {
            "input_directory": dirs,
            "rw": rw,
            "iodepth": [1, 2, 4, 8, 16, 32, 64],
            "numjobs": [1, 2, 4, 8, 16, 32, 64],
            "filter": ["read", "write"],
            "include_hosts": None,
            "exclude_hosts": None,
            "compare_graph": False,
        }
        t0 = time.perf_counter()
        dataset = jsonimport.list_json_files(settings, fail=False)
        t1 = time.perf_counter()
        dataset = jsonimport.import_json_dataset(settings, dataset)
        t2 = time.perf_counter()
        dataset = [d for d in dataset if d["rawdata"]]
        if dataset:
            dataset = jsonparsing.parse_json_data(settings, dataset)
        t3 = time.perf_counter()
        stages["list_s"] += t1 - t0
        stages["import_s"] += t2 - t1
        stages["parse_s"] += t3 - t2
        files += sum(len(d["files"]) for d in dataset)
        rows += sum(len(d.get("data", [])) for d in dataset)
    total = time.perf_counter() - started
    print(json.dumps({"files": files, "rows": rows, "seconds": total, "stages": stages}))


if __name__ == "__main__":
    main(sys.argv[1:])
