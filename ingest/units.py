"""Unit factors, read from the one place they are declared: `vars` in dbt_project.yml.

The dbt macros `to_bytes_per_s` and `to_ms` build their CASE expressions from the same vars, so the
warehouse and `kneepoint parse` cannot disagree on what an MB is.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

PROJECT_ROOT = Path(__file__).resolve().parent.parent


@cache
def _vars() -> dict:
    with open(PROJECT_ROOT / "dbt_project.yml", encoding="utf-8") as fh:
        return yaml.safe_load(fh)["vars"]


def var(name: str) -> float:
    """A rule's constant from dbt_project.yml `vars` (saturation_tolerance, littles_law_ratio_min/max,
    unit_check_tolerance): the app and the command line say the bounds the models apply."""
    return float(_vars()[name])


@cache
def _factors() -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    v = _vars()
    return (
        {k: float(f) for k, f in v["throughput_units_bytes_per_s"].items()},
        {k: float(f) for k, f in v["latency_units_ms"].items()},
        {k: float(f) for k, f in v["load_throughput_units_per_s"].items()},
    )


def throughput_units() -> dict[str, float]:
    return dict(_factors()[0])


def latency_units() -> dict[str, float]:
    return dict(_factors()[1])


def load_throughput_units() -> dict[str, float]:
    """A load series' throughput units (`transactions/min`, `queries/s`, ...) and their factor to per second."""
    return dict(_factors()[2])


def to_per_s(value: float | None, unit: str) -> float | None:
    if value is None:
        return None
    try:
        return value * _factors()[2][unit]
    except KeyError:
        raise ValueError(f"unknown load throughput unit {unit!r}") from None


def to_bytes_per_s(value: float | None, unit: str) -> float | None:
    if value is None:
        return None
    try:
        return value * _factors()[0][unit]
    except KeyError:
        raise ValueError(f"unknown throughput unit {unit!r}") from None


def to_ms(value: float | None, unit: str) -> float | None:
    if value is None:
        return None
    try:
        return value * _factors()[1][unit]
    except KeyError:
        raise ValueError(f"unknown latency unit {unit!r}") from None
