"""A generator's own cross-encoder: the shipped MiniLM fine-tuned on one group's labels.

Once a calibration group (a generator at a setting) has a few hundred labels from people,
a cross-encoder fine-tuned on them alone can read what the frozen-embedding learners
cannot: whether the case says what its description and label ask for. It is stacked like
any part of the group, so it earns its weight on the group's out-of-fold labels, and gets
none where it reads less than the other parts.

It is on by default for a group with `min_labels` labels that did not ship with testaug
(people's verdicts, or a labelled file of the user's): the groups of the shipped training
data never fine-tune one, so the default ensemble trains in minutes. It is cross-fitted in
`folds` folds on at most `max_labels` of a group's labels (its random ones first); each
label it trained on is scored by the fold model that did not see it, and new candidates,
like the labels beyond the cap, by the mean of the fold models. The cap keeps one group at
about 4.5 minutes on 2 cores (`folds - 1` passes over the capped labels per epoch, at
about 28 a second). Sample weights are not applied: within one group, every label counts
once.
"""

from __future__ import annotations

import functools
import logging
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from rankers.folds import fold_assignment
from rankers.members.cross_encoder import (
    CrossEncoderConfig,
    CrossEncoderRanker,
    train_cross_encoder,
)
from testaug.core.bundled import bundled_dir
from testaug.core.jsonl import read_jsonl, read_jsonl_parts
from testaug.core.records import Candidate, LabelledCandidate

logger = logging.getLogger(__name__)

CROSS_ENCODER_LEARNER = "cross-encoder learner"
FOLDER = "cross-encoder"  # under the group's folder, one fold-<i> folder per fold model


class GroupCrossEncoderConfig(BaseModel):
    """When and how a group's own cross-encoder is fine-tuned."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["cross-encoder"] = "cross-encoder"
    name: str = CROSS_ENCODER_LEARNER
    min_labels: int = Field(
        default=200, ge=20, description="a group's labels from people before it has one"
    )
    max_labels: int = Field(
        default=450, ge=20, description="the most labels it trains on (random ones first)"
    )
    shipped_labels: bool = Field(
        default=False, description="also count the labels that ship with testaug"
    )
    model: str = Field(default="minilm", description="the encoder it starts from")
    folds: int = Field(default=3, ge=2, description="cross-fitting folds; new candidates: mean")
    epochs: int = Field(default=8, ge=1)
    learning_rate: float = Field(default=5e-5, gt=0)
    batch_size: int = Field(default=16, ge=1)
    max_length: int = Field(default=128, ge=8)
    seed: int = 0


@functools.cache
def shipped_ids() -> frozenset[str]:
    """The ids of the labelled candidates that ship with testaug (data/validity)."""
    folder = bundled_dir("data") / "validity"
    ids = {item.candidate.id for item in read_jsonl_parts(folder / "train", LabelledCandidate)}
    for path in [folder / "test.jsonl", *sorted((folder / "dense").glob("*.jsonl"))]:
        if path.is_file():
            ids.update(item.candidate.id for item in read_jsonl(path, LabelledCandidate))
    return frozenset(ids)


def labels_counted(members: Sequence[LabelledCandidate], config: GroupCrossEncoderConfig) -> int:
    """How many of a group's labels count towards its `min_labels`: those that did not ship
    with testaug (all of them with `shipped_labels`)."""
    if config.shipped_labels:
        return len(members)
    shipped = shipped_ids()
    return sum(item.candidate.id not in shipped for item in members)


def training_subset(random_drawn: np.ndarray, limit: int, *, seed: int) -> np.ndarray:
    """Which of a group's labels the cross-encoder trains on: up to `limit`, those drawn at
    random first (in a seeded order), then the others."""
    order = np.random.default_rng(seed).permutation(len(random_drawn))
    ranked = sorted(order.tolist(), key=lambda i: not random_drawn[i])
    return np.sort(np.array(ranked[:limit], dtype=np.int64))


class GroupCrossEncoder:
    """A group's fold models; a candidate's score is their mean."""

    def __init__(self, folds: Sequence[CrossEncoderRanker]) -> None:
        self.folds = list(folds)

    def score(self, candidates: Sequence[Candidate]) -> np.ndarray:
        if not candidates:
            return np.zeros(0)
        return np.mean([model.score(candidates) for model in self.folds], axis=0)


def cross_fit_group_cross_encoder(
    members: Sequence[LabelledCandidate],
    random_drawn: np.ndarray,
    config: GroupCrossEncoderConfig,
    folder: Path,
    work_dir: Path,
) -> np.ndarray:
    """Fine-tune the group's cross-encoder in folds on (a capped subset of) its labels, save
    the fold models into `folder`, and return an out-of-sample score for every label: the
    fold model's that did not see it, the fold models' mean for those beyond the cap."""
    settings = CrossEncoderConfig(
        name=CROSS_ENCODER_LEARNER,
        model=config.model,
        loss="bce",
        epochs=config.epochs,
        learning_rate=config.learning_rate,
        batch_size=config.batch_size,
        max_length=config.max_length,
        seed=config.seed,
    )
    subset = training_subset(random_drawn, config.max_labels, seed=config.seed)
    if len(subset) < len(members):
        logger.info(
            "a group's cross-encoder trains on %d of its %d labels (max_labels)",
            len(subset),
            len(members),
        )
    trained = [members[i] for i in subset]
    fold_of = fold_assignment(trained, config.folds, seed=config.seed)
    scores = np.zeros(len(members))
    models = []
    for fold in range(config.folds):
        inside = [item for item, f in zip(trained, fold_of, strict=True) if f != fold]
        logger.info(
            "fine-tuning a group's cross-encoder: fold %d of %d on %d labels",
            fold + 1,
            config.folds,
            len(inside),
        )
        ranker = train_cross_encoder(inside, settings, work_dir / str(fold))
        held = subset[fold_of == fold]
        scores[held] = ranker.score([members[i].candidate for i in held])
        ranker.save(folder / FOLDER / f"fold-{fold}")
        models.append(ranker)
    unseen = np.setdiff1d(np.arange(len(members)), subset)
    if len(unseen):
        scores[unseen] = GroupCrossEncoder(models).score([members[i].candidate for i in unseen])
    shutil.rmtree(work_dir, ignore_errors=True)
    return scores


def load_group_cross_encoder(folder: Path, config: GroupCrossEncoderConfig) -> GroupCrossEncoder:
    """A group's saved cross-encoder (its fold models)."""
    return GroupCrossEncoder(
        [
            CrossEncoderRanker.load(
                CROSS_ENCODER_LEARNER,
                folder / FOLDER / f"fold-{fold}",
                max_length=config.max_length,
            )
            for fold in range(config.folds)
        ]
    )
