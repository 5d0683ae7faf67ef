"""A cheap lexical ranker: TF-IDF features of the candidate with logistic regression (numpy).

It sees only surface form and cue words (see `rankers.members.lexical_features`), so it
catches what a tiny cross-encoder misses cheaply: broken syntax, echoes of the
prompt, odd tokens, a description's phenomenon missing from the candidate.
Saved as JSON (feature set, vocabulary, idf, weights), never as a pickle.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, FiniteFloat

from rankers.members.lexical_features import FeatureSet, features
from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_json
from testaug.core.records import Candidate, LabelledCandidate, TestCase

SCORE_CHUNK = 512  # candidates per feature matrix when scoring


class SparseRows:
    """A matrix stored as its non-zero entries (row, column, value), with the two products
    logistic regression needs; numpy only. Dense TF-IDF matrices of a few thousand
    candidates over tens of thousands of features are most of a gigabyte and slow to
    multiply; this holds only the few dozen entries a candidate has."""

    def __init__(
        self, rows: np.ndarray, columns: np.ndarray, values: np.ndarray, shape: tuple[int, int]
    ) -> None:
        self.rows, self.columns, self.values, self.shape = rows, columns, values, shape

    @classmethod
    def unit(
        cls, rows: np.ndarray, columns: np.ndarray, values: np.ndarray, shape: tuple[int, int]
    ) -> SparseRows:
        """The matrix with every non-zero row scaled to unit length."""
        norms = np.sqrt(np.bincount(rows, weights=values * values, minlength=shape[0]))
        scale = np.where(norms == 0, 1.0, norms)
        return cls(rows, columns, values / scale[rows], shape)

    def dot(self, vector: np.ndarray) -> np.ndarray:
        """The matrix times `vector` (one value per row)."""
        products = self.values * vector[self.columns]
        return np.bincount(self.rows, weights=products, minlength=self.shape[0])

    def transposed_dot(self, vector: np.ndarray) -> np.ndarray:
        """The transposed matrix times `vector` (one value per column)."""
        products = self.values * vector[self.rows]
        return np.bincount(self.columns, weights=products, minlength=self.shape[1])


class LexicalConfig(BaseModel):
    """How the lexical member is trained."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["lexical"] = "lexical"
    name: str
    features: FeatureSet = "conditioned"
    min_count: int = Field(default=2, ge=1)
    l2: float = Field(default=1.0, ge=0.0)
    iterations: int = Field(default=400, ge=1)
    learning_rate: float = Field(default=0.5, gt=0)


class LexicalFile(BaseModel):
    """What lexical.json holds: a trained lexical ranker."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    features: FeatureSet = "surface"  # saved before feature sets existed
    vocabulary: dict[str, int]
    idf: list[FiniteFloat]
    weights: list[FiniteFloat]
    bias: FiniteFloat


class LexicalRanker:
    """Logistic regression over TF-IDF features; `score` gives the log-odds of invalid."""

    def __init__(
        self,
        name: str,
        feature_set: FeatureSet,
        vocabulary: dict[str, int],
        idf: np.ndarray,
        weights: np.ndarray,
        bias: float,
    ) -> None:
        self.name = name
        self.feature_set = feature_set
        self.vocabulary = vocabulary
        self.idf = idf
        self.weights = weights
        self.bias = bias

    def _matrix(self, candidates: Sequence[Candidate]) -> SparseRows:
        """The candidates' TF-IDF rows, each of unit length (only the non-zero entries)."""
        rows: list[int] = []
        columns: list[int] = []
        values: list[float] = []
        for row, candidate in enumerate(candidates):
            for feature, count in features(candidate, self.feature_set).items():
                column = self.vocabulary.get(feature)
                if column is not None:
                    rows.append(row)
                    columns.append(column)
                    values.append(1.0 + math.log(count))
        # In column order within each row: the sums then do not depend on the order a
        # candidate's features come in (set order changes with the process's hash seed).
        order = np.lexsort((np.asarray(columns, dtype=np.int64), np.asarray(rows, dtype=np.int64)))
        kept = np.asarray(columns, dtype=np.int64)[order]
        return SparseRows.unit(
            np.asarray(rows, dtype=np.int64)[order],
            kept,
            np.asarray(values, dtype=np.float64)[order] * self.idf[kept],
            (len(candidates), len(self.vocabulary)),
        )

    def score(
        self,
        candidates: Sequence[Candidate],
        *,
        batch_size: int = 0,
        reference: Sequence[TestCase] = (),
    ) -> np.ndarray:
        """Log-odds that each candidate is invalid, in chunks of `SCORE_CHUNK` (memory stays flat).

        `batch_size` and `reference` are accepted for the ensemble's sake; chunks are what
        bound memory here, and the candidate alone is what this member reads.
        """
        if not candidates:
            return np.zeros(0, dtype=np.float64)
        chunks = [
            self._matrix(candidates[start : start + SCORE_CHUNK]).dot(self.weights)
            for start in range(0, len(candidates), SCORE_CHUNK)
        ]
        return np.concatenate(chunks) + self.bias

    def save(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        payload = {
            "name": self.name,
            "features": self.feature_set,
            "vocabulary": self.vocabulary,
            "idf": self.idf.tolist(),
            "weights": self.weights.tolist(),
            "bias": self.bias,
        }
        (path / "lexical.json").write_text(json.dumps(payload), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> LexicalRanker:
        """The ranker saved in `path`; InputError naming lexical.json when it is not one."""
        file = path / "lexical.json"
        saved = read_json(file, LexicalFile)
        size = len(saved.vocabulary)
        if len(saved.idf) != size or len(saved.weights) != size:
            message = (
                f"{size} vocabulary entries but {len(saved.idf)} idf values and "
                f"{len(saved.weights)} weights; train the ensemble again"
            )
            raise InputError(Problem(message, file))
        if any(not 0 <= column < size for column in saved.vocabulary.values()):
            raise InputError(Problem(f"a vocabulary column outside 0..{size - 1}", file))
        return cls(
            saved.name,
            saved.features,
            saved.vocabulary,
            np.asarray(saved.idf, dtype=np.float64),
            np.asarray(saved.weights, dtype=np.float64),
            saved.bias,
        )


def train_lexical(
    labelled: Sequence[LabelledCandidate],
    config: LexicalConfig,
    *,
    sample_weight: np.ndarray | None = None,
) -> LexicalRanker:
    """Fit TF-IDF and an L2-regularised logistic regression by full-batch gradient descent.

    Deterministic: no sampling. Classes are weighted so invalid and valid count equally;
    `sample_weight` weighs candidates on top of that.
    """
    documents = [features(item.candidate, config.features) for item in labelled]
    frequency: Counter[str] = Counter(f for doc in documents for f in doc)
    kept = sorted(f for f, n in frequency.items() if n >= config.min_count)
    vocabulary = {f: i for i, f in enumerate(kept)}
    n = max(len(documents), 1)
    idf = np.array([math.log((1 + n) / (1 + frequency[f])) + 1.0 for f in kept])
    ranker = LexicalRanker(config.name, config.features, vocabulary, idf, np.zeros(len(kept)), 0.0)
    x = ranker._matrix([item.candidate for item in labelled])
    y = np.array([0.0 if item.valid else 1.0 for item in labelled])
    positives = max(y.sum(), 1.0)
    negatives = max(len(y) - y.sum(), 1.0)
    balance = np.where(y == 1.0, len(y) / (2 * positives), len(y) / (2 * negatives))
    if sample_weight is not None:
        given = np.asarray(sample_weight, dtype=np.float64)
        balance = balance * given / given.mean()
    weights, bias = np.zeros(x.shape[1]), 0.0
    for _ in range(config.iterations):
        p = 1.0 / (1.0 + np.exp(-(x.dot(weights) + bias)))
        error = (p - y) * balance
        gradient = x.transposed_dot(error) / len(y) + config.l2 * weights / len(y)
        weights -= config.learning_rate * gradient
        bias -= config.learning_rate * error.mean()
    ranker.weights, ranker.bias = weights, float(bias)
    return ranker
