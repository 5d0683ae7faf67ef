"""What every model under test shares: the protocol, its errors, spec strings and the registry.

A spec string names a model: `KIND:ARGUMENT` (or just `KIND`), where KIND is a
name in `MODEL_KINDS`; a bare `module:function` is a Python callable. Each
adapter module registers its kind with `model_kind`, and installed packages add
kinds through the `testaug.models` entry-point group (an entry point naming a
`ModelKind`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from testaug.core.errors import TestAugError, did_you_mean
from testaug.core.records import Record
from testaug.core.registry import Registry

Inputs = Sequence[tuple[str, str | None]]


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


class ModelSpec(Record):
    """A parsed spec string and what the model must predict: `kind:argument`, the task's
    labels (checked: distinct, at least one) and the device for models that choose one."""

    text: str
    kind: str
    argument: str = ""
    task_labels: tuple[str, ...]
    device: str = "cpu"


ModelLoader = Callable[[ModelSpec], ModelUnderTest]
# Checks a spec's text and argument without loading anything; raises ModelError.
SpecCheck = Callable[[str, str], None]


@dataclass(frozen=True)
class ModelKind:
    """How one kind's specs are written (for messages), the function that loads them, and
    optionally a cheap check of a spec's argument that runs before any work starts."""

    forms: tuple[str, ...]
    load: ModelLoader
    check: SpecCheck | None = None


MODEL_KINDS: Registry[ModelKind] = Registry(
    "model kind", error=ModelError, entry_points="testaug.models"
)


def model_kind(
    name: str, *forms: str, check: SpecCheck | None = None
) -> Callable[[ModelLoader], ModelLoader]:
    """A decorator registering a loader as the model kind `name`, written as `forms`
    (default `NAME:ARGUMENT`), with `check(spec, argument)` run on a spec before any work;
    returns the loader unchanged."""

    def decorate(load: ModelLoader) -> ModelLoader:
        kind = ModelKind(forms=forms or (f"{name}:ARGUMENT",), load=load, check=check)
        MODEL_KINDS.add(name, kind)
        return load

    return decorate


def spec_forms() -> tuple[str, ...]:
    """Every way a spec can be written, kind by kind in registration order."""
    forms: list[str] = []
    for name in MODEL_KINDS.names():
        try:
            forms += MODEL_KINDS.get(name).forms
        except ModelError:  # a plugin that does not load still shows its name
            forms.append(f"{name}:ARGUMENT")
    return tuple(forms)


def unknown_spec(
    spec: str, reason: str = "unknown model spec", suggestions: Sequence[str] = ()
) -> ModelError:
    """The error for a spec that names no model, with the `suggestions` for it ("did you
    mean"), listing the accepted forms."""
    return ModelError(
        f"{reason} {spec!r}{did_you_mean(suggestions)}; expected one of: {', '.join(spec_forms())}"
    )


def check_task_labels(task_labels: Sequence[str]) -> tuple[str, ...]:
    """The task labels as a tuple; raises `ModelError` when empty or repeated."""
    labels = tuple(task_labels)
    if not labels:
        raise ModelError("a model under test needs the task's labels (none given)")
    if len(set(labels)) != len(labels):
        raise ModelError(f"task labels repeat: {list(labels)}")
    return labels


def batches(items: Sequence, size: int) -> list[Sequence]:
    """`items` cut into consecutive slices of at most `size` (at least 1)."""
    size = max(1, int(size))
    return [items[start : start + size] for start in range(0, len(items), size)]
