"""The INV and DIR tests that `testaug evaluate` runs by default: CheckList's general
perturbations applied to a seeded sample of the suite's cases, per task."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import Field

from testaug.core.records import Record, TestCase
from testaug.evaluation.expectations import Expectation
from testaug.evaluation.perturbations.cases import PerturbedCase, perturb_cases
from testaug.evaluation.perturbations.vocab import NAME as NEUTRAL

# CheckList's sentiment DIR phrases (Ribeiro et al., 2020, Table 1) and a few like them.
POSITIVE_PHRASES = (
    "You are extraordinary.", "You are brilliant.", "You are amazing.", "I love you.",
    "You are awesome.", "Great job.",
)  # fmt: skip
NEGATIVE_PHRASES = (
    "You are lame.", "I abhor you.", "You are pathetic.", "I hate you.",
    "You are awful.", "Terrible job.",
)  # fmt: skip
FALLBACK_NAMES = ("John", "Mary", "Ahmed", "Mei", "Carlos", "Aisha", "David", "Olga")
FALLBACK_CITIES = ("Chicago", "Paris", "Lagos", "Mumbai", "Toronto", "Lima", "Osaka", "Cairo")


class PerturbationTest(Record):
    """One perturbation test: which perturbation, its options, and what is expected."""

    name: str
    perturbation: str
    expectation: Expectation
    options: dict[str, Any] = Field(default_factory=dict)
    which: Literal["both", "first", "second"] = "both"


def default_battery(
    labels: Sequence[str], lexicons: Mapping[str, Sequence[str]] = {}
) -> list[PerturbationTest]:
    """CheckList's robustness and fairness INV tests for any task, plus the sentiment DIR
    tests when the task has those labels: adding a positive phrase fails if P(positive)
    goes down by more than 0.1, adding a negative one if it goes up by more. Names and
    cities come from the suite's `name` and `city` lexicons where it has them."""
    names = tuple(lexicons.get("name", ())) or FALLBACK_NAMES
    cities = tuple(lexicons.get("city", ())) or FALLBACK_CITIES
    inv = Expectation.inv()
    tests = [
        PerturbationTest(name="typos", perturbation="typos", expectation=inv),
        PerturbationTest(name="contractions", perturbation="contractions", expectation=inv),
        PerturbationTest(name="punctuation", perturbation="punctuation", expectation=inv),
        PerturbationTest(
            name="add URLs and handles", perturbation="add_random_urls_handles", expectation=inv
        ),
        PerturbationTest(
            name="change names",
            perturbation="change_names",
            expectation=inv,
            options={"names": list(names)},
        ),
        PerturbationTest(
            name="change locations",
            perturbation="change_location",
            expectation=inv,
            options={"cities": list(cities)},
        ),
        PerturbationTest(name="change numbers", perturbation="change_number", expectation=inv),
        PerturbationTest(name="change neutral words", perturbation=NEUTRAL, expectation=inv),
    ]
    if {"positive", "negative"} <= set(labels):
        tests += [
            PerturbationTest(
                name="add positive phrase",
                perturbation="add_phrase",
                expectation=Expectation.monotonic("positive", "up"),
                options={"phrases": list(POSITIVE_PHRASES)},
            ),
            PerturbationTest(
                name="add negative phrase",
                perturbation="add_phrase",
                expectation=Expectation.monotonic("positive", "down"),
                options={"phrases": list(NEGATIVE_PHRASES)},
            ),
        ]
    return tests


def run_battery(
    cases: Sequence[TestCase],
    battery: Sequence[PerturbationTest],
    *,
    per_test: int = 100,
    seed: int = 0,
    nlp: Any = None,
) -> list[PerturbedCase]:
    """Perturbed cases: each test perturbs its own seeded sample of `per_test` MFT cases
    (single inputs only for the phrase tests; pairs are perturbed as the test says)."""
    pool = [case for case in cases if case.test_type == "MFT"]
    out: list[PerturbedCase] = []
    for test in battery:
        eligible = pool
        if test.perturbation == "add_phrase":
            eligible = [case for case in pool if case.text_pair is None]
        rng = random.Random(f"{seed}:{test.name}")
        sample = eligible if len(eligible) <= per_test else rng.sample(eligible, per_test)
        out += perturb_cases(
            sample,
            test.perturbation,
            expectation=test.expectation,
            seed=seed,
            which=test.which,
            nlp=nlp,
            **test.options,
        )
    return out
