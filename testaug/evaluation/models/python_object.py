"""A Python object in memory as a model under test (what `testaug.evaluate` is given).

The object is one of:

- a model under test already (`ModelUnderTest`: `name`, `labels`, `predict_proba`), over
  labels of its own: its probabilities are mapped onto the task's labels by name as every
  adapter's are (`testaug.evaluation.models.labels`; a two-label sentiment model on a
  three-label task gets CheckList's neutral band), so its labels may be in any order, a
  subset of the task's, or negative and positive;
- a callable over a list of inputs, each a text (when no case of the call has a pair) or a
  (text, text_pair) tuple, returning one answer per input: a label (a string, mapped to
  the task's labels by name, `testaug.evaluation.models.labels`), or probabilities (an
  (n, k) array over the task labels in their order, or dicts label -> probability), as
  the `py:` adapter takes them.

Objects cannot be written in a spec string by hand: `registered(obj)` lends one a spec,
`python:NAME`, for as long as a `with` block runs, so the evaluation steps, which load
models from specs, run on it as on any other model. The kind lists no spec form in
messages for that reason.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from testaug.evaluation.models.base import (
    MODEL_KINDS,
    Inputs,
    ModelError,
    ModelKind,
    ModelSpec,
    ModelUnderTest,
    batches,
)
from testaug.evaluation.models.callable import CallableModel
from testaug.evaluation.models.labels import map_labels

KIND = "python"
_OBJECTS: dict[str, Any] = {}
_LOCK = threading.Lock()


def object_name(obj: Any) -> str:
    """The name a model object goes by: its `name`, else its function or class name."""
    name = getattr(obj, "name", None)
    if isinstance(name, str) and name:
        return name
    return getattr(obj, "__name__", None) or type(obj).__name__


@contextmanager
def registered(obj: Any, name: str | None = None) -> Iterator[str]:
    """The spec `python:NAME` naming `obj` while the block runs (a name in use by another
    object gets a numbered suffix); `ModelError` for an object that is no model."""
    if not (callable(obj) or isinstance(obj, ModelUnderTest)):
        raise ModelError(
            f"{type(obj).__name__} is not a model under test: give a callable over a list of "
            "texts, or an object with name, labels and predict_proba"
        )
    base = name or object_name(obj)
    with _LOCK:
        key, number = base, 1
        while key in _OBJECTS:
            number += 1
            key = f"{base}-{number}"
        _OBJECTS[key] = obj
    try:
        yield f"{KIND}:{key}"
    finally:
        with _LOCK:
            _OBJECTS.pop(key, None)


class LabelledObject:
    """A model object's probabilities over its own labels, mapped onto the task's labels."""

    def __init__(self, model: ModelUnderTest, task_labels: Sequence[str], *, name: str) -> None:
        self.name = name
        self.labels = tuple(task_labels)
        self.model = model
        if isinstance(model.labels, str) or not isinstance(model.labels, Sequence):
            raise ModelError(f"its labels must be a list of names, not {model.labels!r}")
        own = tuple(str(label) for label in model.labels)
        self._mapping = map_labels(
            own, self.labels, naming_hint="give the object's labels their names, in order"
        )

    @property
    def unparsed(self) -> Mapping[tuple[str, str | None], str]:
        """The inputs the object could not answer, where it keeps them (as `llm:` models do)."""
        return getattr(self.model, "unparsed", None) or {}

    def predict_proba(self, inputs: Inputs, *, batch_size: int = 32) -> np.ndarray:
        """The object's probabilities, mapped onto the task labels."""
        if not inputs:
            return np.zeros((0, len(self.labels)), dtype=np.float64)
        probs = self.model.predict_proba(inputs, batch_size=batch_size)
        try:
            return self._mapping(np.asarray(probs, dtype=np.float64))
        except (TypeError, ValueError) as exc:
            raise ModelError(f"{self.name} returned no array of probabilities: {exc}") from exc
        except ModelError as exc:
            raise ModelError(f"{self.name}: {exc}") from exc


class ObjectModel(CallableModel):
    """A callable's answers (labels or probabilities) as probabilities over the task labels."""

    def convert(self, output: Any, n: int) -> np.ndarray:
        """Labels as one-hot rows (by name, as dicts are mapped); anything else as `py:`."""
        if isinstance(output, np.ndarray) and output.dtype.kind in "US":
            output = output.tolist()
        if isinstance(output, Sequence) and output and isinstance(output[0], str):
            if len(output) != n or not all(isinstance(label, str) for label in output):
                raise ModelError(f"{self.name} returned {len(output)} labels for {n} inputs")
            rows: list[Mapping[str, float]] = [{label: 1.0} for label in output]
            return self.from_dicts(rows)
        return super().convert(output, n)

    def predict_proba(self, inputs: Inputs, *, batch_size: int = 32) -> np.ndarray:
        """Probabilities over the task labels, calling the function once per batch with
        texts, or with (text, text_pair) tuples where a case of the batch has a pair."""
        if not inputs:
            return np.zeros((0, len(self.labels)), dtype=np.float64)
        return np.concatenate(
            [
                self.convert(self.function(_arguments(chunk)), len(chunk))
                for chunk in batches(inputs, batch_size)
            ]
        )


def _arguments(chunk: Sequence[tuple[str, str | None]]) -> list[Any]:
    if all(pair is None for _, pair in chunk):
        return [text for text, _ in chunk]
    return [tuple(item) for item in chunk]


def _found(spec: str, argument: str) -> Any:
    with _LOCK:
        obj = _OBJECTS.get(argument)
    if obj is None:
        raise ModelError(
            f"no Python object is lent the spec {spec!r}: give the object itself to "
            "testaug.evaluate"
        )
    return obj


def check_object(spec: str, argument: str) -> None:
    """A `python:NAME` spec must name an object lent a spec by `registered`."""
    _found(spec, argument)


def load_object(spec: ModelSpec) -> ModelUnderTest:
    """The object a `python:NAME` spec names, over the task labels (named by the spec)."""
    obj = _found(spec.text, spec.argument)
    if isinstance(obj, ModelUnderTest) and not _is_plain_callable(obj):
        try:
            return LabelledObject(obj, spec.task_labels, name=spec.text)
        except ModelError as exc:
            raise ModelError(f"{spec.text}: {exc}") from exc
    function: Callable[..., Any] = obj
    return ObjectModel(function, spec.task_labels, name=spec.text)


def _is_plain_callable(obj: Any) -> bool:
    """A function whose attributes happen to match the protocol is still a function."""
    return callable(obj) and not hasattr(type(obj), "predict_proba")


# No spec form in messages: a spec for an object is only ever lent by `registered`.
MODEL_KINDS.add(KIND, ModelKind(forms=(), load=load_object, check=check_object))
