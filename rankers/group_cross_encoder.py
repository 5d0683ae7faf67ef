"""A generator's own cross-encoder: the shipped MiniLM fine-tuned on one group's labels.

Once a calibration group (a generator at a setting) has a few hundred labels, a
cross-encoder fine-tuned on them alone can read what the frozen-embedding learners
cannot: whether the case says what its description and label ask for. It is stacked like
any part of the group, so it earns its weight on the group's out-of-fold labels.

It costs minutes a group on 2 cores (each fold and the final model are a fine-tuning),
so it is off unless a config sets `adaptation: {cross_encoder: {...}}`, and it trains on
at most `max_labels` of a group's labels (its random ones first). Labels it did not
train on are scored by the final model, which never saw them, so every label has an
out-of-sample score. Sample weights are not applied: within one group, every label
counts once.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from rankers.cross_encoder import CrossEncoderConfig, CrossEncoderRanker, train_cross_encoder
from rankers.folds import fold_assignment
from testaug.core.records import LabelledCandidate

logger = logging.getLogger(__name__)

CROSS_ENCODER_LEARNER = "cross-encoder learner"
FOLDER = "cross-encoder"  # under the group's folder


class GroupCrossEncoderConfig(BaseModel):
    """When and how a group's own cross-encoder is fine-tuned."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    min_labels: int = Field(default=200, ge=20, description="a group's labels before it has one")
    max_labels: int = Field(
        default=400, ge=20, description="the most labels it trains on (random ones first)"
    )
    model: str = Field(default="minilm", description="the encoder it starts from")
    folds: int = Field(default=3, ge=2, description="cross-fitting folds for its stacking")
    epochs: int = Field(default=8, ge=1)
    learning_rate: float = Field(default=5e-5, gt=0)
    batch_size: int = Field(default=16, ge=1)
    max_length: int = Field(default=128, ge=8)
    seed: int = 0


def training_subset(random_drawn: np.ndarray, limit: int, *, seed: int) -> np.ndarray:
    """Which of a group's labels the cross-encoder trains on: up to `limit`, those drawn at
    random first (in a seeded order), then the others."""
    order = np.random.default_rng(seed).permutation(len(random_drawn))
    ranked = sorted(order.tolist(), key=lambda i: not random_drawn[i])
    return np.sort(np.array(ranked[:limit], dtype=np.int64))


def cross_fit_group_cross_encoder(
    members: Sequence[LabelledCandidate],
    random_drawn: np.ndarray,
    config: GroupCrossEncoderConfig,
    folder: Path,
    work_dir: Path,
) -> np.ndarray:
    """Fine-tune the group's cross-encoder on (a capped subset of) its labels, save it into
    `folder`, and return an out-of-sample score for every label: out-of-fold for those it
    trained on, the final model's for the rest."""
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
    trained = [members[i] for i in subset]
    fold_of = fold_assignment(trained, config.folds, seed=config.seed)
    scores = np.zeros(len(members))
    for fold in range(config.folds):
        logger.info(
            "fine-tuning a group's cross-encoder: fold %d of %d on %d labels",
            fold + 1,
            config.folds,
            int((fold_of != fold).sum()),
        )
        inside = [item for item, f in zip(trained, fold_of, strict=True) if f != fold]
        ranker = train_cross_encoder(inside, settings, work_dir)
        held = subset[fold_of == fold]
        scores[held] = ranker.score([members[i].candidate for i in held])
    logger.info("fine-tuning a group's cross-encoder on %d labels", len(trained))
    ranker = train_cross_encoder(trained, settings, work_dir)
    unseen = np.setdiff1d(np.arange(len(members)), subset)
    if len(unseen):
        scores[unseen] = ranker.score([members[i].candidate for i in unseen])
    ranker.save(folder / FOLDER)
    shutil.rmtree(work_dir, ignore_errors=True)
    return scores


def load_group_cross_encoder(folder: Path, config: GroupCrossEncoderConfig) -> CrossEncoderRanker:
    """A group's saved cross-encoder."""
    return CrossEncoderRanker.load(
        CROSS_ENCODER_LEARNER, folder / FOLDER, max_length=config.max_length
    )
