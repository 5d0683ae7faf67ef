"""The learners of one group's own labels on frozen features, and their out-of-fold scores.

Each is a logistic regression (rankers.linear_head) on features no generator's labels
shaped: frozen MiniLM embeddings of the description with its label and the candidate
(the embedding learner, rankers.embedding, on unless `embedding_learner` is off) and the
embedded language model's hidden states over the same (the language-model learner,
rankers.lm_states, where a config sets `lm_learner` and the group has its `min_labels`).
The suite-neighbour learner is trained beside them in rankers.adaptation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from rankers.embedding import EmbeddingRanker, embedding_features
from rankers.linear_head import LinearRanker, fit_linear_head
from rankers.lm_states import LM_LEARNER, LmLearnerConfig, LmStatesRanker, lm_state_features
from testaug.core.records import Candidate

EMBEDDING_LEARNER = "embedding learner"
FROZEN_RANKERS: dict[str, type[LinearRanker]] = {
    EMBEDDING_LEARNER: EmbeddingRanker,
    LM_LEARNER: LmStatesRanker,
}


class FrozenLearner(NamedTuple):
    """How a learner on frozen features reads candidates, and how it is saved."""

    ranker: type[LinearRanker]
    model: str  # what its saved file records of the features' source
    read: Callable[[Sequence[Candidate]], np.ndarray]
    l2: float


def frozen_learners(
    embedding: bool, embedding_l2: float, lm: LmLearnerConfig | None, labels: int
) -> dict[str, FrozenLearner]:
    """The learners on frozen features a group with `labels` labels stacks, by part name."""
    learners: dict[str, FrozenLearner] = {}
    if embedding:
        learners[EMBEDDING_LEARNER] = FrozenLearner(
            EmbeddingRanker, "minilm", embedding_features, embedding_l2
        )
    if lm is not None and labels >= lm.min_labels:
        learners[LM_LEARNER] = FrozenLearner(
            LmStatesRanker, lm.model_dump_json(), lambda part: lm_state_features(part, lm), lm.l2
        )
    return learners


def out_of_fold(
    x: np.ndarray,
    invalid: np.ndarray,
    fold_of: np.ndarray,
    folds: int,
    *,
    l2: float,
    weights: np.ndarray | None,
) -> np.ndarray:
    """A logistic regression's out-of-fold decision values (0 in a fold whose training
    part holds one verdict only)."""
    out = np.zeros(len(invalid))
    for fold in range(folds):
        inside, outside = fold_of != fold, fold_of == fold
        if len(set(invalid[inside].tolist())) < 2:
            continue
        head = fit_linear_head(
            x[inside],
            invalid[inside].astype(int),
            l2=l2,
            sample_weight=None if weights is None else weights[inside],
        )
        out[outside] = head.decision(x[outside])
    return out
