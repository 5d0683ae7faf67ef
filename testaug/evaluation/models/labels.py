"""Mapping a model's own output labels onto the task's labels.

Names are compared after canonicalizing: lower case, spaces and hyphens become
underscores, and the aliases in `ALIASES` become their canonical name. Then:

1. A model with a 2-class sentiment output (negative, positive) under a task
   with negative, neutral and positive uses CheckList's neutral band:
   P(positive) in the open interval (1/3, 2/3) is neutral. See
   `neutral_band`.
2. Otherwise every model label must be a task label; the model's probabilities
   are reordered into the task's order, and a task label the model cannot
   produce gets probability 0.
3. Anything else raises `ModelError` naming both label sets. Generic names such
   as LABEL_0 / LABEL_1 are never guessed: name the outputs with `?labels=`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from testaug.evaluation.models.base import ModelError

# Canonical name -> accepted aliases (after lower-casing; spaces/hyphens -> "_").
# "0"/"1" follow GLUE QQP (0 = not_duplicate, 1 = duplicate), the only task
# whose integer labels are conventional enough to accept.
ALIASES: dict[str, tuple[str, ...]] = {
    "negative": ("neg", "negative"),
    "neutral": ("neu", "neutral"),
    "positive": ("pos", "positive"),
    "entailment": ("entail", "entails", "entailment", "entailed"),
    "contradiction": ("contradict", "contradicts", "contradiction", "contradictory"),
    "duplicate": ("duplicate", "dup", "is_duplicate", "paraphrase", "1"),
    "not_duplicate": ("not_duplicate", "non_duplicate", "not_dup", "not_paraphrase", "0"),
}
_CANONICAL = {alias: name for name, aliases in ALIASES.items() for alias in aliases}
SENTIMENT_2 = frozenset({"negative", "positive"})
SENTIMENT_3 = frozenset({"negative", "neutral", "positive"})
NEUTRAL_LOW, NEUTRAL_HIGH = 1.0 / 3.0, 2.0 / 3.0
# At the exact band edges the smooth formula ties; the rule's label is raised
# above the tie by this much (then the row is renormalized).
TIE_MARGIN = 1e-9


def canonical(label: str) -> str:
    """A label's canonical name: lower case, `_` for spaces and hyphens, aliases resolved."""
    key = re.sub(r"[\s\-]+", "_", str(label).strip().lower())
    return _CANONICAL.get(key, key)


def three_way(p_pos: np.ndarray, winner: np.ndarray) -> np.ndarray:
    """Rows (negative, neutral, positive) from P(positive), with `winner` (0, 1, 2) the argmax.

    With p = P(positive) and q = 1 - p, the scores are (q, 1 - |p - q|, p), divided
    by their sum 2 - |p - q|. Negative leads for p < 1/3, neutral for 1/3 < p < 2/3,
    positive for p > 2/3; at p = 1/3 and 2/3 two scores tie, and the tie goes to
    `winner` (raised by `TIE_MARGIN`), so the argmax is exactly the caller's rule.
    """
    p = np.clip(np.asarray(p_pos, dtype=np.float64).reshape(-1), 0.0, 1.0)
    q = 1.0 - p
    scores = np.stack([q, 1.0 - np.abs(p - q), p], axis=1)
    rows = np.arange(len(p))
    best_other = np.max(np.where(np.eye(3, dtype=bool)[winner], -np.inf, scores), axis=1)
    scores[rows, winner] = np.maximum(scores[rows, winner], best_other + TIE_MARGIN)
    return scores / scores.sum(axis=1, keepdims=True)


def neutral_band(p_pos: np.ndarray) -> np.ndarray:
    """CheckList's neutral band: rows (negative, neutral, positive) from P(positive).

    P(positive) <= 1/3 is negative, >= 2/3 positive, strictly between neutral; the
    distribution is `three_way`'s.
    """
    p = np.asarray(p_pos, dtype=np.float64).reshape(-1)
    winner = np.where(p <= NEUTRAL_LOW, 0, np.where(p >= NEUTRAL_HIGH, 2, 1))
    return three_way(p, winner)


def normalize_rows(probs: np.ndarray, *, source: str) -> np.ndarray:
    """Rows scaled to sum 1; raises `ModelError` for negative, non-finite or all-zero rows."""
    probs = np.asarray(probs, dtype=np.float64)
    if probs.ndim != 2:
        raise ModelError(
            f"{source}: expected a 2-d array of probabilities, got shape {probs.shape}"
        )
    if not np.all(np.isfinite(probs)) or np.any(probs < 0):
        raise ModelError(f"{source}: probabilities must be finite and non-negative")
    sums = probs.sum(axis=1, keepdims=True)
    if np.any(sums <= 0):
        raise ModelError(f"{source}: a row of probabilities sums to 0")
    return probs / sums


# How a model's outputs are named where its labels are generic (LABEL_0, LABEL_1, ...).
NAMING_HINT = "name the model's outputs in order, e.g. hf:MODEL?labels=negative,positive"


class LabelMapping:
    """Turns probabilities over a model's labels into probabilities over the task's labels.
    `naming_hint` says how to name generic labels for the kind of model at hand."""

    def __init__(
        self,
        model_labels: Sequence[str],
        task_labels: Sequence[str],
        *,
        naming_hint: str = NAMING_HINT,
    ) -> None:
        self.model_labels = tuple(model_labels)
        self.task_labels = tuple(task_labels)
        self.naming_hint = naming_hint
        model = [canonical(label) for label in self.model_labels]
        task = [canonical(label) for label in self.task_labels]
        self._check_unique(model, self.model_labels, "model")
        self._check_unique(task, self.task_labels, "task")
        self.neutral_band = set(model) == SENTIMENT_2 and set(task) == SENTIMENT_3
        if self.neutral_band:
            self._band_columns = [task.index(name) for name in ("negative", "neutral", "positive")]
            self._pos = model.index("positive")
        else:
            missing = [
                label
                for label, name in zip(self.model_labels, model, strict=True)
                if name not in task
            ]
            if missing:
                raise ModelError(self._mismatch(f"model labels {missing} are not task labels"))
            self._columns = [task.index(name) for name in model]

    def _mismatch(self, what: str) -> str:
        """A message naming both label sets, with the `?labels=` hint for generic names."""
        message = (
            f"cannot map model labels {list(self.model_labels)} to task labels "
            f"{list(self.task_labels)}: {what}"
        )
        if any(re.fullmatch(r"label_\d+", canonical(label)) for label in self.model_labels):
            message += f"; {self.naming_hint}"
        return message

    def _check_unique(self, names: list[str], labels: tuple[str, ...], side: str) -> None:
        """Raise `ModelError` when two labels of one side mean the same label."""
        if len(set(names)) != len(names):
            raise ModelError(self._mismatch(f"{side} labels {list(labels)} name a label twice"))

    def __call__(self, probs: np.ndarray) -> np.ndarray:
        """Probabilities (n, len(model_labels)) -> (n, len(task_labels)), rows summing to 1."""
        probs = np.asarray(probs, dtype=np.float64)
        if probs.ndim != 2 or probs.shape[1] != len(self.model_labels):
            raise ModelError(
                f"expected probabilities over {len(self.model_labels)} model labels, "
                f"got shape {probs.shape}"
            )
        out = np.zeros((probs.shape[0], len(self.task_labels)), dtype=np.float64)
        if probs.shape[0] == 0:
            return out
        probs = normalize_rows(probs, source="model output")
        if self.neutral_band:
            out[:, self._band_columns] = neutral_band(probs[:, self._pos])
        else:
            out[:, self._columns] = probs
        return out


def map_labels(
    model_labels: Sequence[str], task_labels: Sequence[str], *, naming_hint: str = NAMING_HINT
) -> LabelMapping:
    """The mapping from a model's labels to the task's; raises `ModelError` if there is none
    (`naming_hint` says how to name generic labels)."""
    return LabelMapping(model_labels, task_labels, naming_hint=naming_hint)
