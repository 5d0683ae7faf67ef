"""Evaluation: exact failure rates per group and matrix cell from a keyword-rule fake model."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import pytest

from testaug.core.errors import TestAugError
from testaug.core.records import TestCase, description_id
from testaug.evaluation.expectations import Expectation
from testaug.evaluation.failures import ModelEvaluation
from testaug.evaluation.model_runs import (
    evaluate_from_probabilities,
    evaluate_model,
    needed_inputs,
)
from testaug.evaluation.perturbations.cases import PerturbedCase

LABELS = ("negative", "neutral", "positive")


class KeywordModel:
    """Positive words beat negative words, or the reverse; a tie is neutral. Logs its inputs."""

    name = "keywords"
    labels = LABELS

    def __init__(self) -> None:
        self.batches: list[list[tuple[str, str | None]]] = []

    def predict_proba(self, inputs: Sequence[tuple[str, str | None]], *, batch_size: int = 32):
        self.batches.append(list(inputs))
        return np.asarray([self._row(text) for text, _ in inputs])

    @staticmethod
    def _row(text: str) -> tuple[float, float, float]:
        lowered = text.lower()
        score = sum(w in lowered for w in ("love", "great")) - sum(
            w in lowered for w in ("hate", "awful")
        )
        if score > 0:
            return (0.1, 0.1, 0.8)
        if score < 0:
            return (0.8, 0.1, 0.1)
        return (0.2, 0.6, 0.2)


def case(capability: str, description: str, text: str, label, source="template") -> TestCase:
    return TestCase(
        task="sentiment",
        capability=capability,
        description_id=description_id("sentiment", capability, description),
        description=description,
        text=text,
        label=label,
        source=source,
    )


POS = case("Vocabulary", "positive words", "I love the crew.", "positive")
NEG = case("Vocabulary", "negative words", "The food was awful.", "negative")
FINE = case("Vocabulary", "positive words", "The seat was fine.", "positive", "llm")  # fails
NOT_LOVE = case("Negation", "negated", "I do not love the crew.", "negative")  # fails
NOT_HATE = case("Negation", "negated", "I don't hate it.", ("positive", "neutral"), "expansion")
CASES = [POS, NEG, FINE, NOT_LOVE, NOT_HATE]


def perturbed(original: TestCase, text: str, perturbation: str, expectation) -> PerturbedCase:
    return PerturbedCase(
        original=original,
        text=text,
        perturbation=perturbation,
        test_type=expectation.test_type,
        expectation=expectation,
    )


INV = Expectation.inv()
PERTURBED = [
    perturbed(POS, "I lvoe the crew.", "typos", INV),  # positive -> neutral, P moves 0.6: fails
    perturbed(POS, "I love teh crew.", "typos", INV),
    perturbed(NEG, "The food was awful!", "punctuation", INV),
    perturbed(NOT_LOVE, "I do not love the crew!", "punctuation", INV),
    # P(positive) 0.1 before: cannot go down by more than 0.1, filtered
    perturbed(NEG, "The food was awful. You are great.", "add_phrase", Expectation.monotonic("positive", "up")),
    perturbed(POS, "I love the crew. I hate you.", "add_phrase", Expectation.monotonic("positive", "down")),
    perturbed(FINE, "The seat was fine. You are lame.", "add_phrase", Expectation.to_target("negative")),  # fails
]  # fmt: skip


@pytest.fixture
def evaluation() -> ModelEvaluation:
    return evaluate_model(KeywordModel(), CASES, PERTURBED, k=2)


def rate(group) -> tuple[int, int, int, float | None]:
    return (
        group.n,
        group.failed,
        group.filtered,
        None if group.rate is None else round(group.rate, 2),
    )


def test_overall_and_per_test_type_failure_rates(evaluation):
    assert rate(evaluation.overall) == (11, 5, 1, 45.45)
    assert {t: rate(g) for t, g in evaluation.by_test_type.items()} == {
        "MFT": (5, 3, 0, 60.0),
        "INV": (4, 1, 0, 25.0),
        "DIR": (2, 1, 1, 50.0),
    }


def test_failure_rates_per_capability_description_and_source(evaluation):
    assert {c: rate(g) for c, g in evaluation.by_capability.items()} == {
        "Vocabulary": (8, 3, 1, 37.5),
        "Negation": (3, 2, 0, 66.67),
    }
    assert {g.name: rate(g) for g in evaluation.by_description.values()} == {
        "Vocabulary: positive words": (6, 3, 0, 50.0),
        "Vocabulary: negative words": (2, 0, 1, 0.0),
        "Negation: negated": (3, 2, 0, 66.67),
    }
    assert POS.description_id in evaluation.by_description
    assert {s: rate(g) for s, g in evaluation.by_source.items()} == {
        "template": (8, 2, 1, 25.0),
        "llm": (2, 2, 0, 100.0),
        "expansion": (1, 1, 0, 100.0),
    }


def test_the_capability_by_test_type_matrix(evaluation):
    matrix = {
        capability: {t: rate(cell) for t, cell in row.items()}
        for capability, row in evaluation.matrix.items()
    }
    assert matrix == {
        "Vocabulary": {"MFT": (3, 1, 0, 33.33), "INV": (3, 1, 0, 33.33), "DIR": (2, 1, 1, 50.0)},
        "Negation": {"MFT": (2, 2, 0, 100.0), "INV": (1, 0, 0, 0.0)},
    }


def test_failing_examples_come_with_predictions_expectations_and_reasons(evaluation):
    vocabulary = evaluation.by_capability["Vocabulary"].examples
    assert [r.text for r in vocabulary] == ["The seat was fine.", "I lvoe the crew."]  # k=2
    assert [r.text for r in evaluation.failures] == [
        "The seat was fine.",
        "I do not love the crew.",
        "I don't hate it.",
        "I lvoe the crew.",
        "The seat was fine. You are lame.",
    ]
    typo = evaluation.failures[3]
    assert (typo.test_type, typo.perturbation, typo.predicted, typo.original_predicted) == (
        "INV",
        "typos",
        "neutral",
        "positive",
    )
    assert typo.original_text == "I love the crew."
    assert typo.case_id == PERTURBED[0].id and typo.original_id == POS.id
    assert typo.expected == "same prediction (INV, tolerance 0.1)"
    assert (
        typo.reason == "prediction positive -> neutral and P(positive) moved -0.60 (more than 0.1)"
    )
    assert typo.probabilities == {"negative": 0.2, "neutral": 0.6, "positive": 0.2}
    not_hate = evaluation.failures[2]
    assert (not_hate.expected, not_hate.reason) == (
        "positive or neutral",
        "predicted negative, expected positive or neutral",
    )


def test_originals_and_shared_inputs_are_predicted_once():
    model = KeywordModel()
    evaluate_model(model, CASES, PERTURBED, batch_size=3)
    seen = Counter(item for batch in model.batches for item in batch)
    assert set(seen.values()) == {1}
    assert len(seen) == len(needed_inputs(CASES, PERTURBED)) == 5 + 7
    assert max(len(batch) for batch in model.batches) == 3


def test_batching_does_not_change_results():
    dumps = {
        size: evaluate_model(KeywordModel(), CASES, PERTURBED, batch_size=size).model_dump()
        for size in (1, 2, 5, 100)
    }
    assert all(dump == dumps[1] for dump in dumps.values())


def test_progress_is_reported_per_batch():
    calls: list[tuple[int, int]] = []
    evaluate_model(
        KeywordModel(), CASES, PERTURBED, batch_size=5, on_progress=lambda *a: calls.append(a)
    )
    assert calls == [(5, 12), (10, 12), (12, 12)]


def test_evaluating_from_probabilities_matches_evaluating_the_model(evaluation):
    probabilities = {i: KeywordModel._row(i[0]) for i in needed_inputs(CASES, PERTURBED)}
    direct = evaluate_from_probabilities("keywords", LABELS, CASES, PERTURBED, probabilities, k=2)
    assert direct == evaluation
    with pytest.raises(TestAugError, match="no probabilities"):
        evaluate_from_probabilities("keywords", LABELS, CASES, PERTURBED, {})


def test_the_evaluation_round_trips_through_json(evaluation):
    assert ModelEvaluation.model_validate_json(evaluation.model_dump_json()) == evaluation


def test_a_model_returning_the_wrong_shape_is_named_in_the_error():
    class Broken(KeywordModel):
        name = "broken"

        def predict_proba(self, inputs, *, batch_size=32):
            return np.zeros((len(inputs), 2))

    with pytest.raises(TestAugError, match="model 'broken' returned probabilities of shape"):
        evaluate_model(Broken(), CASES)


def test_binary_models_are_read_with_the_neutral_band():
    class Binary:
        name = "binary"
        labels = ("negative", "positive")

        def predict_proba(self, inputs, *, batch_size=32):
            return np.asarray([[0.45, 0.55]] * len(inputs))

    neutral = case("Vocabulary", "neutral", "The seat is blue.", "neutral")
    assert evaluate_model(Binary(), [neutral]).overall.failed == 0
    assert evaluate_model(Binary(), [neutral], neutral_band=None).overall.failed == 1


def test_no_cases_give_no_rate():
    empty = evaluate_model(KeywordModel(), [])
    assert (empty.overall.n, empty.overall.rate, empty.matrix) == (0, None, {})
