"""A disk that saturates: throughput follows the Universal Scalability Law in outstanding I/O, capped by
the device's bandwidth, and latency follows from Little's law (latency = outstanding / IOPS).

    >>> disk = DiskModel("P10", service_time_ms=2.0, sigma=0.05, kappa=0.002, max_bytes_per_s=200e6)
    >>> round(disk.iops(4096, 1))  # 1 / (2 ms + 4096 B / 200 MB/s)
    495
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from dataclasses import dataclass

from kneepoint.ingest.records import IoRecord


@dataclass(frozen=True, slots=True)
class DiskModel:
    name: str
    service_time_ms: float = 0.2  # latency of one 4 KiB random read at queue depth 1
    sigma: float = 0.03  # USL contention
    kappa: float = 0.0004  # USL coherency
    max_bytes_per_s: float = 500e6  # bandwidth cap
    write_penalty: float = 1.3  # writes take this much longer
    sequential_speedup: float = 3.0  # sequential I/O at QD1 is this much faster
    noise: float = 0.02  # relative run-to-run noise

    def iops(
        self,
        block_size_bytes: int,
        outstanding: int,
        *,
        write: bool = False,
        sequential: bool = False,
        rng: random.Random | None = None,
    ) -> float:
        # Larger blocks take longer to transfer: add size / bandwidth to the service time.
        service_s = self.service_time_ms / 1000 * (self.write_penalty if write else 1.0)
        if sequential:
            service_s /= self.sequential_speedup
        service_s += block_size_bytes / self.max_bytes_per_s
        lam = 1.0 / service_s
        n = float(outstanding)
        x = lam * n / (1 + self.sigma * (n - 1) + self.kappa * n * (n - 1))
        x = min(x, self.max_bytes_per_s / block_size_bytes)
        if rng is not None and self.noise:
            x *= 1 + rng.uniform(-self.noise, self.noise)
        return x


def sweep(
    disk: DiskModel,
    tool: str,
    *,
    pattern: str = "random",
    operation: str = "read",
    block_size_bytes: int = 4096,
    threads: Iterable[int] = (1,),
    queue_depths: Iterable[int] = (1, 2, 4, 8, 16, 32, 64, 128),
    duration_s: float = 60.0,
    read_pct: float | None = None,
    seed: int = 0,
    tool_version: str | None = None,
    target: str | None = None,
    throughput_unit: str = "MiB/s",
    latency_unit: str = "ms",
) -> list[IoRecord]:
    """Records for a threads x queue-depth sweep, in the units the tool prints (`throughput_unit`,
    `latency_unit`); a mixed workload yields a read and a write record per run."""
    from kneepoint.ingest import units

    rng = random.Random(seed)
    tput_factor = units.throughput_units()[throughput_unit]
    lat_factor = units.latency_units()[latency_unit]
    if read_pct is None:
        read_pct = {"read": 100.0, "write": 0.0}.get(operation, 70.0)
    records: list[IoRecord] = []
    run = 0
    for t in threads:
        for qd in queue_depths:
            outstanding = t * qd
            directions = [operation] if operation != "mixed" else ["read", "write"]
            for direction in directions:
                share = 1.0 if operation != "mixed" else (read_pct if direction == "read" else 100 - read_pct) / 100
                total = disk.iops(
                    block_size_bytes,
                    outstanding,
                    write=direction == "write",
                    sequential=pattern == "sequential",
                    rng=rng,
                )
                iops = total * share
                lat_ms = outstanding / total * 1000
                records.append(
                    IoRecord(
                        tool=tool,
                        tool_version=tool_version,
                        run_index=run,
                        source_line=1,
                        target=target,
                        pattern=pattern,  # type: ignore[arg-type]
                        operation=operation,  # type: ignore[arg-type]
                        read_pct=read_pct,
                        direction=direction,  # type: ignore[arg-type]
                        block_size_bytes=block_size_bytes,
                        threads=t,
                        queue_depth=qd,
                        duration_s=duration_s,
                        iops=iops,
                        throughput=iops * block_size_bytes / tput_factor,
                        throughput_unit=throughput_unit,
                        latency_unit=latency_unit,
                        latency_avg=lat_ms / lat_factor,
                        latency_min=lat_ms * 0.2 / lat_factor,
                        latency_max=lat_ms * 8 / lat_factor,
                        latency_p50=lat_ms * 0.9 / lat_factor,
                        latency_p95=lat_ms * 1.8 / lat_factor,
                        latency_p99=lat_ms * 2.6 / lat_factor,
                        latency_p999=lat_ms * 4.0 / lat_factor,
                    )
                )
            run += 1
    return records


def lognormal_histogram(mean_ms: float, buckets_ms: Iterable[float], sigma: float = 0.5) -> list[tuple[float, float]]:
    """Shares (percent) of a log-normal latency distribution with the given mean, per bucket upper bound."""
    mu = math.log(mean_ms) - sigma**2 / 2
    out: list[tuple[float, float]] = []
    prev = 0.0
    for bound in buckets_ms:
        cdf = 0.5 * (1 + math.erf((math.log(bound) - mu) / (sigma * math.sqrt(2)))) if bound > 0 else 0.0
        out.append((bound, max(0.0, (cdf - prev) * 100)))
        prev = cdf
    return out
