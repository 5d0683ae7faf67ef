"""VADER, the rule-based sentiment analyzer, as a model under test.

VADER's documented rule on its compound score c (in [-1, 1]): c >= 0.05 is
positive, c <= -0.05 negative, anything between neutral. Probabilities come from
c in two steps, so that they move smoothly with c and their argmax is that rule:

1. c maps piecewise linearly onto a pseudo P(positive) p, through the points
   (-1, 0), (-0.05, 1/3), (0.05, 2/3) and (1, 1): VADER's thresholds land on
   the edges of CheckList's neutral band.
2. p becomes (negative, neutral, positive) by `labels.three_way`: scores
   (1 - p, 1 - |2p - 1|, p) over their sum, the rule's label winning the ties at
   c = +-0.05.

VADER takes single texts; the task needs negative, neutral and positive labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from testaug.evaluation.models.base import Inputs, ModelError, ModelSpec, model_kind, unknown_spec
from testaug.evaluation.models.labels import canonical, map_labels, three_way

THRESHOLD = 0.05
VADER_LABELS = ("negative", "neutral", "positive")
_KNOTS_C = (-1.0, -THRESHOLD, THRESHOLD, 1.0)
_KNOTS_P = (0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0)


def vader_label(compound: float) -> str:
    """VADER's documented label for a compound score."""
    if compound >= THRESHOLD:
        return "positive"
    if compound <= -THRESHOLD:
        return "negative"
    return "neutral"


def vader_probabilities(compound: Sequence[float] | np.ndarray) -> np.ndarray:
    """Rows (negative, neutral, positive) from compound scores; argmax follows `vader_label`."""
    c = np.clip(np.asarray(compound, dtype=np.float64).reshape(-1), -1.0, 1.0)
    p = np.interp(c, _KNOTS_C, _KNOTS_P)
    winner = np.where(c >= THRESHOLD, 2, np.where(c <= -THRESHOLD, 0, 1))
    return three_way(p, winner)


def default_analyzer() -> Any:
    """VADER's SentimentIntensityAnalyzer; raises `ModelError` when vaderSentiment is missing."""
    try:
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer
    except ImportError as exc:
        raise ModelError("the vader model needs `pip install vaderSentiment`") from exc
    return SentimentIntensityAnalyzer()


class VaderModel:
    """VADER's compound score turned into probabilities over the task's sentiment labels."""

    def __init__(self, task_labels: Sequence[str], *, analyzer: Any = None) -> None:
        self.name = "vader"
        self.labels = tuple(task_labels)
        if sorted(canonical(label) for label in self.labels) != list(VADER_LABELS):
            raise ModelError(
                f"vader predicts {list(VADER_LABELS)}; the task labels {list(self.labels)} "
                "must be exactly those"
            )
        self._mapping = map_labels(VADER_LABELS, self.labels)
        self._analyzer = analyzer if analyzer is not None else default_analyzer()

    def compound(self, texts: Sequence[str]) -> np.ndarray:
        """VADER's compound score of each text."""
        return np.array(
            [self._analyzer.polarity_scores(text)["compound"] for text in texts], dtype=np.float64
        )

    def predict_proba(self, inputs: Inputs, *, batch_size: int = 32) -> np.ndarray:
        """Probabilities over the task labels; VADER scores one text at a time."""
        if any(pair is not None for _, pair in inputs):
            raise ModelError("vader classifies single texts, not text pairs")
        return self._mapping(vader_probabilities(self.compound([text for text, _ in inputs])))


def check_vader(spec: str, argument: str) -> None:
    """`vader` takes no argument."""
    if argument:
        raise unknown_spec(spec)


@model_kind("vader", "vader", check=check_vader)
def load_vader(spec: ModelSpec) -> VaderModel:
    """The `vader` spec (it takes no argument)."""
    check_vader(spec.text, spec.argument)
    return VaderModel(spec.task_labels)
