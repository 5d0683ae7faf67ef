"""The headline of an evaluation: error rates on verified evidence only, unless all is asked
for or nothing is verified; error rates by provenance. The model under test is the `py:`
keyword model of tests/models_fixture.py, loaded as a user names it."""

from __future__ import annotations

import json

import pytest

from testaug.core.jsonl import write_jsonl
from testaug.core.records import TestCase
from testaug.evaluation.expectations import Expectation
from testaug.evaluation.model_runs import evaluate_model
from testaug.evaluation.models import load_model
from testaug.evaluation.perturbations.cases import PerturbedCase
from testaug.evaluation.summary import EvaluationSummary, evaluation_summary, headline
from testaug.suites.provenance import with_origin

LABELS = ("negative", "neutral", "positive")


def case(text: str, label: str, capability: str, source="template", **meta) -> TestCase:
    return TestCase(
        task="sentiment",
        capability=capability,
        description_id=capability[:3],
        description=f"A {label} sentence about {capability}.",
        text=text,
        label=label,
        source=source,
        meta=meta,
    )


TEMPLATE_OK = case("The food was great.", "positive", "Vocabulary")
TEMPLATE_FAIL = case("The crew was not great.", "negative", "Negation")  # the model fails it
PEOPLE = case("I love the crew.", "positive", "Vocabulary", "llm", accepted_by="people")
RANKER_FAIL = case("I do not hate the food.", "positive", "Negation", "llm", accepted_by="ranker")
RANKER_OK = case("The staff was bad.", "negative", "Vocabulary", "llm", accepted_by="ranker")
VERIFIED_EXPANSION = with_origin(
    case("The seat was awful.", "negative", "Vocabulary", "expansion"), PEOPLE.id, "people"
)
UNVERIFIED_EXPANSION = with_origin(  # the model fails it
    case("I do not love the seat.", "negative", "Negation", "expansion"), RANKER_OK.id, "ranker"
)
CASES = [
    TEMPLATE_OK,
    TEMPLATE_FAIL,
    PEOPLE,
    RANKER_FAIL,
    RANKER_OK,
    VERIFIED_EXPANSION,
    UNVERIFIED_EXPANSION,
]
# A typo that turns "bad" into an unknown word: the prediction changes, the INV test fails.
TYPO = PerturbedCase(
    original=RANKER_OK,
    text="The staff was bda.",
    perturbation="typos",
    test_type="INV",
    expectation=Expectation.inv(),
)


@pytest.fixture(scope="module")
def model():
    return load_model("py:tests.models_fixture:predict", task_labels=LABELS)


@pytest.fixture(scope="module")
def evaluation(model):
    return evaluate_model(model, CASES, [TYPO])


def rate(cell) -> tuple[int, int, float | None]:
    rate = cell["rate"] if isinstance(cell, dict) else cell.rate
    n, failed = (cell["n"], cell["failed"]) if isinstance(cell, dict) else (cell.n, cell.failed)
    return n, failed, None if rate is None else round(rate, 2)


def test_every_case_and_its_perturbations_carry_its_provenance(evaluation):
    provenance = {r.text: r.provenance for r in evaluation.results}
    assert provenance == {
        "The food was great.": "template",
        "The crew was not great.": "template",
        "I love the crew.": "people",
        "I do not hate the food.": "ranker",
        "The staff was bad.": "ranker",
        "The seat was awful.": "expansion-verified",
        "I do not love the seat.": "expansion-unverified",
        "The staff was bda.": "ranker",  # the perturbed case inherits its original's
    }
    assert {p: rate(g) for p, g in evaluation.by_provenance.items()} == {
        "template": (2, 1, 50.0),
        "people": (1, 0, 0.0),
        "ranker": (3, 2, 66.67),
        "expansion-verified": (1, 0, 0.0),
        "expansion-unverified": (1, 1, 100.0),
    }


def test_the_headline_leaves_out_cases_accepted_by_the_ranker_and_their_expansions(evaluation):
    summary = evaluation_summary([evaluation], n_cases=7, n_perturbed=1).model_dump(mode="json")
    [model] = summary["models"]
    assert summary["evidence"] == "verified"
    assert list(model)[:6] == [
        "model",
        "error_rate",
        "error_rate_by_capability",
        "headline_evidence",
        "headline_left_out",
        "headline",
    ]
    assert model["error_rate"] == 25.0  # 1 of the 4 verified cases
    assert model["error_rate_by_capability"] == {"Vocabulary": 0.0, "Negation": 100.0}
    assert (model["headline_evidence"], model["headline_left_out"]) == ("verified", 4)
    assert model["headline"]["left_out_by_provenance"] == {
        "ranker": 3,
        "expansion-unverified": 1,
    }
    assert not model["headline"]["fallback"]
    assert "verified evidence only" in model["headline"]["note"]
    assert "4 unverified left out (3 ranker, 1 expansion-unverified)" in model["headline"]["note"]
    # The full breakdowns still hold every case.
    assert rate(model["overall"]) == (8, 4, 50.0)
    assert rate(model["by_capability"]["Negation"]) == (3, 3, 100.0)
    assert set(model["by_provenance"]) == set(evaluation.by_provenance)
    assert set(model["by_source"]) == {"template", "llm", "expansion"}


def test_evidence_all_puts_the_ranker_accepted_cases_in_the_headline(evaluation):
    summary = evaluation_summary([evaluation], n_cases=7, n_perturbed=1, evidence="all")
    [model] = summary.model_dump(mode="json")["models"]
    assert model["error_rate"] == 50.0  # 4 of all 8
    assert model["error_rate_by_capability"] == {
        "Vocabulary": 20.0,
        "Negation": 100.0,
    }
    assert (model["headline_evidence"], model["headline_left_out"]) == ("all", 0)
    assert model["headline"]["unverified"] == 4
    assert (
        "verified or not (4 unverified: 3 ranker, 1 expansion-unverified)"
        in (model["headline"]["note"])
    )


def test_with_no_verified_case_the_headline_falls_back_to_all_cases_and_says_so(model):
    only_ranker = evaluate_model(model, [RANKER_FAIL, RANKER_OK, UNVERIFIED_EXPANSION])
    head = headline(only_ranker.results)
    assert (head.requested, head.evidence, head.fallback) == ("verified", "all", True)
    assert rate(head.overall) == (3, 2, 66.67) and head.left_out == 0
    assert head.note.startswith("no verified case")
    assert "rest on all 3 cases, unverified evidence" in head.note


def test_no_cases_give_no_headline_rate_rather_than_zero_of_zero(model):
    written = evaluation_summary([evaluate_model(model, [])], n_cases=0, n_perturbed=0)
    [summary] = written.model_dump(mode="json")["models"]
    assert summary["error_rate"] is None and summary["error_rate_by_capability"] == {}
    assert summary["headline"]["note"] == "no case counts: there is no error rate"


def test_combined_evaluations_take_the_headline_on_the_evidence_asked_for(tmp_path):
    from testaug.steps.measure import (
        CombineEvaluationsConfig,
        EvaluationConfig,
        ModelEvaluationConfig,
        combine_evaluations,
        evaluate_one_model,
    )

    write_jsonl(tmp_path / "cases.jsonl", CASES)
    write_jsonl(tmp_path / "perturbed.jsonl", [TYPO])
    part = evaluate_one_model(
        ModelEvaluationConfig(
            cases=tmp_path / "cases.jsonl",
            perturbed=tmp_path / "perturbed.jsonl",
            model="py:tests.models_fixture:predict",
            out=tmp_path / "evaluation" / "keywords.json",
        )
    )
    assert part.summary.error_rate == 25.0 and part.summary.evidence == "verified"

    verified = combine_evaluations(
        CombineEvaluationsConfig(parts=(part,), out=tmp_path / "evaluation.json")
    )
    written = json.loads((tmp_path / "evaluation.json").read_text())
    assert written["evidence"] == "verified" and written["models"][0]["error_rate"] == 25.0
    assert verified.summary.headline["py:tests.models_fixture:predict"].left_out == 4

    everything = combine_evaluations(
        CombineEvaluationsConfig(
            parts=(part,),
            out=tmp_path / "evaluation.json",
            evaluation=EvaluationConfig(evidence="all"),
        )
    )
    written = json.loads((tmp_path / "evaluation.json").read_text())
    assert written["evidence"] == "all" and written["models"][0]["error_rate"] == 50.0
    assert written["models"][0]["headline_evidence"] == "all"
    assert everything.summary.error_rates == {"py:tests.models_fixture:predict": 50.0}


def test_the_summary_reads_back_from_its_json_as_the_same_record(evaluation):
    summary = evaluation_summary([evaluation], n_cases=7, n_perturbed=1)
    text = json.dumps(summary.model_dump(mode="json"), indent=1)  # as evaluation.json is written
    assert EvaluationSummary.model_validate_json(text) == summary


def test_an_evaluation_json_written_before_provenance_reads_with_no_headline(evaluation):
    written = evaluation_summary([evaluation], n_cases=7, n_perturbed=1).model_dump(mode="json")
    old = {"n_cases": 7, "n_perturbed": 1, "models": []}  # no evidence, headline or provenance
    for model in written["models"]:
        kept = {k: v for k, v in model.items() if not k.startswith("headline")}
        del kept["by_provenance"]
        for example in kept["failures"]:
            del example["provenance"]
        old["models"].append(kept)
    summary = EvaluationSummary.model_validate_json(json.dumps(old))
    [model] = summary.models
    assert summary.evidence is None and model.headline is None and model.by_provenance == {}
    assert (model.headline_evidence, model.headline_left_out) == (None, None)
    assert rate(model.overall) == (8, 4, 50.0)
    assert model.failures and all(f.provenance is None for f in model.failures)
