"""Peak memory of a process tree, sampled from /proc while it runs (Linux).

os.wait4's ru_maxrss is exact but only for the largest single process of the tree: an ingest with a parsing
pool holds memory in its main process and in every worker at once. So the harness also samples the whole tree
and keeps the peak of its summed PSS (proportional set size: pages a forked worker still shares with its
parent count once, split between them, not once per process).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

PROC = Path("/proc")
INTERVAL_S = 0.1


def _ppid(pid: str) -> int | None:
    try:
        stat = (PROC / pid / "stat").read_bytes()
    except OSError:
        return None
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ")"
    return int(stat[stat.rindex(b")") + 2 :].split(maxsplit=2)[1])


def descendants(root: int) -> list[int]:
    """`root` and every process below it (from each process's parent in /proc/PID/stat)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir(PROC):
        if entry.isdigit():
            ppid = _ppid(entry)
            if ppid is not None:
                children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


def pss_kib(pid: int) -> int:
    """The process's PSS in KiB (its RSS where smaps_rollup is not readable); 0 once it is gone."""
    try:
        for line in (PROC / str(pid) / "smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    try:
        rss_pages = int((PROC / str(pid) / "statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return rss_pages * os.sysconf("SC_PAGE_SIZE") // 1024


class TreeMemory:
    """Samples the tree under `pid` every INTERVAL_S in a thread until stop(); the peak is the largest sum seen.
    A peak shorter than the interval can be missed: the harness reports ru_maxrss beside it. Without /proc
    (not Linux) there is nothing to sample and the peak is None."""

    def __init__(self, pid: int, interval_s: float = INTERVAL_S) -> None:
        self.pid = pid
        self.interval_s = interval_s
        self.peak_kib = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if (PROC / str(pid) / "stat").exists():
            self._thread = threading.Thread(target=self._run, name=f"tree-memory-{pid}", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_kib = max(self.peak_kib, sum(pss_kib(p) for p in descendants(self.pid)))
            self._stop.wait(self.interval_s)

    def stop(self) -> float | None:
        """Stop sampling; the peak in MB."""
        self._stop.set()
        if self._thread is None:
            return None
        self._thread.join()
        return round(self.peak_kib / 1024, 1)
