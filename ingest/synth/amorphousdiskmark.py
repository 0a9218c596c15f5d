"""AmorphousDiskMark 4.x text writer: IoRecords back into its `scoreString` layout (hkatsura/AmorphousDiskMark
`AppDelegate.m`): the header, one `%9.2f MB/s [%9.1f IOPS]` line per test (right-aligned labels), the footer. The
tool's four tests (SEQ1M at the sequential queue depth and at QD1, RND4K at the random queue depth and at QD1) make
one result; records are written four tests (eight lines) to a result, as a batch of saved results.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from kneepoint.ingest.records import IoRecord

VERSION = "4.0.1"
_HEADER = [
    "---------------------------------------------------------------------",
    f"AmorphousDiskMark {VERSION} (C) 2016-2023 Katsura Shareware",
    "                    Katsura Shareware : https://katsurashareware.com/",
    "---------------------------------------------------------------------",
    "* MB/s = 1,000,000 bytes/s [SATA/600 = 600,000,000 bytes/s]",
    "* KB = 1,000 bytes, KiB = 1,024 bytes",
    "* MB = 1,000,000 bytes, MiB = 1,048,576 bytes",
    "",
]


def write(records: Iterable[IoRecord], *, volume: str = "Macintosh HD", device: str = "APPLE SSD AP0512Q",
          start: datetime = datetime(2021, 3, 4, 10, 11, 12)) -> str:  # fmt: skip
    recs = [r for r in records if r.direction in ("read", "write")]
    out: list[str] = []
    t = start
    for k in range(0, len(recs), 8):
        out += _HEADER
        for rec in recs[k : k + 8]:
            bs = rec.block_size_bytes or 4096
            size = f"{bs // 1048576}MiB" if bs % 1048576 == 0 else f"{bs // 1024}KiB"
            kind = "Sequential" if rec.pattern == "sequential" else "Random"
            label = f"{kind} {rec.direction.capitalize()} {size} (QD={rec.queue_depth or 1:4d})"
            iops = rec.iops or 0.0
            out.append(f"{label:>33} : {iops * bs / 1e6:9.2f} MB/s [{iops:9.1f} IOPS]")
        out += ["", "    Test : 1 GiB (x5) [Interval=5 sec]", f"  Volume : {volume}: 45% used (210/465 GiB)",
                f"  Device : {device}", "     CPU : Apple M1", f"    Date : {t:%Y-%m-%dT%H:%M:%S}Z",
                "      OS : macOS 11.2.2 20D80", ""]  # fmt: skip
        t += timedelta(minutes=3)
    return "\n".join(out) + "\n"
