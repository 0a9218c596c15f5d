"""elbencho result-file writer: IoRecords (as `disk_model.sweep` makes them: throughput in MiB/s, latency in us)
back into `--resfile` blocks (ISO DATE, COMMAND LINE, the FIRST DONE / LAST DONE table, `---`), the layout
ingest/formats/elbencho.py reads; or into the `--csvfile` rows (`csv=True`). Each run is one elbencho invocation
of one phase; the first-done figures are the last-done ones a little faster (the tail phase).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from datetime import datetime, timedelta

from kneepoint.ingest.records import IoRecord

VERSION = "3.0-9"
CSV_HEADER = [
    "ISO date",
    "label",
    "path type",
    "paths",
    "hosts",
    "threads",
    "dirs",
    "files",
    "file size",
    "block size",
    "direct IO",
    "random",
    "random aligned",
    "IO depth",
    "shared paths",
    "truncate",
    "operation",
    "time ms [first]",
    "time ms [last]",
    "entries/s [first]",
    "entries/s [last]",
    "IOPS [first]",
    "IOPS [last]",
    "MiB/s [first]",
    "MiB/s [last]",
    "CPU% [first]",
    "CPU% [last]",
    "entries [first]",
    "entries [last]",
    "MiB [first]",
    "MiB [last]",
    "Ent lat us [min]",
    "Ent lat us [avg]",
    "Ent lat us [max]",
    "IO lat us [min]",
    "IO lat us [avg]",
    "IO lat us [max]",
    "version",
    "command",
]


def write(records: Iterable[IoRecord], *, path: str = "/dev/nvme0n1", csv_file: bool = False,
          start: datetime = datetime(2025, 5, 14, 9, 2, 11), seconds: float = 60.0) -> str:  # fmt: skip
    t = start
    out: list[str] = []
    rows: list[list[str]] = []
    for rec in records:
        if rec.direction == "total":
            continue
        phase = "READ" if rec.direction == "read" else "WRITE"
        bs = rec.block_size_bytes or 4096
        iops = rec.iops or 0.0
        mib = iops * bs / 1048576
        lat = rec.latency_avg or 0.0
        block = f"{bs // 1048576}m" if bs % 1048576 == 0 else f"{bs // 1024}k"
        flag = "--read" if phase == "READ" else "--write"
        opts = [flag, "--direct", *(["--rand"] if rec.pattern == "random" else []), "--threads", str(rec.threads or 1),
                "--iodepth", str(rec.queue_depth or 1), "--block", block, path]  # fmt: skip
        command = " ".join(f'"{o}"' for o in ["/usr/bin/elbencho", *opts])
        if csv_file:
            cells = dict.fromkeys(CSV_HEADER, "")
            cells.update({
                "ISO date": f"{t:%Y-%m-%dT%H:%M:%S}", "path type": "blockdev", "paths": "1", "hosts": "1",
                "threads": str(rec.threads or 1), "block size": str(bs), "direct IO": "1",
                "random": "1" if rec.pattern == "random" else "0", "IO depth": str(rec.queue_depth or 1),
                "operation": phase, "time ms [first]": str(round(seconds * 995)),
                "time ms [last]": str(round(seconds * 1000)),
                "IOPS [first]": str(round(iops * 1.004)), "IOPS [last]": str(round(iops)),
                "MiB/s [first]": str(round(mib * 1.004)), "MiB/s [last]": str(round(mib)),
                "IO lat us [min]": str(round(lat * 0.2)), "IO lat us [avg]": str(round(lat)),
                "IO lat us [max]": str(round(lat * 9)), "version": VERSION, "command": command,
            })  # fmt: skip
            rows.append([cells[c] for c in CSV_HEADER])
        else:
            out += [f"ISO DATE start: {t:%Y-%m-%dT%H:%M:%S}+0000", f"COMMAND LINE: {command}", "",
                    "OPERATION   RESULT TYPE         FIRST DONE   LAST DONE",
                    "=========== ================    ==========   =========",
                    f"{phase:<11} Elapsed time     : {seconds * 0.995:10.3f}s {seconds:10.3f}s",
                    f"            IOPS             : {round(iops * 1.004):11d} {round(iops):11d}",
                    f"            Throughput MiB/s : {round(mib * 1.004):11d} {round(mib):11d}",
                    f"            Total MiB        : {round(mib * seconds):11d} {round(mib * seconds):11d}",
                    f"            IO latency       : [ min={lat * 0.2:.0f}us avg={lat:.0f}us "
                    f"max={lat * 9 / 1000:.2f}ms ]",
                    "---", "", f"ISO DATE end  : {t + timedelta(seconds=seconds):%Y-%m-%dT%H:%M:%S}+0000"]  # fmt: skip
        t += timedelta(seconds=seconds + 10)
    if csv_file:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(CSV_HEADER)
        w.writerows(rows)
        return buf.getvalue()
    return "\n".join(out) + "\n"
