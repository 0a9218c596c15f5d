"""Page state: cached mart reads, and pickers whose values live in the URL (a copied link reopens the view).

The URL vocabulary: `?disk=A&disk=B&pattern=random&op=read:100&bs=4096&dir=read`, plus each page's toggles.
Disks and series are written to the URL on every run, defaults included: a default depends on the data (the
series measured most), so a link that left it out could open another series once more files arrive. Toggles
are bound with Streamlit's `bind="query-params"` (their default, off, does not depend on the data).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl
import streamlit as st

from kneepoint.app.charts import disk_colors
from kneepoint.app.queries import Series
from kneepoint.app.sample import sample_disk_keys
from kneepoint.app.wording import fmt_block_size

QP = "query-params"


@st.cache_data(show_spinner=False, max_entries=256)
def _cached(fn_name: str, version: tuple, args: tuple) -> Any:
    from kneepoint.app import queries

    return getattr(queries, fn_name)(*args)


def cached(fn: Callable, version: tuple, *args: Any) -> Any:
    """Call a queries function, cached until the warehouse file changes (`queries.data_version`)."""
    return _cached(fn.__name__, version, args)


def colors(version: tuple) -> dict[str, str]:
    """Every disk's colour, from the order of every stored disk: a disk keeps its colour on every page."""
    from kneepoint.app import queries

    return disk_colors(cached(queries.all_disk_keys, version))


def uploaded_disks(disk_keys: list[str]) -> list[str]:
    """The disks the user stored, without the sample data's (sample_data/labels.json)."""
    sample = sample_disk_keys()
    return [k for k in disk_keys if k not in sample]


def select_param(
    label: str, param: str, options: list, fmt: Callable[[Any], str] = str, container: Any = st, **kwargs: Any
) -> Any:
    """A selectbox whose value is the URL's `param` (when it is one of the options) and is written back."""
    current = st.query_params.get(param)
    index = options.index(current) if current in options else 0
    value = container.selectbox(label, options, index=index, format_func=fmt, key=f"qp_{param}", **kwargs)
    st.query_params[param] = value
    return value


def multiselect_param(
    label: str, param: str, options: list[str], default: list[str], container: Any = st, **kwargs: Any
) -> list[str]:
    wanted = [v for v in st.query_params.get_all(param) if v in options] or default
    chosen = container.multiselect(label, options, default=wanted, key=f"qp_{param}", **kwargs)
    st.query_params[param] = chosen
    return chosen


def disks_picker(all_disks: list[str], default: list[str], label: str = "Disks") -> list[str]:
    return multiselect_param(
        label,
        "disk",
        all_disks,
        default,
        placeholder="Choose disks",
        help="A disk is its label, or `label @ host` when a host was given at upload.",
    )


def _op_value(operation: str, read_pct: float) -> str:
    return f"{operation}:{read_pct:g}"


def _op_label(value: str) -> str:
    operation, read_pct = value.split(":")
    return f"mixed ({read_pct}% read)" if operation == "mixed" else operation


def series_picker(options: pl.DataFrame, container: Any = st) -> Series:
    """Pattern, operation / read %, block size and direction, each limited to what was measured on the disks.

    `options` is queries.series_options: the series measured on most disks and at most loads come first, so
    the defaults show the richest curve."""
    cols = container.columns(4)
    pattern = select_param(
        "Pattern", "pattern", options["pattern"].unique(maintain_order=True).to_list(), container=cols[0]
    )
    o = options.filter(pl.col("pattern") == pattern)
    ops = [_op_value(a, b) for a, b in o.select("operation", "read_pct").unique(maintain_order=True).rows()]
    op = select_param("Operation", "op", ops, fmt=_op_label, container=cols[1])
    operation, read_pct = op.split(":")[0], float(op.split(":")[1])
    o = o.filter((pl.col("operation") == operation) & (pl.col("read_pct") == read_pct))
    sizes = [str(b) for b in o["block_size_bytes"].unique(maintain_order=True).to_list()]
    block_size = select_param("Block size", "bs", sizes, fmt=lambda b: fmt_block_size(int(b)), container=cols[2])
    o = o.filter(pl.col("block_size_bytes") == int(block_size))
    directions = o["direction"].unique(maintain_order=True).to_list()
    direction = select_param(
        "Direction",
        "dir",
        directions,
        fmt=lambda d: {"total": "total (read + write)"}.get(d, d),
        container=cols[3],
        help="Which I/Os the figures count: a mixed workload reports reads, writes and their total.",
    )
    return Series(pattern, operation, read_pct, int(block_size), direction)


def toggle(label: str, key: str, default: bool = False, container: Any = st, help: str | None = None) -> bool:
    return bool(container.toggle(label, value=default, key=key, bind=QP, help=help))
