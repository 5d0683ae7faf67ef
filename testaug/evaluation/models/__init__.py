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
- `llm:BACKEND[:MODEL][?labels=a,b&base_url=URL]`: a chat or completion model (any
  generation backend: `openai` for OpenAI-compatible servers, `local` for the embedded
  model) asked to classify each case with `prompts/<task>-classify.yaml`; see `llm`.
- `py:module:function` or `module:function`: a Python callable taking a list of
  (text, text_pair) and returning an (n, k) array over the task labels or a list
  of dicts label -> probability.

Kinds match whatever their case (`VADER`, `HF:path`); an unknown kind is an error that
suggests the nearest kinds. `check_model_specs` checks specs before any work (each kind's
argument too: an `hf:` path that names a missing local folder is "no such folder"), as an
`InputError` naming the option.

Each kind is a loader registered in `MODEL_KINDS` by its adapter module; a new
kind registers with `@model_kind("name", "name:ARGUMENT")` (see `base`). Model
labels are mapped to task labels by `testaug.evaluation.models.labels`. Adapters
import torch, transformers and spaCy only when a model loads, so importing this
package stays light.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from testaug.core.errors import InputError, Problem, close_names
from testaug.core.records import Prediction, TestCase

# isort: off
# Importing the adapters registers their kinds, in the order messages list them.
from testaug.evaluation.models import vader, spacy_textcat, hf, llm, callable
from testaug.evaluation.models import python_object  # noqa: F401  (objects in memory)
from testaug.evaluation.models.base import (
    MODEL_KINDS,
    Inputs,
    ModelError,
    ModelKind,
    ModelLoader,
    ModelSpec,
    ModelUnderTest,
    batches,
    check_task_labels,
    model_kind,
    spec_forms,
    unknown_spec,
)

# isort: on

__all__ = [
    "MODEL_KINDS",
    "Inputs",
    "ModelError",
    "ModelKind",
    "ModelLoader",
    "ModelSpec",
    "ModelUnderTest",
    "batches",
    "callable",
    "check_model_specs",
    "check_spec",
    "check_task_labels",
    "hf",
    "llm",
    "load_model",
    "model_kind",
    "parse_spec",
    "predictions",
    "spacy_textcat",
    "spec_forms",
    "split_spec",
    "unknown_spec",
    "vader",
]


# How close a mistyped kind must be to a registered one to be suggested (`vadr`: 0.89;
# a two-letter kind such as `py` is no near miss of `spcy`, at 0.67).
KIND_CUTOFF = 0.75


def split_spec(spec: str) -> tuple[str, str, str]:
    """A spec string's text, registered kind and argument: the kind as written, else the
    kind that differs from it only in case, else `py` for a bare `module:function`. Raises
    `ModelError` suggesting the nearest kinds, and listing the accepted forms, otherwise."""
    text = spec.strip()
    kind, _, argument = text.partition(":")
    if kind in MODEL_KINDS:
        return text, kind, argument
    names = MODEL_KINDS.names()
    same = [name for name in names if name.casefold() == kind.casefold()]
    if same:
        return text, same[0], argument
    near = close_names(kind, names, cutoff=KIND_CUTOFF) if kind else []
    if callable.CALLABLE_SPEC.match(text) and (not near or callable.module_found(text)):
        return text, "py", text
    raise unknown_spec(
        text, suggestions=[f"{name}:{argument}" if argument else name for name in near]
    )


def check_spec(spec: str) -> tuple[str, str, str]:
    """`split_spec`, then the kind's own check of the argument (nothing is loaded)."""
    text, kind, argument = split_spec(spec)
    check = MODEL_KINDS.get(kind).check
    if check is not None:
        check(text, argument)
    return text, kind, argument


def check_model_specs(specs: Sequence[str], *, field: str = "--model") -> None:
    """Every spec checked before any work (`check_spec`); an `InputError` naming `field`
    with one problem per bad spec."""
    problems = []
    for spec in specs:
        try:
            check_spec(spec)
        except ModelError as exc:
            problems.append(Problem(str(exc), field=field))
    if problems:
        raise InputError(problems)


def parse_spec(spec: str, task_labels: Sequence[str], device: str = "cpu") -> ModelSpec:
    """A spec string split into its registered kind and argument and checked (`check_spec`);
    a bare `module:function` is a `py:` spec. Raises `ModelError`, listing the accepted
    forms, for anything else."""
    labels = check_task_labels(task_labels)
    text, kind, argument = check_spec(spec)
    return ModelSpec(text=text, kind=kind, argument=argument, task_labels=labels, device=device)


def load_model(spec: str, *, task_labels: Sequence[str], device: str = "cpu") -> ModelUnderTest:
    """The model a spec string names, giving probabilities over `task_labels`.

    `device` applies to Hugging Face models ("cpu", "cuda", "cuda:1", ...); the
    other adapters run where their library runs. Raises `ModelError` for an
    unknown spec, a model that does not load, or labels that cannot be mapped.
    """
    parsed = parse_spec(spec, task_labels, device)
    return MODEL_KINDS.get(parsed.kind).load(parsed)


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
