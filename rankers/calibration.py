"""Calibration of the ensemble's score to P(valid), per calibration group (generator).

The ensemble's score of a candidate is its weighted Borda position against the
out-of-fold scores of the training data (0: every member finds it the least likely
invalid; 1: the most likely). A monotone map fitted on out-of-fold scores and
verdicts turns it into P(valid): isotonic regression (the default) or Platt scaling.

Each generator setting (model and sampling temperature) with enough out-of-fold labels
gets a map and a precision curve of its own: how often a candidate is valid differs
from one generator to the next and with the temperature, and so does the precision of
a threshold. Candidates of any other generator read the map of
all generated candidates together (`GENERATED`); hard cases made by rule count only
under their own group (`rule`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from rankers.hard_cases import is_hard_case
from testaug.core.records import Calibration, Candidate, PrecisionCurve
from testaug.review.acceptance import precision_curve
from testaug.review.selection import generator_group

CalibrationMethod = Literal["isotonic", "platt"]
GENERATED = "any generator"
RULE = "rule"


def generator_of(candidate: Candidate) -> str:
    """Where a candidate comes from: its generator model, or `rule` for hard cases."""
    return RULE if is_hard_case(candidate) else candidate.model


def calibration_group(candidate: Candidate) -> str:
    """The group a candidate's calibration is read from: its generator and sampling
    temperature (how often a generator writes valid cases depends on both), or `rule`
    (the same groups as people's calibration samples)."""
    return generator_group(candidate)


class ScoreMap(BaseModel):
    """A monotone map from the ensemble score (higher = more likely invalid) to P(valid)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    method: CalibrationMethod
    x: tuple[float, ...] = ()  # isotonic: knots, increasing
    y: tuple[float, ...] = ()  # isotonic: P(valid) at each knot, non-increasing
    slope: float = 0.0  # platt: P(valid) = 1 / (1 + exp(-(slope * score + intercept)))
    intercept: float = 0.0

    def p_valid(self, scores: np.ndarray) -> np.ndarray:
        """P(valid) of each ensemble score."""
        scores = np.asarray(scores, dtype=np.float64)
        if self.method == "platt":
            return 1.0 / (1.0 + np.exp(-(self.slope * scores + self.intercept)))
        return np.interp(scores, self.x, self.y)


def fit_map(scores: np.ndarray, valid: np.ndarray, method: CalibrationMethod) -> ScoreMap:
    """Fit P(valid) as a non-increasing function of the ensemble score."""
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import LogisticRegression

    scores = np.asarray(scores, dtype=np.float64)
    valid = np.asarray(valid, dtype=np.float64)
    if method == "platt":
        model = LogisticRegression(C=1e6, max_iter=1000).fit(scores[:, None], valid)
        return ScoreMap(
            method="platt", slope=float(model.coef_[0][0]), intercept=float(model.intercept_[0])
        )
    regression = IsotonicRegression(increasing=False, y_min=0.0, y_max=1.0, out_of_bounds="clip")
    regression.fit(scores, valid)
    return ScoreMap(
        method="isotonic",
        x=tuple(float(v) for v in regression.X_thresholds_),
        y=tuple(float(v) for v in regression.y_thresholds_),
    )


def cross_fitted_p_valid(
    scores: np.ndarray, valid: np.ndarray, fold_of: np.ndarray, method: CalibrationMethod
) -> np.ndarray:
    """P(valid) of each candidate from a map fitted on the other folds' candidates (the map
    of all of them where the other folds lack a valid or an invalid one)."""
    p = np.zeros(len(scores))
    everyone = None
    for fold in np.unique(fold_of):
        inside, outside = fold_of != fold, fold_of == fold
        if 0 < valid[inside].sum() < inside.sum():
            score_map = fit_map(scores[inside], valid[inside], method)
        else:
            everyone = everyone or fit_map(scores, valid, method)
            score_map = everyone
        p[outside] = score_map.p_valid(scores[outside])
    return p


class FittedCalibration(BaseModel):
    """The maps by group, and the out-of-fold evidence (`Calibration`) they were fitted on."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    maps: dict[str, ScoreMap]
    evidence: Calibration

    def group_of(self, candidate: Candidate) -> str:
        """The group whose map reads this candidate: its own, else the fallback."""
        group = calibration_group(candidate)
        return group if group in self.maps else self.evidence.fallback

    def p_valid(
        self, candidates: Sequence[Candidate], scores: np.ndarray
    ) -> list[tuple[float, str]]:
        """P(valid) and the group read, for each candidate with its ensemble score."""
        groups = [self.group_of(c) for c in candidates]
        out: list[tuple[float, str]] = []
        for candidate_group, score in zip(groups, scores, strict=True):
            value = float(self.maps[candidate_group].p_valid(np.array([score]))[0])
            out.append((round(value, 6), candidate_group))
        return out


def fit_calibration(
    candidates: Sequence[Candidate],
    scores: np.ndarray,
    valid: Sequence[bool],
    *,
    method: CalibrationMethod,
    min_group: int,
    ensemble_version: str,
    folds: int,
    fold_of: np.ndarray | None = None,
    random: Sequence[bool] | None = None,
) -> FittedCalibration:
    """Maps and precision curves from out-of-fold ensemble scores: one for each group with
    at least `min_group` candidates with both verdicts, one for all generated candidates
    together (the fallback; all candidates when too few were generated).

    `random` says which labels were drawn at random (default: all). Only those count
    towards `min_group` and enter the precision curves: labels people gave because the
    ranker was unsure of a candidate, or ranked it high, are no sample of what a
    threshold accepts. The maps are fitted on the same labels.

    With `fold_of` (each candidate's cross-fitting fold), the precision curves are
    cross-fitted too: each fold's P(valid) comes from a map fitted on the other folds, so
    the precision a threshold is credited with was not fitted on the same verdicts (an
    isotonic map fitted and judged on one set of labels puts its steps where the labels
    change, and its top steps look purer than they are)."""
    drawn = np.ones(len(candidates), dtype=bool) if random is None else np.asarray(random, bool)
    if not drawn.any():  # no label was drawn at random: the maps need some labels
        drawn = np.ones(len(candidates), dtype=bool)
    scores = np.asarray(scores, dtype=np.float64)[drawn]
    labels = np.asarray(valid, dtype=bool)[drawn]
    if fold_of is not None:
        fold_of = np.asarray(fold_of)[drawn]
    groups = np.array(
        [calibration_group(c) for c, keep in zip(candidates, drawn, strict=True) if keep]
    )
    members: dict[str, np.ndarray] = {}
    for group in sorted(set(groups.tolist())):
        mask = groups == group
        if mask.sum() >= min_group and 0 < labels[mask].sum() < mask.sum():
            members[group] = mask
    generated = groups != RULE
    if generated.sum() >= min_group and 0 < labels[generated].sum() < generated.sum():
        members[GENERATED] = generated
        fallback = GENERATED
    else:
        members["all"] = np.ones(len(groups), dtype=bool)
        fallback = "all"
    maps: dict[str, ScoreMap] = {}
    curves: dict[str, PrecisionCurve] = {}
    for group, mask in members.items():
        maps[group] = fit_map(scores[mask], labels[mask], method)
        if fold_of is None:
            p = maps[group].p_valid(scores[mask])
        else:
            p = cross_fitted_p_valid(scores[mask], labels[mask], np.asarray(fold_of)[mask], method)
        curves[group] = precision_curve(group, p.tolist(), labels[mask].tolist())
    evidence = Calibration(
        ensemble_version=ensemble_version,
        method=method,
        folds=folds,
        fallback=fallback,
        curves=curves,
    )
    return FittedCalibration(maps=maps, evidence=evidence)
