"""benchmarks/adaptive.py at a tiny size: both selections run through the scripted server with
the simulated LM and give numbers (the 2x target is the benchmark's, not checked here)."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import pytest
from rich.console import Console

from testaug.core.bundled import resolve_suite
from testaug.suites.load import load_suite
from tests.benchmark_scripts import load_benchmark


def word_embed(texts: Sequence[str]) -> np.ndarray:
    """A tiny embedding built here: hashed bags of words in 64 dimensions."""
    out = np.zeros((len(texts), 64))
    for row, text in enumerate(texts):
        for word in text.lower().split():
            out[row, zlib.crc32(word.encode()) % 64] += 1.0
    return out


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    benchmark = load_benchmark("adaptive")
    suite = load_suite(resolve_suite("sentiment"))
    plan = benchmark.Plan(topics=2, rounds=2, suggestions=10, seeds=(0,), models=("vader",))
    cache = tmp_path_factory.mktemp("adaptive") / "simulated.sqlite"
    return benchmark, benchmark.simulated_arms(suite, plan, word_embed, cache)


def test_both_selections_get_valid_suggestions_from_the_simulated_lm_and_a_rate(results):
    _, runs = results
    assert [(r.lm, r.model, r.selection) for r in runs] == [
        ("simulated", "vader", "adaptive"),
        ("simulated", "vader", "random"),
    ]
    for run in runs:
        assert run.topics == 2 and len(run.per_round) == 2
        assert 0 < run.valid <= run.suggested <= 2 * 2 * 10
        assert run.per_100 is not None and 0 <= run.per_100 <= 100
        assert run.failing == sum(r["failing"] for r in run.per_round)


def test_the_summary_gives_each_arm_a_rate_and_the_target_a_measured_ratio(results):
    benchmark, runs = results
    rows = benchmark.summary_rows(runs)
    assert {row["selection"] for row in rows} == {"adaptive", "random"}
    assert all(row["per_100_mean"] is not None for row in rows)
    # The ratio the check judges, from the runs themselves: adaptive over random failures
    # per 100 valid suggestions (one seed each, so each mean is the run's own rate).
    rate = {run.selection: run.per_100 for run in runs}
    assert rate["random"] > 0, "random found no failure: the ratio would be n/a"
    ratio = rate["adaptive"] / rate["random"]
    [(target, passed, measured)] = benchmark.checks_for(rows, ["vader"])
    assert "vader" in target and f"{benchmark.TARGET_RATIO:g}x" in target
    assert passed == (ratio >= benchmark.TARGET_RATIO)
    assert measured == f"{ratio:.2f}x"
    console = Console(width=200, record=True)
    benchmark.print_table(console, rows, "tiny")
    table = console.export_text()
    assert "adaptive / random" in table and f"{ratio:.2f}" in table
