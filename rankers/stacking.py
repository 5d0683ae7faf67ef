"""Stacking parts by what they earned: each part's score placed against its out-of-fold
scores, weighted by its out-of-fold AUC - 0.5, and the stacked score read as P(invalid)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict


class PartState(BaseModel):
    """One stacked part in one group: its sorted out-of-fold scores there, AUC and weight."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    oof_scores: tuple[float, ...]
    auc: float
    weight: float


def percentile(values: np.ndarray, reference: Sequence[float]) -> np.ndarray:
    """The share of `reference` (sorted) at or below each value."""
    ref = np.asarray(reference, dtype=np.float64)
    if not len(ref):
        return np.full(len(values), 0.5)
    return np.searchsorted(ref, np.asarray(values, dtype=np.float64), side="right") / len(ref)


def _auc(invalid: np.ndarray, scores: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(invalid, scores))


def part_state(
    scores: np.ndarray, invalid: np.ndarray, *, earned: np.ndarray | None = None
) -> PartState:
    """A part's state: its sorted out-of-fold scores, and its AUC and weight measured on
    the labels in `earned` (every label when None)."""
    auc = _auc(invalid, scores) if earned is None else _auc(invalid[earned], scores[earned])
    return PartState(
        oof_scores=tuple(float(v) for v in np.sort(scores)),
        auc=round(auc, 6),
        weight=round(max(auc - 0.5, 0.0), 6),
    )


def stack(parts: dict[str, np.ndarray], states: dict[str, PartState]) -> np.ndarray:
    """The weighted mean of each part's percentile against its out-of-fold scores (equal
    weights where no part earned any)."""
    total_weight = sum(states[name].weight for name in parts)
    out = np.zeros(len(next(iter(parts.values()))))
    for name, values in parts.items():
        weight = states[name].weight if total_weight > 0 else 1.0
        out += weight * percentile(values, states[name].oof_scores)
    return out / (total_weight if total_weight > 0 else len(parts))


def fit_curve(stacked: np.ndarray, invalid: np.ndarray) -> tuple[float, ...]:
    """A logistic curve from stacked score to P(invalid), fitted on out-of-fold labels: its
    logit at scores 0 and 1. Never falling, so it keeps the order within a group."""
    if len(set(invalid.tolist())) < 2:
        return ()
    from sklearn.linear_model import LogisticRegression

    curve = LogisticRegression(C=10.0).fit(np.asarray(stacked).reshape(-1, 1), invalid.astype(int))
    intercept, slope = float(curve.intercept_[0]), max(float(curve.coef_[0][0]), 1e-6)
    return (round(intercept, 9), round(intercept + slope, 9))


def on_curve(stacked: np.ndarray, curve: Sequence[float]) -> np.ndarray:
    """Stacked scores as P(invalid) on the curve fitted for them (as they are without one),
    so that groups stacked from different parts, with different shares of invalid
    candidates, share one scale in a ranking that mixes them."""
    if not curve:
        return stacked
    logit = curve[0] + (curve[1] - curve[0]) * np.asarray(stacked)
    return 1.0 / (1.0 + np.exp(-logit))
