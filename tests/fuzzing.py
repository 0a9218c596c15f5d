"""Mutations of real tool outputs, and a runner that feeds them to the parsers.

Used by the property test (tests/parsers/test_fuzz.py, short budget in CI) and by the long run
(`python -m tests.fuzzing --inputs 1000000`), which uses every core and a per-input time limit.
Every input must either parse or raise ParseError with a line number: any other exception, or an input
that takes longer than the limit, is a finding.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from pathlib import Path

from kneepoint.ingest.errors import ParseError
from kneepoint.ingest.formats import parse_bytes

ROOT = Path(__file__).resolve().parent.parent

TIME_LIMIT_S = 5


SEED_SUFFIXES = (".txt", ".json", ".xml", ".sql", ".csv", ".html")
FIXTURES = ROOT / "tests" / "fixtures"


@cache
def seeds(corpus: Path | None = None) -> list[tuple[str, bytes]]:
    """Every corpus file, every sample file and every golden fixture that reads to records: the inputs mutations
    start from."""
    out: list[tuple[str, bytes]] = []
    corpus = corpus or Path(os.environ.get("KNEEPOINT_CORPUS") or ROOT.parent / "shared" / "corpus")
    for base in (corpus, ROOT / "sample_data", FIXTURES):
        if base.is_dir():
            for p in sorted(base.rglob("*")):
                if p.name == "labels.json":  # sample_data's label map, not a tool's output
                    continue
                if base == FIXTURES and not _fixture_reads(p):
                    continue
                if p.is_file() and p.suffix.lower() in SEED_SUFFIXES and p.stat().st_size < 2e6:
                    out.append((str(p.relative_to(base.parent)), p.read_bytes()))
    return out


def _fixture_reads(path: Path) -> bool:
    """A golden fixture (not an expectation, not one of the damaged inputs whose expectation is a ParseError)."""
    if path.parent.name.startswith("_") or path.name.endswith(".jsonl") or path.name == "README.md":
        return False
    expected = path.with_name(path.name + ".jsonl")
    return expected.is_file() and '"error"' not in expected.read_text("utf-8").split("\n", 1)[0]


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def drop_lines(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    for _ in range(rng.randint(1, max(1, len(lines) // 10))):
        if lines:
            del lines[rng.randrange(len(lines))]
    return b"\n".join(lines)


def repeat_lines(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    if not lines:
        return data
    i = rng.randrange(len(lines))
    j = min(len(lines), i + rng.randint(1, 20))
    return b"\n".join(lines[:j] + lines[i:j] * rng.randint(1, 5) + lines[j:])


def shuffle_lines(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    i = rng.randrange(max(1, len(lines)))
    chunk = lines[i : i + rng.randint(2, 30)]
    rng.shuffle(chunk)
    return b"\n".join(lines[:i] + chunk + lines[i + len(chunk) :])


def flip_bytes(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 16)):
        if buf:
            buf[rng.randrange(len(buf))] = rng.randrange(256)
    return bytes(buf)


def replace_numbers(rng: random.Random, data: bytes) -> bytes:
    """Numbers are what parsers convert: swap some for huge, negative, empty or non-numbers."""
    import re

    choices = [b"0", b"-1", b"1e309", b"NaN", b"", b"99999999999999999999999", b"0.0.0", b"1,5", b"abc"]
    return re.sub(rb"\d+(\.\d+)?", lambda m: rng.choice(choices) if rng.random() < 0.2 else m.group(0), data)


def reencode(rng: random.Random, data: bytes) -> bytes:
    text = data.decode("utf-8", errors="replace")
    enc = rng.choice(["utf-16", "utf-16-le", "utf-16-be", "utf-8-sig", "cp1252", "cp1251"])
    return text.encode(enc, errors="replace")


def splice(rng: random.Random, data: bytes, other: bytes) -> bytes:
    """Half of one file, half of another: a file mixing two formats."""
    return data[: rng.randrange(len(data) + 1)] + b"\n" + other[rng.randrange(len(other) + 1) :]


MUTATIONS: list[Callable[[random.Random, bytes], bytes]] = [
    truncate,
    drop_lines,
    repeat_lines,
    shuffle_lines,
    flip_bytes,
    replace_numbers,
    reencode,
]


def mutate(rng: random.Random, data: bytes, pool: list[tuple[str, bytes]]) -> bytes:
    for _ in range(rng.randint(1, 3)):
        data = splice(rng, data, rng.choice(pool)[1]) if rng.random() < 0.1 else rng.choice(MUTATIONS)(rng, data)
    return data


class _Timeout(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001
    raise _Timeout


def check_one(name: str, data: bytes) -> str | None:
    """None when the input parsed or raised ParseError with a line; otherwise what went wrong."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIME_LIMIT_S)
    try:
        parse_bytes(data, name)
    except ParseError as exc:
        if not (isinstance(exc.line, int) and exc.line >= 1):
            return f"ParseError without a line: {exc!r}"
    except _Timeout:
        return f"hang: more than {TIME_LIMIT_S} s"
    except Exception:  # noqa: BLE001 - that is the finding
        return traceback.format_exc(limit=6)
    finally:
        signal.alarm(0)
    return None


@cache
def seed_formats() -> dict[str, str]:
    """Each seed's format as read unmutated: what the per-format counts of a run are counted by."""
    out = {}
    for name, data in seeds():
        try:
            out[name] = parse_bytes(data, name).format
        except ParseError:
            out[name] = "unparsed seed"
    return out


def run_chunk(
    args: tuple[int, int] | tuple[int, int, tuple[str, ...]],
) -> tuple[dict[str, int], list[tuple[str, int, str]]]:
    seed, count = args[0], args[1]
    only = args[2] if len(args) > 2 else ()  # type: ignore[misc]
    pool = seeds()
    fmt_of = seed_formats()
    # With formats named: mutations start from their seeds only (splices still take any seed).
    starts = [s for s in pool if fmt_of[s[0]] in only] if only else pool
    rng = random.Random(seed)
    findings: list[tuple[str, int, str]] = []
    per_format: dict[str, int] = {}
    for i in range(count):
        name, data = rng.choice(starts)
        per_format[fmt_of[name]] = per_format.get(fmt_of[name], 0) + 1
        sub_seed = seed * 1_000_003 + i
        mutated = mutate(random.Random(sub_seed), data, pool)
        problem = check_one(name, mutated)
        if problem:
            findings.append((name, sub_seed, problem))
    return per_format, findings


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Fuzz every parser with mutated corpus and sample files.")
    ap.add_argument("--inputs", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--chunk", type=int, default=2_000)
    ap.add_argument("--formats", default="", help="comma-separated formats whose seeds mutations start from")
    args = ap.parse_args(argv)
    only = tuple(f for f in args.formats.split(",") if f)
    chunks = [
        (args.seed + i, min(args.chunk, args.inputs - i * args.chunk), only)
        for i in range((args.inputs + args.chunk - 1) // args.chunk)
    ]
    start = time.monotonic()
    done, findings, per_format = 0, [], {}
    with ProcessPoolExecutor(args.workers) as pool:
        for n, (counts, found) in enumerate(pool.map(run_chunk, chunks), 1):
            done += sum(counts.values())
            findings += found
            for fmt, c in counts.items():
                per_format[fmt] = per_format.get(fmt, 0) + c
            if n % 25 == 0:  # a long run says how far it is
                print(f"... {done} inputs, {time.monotonic() - start:.0f} s, {len(findings)} finding(s)", flush=True)
    elapsed = time.monotonic() - start
    print(
        f"{done} mutated inputs from {len(seeds())} seed files in {elapsed:.0f} s "
        f"({done / elapsed:.0f}/s, {args.workers} worker(s), {TIME_LIMIT_S} s limit per input): "
        f"{len(findings)} finding(s)"
    )
    print("inputs per seed format: " + ", ".join(f"{k} {v}" for k, v in sorted(per_format.items())))
    for name, sub_seed, problem in findings[:20]:
        print(f"--- {name} (mutation seed {sub_seed})\n{problem}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
