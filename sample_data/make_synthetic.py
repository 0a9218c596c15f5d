"""Writes the synthetic sample files of every format that has a writer in ingest/synth/.

Each writer module `ingest/synth/<format>.py` exposes SAMPLE_FOLDER (a folder of sample_data/) and
`sample_files() -> dict[str, str | bytes]` (file name -> content; names start with `synthetic-`).
Run: .venv/bin/python sample_data/make_synthetic.py
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import kneepoint.ingest.synth

HERE = Path(__file__).resolve().parent


def main() -> None:
    for info in pkgutil.iter_modules(kneepoint.ingest.synth.__path__):
        mod = importlib.import_module(f"kneepoint.ingest.synth.{info.name}")
        if not hasattr(mod, "sample_files"):
            continue
        folder = HERE / mod.SAMPLE_FOLDER
        folder.mkdir(exist_ok=True)
        for name, content in mod.sample_files().items():
            assert name.startswith("synthetic-"), f"{info.name}: sample file names start with 'synthetic-'"
            data = content.encode("utf-8") if isinstance(content, str) else content
            (folder / name).write_bytes(data)
            print(f"wrote {folder.relative_to(HERE.parent) / name} ({len(data)} bytes)")


if __name__ == "__main__":
    main()
