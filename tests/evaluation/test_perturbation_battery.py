"""The default INV/DIR battery of `testaug evaluate`: which tests, on which cases."""

from __future__ import annotations

import pytest

from testaug.core.records import TestCase
from testaug.evaluation.battery import NEGATIVE_PHRASES, default_battery, run_battery

pytest.importorskip("spacy")


def case(text: str, label: str = "positive", pair: str | None = None) -> TestCase:
    return TestCase(
        task="sentiment", capability="Vocabulary", description_id="d", description="A sentence.",
        text=text, text_pair=pair, label=label,
    )  # fmt: skip


def test_sentiment_gets_the_phrase_dir_tests_and_other_tasks_only_inv():
    sentiment = {t.name: t for t in default_battery(["negative", "neutral", "positive"])}
    assert sentiment["add positive phrase"].expectation.direction == "up"
    negative = sentiment["add negative phrase"].expectation
    assert (negative.label, negative.direction) == ("positive", "down")
    nli = default_battery(["entailment", "neutral", "contradiction"])
    assert {t.expectation.kind for t in nli} == {"inv"}
    names = {t.name: t for t in default_battery(["a", "b"], {"name": ["Zed"], "city": ["Oslo"]})}
    assert names["change names"].options["names"] == ["Zed"]
    assert names["change locations"].options["cities"] == ["Oslo"]


def test_run_battery_perturbs_a_seeded_sample_and_skips_pairs_for_phrases():
    cases = [case(f"John flew to Paris {i} times and loved it.") for i in range(1, 9)]
    cases.append(case("Is it good?", pair="Is it fine?"))
    battery = default_battery(["negative", "neutral", "positive"])
    first = run_battery(cases, battery, per_test=4, seed=1)
    again = run_battery(cases, battery, per_test=4, seed=1)
    assert [p.id for p in first] == [p.id for p in again]
    by_test = {}
    for item in first:
        by_test.setdefault((item.perturbation, item.expectation.kind), []).append(item)
    assert len(by_test[("typos", "inv")]) == 4
    assert len(by_test[("change_names", "inv")]) >= 1
    phrases = [p for p in first if p.perturbation == "add_phrase"]
    assert phrases and all(p.text_pair is None for p in phrases)
    assert any(p.text.endswith(NEGATIVE_PHRASES) for p in phrases)
