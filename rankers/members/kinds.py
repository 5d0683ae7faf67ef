"""The member kinds of an ensemble behind one interface: train one, load one, score.

`MEMBER_KINDS` maps a member config's `kind` to its `MemberKind`: how to train a
member from labelled candidates and how to load a trained one from its folder.
The four built-in kinds register below; a new kind registers a `MemberKind`
under its config's `kind` (or ships one as an entry point in the
`testaug.ranker_members` group), and `train_member` and `load_member` find it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from rankers.members.cross_encoder import CrossEncoderRanker, RankerError, train_cross_encoder
from rankers.members.embedding import EmbeddingRanker, train_embedding
from rankers.members.lexical import LexicalRanker, train_lexical
from rankers.members.llm_judge import LlmJudgeRanker, train_llm_judge
from rankers.members.neighbours import NeighbourRanker, train_neighbours
from testaug.core.records import Candidate, LabelledCandidate, TestCase
from testaug.core.registry import Registry


class MemberConfigLike(Protocol):
    """What dispatch reads of any member's config: its kind and the member's name."""

    @property
    def kind(self) -> str: ...

    @property
    def name(self) -> str: ...


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


class MemberTrainer(Protocol):
    """Trains one member of a kind (its config is that kind's config)."""

    def __call__(
        self,
        config: Any,
        labelled: Sequence[LabelledCandidate],
        *,
        reference: Sequence[TestCase],
        work_dir: Path,
        sample_weight: np.ndarray | None,
    ) -> Ranker: ...


class MemberLoader(Protocol):
    """Loads a trained member of a kind from the folder its `save` wrote."""

    def __call__(self, config: Any, path: Path) -> Ranker: ...


@dataclass(frozen=True)
class MemberKind:
    """A member kind: how to train a member and how to load a trained one."""

    train: MemberTrainer
    load: MemberLoader


MEMBER_KINDS: Registry[MemberKind] = Registry(
    "ranker member kind", error=RankerError, entry_points="testaug.ranker_members"
)


def train_member(
    config: MemberConfigLike,
    labelled: Sequence[LabelledCandidate],
    *,
    reference: Sequence[TestCase],
    work_dir: Path,
    sample_weight: np.ndarray | None = None,
) -> Ranker:
    """One member trained on the labelled candidates (weighted, where weights are given)."""
    return MEMBER_KINDS.get(config.kind).train(
        config, labelled, reference=reference, work_dir=work_dir, sample_weight=sample_weight
    )


def load_member(config: MemberConfigLike, path: Path) -> Ranker:
    """A trained member from its folder."""
    return MEMBER_KINDS.get(config.kind).load(config, path)


MEMBER_KINDS.add(
    "lexical",
    MemberKind(
        train=lambda config, labelled, *, sample_weight, **_: train_lexical(
            labelled, config, sample_weight=sample_weight
        ),
        load=lambda config, path: LexicalRanker.load(path),
    ),
)
MEMBER_KINDS.add(
    "embedding",
    MemberKind(
        train=lambda config, labelled, *, sample_weight, **_: train_embedding(
            labelled, config, sample_weight=sample_weight
        ),
        load=lambda config, path: EmbeddingRanker.load(path),
    ),
)
MEMBER_KINDS.add(
    "neighbours",
    MemberKind(
        train=lambda config, labelled, *, reference, sample_weight, **_: train_neighbours(
            labelled, config, reference=reference, sample_weight=sample_weight
        ),
        load=lambda config, path: NeighbourRanker.load(path),
    ),
)
MEMBER_KINDS.add(
    "cross-encoder",
    MemberKind(
        train=lambda config, labelled, *, work_dir, sample_weight, **_: train_cross_encoder(
            labelled, config, work_dir, sample_weight=sample_weight
        ),
        load=lambda config, path: CrossEncoderRanker.load(
            config.name, path, max_length=config.max_length
        ),
    ),
)
MEMBER_KINDS.add(
    "llm-judge",
    MemberKind(
        train=lambda config, labelled, **_: train_llm_judge(labelled, config),
        load=lambda config, path: LlmJudgeRanker.load(path),
    ),
)
