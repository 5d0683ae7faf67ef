"""Any Python callable as a model under test (`py:module:function` or `module:function`).

The function takes a list of (text, text_pair) and returns either an (n, k)
array-like over the task labels, in the task's order, or a list of n dicts
label -> probability (labels mapped by name, `testaug.evaluation.models.labels`; a label a
row leaves out counts as 0). Rows are normalized to sum 1.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from testaug.evaluation.models.base import (
    Inputs,
    ModelError,
    ModelSpec,
    batches,
    model_kind,
    unknown_spec,
)
from testaug.evaluation.models.labels import map_labels, normalize_rows

# `module:function`, the argument of a `py:` spec (or a whole spec without `py:`).
CALLABLE_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


def import_function(target: str) -> Callable[[list[tuple[str, str | None]]], Any]:
    """The callable `module:function` names; `ModelError` when it cannot be imported."""
    module_name, _, function_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ModelError(
            f"cannot import module {module_name!r} for model {target!r}: {exc}"
        ) from exc
    function = getattr(module, function_name, None)
    if not callable(function):
        raise ModelError(f"module {module_name!r} has no callable {function_name!r}")
    return function


class CallableModel:
    """A Python function's outputs as probabilities over the task labels."""

    def __init__(self, function: Callable[..., Any], task_labels: Sequence[str], *, name: str):
        self.name = name
        self.labels = tuple(task_labels)
        self.function = function

    @classmethod
    def load(cls, target: str, task_labels: Sequence[str]) -> CallableModel:
        """The model for `module:function`."""
        return cls(import_function(target), task_labels, name=f"py:{target}")

    def from_dicts(self, rows: Sequence[Mapping[str, float]]) -> np.ndarray:
        """Probabilities over the task labels from dicts label -> probability."""
        keys = list(dict.fromkeys(key for row in rows for key in row))
        if not keys:
            raise ModelError(f"{self.name} returned dicts without labels")
        mapping = map_labels(keys, self.labels)
        raw = np.array([[float(row.get(key, 0.0)) for key in keys] for row in rows])
        return mapping(normalize_rows(raw, source=self.name))

    def convert(self, output: Any, n: int) -> np.ndarray:
        """The function's output for `n` inputs as an (n, k) array whose rows sum to 1."""
        if isinstance(output, Sequence) and output and isinstance(output[0], Mapping):
            if len(output) != n or not all(isinstance(row, Mapping) for row in output):
                raise ModelError(f"{self.name} returned {len(output)} dicts for {n} inputs")
            return self.from_dicts(output)
        try:
            probs = np.asarray(output, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ModelError(f"{self.name} returned neither an array nor dicts: {exc}") from exc
        if probs.shape != (n, len(self.labels)):
            raise ModelError(
                f"{self.name} returned shape {probs.shape}; expected {(n, len(self.labels))} "
                f"over the task labels {list(self.labels)}"
            )
        return normalize_rows(probs, source=self.name)

    def predict_proba(self, inputs: Inputs, *, batch_size: int = 32) -> np.ndarray:
        """Probabilities over the task labels, calling the function once per batch."""
        if not inputs:
            return np.zeros((0, len(self.labels)), dtype=np.float64)
        return np.concatenate(
            [
                self.convert(self.function(list(chunk)), len(chunk))
                for chunk in batches(inputs, batch_size)
            ]
        )


def module_found(target: str) -> bool:
    """Whether the top-level package of `module:function` can be imported (found, not
    imported: nothing runs)."""
    top = target.partition(":")[0].partition(".")[0]
    try:
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return False


def check_callable(spec: str, argument: str) -> None:
    """`py:` needs `module:function` whose top-level package exists (importing it is left
    to loading)."""
    if not CALLABLE_SPEC.match(argument):
        raise unknown_spec(spec)
    if not module_found(argument):
        module = argument.partition(":")[0]
        raise ModelError(
            f"cannot import module {module!r} for model {spec!r}: no module named "
            f"{module.partition('.')[0]!r}"
        )


@model_kind("py", "py:module:function", "module:function", check=check_callable)
def load_callable(spec: ModelSpec) -> CallableModel:
    """A `py:module:function` spec."""
    check_callable(spec.text, spec.argument)
    return CallableModel.load(spec.argument, spec.task_labels)
