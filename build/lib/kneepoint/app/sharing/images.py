"""PNG and SVG images of the report's charts, for slide decks, rendered by kaleido through Debian's chromium.

kaleido 1.x drives a local Chrome/Chromium; `BROWSER_PATH` tells it which. Its page would load MathJax from a
CDN by default: turned off here (no chart uses LaTeX), so images render on a machine without network.
All images of one call go through one browser session (`write_fig_from_object_sync` with a list).
"""

from __future__ import annotations

import io
import os
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

import plotly.graph_objects as go

from kneepoint.app.sharing.report import ReportChart

FORMATS = ("png", "svg")
WIDTH_PX = 1200  # a 16:9 slide's content width at scale 1; PNG at scale 2 is sharp on a projector
DEBIAN_CHROMIUM = "/usr/bin/chromium"


def ensure_browser() -> str | None:
    """Point kaleido at Debian's chromium when nothing else was chosen; the browser kaleido will use, if any."""
    if not os.environ.get("BROWSER_PATH") and Path(DEBIAN_CHROMIUM).exists():
        os.environ["BROWSER_PATH"] = DEBIAN_CHROMIUM
    path = os.environ.get("BROWSER_PATH")
    if path and Path(path).exists():
        return path
    try:
        from choreographer.browsers.chromium import Chromium

        found = Chromium.find_browser(skip_local=False)
    except Exception:  # choreographer's lookup failing is the same as no browser
        return None
    return str(found) if found else None


class NoBrowser(RuntimeError):
    """kaleido needs Chrome or Chromium; none was found."""


def render_images(
    figures: Sequence[tuple[str, go.Figure]],
    out_dir: str | os.PathLike[str],
    formats: Sequence[str] = FORMATS,
    scale: float = 2.0,
) -> list[Path]:
    """Write `<name>.<format>` for every (name, figure) into `out_dir`; returns the paths in order."""
    import kaleido

    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ValueError(f"image format(s) {', '.join(unknown)}: choose from {', '.join(FORMATS)}")
    if ensure_browser() is None:
        raise NoBrowser("no Chrome or Chromium for kaleido: apt-get install chromium, or set BROWSER_PATH")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    specs = []
    paths: list[Path] = []
    for name, fig in figures:
        height = int(fig.layout.height or 450)
        for fmt in formats:
            path = out / f"{name}.{fmt}"
            paths.append(path)
            specs.append(
                {
                    "fig": fig.to_dict(),
                    "path": path,
                    "opts": {"format": fmt, "width": WIDTH_PX, "height": height, "scale": scale if fmt == "png" else 1},
                }
            )
    if specs:
        kaleido.write_fig_from_object_sync(specs, kopts={"mathjax": False})
    missing = [p.name for p in paths if not p.exists() or p.stat().st_size == 0]
    if missing:
        raise RuntimeError(f"kaleido wrote no image for {', '.join(missing)}")
    return paths


def chart_images(charts: Sequence[ReportChart], out_dir: str | os.PathLike[str], **kwargs) -> list[Path]:
    return render_images([(c.name, c.figure) for c in charts], out_dir, **kwargs)


def images_zip(figures: Sequence[tuple[str, go.Figure]], fmt: str, scale: float = 2.0) -> bytes:
    """Every figure as one image format, zipped: the app's download."""
    with tempfile.TemporaryDirectory(prefix="kneepoint-images-") as tmp:
        paths = render_images(figures, tmp, (fmt,), scale)
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for p in paths:
                zf.write(p, p.name)
    return buf.getvalue()
