"""Showing a chart with its exports: PNG from plotly's modebar, and HTML, SVG and CSV download buttons.

The downloads are built when clicked (Streamlit runs a callable `data` then), so a redraw of a page with eight
charts does not serialize eight copies of plotly.js or start a browser for SVG.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from functools import cache
from typing import Any

import plotly.graph_objects as go
import polars as pl
import streamlit as st

from kneepoint.app import wording as w
from kneepoint.app.web.uploads import md_literal
from kneepoint.app.wording import slug

EXPORT_WIDTH_PX = 1200


def md(text: object) -> str:
    """A user's text (a label, a file name) inside Streamlit Markdown, shown as itself."""
    return md_literal(str(text))


def swatch(disk: str, color: str, sentence: str | None = None, notes: Sequence[str] = ()) -> None:
    """A disk's name in its colour (the colour of its lines on every chart), with a sentence and smaller notes.
    HTML is allowed here for the colour only: every text is escaped."""
    text = f"<span style='color:{color}'>■</span> **{html.escape(disk)}**" + (
        f": {html.escape(sentence)}" if sentence else ""
    )
    if notes:
        text += "  \n<small>" + "<br>".join(html.escape(n) for n in notes) + "</small>"
    st.markdown(text, unsafe_allow_html=True)


def _cell(value: Any) -> str:
    """A table cell in words: integers with separators, other numbers to four digits, lists joined, nothing as
    a dash (never 'None')."""
    if value is None:
        return w.DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) or (isinstance(value, Decimal) and value == value.to_integral_value()):
        return w.fmt_int(value)
    if isinstance(value, float | Decimal):
        return w.plain(float(value), 4)
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, list | tuple):
        return ", ".join(_cell(v) for v in value) or w.DASH
    return str(value)


def words(df: pl.DataFrame, names: dict[str, str] | None = None) -> pl.DataFrame:
    """A frame with every cell in words (_cell) and its columns named for people (`names`, else the column
    name without underscores)."""
    names = names or {}
    return pl.DataFrame(
        {names.get(c, c.replace("_", " ")): [_cell(v) for v in df[c].to_list()] for c in df.columns},
        schema={names.get(c, c.replace("_", " ")): pl.String for c in df.columns},
    )


def table(df: pl.DataFrame, names: dict[str, str] | None = None, **kwargs: Any) -> None:
    """st.dataframe of `words(df)`: formatted numbers, no 'None' cells."""
    st.dataframe(words(df, names), hide_index=True, **kwargs)


def plotly_config(name: str) -> dict[str, Any]:
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": "png", "filename": f"kneepoint-{slug(name)}", "scale": 2},
        "modeBarButtonsToRemove": ["lasso2d", "select2d"],
    }


def figure_html(fig: go.Figure, name: str) -> bytes:
    """A standalone page with plotly.js inlined: opens offline, keeps hover and zoom."""
    return fig.to_html(include_plotlyjs=True, full_html=True, config=plotly_config(name)).encode("utf-8")


@cache
def svg_export_available() -> bool:
    """kaleido renders SVG through a local Chrome/Chromium; without one, the HTML export is the vector copy."""
    try:
        from choreographer.browsers.chromium import Chromium

        return Chromium.find_browser(skip_local=False) is not None
    except Exception:  # kaleido/choreographer missing or broken: offer no SVG rather than a failing button
        return False


def figure_svg(fig: go.Figure) -> bytes:
    height = fig.layout.height or 450
    return fig.to_image(format="svg", width=EXPORT_WIDTH_PX, height=height)


def frame_csv(data: pl.DataFrame) -> bytes:
    """CSV of a frame; list columns (tools, tags) joined with '; ' since CSV has no lists."""
    lists = [name for name, dtype in data.schema.items() if isinstance(dtype, pl.List)]
    if lists:
        data = data.with_columns(pl.col(c).cast(pl.List(pl.String)).list.join("; ") for c in lists)
    return data.write_csv().encode("utf-8")


def chart(fig: go.Figure, data: pl.DataFrame | None, name: str, key: str, container: Any = st) -> None:
    """A chart, then one row of small download buttons for it."""
    container.plotly_chart(fig, key=key, config=plotly_config(name), theme=None)
    row = container.container(horizontal=True, gap="small")
    base = f"kneepoint-{slug(name)}"
    row.download_button(
        "HTML",
        data=lambda: figure_html(fig, name),
        file_name=f"{base}.html",
        mime="text/html",
        key=f"{key}_html",
        icon=":material/download:",
        on_click="ignore",
        type="tertiary",
        help="Interactive chart as a standalone HTML page (works offline). PNG: the camera in the chart's toolbar.",
    )
    if svg_export_available():
        row.download_button(
            "SVG",
            data=lambda: figure_svg(fig),
            file_name=f"{base}.svg",
            mime="image/svg+xml",
            key=f"{key}_svg",
            icon=":material/download:",
            on_click="ignore",
            type="tertiary",
            help="Vector image for reports (rendered by kaleido).",
        )
    if data is not None:
        row.download_button(
            "CSV",
            data=lambda: frame_csv(data),
            file_name=f"{base}.csv",
            mime="text/csv",
            key=f"{key}_csv",
            icon=":material/download:",
            on_click="ignore",
            type="tertiary",
            help="The data behind the chart.",
        )


def need_marts(*names: str) -> bool:
    """Say which models are missing (not built yet, or the build failed) and whether the page can go on."""
    from kneepoint.app import queries

    missing = [n for n in names if n not in queries.tables()]
    if missing:
        st.warning(
            "The warehouse has no " + ", ".join(f"`{n}`" for n in missing) + " yet: the models have not been built "
            "with this version. Run `kneepoint build`, or upload a file (which rebuilds them)."
        )
    return not missing
