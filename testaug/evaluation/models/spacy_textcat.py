"""A spaCy pipeline with a text classifier as a model under test.

The pipeline's `textcat` (or `textcat_multilabel`) categories are its labels;
each document's `cats` are normalized to sum 1 and mapped to the task labels by
name (`testaug.evaluation.models.labels`). spaCy text classifiers take single texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from testaug.evaluation.models.base import Inputs, ModelError, ModelSpec, model_kind, unknown_spec
from testaug.evaluation.models.labels import map_labels

TEXTCAT_FACTORIES = ("textcat", "textcat_multilabel")


def textcat_labels(nlp: Any, source: str) -> tuple[str, ...]:
    """The labels of the pipeline's first text classifier; `ModelError` when it has none."""
    for name in nlp.pipe_names:
        if nlp.get_pipe_meta(name).factory in TEXTCAT_FACTORIES:
            labels = tuple(nlp.get_pipe(name).labels)
            if labels:
                return labels
    raise ModelError(f"spaCy pipeline {source!r} has no text classifier with labels")


class SpacyTextcatModel:
    """A spaCy text classifier's category scores over the task labels."""

    def __init__(self, nlp: Any, task_labels: Sequence[str], *, source: str) -> None:
        self.name = f"spacy:{source}"
        self.labels = tuple(task_labels)
        self.nlp = nlp
        self.cats = textcat_labels(nlp, source)
        self._mapping = map_labels(self.cats, self.labels)

    @classmethod
    def load(cls, source: str, task_labels: Sequence[str]) -> SpacyTextcatModel:
        """Load a pipeline by package name or path; `ModelError` when it does not load."""
        try:
            import spacy
        except ImportError as exc:
            raise ModelError("spacy: models need `pip install spacy`") from exc
        try:
            nlp = spacy.load(source)
        except (OSError, ValueError, ImportError) as exc:
            raise ModelError(f"cannot load spaCy pipeline {source!r}: {exc}") from exc
        return cls(nlp, task_labels, source=source)

    def predict_proba(self, inputs: Inputs, *, batch_size: int = 32) -> np.ndarray:
        """Probabilities over the task labels, from `nlp.pipe` in batches."""
        if any(pair is not None for _, pair in inputs):
            raise ModelError(f"{self.name} classifies single texts, not text pairs")
        docs = self.nlp.pipe([text for text, _ in inputs], batch_size=max(1, batch_size))
        raw = np.array(
            [[doc.cats.get(cat, 0.0) for cat in self.cats] for doc in docs], dtype=np.float64
        ).reshape(len(inputs), len(self.cats))
        return self._mapping(raw)


def check_spacy(spec: str, argument: str) -> None:
    """`spacy:` needs a package name or a path."""
    if not argument:
        raise unknown_spec(spec)


@model_kind("spacy", "spacy:NAME_OR_PATH", check=check_spacy)
def load_spacy(spec: ModelSpec) -> SpacyTextcatModel:
    """A `spacy:NAME_OR_PATH` spec."""
    check_spacy(spec.text, spec.argument)
    return SpacyTextcatModel.load(spec.argument, spec.task_labels)
