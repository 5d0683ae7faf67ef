"""Models under test: one protocol, a factory from spec strings, and predictions.

A model under test turns inputs (a text, or a text and its pair) into
probabilities over the task's labels, in the task's label order. Spec strings:

- `vader`: the VADER rule-based sentiment analyzer (package vaderSentiment).
- `spacy:NAME_OR_PATH`: a spaCy pipeline with a text classifier; its categories
  are mapped to the task labels by name.
- `hf:HUB_ID_OR_PATH[?labels=neg,pos&max_length=128]`: a Hugging Face sequence
  classifier. `labels` names the model's outputs in order (overriding the
  config's id2label); `max_length` truncates inputs (default: the tokenizer's
  limit, at most 512 tokens).
- `py:module:function` or `module:function`: a Python callable taking a list of
  (text, text_pair) and returning an (n, k) array over the task labels or a list
  of dicts label -> probability.

Model labels are mapped to task labels by `testaug.evaluation.models.labels`. Adapters
import torch, transformers and spaCy only when a model loads, so importing this
package stays light.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable
from urllib.parse import parse_qs

import numpy as np

from testaug.core.errors import TestAugError
from testaug.core.records import Prediction, TestCase

Inputs = Sequence[tuple[str, str | None]]

SPEC_FORMS = (
    "vader",
    "spacy:NAME_OR_PATH",
    "hf:HUB_ID_OR_PATH[?labels=a,b&max_length=N]",
    "py:module:function",
    "module:function",
)
HF_OPTIONS = ("labels", "max_length")
_CALLABLE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


class ModelError(TestAugError):
    """A model under test cannot be loaded, mapped to the task labels, or run."""


@runtime_checkable
class ModelUnderTest(Protocol):
    """What evaluation needs of a model: a name, the task labels, and `predict_proba`."""

    name: str
    labels: tuple[str, ...]

    def predict_proba(self, inputs: Inputs, *, batch_size: int = 32) -> np.ndarray:
        """Probabilities of shape (n, len(labels)), rows summing to 1, in `labels` order."""
        ...


def check_task_labels(task_labels: Sequence[str]) -> tuple[str, ...]:
    """The task labels as a tuple; raises `ModelError` when empty or repeated."""
    labels = tuple(task_labels)
    if not labels:
        raise ModelError("a model under test needs the task's labels (none given)")
    if len(set(labels)) != len(labels):
        raise ModelError(f"task labels repeat: {list(labels)}")
    return labels


def unknown_spec(spec: str, reason: str = "unknown model spec") -> ModelError:
    """The error for a spec that names no model, listing the accepted forms."""
    return ModelError(f"{reason} {spec!r}; expected one of: {', '.join(SPEC_FORMS)}")


def parse_hf_options(spec: str, query: str) -> tuple[tuple[str, ...] | None, int | None]:
    """The `labels` and `max_length` options of an `hf:` spec's query string."""
    options = parse_qs(query, keep_blank_values=True, strict_parsing=False)
    unknown = sorted(set(options) - set(HF_OPTIONS))
    if unknown:
        raise unknown_spec(spec, f"unknown option(s) {unknown} (accepted: {list(HF_OPTIONS)}) in")
    labels = None
    if "labels" in options:
        labels = tuple(part.strip() for part in options["labels"][-1].split(","))
        if not all(labels):
            raise unknown_spec(spec, "empty label in `labels=` of")
    max_length = None
    if "max_length" in options:
        value = options["max_length"][-1]
        if not value.isdigit() or int(value) < 1:
            raise unknown_spec(spec, f"max_length must be a positive integer, not {value!r}, in")
        max_length = int(value)
    return labels, max_length


def load_model(spec: str, *, task_labels: Sequence[str], device: str = "cpu") -> ModelUnderTest:
    """The model a spec string names, giving probabilities over `task_labels`.

    `device` applies to Hugging Face models ("cpu", "cuda", "cuda:1", ...); the
    other adapters run where their library runs. Raises `ModelError` for an
    unknown spec, a model that does not load, or labels that cannot be mapped.
    """
    labels = check_task_labels(task_labels)
    spec = spec.strip()
    kind, _, rest = spec.partition(":")
    if spec == "vader":
        from testaug.evaluation.models.vader import VaderModel

        return VaderModel(labels)
    if kind == "spacy" and rest:
        from testaug.evaluation.models.spacy_textcat import SpacyTextcatModel

        return SpacyTextcatModel.load(rest, labels)
    if kind == "hf" and rest:
        from testaug.evaluation.models.hf import HFModel

        source, _, query = rest.partition("?")
        if not source:
            raise unknown_spec(spec, "no model id or path in")
        model_labels, max_length = parse_hf_options(spec, query)
        return HFModel.load(
            source, labels, model_labels=model_labels, max_length=max_length, device=device
        )
    target = rest if kind == "py" else spec
    if _CALLABLE.match(target):
        from testaug.evaluation.models.callable import CallableModel

        return CallableModel.load(target, labels)
    raise unknown_spec(spec)


def batches(items: Sequence, size: int) -> list[Sequence]:
    """`items` cut into consecutive slices of at most `size` (at least 1)."""
    size = max(1, int(size))
    return [items[start : start + size] for start in range(0, len(items), size)]


def predictions(
    model: ModelUnderTest,
    cases: Sequence[TestCase],
    *,
    batch_size: int = 32,
    on_batch: Callable[[int, int], None] | None = None,
) -> list[Prediction]:
    """One `Prediction` per case, in case order; the label is the argmax (ties: first label).

    `on_batch(done, total)` is called after each batch, for progress reporting.
    """
    out: list[Prediction] = []
    for chunk in batches(cases, batch_size):
        probs = np.asarray(
            model.predict_proba([(c.text, c.text_pair) for c in chunk], batch_size=batch_size),
            dtype=np.float64,
        )
        if probs.shape != (len(chunk), len(model.labels)):
            raise ModelError(
                f"model {model.name!r} returned shape {probs.shape}, "
                f"expected {(len(chunk), len(model.labels))}"
            )
        for case, row in zip(chunk, probs, strict=True):
            out.append(
                Prediction(
                    case_id=case.id,
                    model=model.name,
                    probabilities={
                        label: float(p) for label, p in zip(model.labels, row, strict=True)
                    },
                    label=model.labels[int(np.argmax(row))],
                )
            )
        if on_batch is not None:
            on_batch(len(out), len(cases))
    return out
