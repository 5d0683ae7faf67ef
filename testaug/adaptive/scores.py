"""Failure scores of tree tests on models under test (AdaTest's margin scoring).

A score is high when a test fails and low when it passes; it is > 0 exactly when
the evaluation stage's check (`testaug.evaluation.expectations`) says the test
fails. The checks decide pass or fail; the score adds how strongly:

- "should not be Y" (Y one label or several, "a|b"): with t the best label
  outside Y, p[Y] - p[t] when positive (fail), else the sum of p[Y] - p[j] over
  the labels j outside Y that beat Y (<= 0, pass). p[Y] is the best of Y's labels.
- "should be Y": the negative of that.
- "should be the same as for" (INV): AdaTest's `equality_score` on the two
  inputs' rows: when the predictions differ, the least total probability moved to
  agree (> 0); when they agree, minus the smaller of the two winning margins.
- "should be no less / no more L than" (DIR): how far P(L) moved against the
  direction, minus the tolerance.

Where a check and its margin disagree (the INV tolerance, float rounding at
ties), the check's sign is kept with the margin's magnitude, and a failing test
scores at least `MIN_FAIL_SCORE`. Binary sentiment models (labels negative and
positive) are read with CheckList's neutral band, as the evaluation reads them:
their label margins are taken over the three-way rows of `labels.three_way`
(negative, neutral, positive), whose argmax is the band's prediction, so
"should be neutral" can be scored.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from testaug.adaptive.tree import TestTree, TreeTest
from testaug.core.errors import TestAugError
from testaug.core.records import Record
from testaug.evaluation.expectations import (
    NEUTRAL_BAND,
    Band,
    Outcome,
    check_inv,
    check_mft,
    check_monotonic,
    is_binary_sentiment,
    label_column,
    predicted_labels,
)
from testaug.evaluation.models import ModelError, ModelUnderTest
from testaug.evaluation.models.labels import three_way

MIN_FAIL_SCORE = 1e-6
THREE_WAY = ("negative", "neutral", "positive")
Input = tuple[str, str | None]


class TestApplyError(TestAugError):
    """A test that cannot be applied to a model; `test_id` names it."""

    __test__ = False

    def __init__(self, message: str, *, test_id: str) -> None:
        super().__init__(message)
        self.test_id = test_id


class TestOutcome(Record):
    """One test applied to one model: the failure score, the model's output and the verdict."""

    __test__ = False

    test_id: str
    model: str
    score: float  # > 0 exactly when the test fails
    output: str  # the model's predicted label for the test's input
    passed: bool
    reason: str
    filtered: bool = False  # a DIR test that cannot fail (CheckList leaves it out of rates)


def test_inputs(test: TreeTest) -> list[Input]:
    """The inputs a test needs predicted: its input, and the other input of a comparison."""
    own = (test.input, test.input_pair)
    if test.comparator in ("should be", "should not be"):
        return [own]
    return [own, (test.output, test.output_pair)]


def predict_distinct(
    model: ModelUnderTest, inputs: Sequence[Input], *, batch_size: int = 32
) -> dict[Input, np.ndarray]:
    """Each distinct input's probability row, predicting every input once."""
    distinct = list(dict.fromkeys(inputs))
    if not distinct:
        return {}
    probs = np.asarray(model.predict_proba(distinct, batch_size=batch_size), dtype=np.float64)
    if probs.shape != (len(distinct), len(model.labels)):
        raise ModelError(
            f"model {model.name!r} returned shape {probs.shape}, "
            f"expected {(len(distinct), len(model.labels))}"
        )
    return dict(zip(distinct, probs, strict=True))


def apply_tests(
    model: ModelUnderTest,
    tests: Sequence[TreeTest],
    *,
    batch_size: int = 32,
    neutral_band: Band = NEUTRAL_BAND,
) -> list[TestOutcome]:
    """Every test applied to `model`, in order; topic marker rows are refused."""
    markers = [test.topic for test in tests if test.kind != "test"]
    if markers:
        raise TestAugError(f"a topic marker ({markers[0]}) is not a test and has no score")
    rows = predict_distinct(
        model, [item for test in tests for item in test_inputs(test)], batch_size=batch_size
    )
    return [_apply(model, test, rows, neutral_band) for test in tests]


def failure_scores(
    model: ModelUnderTest,
    tests: Sequence[TreeTest],
    *,
    batch_size: int = 32,
    neutral_band: Band = NEUTRAL_BAND,
) -> list[float]:
    """Each test's failure score on `model` (> 0: failing), in order."""
    outcomes = apply_tests(model, tests, batch_size=batch_size, neutral_band=neutral_band)
    return [outcome.score for outcome in outcomes]


def model_outputs(
    model: ModelUnderTest,
    tests: Sequence[TreeTest],
    *,
    batch_size: int = 32,
    neutral_band: Band = NEUTRAL_BAND,
) -> list[str]:
    """The label `model` predicts for each test's input, in order."""
    outcomes = apply_tests(model, tests, batch_size=batch_size, neutral_band=neutral_band)
    return [outcome.output for outcome in outcomes]


def score_tests(
    tests: Sequence[TreeTest],
    models: Sequence[ModelUnderTest],
    *,
    batch_size: int = 32,
    neutral_band: Band = NEUTRAL_BAND,
) -> list[TreeTest]:
    """The tests with `scores[model.name]` set for every model (other scores kept)."""
    scored = list(tests)
    for model in models:
        scores = failure_scores(model, scored, batch_size=batch_size, neutral_band=neutral_band)
        scored = [
            test.with_scores({model.name: score})
            for test, score in zip(scored, scores, strict=True)
        ]
    return scored


def score_tree(
    tree: TestTree,
    models: Sequence[ModelUnderTest],
    *,
    batch_size: int = 32,
    neutral_band: Band = NEUTRAL_BAND,
) -> TestTree:
    """The tree with every test row scored on every model; topic markers and row order kept."""
    tests = [row for row in tree.rows if row.kind == "test"]
    scored = iter(score_tests(tests, models, batch_size=batch_size, neutral_band=neutral_band))
    return TestTree(rows=tuple(next(scored) if row.kind == "test" else row for row in tree.rows))


def _apply(
    model: ModelUnderTest, test: TreeTest, rows: dict[Input, np.ndarray], band: Band
) -> TestOutcome:
    """One test's outcome from the predicted rows."""
    labels = model.labels
    own = rows[(test.input, test.input_pair)]
    output = predicted_labels(labels, own, neutral_band=band)[0]
    try:
        if test.comparator in ("should be", "should not be"):
            margin, outcome = _label_test(labels, own, test, band)
        else:
            other = rows[(test.output, test.output_pair)]
            if test.comparator == "should be the same as for":
                margin, outcome = _same_test(labels, own, other, test, band)
            else:
                margin, outcome = _direction_test(labels, own, other, test)
    except ValueError as exc:
        raise TestApplyError(
            f"test {test.id} in {test.topic} on {model.name}: {exc}", test_id=test.id
        ) from exc
    return TestOutcome(
        test_id=test.id,
        model=model.name,
        score=signed(margin, failed=not outcome.passed),
        output=output,
        passed=outcome.passed,
        reason=outcome.reason,
        filtered=outcome.filtered,
    )


def signed(margin: float, *, failed: bool) -> float:
    """The margin with the check's sign: a fail is > 0 (at least `MIN_FAIL_SCORE`), a pass <= 0."""
    size = abs(float(margin))
    return max(size, MIN_FAIL_SCORE) if failed else -size


def scoring_rows(
    labels: Sequence[str], probs: np.ndarray, band: Band
) -> tuple[tuple[str, ...], np.ndarray]:
    """The labels and rows label margins are taken over: the model's own, or for a binary
    sentiment model under the neutral band the three-way rows whose argmax is the band's label."""
    probs = np.asarray(probs, dtype=np.float64).reshape(-1, len(labels))
    if band is None or not is_binary_sentiment(labels):
        return tuple(labels), probs
    predicted = predicted_labels(labels, probs, neutral_band=band)
    winner = np.array([THREE_WAY.index(label) for label in predicted])
    return THREE_WAY, three_way(probs[:, list(labels).index("positive")], winner)


def not_margin(labels: Sequence[str], row: np.ndarray, expected: Sequence[str]) -> float:
    """AdaTest's margin for "should not be" the expected labels (> 0 when one of them wins)."""
    unknown = [label for label in expected if label not in labels]
    if unknown:
        raise ValueError(f"label {unknown[0]!r} is not one of the labels ({', '.join(labels)})")
    inside = [i for i, label in enumerate(labels) if label in expected]
    outside = [i for i in range(len(labels)) if i not in inside]
    if not outside:
        return 1.0  # every label is expected: "should not be" always fails, "should be" passes
    best = float(row[inside].max())
    rival = float(row[outside].max())
    if best > rival:
        return best - rival
    return float(sum(best - row[j] for j in outside if row[j] > best))


def _label_test(
    labels: Sequence[str], own: np.ndarray, test: TreeTest, band: Band
) -> tuple[float, Outcome]:
    """Margin and check of a "should be" / "should not be" test."""
    expected = test.expected_labels
    outcome = check_mft(labels, own, [expected], neutral_band=band)[0]
    space, rows = scoring_rows(labels, own, band)
    margin = not_margin(space, rows[0], expected)
    if test.comparator == "should be":
        return -margin, outcome
    predicted = predicted_labels(labels, own, neutral_band=band)[0]
    flipped = predicted not in expected
    reason = f"predicted {predicted}" + ("" if flipped else ", which it should not be")
    return margin, Outcome(passed=flipped, reason=reason)


def equality_score(first: np.ndarray, second: np.ndarray) -> float:
    """AdaTest's score for "should be the same as for": > 0 when the argmaxes differ."""
    top1, top2 = int(np.argmax(first)), int(np.argmax(second))
    max1, max2 = float(first[top1]), float(second[top2])
    if top1 != top2:
        return float(
            min(max(0.0, max1 - first[i]) + max(0.0, max2 - second[i]) for i in range(len(first)))
        )
    if len(first) < 2:
        return 0.0
    second1 = float(np.sort(first)[-2])
    second2 = float(np.sort(second)[-2])
    return -min(max1 - second1, max2 - second2)


def _same_test(
    labels: Sequence[str], own: np.ndarray, other: np.ndarray, test: TreeTest, band: Band
) -> tuple[float, Outcome]:
    """Margin and check of an INV test: `other` is the original, `own` the changed input."""
    outcome = check_inv(labels, other, own, tolerance=test.tolerance, neutral_band=band)[0]
    _, rows_own = scoring_rows(labels, own, band)
    _, rows_other = scoring_rows(labels, other, band)
    return equality_score(rows_own[0], rows_other[0]), outcome


def _direction_test(
    labels: Sequence[str], own: np.ndarray, other: np.ndarray, test: TreeTest
) -> tuple[float, Outcome]:
    """Margin and check of a DIR test: P(watched) for `input` against that for `output`."""
    assert test.watched is not None
    direction = "up" if test.comparator == "should be no less than" else "down"
    outcome = check_monotonic(
        labels, other, own, label=test.watched, direction=direction, tolerance=test.tolerance
    )[0]
    column = label_column(labels, test.watched)
    change = float(own[column] - other[column])
    against = -change if direction == "up" else change
    return against - test.tolerance, outcome
