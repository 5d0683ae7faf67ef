"""Failure scores of tree tests: AdaTest's margins, signed by the evaluation's checks."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testaug.adaptive.scores import (
    MIN_FAIL_SCORE,
    apply_tests,
    equality_score,
    failure_scores,
    model_outputs,
    score_tree,
)
from testaug.adaptive.tree import TestTree, TreeTest
from testaug.core.errors import TestAugError
from testaug.evaluation.models import load_model
from tests.adaptive import fixed_models

SENTIMENT = ("negative", "neutral", "positive")


def mft(text: str, comparator: str, output: str) -> TreeTest:
    return TreeTest(topic="/t", input=text, comparator=comparator, output=output)


def pair(text: str, comparator: str, other: str, watched: str | None = None) -> TreeTest:
    return TreeTest(topic="/t", input=text, comparator=comparator, output=other, watched=watched)


@pytest.fixture(scope="module")
def three():
    return load_model("py:tests.adaptive.fixed_models:three", task_labels=SENTIMENT)


@pytest.fixture(scope="module")
def binary():
    return load_model("py:tests.adaptive.fixed_models:binary", task_labels=("negative", "positive"))


def test_label_margins_match_adatest_margin_scoring(three):
    tests = [
        mft("clear win", "should be", "positive"),
        mft("clear win", "should not be", "positive"),
        mft("clear win", "should be", "negative"),
        mft("clear win", "should be", "negative|neutral"),
        mft("close call", "should not be", "negative"),
    ]
    scores = failure_scores(three, tests)
    # close call: p = (0.3, 0.25, 0.45); "should not be negative" passes by 0.3 - 0.45.
    assert scores == pytest.approx([-0.5, 0.5, 0.7, 0.5, -0.15])


def test_same_as_scores_are_adatest_equality_scores(three):
    tests = [
        pair("close call", "should be the same as for", "clear win"),  # same argmax
        pair("negative one", "should be the same as for", "clear win"),  # flipped, far
    ]
    assert failure_scores(three, tests) == pytest.approx([-0.15, 0.5])


def test_inv_within_tolerance_keeps_the_checks_pass_with_the_margins_size(three):
    # The argmax flips (positive -> negative) but P(positive) moves only 0.1: the check passes.
    test = pair("slightly neg", "should be the same as for", "close call")
    (outcome,) = apply_tests(three, [test])
    assert outcome.passed
    assert outcome.score == pytest.approx(-0.1)


def test_direction_scores_are_movement_against_the_direction_minus_tolerance(three):
    tests = [
        pair("close call", "should be no less than", "clear win", watched="positive"),
        pair("close call", "should be no more than", "clear win", watched="positive"),
    ]
    outcomes = apply_tests(three, tests)
    assert [o.score for o in outcomes] == pytest.approx([0.15, -0.35])
    assert [o.passed for o in outcomes] == [False, True]


def test_each_distinct_input_is_predicted_once(three):
    fixed_models.CALLS.clear()
    tests = [
        mft("clear win", "should be", "positive"),
        pair("close call", "should be the same as for", "clear win"),
        pair("clear win", "should be no less than", "close call", watched="positive"),
    ]
    failure_scores(three, tests)
    assert sorted(text for call in fixed_models.CALLS for text in call) == [
        "clear win",
        "close call",
    ]


def test_binary_models_are_read_with_the_neutral_band(binary):
    tests = [
        mft("great", "should be", "positive"),
        mft("meh", "should be", "positive"),  # P(positive) 0.5: neutral, a fail
        mft("fine", "should be", "neutral"),
    ]
    outcomes = apply_tests(binary, tests)
    assert [o.output for o in outcomes] == ["positive", "neutral", "neutral"]
    assert [o.passed for o in outcomes] == [True, False, True]
    # Three-way rows of P(positive) p: (1 - p, 1 - |2p - 1|, p) over their sum.
    assert [o.score for o in outcomes] == pytest.approx([-(0.9 - 0.2) / 1.2, 0.25, -0.2 / 1.8])


def test_a_failing_test_never_scores_zero(binary):
    # Raw P(positive) 0.5 ties the two labels; the band predicts neutral, so it fails.
    (score,) = failure_scores(binary, [mft("meh", "should not be", "neutral")])
    assert score >= MIN_FAIL_SCORE


def test_model_outputs_are_the_predicted_labels(three):
    tests = [mft("clear win", "should be", "negative"), mft("mostly neutral", "should be", "x")]
    assert model_outputs(three, tests[:1]) == ["positive"]
    with pytest.raises(TestAugError, match="'x' is not one of the labels"):
        model_outputs(three, tests)


def test_score_tree_fills_every_models_column_and_keeps_markers(three):
    vader = load_model("vader", task_labels=SENTIMENT)
    tree = TestTree(
        rows=(
            TreeTest(kind="topic", topic="/Empty"),
            mft("clear win", "should be", "positive"),
            mft("close call", "should not be", "negative"),
        )
    )
    scored = score_tree(tree, [three, vader])
    assert scored.rows[0] == tree.rows[0]
    assert [set(t.scores) for t in scored.tests] == [{three.name, "vader"}] * 2
    assert scored.tests[0].scores[three.name] == pytest.approx(-0.5)


def test_vader_fails_a_negated_positive_and_passes_a_clear_one():
    vader = load_model("vader", task_labels=SENTIMENT)
    tests = [
        mft("I love this airline, the crew was wonderful.", "should be", "positive"),
        # the negation is more than three words before "wonderful": VADER misses it
        mft("I don't think the crew was wonderful.", "should be", "negative"),
        mft("The food was not bad at all.", "should not be", "negative"),  # VADER flips it
        pair(
            "The crew was wonderful. You are awful.",
            "should be no more than",
            "The crew was wonderful.",
            watched="positive",
        ),
    ]
    outcomes = apply_tests(vader, tests)
    assert [o.passed for o in outcomes] == [True, False, True, True]
    assert outcomes[1].output == "positive" and outcomes[1].score > 0
    assert [o.score > 0 for o in outcomes] == [not o.passed for o in outcomes]


@pytest.mark.slow
def test_tiny_hf_classifier_scores_agree_with_its_checks(tmp_path):
    from tests.models_fixture import build_tiny_classifier

    path = build_tiny_classifier(tmp_path / "tiny", 3, {0: "negative", 1: "neutral", 2: "positive"})
    model = load_model(f"hf:{path}", task_labels=SENTIMENT)
    tests = [
        mft("the food was good", "should be", "positive"),
        mft("the food was bad", "should not be", "positive"),
        pair("the crew was not good", "should be the same as for", "the crew was good"),
    ]
    outcomes = apply_tests(model, tests)
    assert len(outcomes) == len(tests)
    assert [o.score > 0 for o in outcomes] == [not o.passed for o in outcomes]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_the_spacy_sentiment_model_scores_agree_with_its_checks():
    if importlib.util.find_spec("eng_spacysentiment") is None:
        pytest.skip("eng_spacysentiment is not installed")
    model = load_model("spacy:eng_spacysentiment", task_labels=SENTIMENT)
    tests = [
        mft("I love this airline, the crew was wonderful.", "should be", "positive"),
        mft("The seat was not comfortable.", "should not be", "positive"),
        pair("I lvoe this airline.", "should be the same as for", "I love this airline."),
        pair(
            "The crew was fine. I hate you.",
            "should be no more than",
            "The crew was fine.",
            watched="positive",
        ),
    ]
    outcomes = apply_tests(model, tests)
    assert len(outcomes) == len(tests)
    assert [o.score > 0 for o in outcomes] == [not o.passed for o in outcomes]
    assert outcomes[0].output == "positive" and outcomes[0].score < 0


class RowsModel:
    """A model built in the test: one fixed probability row per text."""

    def __init__(self, labels, rows):
        self.name, self.labels, self.rows = "rows", tuple(labels), rows

    def predict_proba(self, inputs, *, batch_size=32):
        return np.array([self.rows[text] for text, _ in inputs])


rows = st.lists(st.floats(0.01, 1.0), min_size=3, max_size=3).map(lambda r: [x / sum(r) for x in r])
binary_rows = st.floats(0.0, 1.0).map(lambda p: [1 - p, p])


@settings(max_examples=150, deadline=None)
@given(a=rows, b=rows, tolerance=st.sampled_from([0.0, 0.1, 0.3]))
def test_a_score_is_positive_exactly_when_the_check_fails(a, b, tolerance):
    model = RowsModel(SENTIMENT, {"a": a, "b": b})
    tests = [
        TreeTest(topic="/t", input="a", comparator=comparator, output=output, tolerance=tolerance)
        for comparator in ("should be", "should not be")
        for output in ("negative", "neutral", "positive", "negative|positive")
    ]
    tests += [
        TreeTest(topic="/t", input="a", comparator=c, output="b", watched=w, tolerance=tolerance)
        for c in ("should be the same as for", "should be no less than", "should be no more than")
        for w in ("negative", "positive")
    ]
    outcomes = apply_tests(model, tests)
    assert len(outcomes) == len(tests)
    for outcome in outcomes:
        assert (outcome.score > 0) == (not outcome.passed), outcome


@settings(max_examples=100, deadline=None)
@given(a=binary_rows, b=binary_rows)
def test_binary_scores_agree_with_the_banded_checks(a, b):
    model = RowsModel(("negative", "positive"), {"a": a, "b": b})
    tests = [
        TreeTest(topic="/t", input="a", comparator=c, output=o)
        for c in ("should be", "should not be")
        for o in ("negative", "neutral", "positive")
    ] + [TreeTest(topic="/t", input="a", comparator="should be the same as for", output="b")]
    outcomes = apply_tests(model, tests)
    assert len(outcomes) == len(tests)
    for outcome in outcomes:
        assert (outcome.score > 0) == (not outcome.passed), outcome


def test_equality_score_is_zero_distance_for_identical_rows():
    row = np.array([0.2, 0.3, 0.5])
    assert equality_score(row, row) == pytest.approx(-0.2)
