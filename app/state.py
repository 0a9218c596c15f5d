"""Page state in URL query parameters, so a copied link reopens the same view; cached mart reads."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl
import streamlit as st


@st.cache_data(show_spinner=False, max_entries=256)
def _cached(fn_name: str, version: tuple, args: tuple) -> Any:
    from app import queries

    return getattr(queries, fn_name)(*args)


def cached(fn: Callable, version: tuple, *args: Any) -> Any:
    """Call a queries function, cached until the warehouse file changes."""
    return _cached(fn.__name__, version, args)


def multiselect_param(label: str, param: str, options: list[str], default: list[str]) -> list[str]:
    wanted = [v for v in st.query_params.get_all(param) if v in options] or default
    chosen = st.multiselect(label, options, default=wanted, key=f"qp_{param}")
    st.query_params[param] = chosen
    return chosen


def select_param(label: str, param: str, options: list, fmt: Callable[[Any], str] = str, container=st) -> Any:
    by_text = {str(o): o for o in options}
    current = st.query_params.get(param)
    index = list(by_text).index(current) if current in by_text else 0
    value = container.selectbox(label, options, index=index, format_func=fmt, key=f"qp_{param}")
    st.query_params[param] = str(value)
    return value


def toggle_param(label: str, param: str) -> bool:
    value = st.toggle(label, value=st.query_params.get(param) == "1", key=f"qp_{param}")
    st.query_params[param] = "1" if value else "0"
    return value


def fmt_block_size(b: int) -> str:
    if b % (1024 * 1024) == 0:
        return f"{b // (1024 * 1024)} MiB"
    if b % 1024 == 0:
        return f"{b // 1024} KiB"
    return f"{b} B"


def series_picker(options: pl.DataFrame) -> tuple[str, str, float, int, str]:
    """Pattern, operation / read %, block size and direction, each limited to what was measured."""
    cols = st.columns(4)
    pattern = select_param(
        "Pattern", "pattern", options["pattern"].unique(maintain_order=True).to_list(), container=cols[0]
    )
    o = options.filter(pl.col("pattern") == pattern)
    ops = o.select("operation", "read_pct").unique(maintain_order=True).rows()
    op = select_param(
        "Operation",
        "op",
        [f"{a}:{b:g}" for a, b in ops],
        container=cols[1],
        fmt=lambda v: v.split(":")[0] if not v.startswith("mixed") else f"mixed ({v.split(':')[1]}% read)",
    )
    operation, read_pct = op.split(":")[0], float(op.split(":")[1])
    o = o.filter((pl.col("operation") == operation) & (pl.col("read_pct") == read_pct))
    block_size = select_param(
        "Block size",
        "bs",
        o["block_size_bytes"].unique(maintain_order=True).to_list(),
        fmt=fmt_block_size,
        container=cols[2],
    )
    o = o.filter(pl.col("block_size_bytes") == block_size)
    direction = select_param(
        "Direction", "dir", o["direction"].unique(maintain_order=True).to_list(), container=cols[3]
    )
    return pattern, operation, read_pct, int(block_size), direction
