"""A logistic-regression head over dense features: standardized, class-balanced, JSON-saved."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np
from pydantic import BaseModel, ConfigDict, FiniteFloat

from rankers.members.cross_encoder import RankerError
from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_json
from testaug.core.records import Candidate, TestCase


class LinearHeadFile(BaseModel):
    """What a linear-head member's JSON file holds: its name, model and head."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    model: str
    mean: list[FiniteFloat]
    scale: list[FiniteFloat]
    weights: list[FiniteFloat]
    bias: FiniteFloat


class LinearHead:
    """Log-odds of invalid from a feature matrix: ((x - mean) / scale) @ weights + bias."""

    def __init__(
        self, mean: np.ndarray, scale: np.ndarray, weights: np.ndarray, bias: float
    ) -> None:
        self.mean = mean
        self.scale = scale
        self.weights = weights
        self.bias = bias

    def decision(self, x: np.ndarray) -> np.ndarray:
        return ((x - self.mean) / self.scale) @ self.weights + self.bias

    def to_json(self) -> dict[str, Any]:
        return {
            "mean": self.mean.tolist(),
            "scale": self.scale.tolist(),
            "weights": self.weights.tolist(),
            "bias": self.bias,
        }

    @classmethod
    def from_json(cls, payload: dict[str, Any]) -> LinearHead:
        return cls(
            np.asarray(payload["mean"]),
            np.asarray(payload["scale"]),
            np.asarray(payload["weights"]),
            float(payload["bias"]),
        )


def fit_linear_head(
    x: np.ndarray, invalid: np.ndarray, *, l2: float, sample_weight: np.ndarray | None = None
) -> LinearHead:
    """An L2-regularised logistic regression (C = l2) with classes weighted to count equally."""
    from sklearn.linear_model import LogisticRegression

    if len(set(np.asarray(invalid).tolist())) < 2:
        raise RankerError("a ranker needs both valid and invalid candidates to train")
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale = np.where(scale < 1e-9, 1.0, scale)
    classifier = LogisticRegression(C=l2, class_weight="balanced", max_iter=3000)
    classifier.fit((x - mean) / scale, invalid, sample_weight=sample_weight)
    return LinearHead(
        mean, scale, classifier.coef_[0].astype(np.float64), float(classifier.intercept_[0])
    )


class LinearRanker:
    """A member that scores a dense feature matrix with a `LinearHead`; subclasses say how
    features are made (`features`) and the JSON file it is saved in (`file_name`)."""

    file_name: ClassVar[str]
    feature_count: ClassVar[int | None] = None  # the features a saved head must weigh, if fixed

    def __init__(self, name: str, model: str, head: LinearHead) -> None:
        self.name = name
        self.model = model
        self.head = head

    def features(
        self, candidates: Sequence[Candidate], reference: Sequence[TestCase], batch_size: int
    ) -> np.ndarray:
        raise NotImplementedError

    def score(
        self,
        candidates: Sequence[Candidate],
        *,
        batch_size: int = 64,
        reference: Sequence[TestCase] = (),
    ) -> np.ndarray:
        """Log-odds that each candidate is invalid."""
        if not candidates:
            return np.zeros(0, dtype=np.float64)
        return self.head.decision(self.features(candidates, reference, batch_size))

    def save(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        payload = {"name": self.name, "model": self.model, **self.head.to_json()}
        (path / self.file_name).write_text(json.dumps(payload), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Self:
        """The ranker saved in `path`; InputError naming its file when it is not one."""
        file = path / cls.file_name
        saved = read_json(file, LinearHeadFile)
        sizes = {len(saved.mean), len(saved.scale), len(saved.weights)}
        if len(sizes) != 1:
            message = (
                f"{len(saved.mean)} means, {len(saved.scale)} scales and "
                f"{len(saved.weights)} weights; train the ensemble again"
            )
            raise InputError(Problem(message, file))
        if cls.feature_count is not None and len(saved.weights) != cls.feature_count:
            message = (
                f"{len(saved.weights)} weights for {cls.feature_count} features: trained by "
                "another version of testaug; train the ensemble again"
            )
            raise InputError(Problem(message, file))
        if any(value == 0 for value in saved.scale):
            raise InputError(Problem("a scale of 0; train the ensemble again", file))
        return cls(saved.name, saved.model, LinearHead.from_json(saved.model_dump()))
