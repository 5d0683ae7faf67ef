"""Combining a group's parts into one triage score.

A group's stacker is a logistic regression with non-negative weights on each part's
out-of-fold scores, standardised by their mean and spread in the group: a part that adds
nothing to the others gets no weight, and the strongest part is not diluted by weaker
ones as it is in a mean of percentiles. It is cross-fitted on the same folds as the parts,
so the stacked out-of-fold scores (what P(invalid) and the calibration rest on, and what a
group's review effort is measured on) come from stackers that never saw those labels
(`STACKER_FOLDS` folds, finer than the parts': the parts' out-of-fold scores of a label
come from learners that never saw it, whichever fold the stacker puts it in).

The zero-shot blend of a group without labels is fixed, not learned: the prior and the
generic signals, each placed against its out-of-fold scores over the training candidates.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

STACKER_L2 = 0.1  # the stacker's inverse regularisation (as scikit-learn's C)
STACKER_FOLDS = 10  # its cross-fitting folds: each fold's stacker sees 90% of the labels


class BlendPart(BaseModel):
    """A part of the zero-shot blend: its sorted out-of-fold scores over the training
    candidates, its AUC there and its fixed weight."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    oof_scores: tuple[float, ...]
    auc: float
    weight: float


class StackedPart(BaseModel):
    """A part of a group's stacker: the mean and spread of its out-of-fold scores in the
    group (its scores are standardised by them), its out-of-fold AUC and its weight."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mean: float
    scale: float
    auc: float
    weight: float


def percentile(values: np.ndarray, reference: Sequence[float]) -> np.ndarray:
    """The share of `reference` (sorted) at or below each value."""
    ref = np.asarray(reference, dtype=np.float64)
    if not len(ref):
        return np.full(len(values), 0.5)
    return np.searchsorted(ref, np.asarray(values, dtype=np.float64), side="right") / len(ref)


def auc(invalid: np.ndarray, scores: np.ndarray) -> float:
    """P(an invalid candidate outscores a valid one); 0.5 with one verdict only."""
    from sklearn.metrics import roc_auc_score

    if len(set(np.asarray(invalid).tolist())) < 2:
        return 0.5
    return float(roc_auc_score(invalid, scores))


def blend_part(scores: np.ndarray, invalid: np.ndarray, weight: float) -> BlendPart:
    """A zero-shot part: its sorted out-of-fold scores, AUC and the weight it is given."""
    return BlendPart(
        oof_scores=tuple(float(v) for v in np.sort(scores)),
        auc=round(auc(invalid, scores), 6),
        weight=weight,
    )


def blend(values: dict[str, np.ndarray], parts: dict[str, BlendPart]) -> np.ndarray:
    """The weighted mean of each part's percentile against its out-of-fold scores."""
    total = sum(parts[name].weight for name in values)
    out = np.zeros(len(next(iter(values.values()))))
    for name, scores in values.items():
        weight = parts[name].weight if total > 0 else 1.0
        out += weight * percentile(scores, parts[name].oof_scores)
    return out / (total if total > 0 else len(values))


def _standardised(values: dict[str, np.ndarray], parts: dict[str, StackedPart]) -> np.ndarray:
    return np.column_stack([(values[k] - parts[k].mean) / parts[k].scale for k in parts])


def stack(values: dict[str, np.ndarray], parts: dict[str, StackedPart], bias: float) -> np.ndarray:
    """The stacked score (log-odds of invalid, before the group's curve) of each candidate."""
    return _standardised(values, parts) @ np.array([p.weight for p in parts.values()]) + bias


def _nonnegative_logistic(
    x: np.ndarray, invalid: np.ndarray, *, l2: float
) -> tuple[np.ndarray, float]:
    """Weights (all >= 0) and bias of an L2-regularised logistic regression with both
    verdicts counting equally."""
    from scipy.optimize import minimize

    y = invalid.astype(np.float64)
    n, d = x.shape
    share = y.mean()
    sample = np.where(y == 1, 0.5 / share, 0.5 / (1 - share))

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[:d], theta[d]
        z = x @ w + b
        value = np.sum(sample * (np.logaddexp(0.0, z) - y * z)) / n + w @ w / (2 * l2 * n)
        residual = sample * (1.0 / (1.0 + np.exp(-z)) - y) / n
        return value, np.concatenate([x.T @ residual + w / (l2 * n), [residual.sum()]])

    bounds = [(0.0, None)] * d + [(None, None)]
    fitted = minimize(loss, np.zeros(d + 1), jac=True, method="L-BFGS-B", bounds=bounds)
    return np.maximum(fitted.x[:d], 0.0), float(fitted.x[d])


def _fit(
    values: dict[str, np.ndarray],
    invalid: np.ndarray,
    inside: np.ndarray,
    scales: dict[str, tuple[float, float]],
    earned: np.ndarray | None,
) -> tuple[dict[str, StackedPart], float]:
    """The stacker fitted on the labels `inside` (those of them in `earned` where given)."""
    use = inside if earned is None else inside & earned
    if len(set(invalid[use].tolist())) < 2:
        use = inside
    parts = {
        k: StackedPart(mean=m, scale=s, auc=round(auc(invalid[use], values[k][use]), 6), weight=0)
        for k, (m, s) in scales.items()
    }
    weights, bias = _nonnegative_logistic(
        _standardised({k: v[use] for k, v in values.items()}, parts), invalid[use], l2=STACKER_L2
    )
    fitted = {
        k: p.model_copy(update={"weight": round(float(w), 6)})
        for (k, p), w in zip(parts.items(), weights, strict=True)
    }
    return fitted, round(bias, 6)


def fit_stacker(
    values: dict[str, np.ndarray],
    invalid: np.ndarray,
    fold_of: np.ndarray,
    folds: int,
    *,
    earned: np.ndarray | None = None,
) -> tuple[dict[str, StackedPart], float, np.ndarray]:
    """A group's stacker from its parts' out-of-fold scores (`values`), fitted on every
    label (on those in `earned` alone where given: labels drawn at random), and the stacked
    out-of-fold score of each label, from the stacker fitted on the other folds."""
    scales = {}
    for name, scores in values.items():
        spread = float(np.std(scores))
        scales[name] = (
            round(float(np.mean(scores)), 9),
            round(spread if spread > 1e-9 else 1.0, 9),
        )
    everything = np.ones(len(invalid), dtype=bool)
    parts, bias = _fit(values, invalid, everything, scales, earned)
    stacked = stack(values, parts, bias)
    for fold in range(folds):
        inside = fold_of != fold
        if len(set(invalid[inside].tolist())) < 2:
            continue  # the stacker fitted on every label scores this fold
        fold_parts, fold_bias = _fit(values, invalid, inside, scales, earned)
        held = ~inside
        stacked[held] = stack({k: v[held] for k, v in values.items()}, fold_parts, fold_bias)
    return parts, bias, stacked


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
