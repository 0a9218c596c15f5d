"""Robustness: mutated real files either parse or raise ParseError with a line; never another exception,
never a hang. CI runs a short budget; `python -m tests.fuzzing --inputs 1000000` is the long run."""

from __future__ import annotations

import os
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import fuzzing
from tests.helpers import corpus_dir

BUDGET = int(os.environ.get("KNEEPOINT_FUZZ_EXAMPLES", "300"))


def test_seed_files_all_parse():
    """The unmutated corpus and sample files are the baseline: every one parses (a golden fixture whose expected file
    holds a ParseError is damaged on purpose)."""
    corpus_dir()
    failures = []
    for name, data in fuzzing.seeds():
        expected = fuzzing.ROOT / "tests" / f"{name}.jsonl"
        if name.startswith("fixtures/") and '"error"' in expected.read_text("utf-8").split("\n", 1)[0]:
            continue
        try:
            fuzzing.parse_bytes(data, name)
        except fuzzing.ParseError as exc:
            failures.append(str(exc))
    assert failures == []


@settings(max_examples=BUDGET, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_mutated_inputs_parse_or_raise_parse_error(seed):
    pool = fuzzing.seeds()
    rng = random.Random(seed)
    name, data = rng.choice(pool)
    mutated = fuzzing.mutate(rng, data, pool)
    assert fuzzing.check_one(name, mutated) is None


def test_runner_finds_a_planted_crash(monkeypatch):
    """The runner reports exceptions other than ParseError (so a clean run means something)."""

    def boom(data, name, fmt=None):
        raise KeyError("planted")

    monkeypatch.setattr(fuzzing, "parse_bytes", boom)
    problem = fuzzing.check_one("x.txt", b"anything")
    assert problem is not None and "KeyError: 'planted'" in problem
