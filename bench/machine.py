"""What a results file says about where it was measured: CPU, cores, memory, the disk under the corpus, OS,
Python, the packages that do the work, and the code (git commit, uncommitted changes)."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

PACKAGES = ("duckdb", "dbt-core", "dbt-duckdb", "pyarrow", "polars", "numpy", "scipy")


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _cpu_model() -> str:
    for line in (_read(Path("/proc/cpuinfo")) or "").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _memory_gib() -> float | None:
    for line in (_read(Path("/proc/meminfo")) or "").splitlines():
        if line.startswith("MemTotal:"):
            return round(int(line.split()[1]) / 1024 / 1024, 1)
    return None


def _os_name() -> str:
    for line in (_read(Path("/etc/os-release")) or "").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip('"')
    return platform.system()


def _mount_of(path: Path) -> tuple[str | None, str | None, str | None]:
    """(mount point, filesystem type, source device) of the mount holding `path`, from /proc/self/mountinfo."""
    best: tuple[str | None, str | None, str | None] = (None, None, None)
    resolved = str(path.resolve())
    for line in (_read(Path("/proc/self/mountinfo")) or "").splitlines():
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) < 5 or len(rest) < 2:
            continue
        mount = fields[4].replace("\\040", " ")
        inside = resolved == mount or resolved.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) >= len(best[0] or ""):
            best = (mount, rest[0], rest[1])
    return best


def describe_disk(path: Path) -> dict[str, Any]:
    """The block device under `path` (the corpus and the scratch warehouses): model, size, rotational, file
    system. In a VM the model is the virtual disk's; what backs it is not visible from inside."""
    path = path if path.exists() else path.parent
    mount, fstype, source = _mount_of(path)
    out: dict[str, Any] = {"path": str(path.resolve()), "mount": mount, "filesystem": fstype, "source": source}
    st = os.stat(path)
    sys_dev = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    if sys_dev.exists():
        dev = sys_dev.resolve()
        if (dev / "partition").exists():  # queue/ and device/ belong to the whole disk
            dev = dev.parent
        size_sectors = _read(dev / "size")
        rotational = _read(dev / "queue" / "rotational")
        out.update(
            device=dev.name,
            model=_read(dev / "device" / "model") or _read(dev / "device" / "name"),
            size_gb=round(int(size_sectors) * 512 / 1e9, 1) if size_sectors and size_sectors.isdigit() else None,
            rotational=None if rotational is None else rotational == "1",
        )
    usage = shutil.disk_usage(path)
    out["free_gb"] = round(usage.free / 1e9, 1)
    return out


def describe_machine(disk_path: Path) -> dict[str, Any]:
    versions: dict[str, str | None] = {}
    for pkg in PACKAGES:
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu": _cpu_model(),
        "logical_cpus": os.cpu_count(),
        "usable_cpus": usable,
        "memory_gib": _memory_gib(),
        "disk": describe_disk(disk_path),
        "os": _os_name(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "packages": versions,
        "load_avg_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def describe_code(root: Path) -> dict[str, Any]:
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
        except OSError:
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    status = git("status", "--porcelain")
    return {"commit": git("rev-parse", "HEAD"), "uncommitted_changes": bool(status) if status is not None else None}
