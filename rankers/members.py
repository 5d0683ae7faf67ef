"""The member kinds of an ensemble behind one interface: train one, load one, score."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from rankers.cross_encoder import CrossEncoderConfig, CrossEncoderRanker, train_cross_encoder
from rankers.embedding import EmbeddingConfig, EmbeddingRanker, train_embedding
from rankers.lexical import LexicalConfig, LexicalRanker, train_lexical
from rankers.neighbours import NeighbourConfig, NeighbourRanker, train_neighbours
from testaug.core.records import Candidate, LabelledCandidate, TestCase

AnyMemberConfig = CrossEncoderConfig | LexicalConfig | EmbeddingConfig | NeighbourConfig


class Ranker(Protocol):
    """A trained member: invalidity scores (higher = more likely invalid), one per candidate."""

    name: str

    def score(
        self,
        candidates: Sequence[Candidate],
        *,
        batch_size: int = 64,
        reference: Sequence[TestCase] = (),
    ) -> np.ndarray: ...

    def save(self, path: Path) -> None: ...


def train_member(
    config: AnyMemberConfig,
    labelled: Sequence[LabelledCandidate],
    *,
    reference: Sequence[TestCase],
    work_dir: Path,
    sample_weight: np.ndarray | None = None,
) -> Ranker:
    """One member trained on the labelled candidates (weighted, where weights are given)."""
    if isinstance(config, LexicalConfig):
        return train_lexical(labelled, config, sample_weight=sample_weight)
    if isinstance(config, EmbeddingConfig):
        return train_embedding(labelled, config, sample_weight=sample_weight)
    if isinstance(config, NeighbourConfig):
        return train_neighbours(labelled, config, reference=reference, sample_weight=sample_weight)
    return train_cross_encoder(labelled, config, work_dir, sample_weight=sample_weight)


def load_member(config: AnyMemberConfig, path: Path) -> Ranker:
    """A trained member from its folder."""
    if isinstance(config, LexicalConfig):
        return LexicalRanker.load(path)
    if isinstance(config, EmbeddingConfig):
        return EmbeddingRanker.load(path)
    if isinstance(config, NeighbourConfig):
        return NeighbourRanker.load(path)
    return CrossEncoderRanker.load(config.name, path, max_length=config.max_length)
