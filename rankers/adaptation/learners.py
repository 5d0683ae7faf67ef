"""The learners of one group's own labels, as registered kinds.

A learner kind is a config (its `kind`, the `name` of the part it stacks as, the labels a
group needs before it, its own settings) and a learner that fits out of fold on a group,
saves its model into a folder of the group's, and scores new candidates from that folder.
`adaptation.learners` lists the configs; rankers.adaptation.groups trains every learner in one
loop and scores in another, naming none. The kinds:

- `neighbours`: a logistic regression on the suite-neighbour features (rankers.members.neighbours);
- `embedding`: one on frozen MiniLM embeddings of the description with its label and the
  candidate (rankers.members.embedding);
- `lm-states`: one on the embedded language model's hidden states (rankers.adaptation.lm_states;
  off by default for its cost);
- `cross-encoder`: the shipped MiniLM fine-tuned on the group's labels from people
  (rankers.adaptation.cross_encoder).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Literal, NamedTuple, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from rankers.adaptation.cross_encoder import (
    GroupCrossEncoderConfig,
    cross_fit_group_cross_encoder,
    labels_counted,
    load_group_cross_encoder,
)
from rankers.adaptation.lm_states import LmLearnerConfig, LmStatesRanker, lm_state_features
from rankers.members.embedding import EmbeddingRanker, embedding_features
from rankers.members.linear_head import LinearRanker, fit_linear_head
from rankers.members.neighbours import NeighbourRanker
from testaug.core.records import Candidate, LabelledCandidate

NEIGHBOUR_LEARNER, EMBEDDING_LEARNER = "learner", "embedding learner"


class NeighbourLearnerConfig(BaseModel):
    """A logistic regression on a group's suite-neighbour features."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["neighbours"] = "neighbours"
    name: str = NEIGHBOUR_LEARNER
    min_labels: int = Field(default=20, ge=10, description="a group's labels before it")
    l2: float = Field(default=0.1, gt=0, description="its inverse regularisation")


class EmbeddingLearnerConfig(BaseModel):
    """A logistic regression on frozen MiniLM embeddings of description, label and case."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["embedding"] = "embedding"
    name: str = EMBEDDING_LEARNER
    min_labels: int = Field(default=20, ge=10, description="a group's labels before it")
    l2: float = Field(default=1.0, gt=0, description="its inverse regularisation")


LearnerConfig = Annotated[
    NeighbourLearnerConfig | EmbeddingLearnerConfig | LmLearnerConfig | GroupCrossEncoderConfig,
    Field(discriminator="kind"),
]
DEFAULT_LEARNERS: tuple[LearnerConfig, ...] = (
    NeighbourLearnerConfig(),
    EmbeddingLearnerConfig(),
    GroupCrossEncoderConfig(),
)


class GroupData(NamedTuple):
    """What a learner fits on: a group's labelled candidates, their verdicts (True:
    invalid), cross-fitting folds, sample weights and suite-neighbour features."""

    members: Sequence[LabelledCandidate]
    invalid: np.ndarray
    fold_of: np.ndarray
    folds: int
    weights: np.ndarray | None
    features: np.ndarray

    @property
    def candidates(self) -> list[Candidate]:
        return [member.candidate for member in self.members]


class GroupLearner(Protocol):
    """A learner of one group's labels."""

    name: str

    def applies(self, group: GroupData) -> bool:
        """Whether the group has what it needs (its labels, two folds)."""

    def fit(self, group: GroupData, folder: Path, work: Path) -> np.ndarray:
        """Out-of-fold scores of the group's labels; its model saved into `folder`."""

    def score(
        self, candidates: Sequence[Candidate], features: np.ndarray, folder: Path
    ) -> np.ndarray:
        """New candidates' scores (their suite-neighbour features given) by the saved model."""


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


class LinearLearner:
    """A logistic regression on features a kind reads of the candidates, saved as the
    kind's `LinearRanker` (JSON)."""

    def __init__(
        self,
        config: NeighbourLearnerConfig | EmbeddingLearnerConfig | LmLearnerConfig,
        ranker: type[LinearRanker],
        model: str,
        read: Callable[[Sequence[Candidate], np.ndarray], np.ndarray],
    ) -> None:
        self.config, self.name = config, config.name
        self.ranker, self.model, self.read = ranker, model, read

    def applies(self, group: GroupData) -> bool:
        return len(group.members) >= self.config.min_labels and group.folds >= 2

    def fit(self, group: GroupData, folder: Path, work: Path) -> np.ndarray:
        x = self.read(group.candidates, group.features)
        labels = group.invalid.astype(int)
        l2, weights = self.config.l2, group.weights
        scores = out_of_fold(x, group.invalid, group.fold_of, group.folds, l2=l2, weights=weights)
        head = fit_linear_head(x, labels, l2=l2, sample_weight=weights)
        self.ranker(self.name, self.model, head).save(folder)
        return scores

    def score(
        self, candidates: Sequence[Candidate], features: np.ndarray, folder: Path
    ) -> np.ndarray:
        return self.ranker.load(folder).head.decision(self.read(candidates, features))


class CrossEncoderLearner:
    """The shipped MiniLM fine-tuned in folds on a group's labels from people."""

    def __init__(self, config: GroupCrossEncoderConfig) -> None:
        self.config, self.name = config, config.name

    def applies(self, group: GroupData) -> bool:
        return labels_counted(group.members, self.config) >= self.config.min_labels

    def fit(self, group: GroupData, folder: Path, work: Path) -> np.ndarray:
        from rankers.adaptation.groups import is_random_sample

        drawn = np.array([is_random_sample(m) for m in group.members])
        return cross_fit_group_cross_encoder(group.members, drawn, self.config, folder, work)

    def score(
        self, candidates: Sequence[Candidate], features: np.ndarray, folder: Path
    ) -> np.ndarray:
        return load_group_cross_encoder(folder, self.config).score(candidates)


def _neighbour_features(candidates: Sequence[Candidate], features: np.ndarray) -> np.ndarray:
    return features


def _embedding_features(candidates: Sequence[Candidate], features: np.ndarray) -> np.ndarray:
    return embedding_features(candidates)


KINDS: dict[str, Callable[..., GroupLearner]] = {
    "neighbours": lambda c: LinearLearner(c, NeighbourRanker, "minilm", _neighbour_features),
    "embedding": lambda c: LinearLearner(c, EmbeddingRanker, "minilm", _embedding_features),
    "lm-states": lambda c: LinearLearner(
        c, LmStatesRanker, c.model_dump_json(), lambda cands, _: lm_state_features(cands, c)
    ),
    "cross-encoder": CrossEncoderLearner,
}


def learner_folder(group_folder: Path, name: str) -> Path:
    """The folder a group's learner saves its model in: one per learner, named after it."""
    return group_folder / (re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.") or "learner")


def learner_for(config: LearnerConfig) -> GroupLearner:
    """The learner of a config, by its kind."""
    return KINDS[config.kind](config)
