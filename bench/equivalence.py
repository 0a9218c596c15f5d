"""Is a changed parser still the same parser? Compares a format module with itself at another revision:

    python -m bench.equivalence FORMAT [--against REV] [--mutations N] [--all-scores]

The module as it was at REV (default HEAD), with the `ingest` package of REV around it, is loaded beside the
working tree's, and both read: the bench corpus
(`bench/out/corpus`, when generated: the format's own files and a tenth of the others'), the real-world corpus and the
sample data (the fuzzer's seeds), and N seeded mutations of those (tests.fuzzing.mutate). detect() must give the same
scores (those the registry acts on, >= MIN_CONFIDENCE; every score with --all-scores) and parse() the same outcome:
equal records, or a ParseError with the same reason and line. Prints each difference; exit 1 if there is any.
Every change to a parser is checked this way (100,000 mutations).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import io
import random
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "bench" / "out" / "corpus"


def module_at(fmt: str, rev: str | None) -> ModuleType:
    """ingest/formats/FMT.py as committed at `rev`, with the rest of ingest/ (helpers, records, sibling formats) as
    it was there too, imported apart from the working tree's: a refactoring that moves a helper compares the whole
    reading path, not one file. `rev` None: the working tree's file, imported again under its own name (with the
    working tree's helpers)."""
    if rev is None:
        source = (ROOT / "ingest" / "formats" / f"{fmt}.py").read_text(encoding="utf-8")
        path = Path(tempfile.mkdtemp(prefix="kneepoint-equiv-")) / f"{fmt}_at_rev.py"
        path.write_text(source, encoding="utf-8")
        name = f"_kneepoint_equiv_{fmt}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the class is made
        spec.loader.exec_module(module)
        return module
    archive = subprocess.run(["git", "archive", rev, "ingest"], cwd=ROOT, capture_output=True, check=True).stdout
    root = Path(tempfile.mkdtemp(prefix="kneepoint-equiv-"))
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(root, filter="data")
    # Revisions before the `kneepoint` package imported themselves as `ingest`, later ones as `kneepoint.ingest`.
    package = "kneepoint.ingest" if "kneepoint." in (root / "ingest" / "records.py").read_text() else "ingest"
    if package == "kneepoint.ingest":
        (root / "kneepoint").mkdir()
        (root / "ingest").rename(root / "kneepoint" / "ingest")
    # The revision's package goes in under its name while it imports (its modules import each other by that name),
    # then the working tree's modules are put back: each side keeps references to its own.
    prefix = package.split(".")[0]
    ours = {name: mod for name, mod in sys.modules.items() if name == prefix or name.startswith(prefix + ".")}
    for name in ours:
        del sys.modules[name]
    sys.path.insert(0, str(root))
    try:
        module = importlib.import_module(f"{package}.formats.{fmt}")
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n == prefix or n.startswith(prefix + ".")]:
            del sys.modules[name]
        sys.modules.update(ours)
    return module


def texts(fmt: str, mutations: int, seed: int = 1234) -> Iterator[tuple[str, str]]:
    from kneepoint.ingest.textio import decode
    from tests import fuzzing

    if CORPUS.is_dir():
        for path in sorted(CORPUS.rglob("*")):
            if not path.is_file() or path.name == "manifest.json":
                continue
            own = path.relative_to(CORPUS).parts[0] == fmt
            if own or random.Random(str(path)).random() < 0.1:
                yield str(path), decode(path.read_bytes())[0]
    seeds = fuzzing.seeds()
    for name, data in seeds:
        yield name, decode(data)[0]
    rng = random.Random(seed)
    for i in range(mutations):
        name, data = seeds[rng.randrange(len(seeds))]
        yield f"mutation {i} of {name}", decode(fuzzing.mutate(rng, data, seeds))[0]


def _outcome(module: ModuleType, text: str) -> tuple[Any, ...]:
    """Records as (class name, field values) and errors as (reason, line): the two sides' classes are not the
    same objects when the revision's package was loaded apart."""
    try:
        records = module.parse(text)
    except Exception as exc:  # noqa: BLE001 - either side's ParseError (another exception is a difference too)
        if type(exc).__name__ != "ParseError":
            return ("exception", repr(exc))
        return ("error", exc.reason, exc.line)  # type: ignore[attr-defined]
    return ("records", [(type(r).__name__, *(getattr(r, f.name) for f in fields(r))) for r in records])


def compare(
    fmt: str, rev: str | None = "HEAD", mutations: int = 20_000, all_scores: bool = False
) -> tuple[int, list[str]]:
    """(texts compared, differences described)."""
    from kneepoint.ingest.formats import MIN_CONFIDENCE

    new = importlib.import_module(f"kneepoint.ingest.formats.{fmt}")
    old = module_at(fmt, rev)
    then = rev or "the file"
    differences: list[str] = []
    compared = 0
    for label, text in texts(fmt, mutations):
        compared += 1
        scores = old.detect(text), new.detect(text)
        if not all_scores:
            scores = tuple(s if s >= MIN_CONFIDENCE else 0.0 for s in scores)
        if scores[0] != scores[1]:
            differences.append(f"{label}: detect {scores[0]} at {then}, {scores[1]} now")
        if max(scores) >= MIN_CONFIDENCE or label.startswith(str(CORPUS / fmt)):
            a, b = _outcome(old, text), _outcome(new, text)
            if a != b:
                differences.append(f"{label}: parse at {then} {str(a)[:200]}, now {str(b)[:200]}")
    return compared, differences


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.equivalence", description=__doc__.split("\n\n")[0])
    parser.add_argument("format")
    parser.add_argument("--against", default="HEAD", metavar="REV")
    parser.add_argument("--mutations", type=int, default=20_000)
    parser.add_argument("--all-scores", action="store_true", help="compare detect scores below the threshold too")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    compared, differences = compare(args.format, args.against, args.mutations, args.all_scores)
    for line in differences:
        print(line)
    print(f"{compared} texts compared with {args.format} at {args.against}: {len(differences)} difference(s)")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
