"""An application that saturates: N sessions (virtual users) running the same work at once deliver a throughput
that follows the Universal Scalability Law in N, and each one's response time follows from Little's law
(response = N / throughput, no think time), as in the concurrency sweeps of SQL workloads the load readers read.

    >>> app = AppModel("one query", service_time_s=41.2, sigma=0.05, kappa=0.01)
    >>> round(app.throughput_per_s(1) * 60, 2)  # one session: one query every 41.2 s
    1.46
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass

from kneepoint.ingest.records import LoadRecord


@dataclass(frozen=True, slots=True)
class AppModel:
    name: str
    service_time_s: float  # response time of one unit of work with nothing else running
    sigma: float = 0.05  # USL contention
    kappa: float = 0.005  # USL coherency
    noise: float = 0.02  # relative run-to-run noise

    def throughput_per_s(self, load: float, rng: random.Random | None = None) -> float:
        x = (load / self.service_time_s) / (1 + self.sigma * (load - 1) + self.kappa * load * (load - 1))
        if rng is not None and self.noise:
            x *= 1 + rng.uniform(-self.noise, self.noise)
        return x


def sweep(app: AppModel, tool: str, loads: Iterable[int], *, load_kind: str, unit: str, per_s: float,
          seed: int = 22) -> list[LoadRecord]:  # fmt: skip
    """One LoadRecord per load: throughput in `unit` (`per_s`: its factor to per second), mean response in ms by
    Little's law."""
    rng = random.Random(seed)
    out: list[LoadRecord] = []
    for index, load in enumerate(loads):
        x = app.throughput_per_s(load, rng)
        out.append(
            LoadRecord(
                tool=tool,
                step_index=index,
                source_line=0,
                load_kind=load_kind,
                load=float(load),
                throughput=x / per_s,
                throughput_unit=unit,
                response_avg_ms=load / x * 1000,
            )
        )
    return out
