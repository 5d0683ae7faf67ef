"""CheckList's Vocab+POS INV test: neutral words replaced where a table says the alternative fits."""

from __future__ import annotations

import random

from testaug.core.records import TestCase
from testaug.editor.neutral_words import NeutralTable, occurrences, replace
from testaug.evaluation.battery import default_battery
from testaug.evaluation.expectations import Expectation
from testaug.evaluation.perturbations.cases import perturb_cases
from testaug.evaluation.perturbations.catalogue import get_perturbation
from testaug.evaluation.perturbations.vocab import change_neutral_words

TABLE = NeutralTable(
    contexts={"|that|flight": ["this"], "know|that|he": []},
    fallback={"the|food": ["this", "our"], "that|he": []},
)


def test_occurrences_carry_the_neighbouring_words_and_replacement_keeps_the_case():
    found = occurrences("That flight was the best; I know that he agrees.")
    assert [(o.key, o.short_key) for o in found] == [
        ("|that|flight", "that|flight"),
        ("was|the|best", "the|best"),
        ("know|that|he", "that|he"),
    ]
    assert replace("That flight was fine.", found[0], "this") == "This flight was fine."


def test_a_neutral_word_changes_only_to_alternatives_that_fit_its_context():
    rng = random.Random(0)
    assert change_neutral_words("That flight was late.", rng, n=3, table=TABLE) == [
        "This flight was late."
    ]
    assert change_neutral_words("I know that he left.", rng, n=3, table=TABLE) == []
    # An unseen context falls back to (word, next word): "the food" fits "this" and "our".
    fallback = change_neutral_words("We loved the food.", rng, n=3, table=TABLE)
    assert sorted(fallback) == ["We loved our food.", "We loved this food."]
    assert change_neutral_words("No neutral words here.", rng, n=3, table=TABLE) == []


def test_the_default_battery_has_an_inv_neutral_word_test_that_perturbs_by_name():
    battery = {t.name: t for t in default_battery(["negative", "positive"])}
    test = battery["change neutral words"]
    assert test.expectation.kind == "inv"
    assert get_perturbation(test.perturbation).function is change_neutral_words
    case = TestCase(
        task="sentiment", capability="Vocabulary", description_id="d", description="A sentence.",
        text="That flight was late.", label="negative",
    )  # fmt: skip
    perturbed = perturb_cases([case], test.perturbation, expectation=Expectation.inv(), table=TABLE)
    assert [p.text for p in perturbed] == ["This flight was late."]
    assert perturbed[0].test_type == "INV"
