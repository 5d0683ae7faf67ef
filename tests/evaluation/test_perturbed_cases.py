"""Perturbed cases: INV and DIR cases built from suite cases, with stable ids and streams."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from testaug.core.errors import TestAugError
from testaug.core.records import TestCase
from testaug.evaluation.expectations import Expectation
from testaug.evaluation.perturbations.cases import PerturbedCase, perturb_cases
from testaug.evaluation.perturbations.entities import load_pipeline


def case(text: str, text_pair: str | None = None, capability: str = "NER") -> TestCase:
    return TestCase(
        task="sentiment",
        capability=capability,
        description_id="d1",
        description="A sentence with a name.",
        text=text,
        text_pair=text_pair,
        label="positive",
        source="llm",
    )


CASES = [case("Mary loved the flight."), case("The crew was great."), case("I don't like it.")]


def test_perturbed_cases_keep_the_original_and_take_the_test_type_from_the_expectation():
    out = perturb_cases(CASES, "typos", expectation=Expectation.inv(), n_per_case=2, seed=1)
    assert len(out) == 6
    assert {p.test_type for p in out} == {"INV"}
    assert [p.original for p in out[::2]] == CASES
    assert (out[0].capability, out[0].description_id, out[0].source) == ("NER", "d1", "llm")
    assert all(p.text != p.original.text for p in out)


def test_the_same_seed_gives_the_same_cases_and_ids():
    first = perturb_cases(CASES, "typos", expectation=Expectation.inv(), seed=3)
    again = perturb_cases(CASES, "typos", expectation=Expectation.inv(), seed=3)
    assert first == again
    assert [p.id for p in first] == [p.id for p in again]
    assert len({p.id for p in first}) == len(first)


def test_a_case_perturbs_the_same_way_whatever_other_cases_come_with_it():
    alone = perturb_cases(CASES[1:2], "typos", expectation=Expectation.inv(), seed=3)
    together = perturb_cases(CASES, "typos", expectation=Expectation.inv(), seed=3)
    assert alone[0] in together


def test_cases_with_nothing_to_perturb_give_no_perturbed_case():
    out = perturb_cases(CASES, "contractions", expectation=Expectation.inv(), n_per_case=2)
    assert [p.text for p in out] == ["I do not like it."]


def test_dir_cases_carry_their_expectation_and_options_reach_the_perturbation():
    lame = Expectation.monotonic("positive", "down")
    out = perturb_cases(CASES[:1], "add_phrase", expectation=lame, phrases=["You are lame."])
    assert [(p.text, p.test_type, p.expectation) for p in out] == [
        ("Mary loved the flight. You are lame.", "DIR", lame)
    ]


def test_a_test_type_that_disagrees_with_the_expectation_is_refused():
    with pytest.raises(TestAugError, match="does not go with"):
        perturb_cases(CASES, "typos", expectation=Expectation.inv(), test_type="DIR")
    with pytest.raises(ValidationError, match="cannot have"):
        PerturbedCase(
            original=CASES[0],
            text="x",
            perturbation="typos",
            test_type="DIR",
            expectation=Expectation.inv(),
        )


def test_the_id_is_checked_against_the_content():
    made = perturb_cases(CASES[:1], "typos", expectation=Expectation.inv())[0]
    assert PerturbedCase.model_validate_json(made.model_dump_json()) == made
    with pytest.raises(ValidationError, match="does not match"):
        PerturbedCase(**{**made.model_dump(), "text": "changed"})


def test_entity_perturbations_parse_all_inputs_in_one_batch_and_respect_the_side(monkeypatch):
    import testaug.evaluation.perturbations.cases as module

    nlp = load_pipeline()
    batches: list[list[str]] = []
    real = module.parse_texts

    def spy(texts, nlp=None):
        batches.append(list(texts))
        return real(texts, nlp)

    monkeypatch.setattr(module, "parse_texts", spy)
    pairs = [case("Is Mary tall?", "Is Mary short?"), case("Is Sarah here?", "Is David there?")]
    out = perturb_cases(
        pairs,
        "change_names",
        expectation=Expectation.to_target("negative"),
        which="first",
        names=["James", "Emma"],
        nlp=nlp,
        n_per_case=2,
    )
    assert batches == [["Is Mary tall?", "Is Sarah here?"]]
    assert {p.text_pair for p in out} == {"Is Mary short?", "Is David there?"}
    assert all(p.text != p.original.text for p in out)
    both = perturb_cases(
        pairs[:1], "change_names", expectation=Expectation.inv(), names=["James"], nlp=nlp
    )
    assert [(p.text, p.text_pair) for p in both] == [("Is James tall?", "Is James short?")]
