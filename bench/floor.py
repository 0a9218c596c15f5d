"""How close to the least possible work is the CrystalDiskMark path? The evidence behind the README's note on its
50 MB/s target:

    python -m bench.floor [--runs N] [--corpus DIR]

Over the bench corpus's CrystalDiskMark files (`python -m bench generate` first), each timed in one process, the
best of N passes (a floor is what is measured, not what is typical):

- the product: `formats.parse_bytes` (decode, the seven detectors, parse, the mixed-output check), and its parts;
- a floor reader: decode, split lines, one regex per line for a 7.x-9.x / KDiskMark test line, one IoRecord per
  test line with a copy of the metadata. No state, no other layout, no checks: a real parser does at least this;
- the floor reader plus the registry's detection (`formats.detect_all`), which any file of unknown format pays.

A 1.5 KB file at 50 MB/s leaves 30 us for all of it.
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.generate import load_corpus
from kneepoint.ingest import formats
from kneepoint.ingest.records import IoRecord
from kneepoint.ingest.textio import decode

CORPUS = Path(__file__).resolve().parent / "out" / "corpus"
FORMAT = "crystaldiskmark"

_TEST_LINE = re.compile(
    r"\s*(SEQ|RND|Sequential|Random)\s+(\d+)\s?([KMG])i?B\s*\(Q=\s*(\d+),\s*T=\s*(\d+)\)\s*:\s*([\d.]+) MB/s"
    r"(?:\s*\[\s*([\d.]+) IOPS\])?(?:\s*<\s*([\d.]+) us>)?"
)
_SIZE = {"K": 1024, "M": 1024**2, "G": 1024**3}


def floor_reader(text: str) -> list[IoRecord]:
    records: list[IoRecord] = []
    metadata: dict[str, str] = {}
    for number, line in enumerate(text.split("\n"), 1):
        if m := _TEST_LINE.match(line):
            kind, size, unit, q, t, value, iops, latency = m.groups()
            records.append(
                IoRecord(
                    FORMAT, len(records), number, "random", "read", 100.0, "read", int(size) * _SIZE[unit],
                    int(t), int(q), float(iops) if iops else None, float(value), "MB/s", "us",
                    float(latency) if latency else None, None, None, None, None, None, None, None, None, None, None,
                    [], dict(metadata, Label=kind), [], "count", "io",
                )
            )  # fmt: skip
        elif ":" in line:
            key, _, value = line.partition(":")
            metadata[key.strip()] = value.strip()
    return records


@dataclass(slots=True)
class Floor:
    files: int
    bytes: int
    product_records: int
    floor_records: int
    seconds: dict[str, float]  # by step: the best of the runs over every file


def measure(corpus_root: Path = CORPUS, runs: int = 5) -> Floor:
    corpus = load_corpus(corpus_root)
    if corpus is None or not corpus.paths(FORMAT):
        raise FileNotFoundError(f"no bench corpus at {corpus_root}: run `python -m bench generate` first")
    blobs = [path.read_bytes() for path in corpus.paths(FORMAT)]
    texts = [decode(data)[0] for data in blobs]
    mod = formats.registry()[FORMAT]

    def detect_then_floor(data: bytes) -> None:
        text = decode(data)[0]
        formats.detect_all(text)
        floor_reader(text)

    steps: list[tuple[str, Callable[[Any], object], list[Any]]] = [
        ("product: parse_bytes", formats.parse_bytes, blobs),
        ("  decode", decode, blobs),
        ("  detect_all (7 detectors)", formats.detect_all, texts),
        (f"  {FORMAT}.parse", mod.parse, texts),
        ("product, format given", lambda d: formats.parse_bytes(d, fmt=FORMAT), blobs),
        ("floor reader (decode + read)", lambda d: floor_reader(decode(d)[0]), blobs),
        ("floor reader + detect_all", detect_then_floor, blobs),
    ]
    return Floor(
        files=len(blobs),
        bytes=sum(map(len, blobs)),
        product_records=sum(len(formats.parse_bytes(data).records) for data in blobs),
        floor_records=sum(len(floor_reader(text)) for text in texts),
        seconds={label: min(_timed(step, inputs) for _ in range(runs)) for label, step, inputs in steps},
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.floor", description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--corpus", type=Path, default=CORPUS, help="a corpus `python -m bench generate` wrote")
    args = p.parse_args(argv)
    try:
        f = measure(args.corpus, args.runs)
    except FileNotFoundError as exc:
        raise SystemExit(str(exc)) from None
    print(f"{f.files:,} {FORMAT} files, {f.bytes / f.files:,.0f} bytes each on average; records: product "
          f"{f.product_records:,}, floor reader {f.floor_records:,}")  # fmt: skip
    print(f"{'':32s} {'us/file':>8s} {'MB/s':>7s}")
    for label, seconds in f.seconds.items():
        print(f"{label:32s} {seconds / f.files * 1e6:8.1f} {f.bytes / seconds / 1e6:7.1f}")
    return 0


def _timed(step: Callable[[Any], object], inputs: list[Any]) -> float:
    """Each result is dropped at once, as ingest drops a file's records once stored: keeping 5,000 files' records
    alive would time the garbage collector's passes over them too."""
    t = time.perf_counter()
    for item in inputs:
        step(item)
    return time.perf_counter() - t


if __name__ == "__main__":
    raise SystemExit(main())
