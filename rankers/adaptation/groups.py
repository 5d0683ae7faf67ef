"""Triage that learns a generator from its own labels.

The shipped members form a generator-agnostic prior. For each calibration group (a
generator at a setting) with enough labels of its own, the learners of `learners` are
trained on that group's labels only (rankers.adaptation.learners: by default a logistic
regression on the suite-neighbour features and one on frozen MiniLM embeddings of the
description with its label and the candidate from 20 labels, and the shipped MiniLM
fine-tuned as a cross-encoder once the group has 200 labels from people). They are
stacked with each member and the generic signals below by the group's stacker
(rankers.adaptation.stacking): a logistic regression with non-negative weights on the parts'
out-of-fold scores, fitted on the group's labels (its random labels alone once there are
enough), so a member such as an LLM judge earns its weight on each generator's own
labels, a part that adds nothing to the others gets none, and the strongest part is not
diluted by weaker ones. The stacked score is read as P(invalid) on a curve fitted to the
group's cross-fitted stacked scores, so that groups share one scale. A group with fewer
labels than any learner needs (at least `min_weighing_labels`, both verdicts) has its
members and the generic signals stacked on its labels the same way: a prior worse than
random on a generator's first labels stops ranking it.

A group with no labels of its own is ranked zero-shot: the prior blended with fixed-sign
signals that do not depend on one generator's habits (how far the candidate sits from its
own description's seed cases against other descriptions', whether its nearest seed cases
share its description and label, the probability a probe trained on the seed cases gives
its label, repeated words, placeholders and leaked instructions). Where its candidates
also lie far from the training data (their similarity to their own description's seeds
falls below the training data's), the prior is no guide, and may be worse than random: the
order keeps only the malformed candidates first and is random after them, so that it is
no worse than random in expectation until people label some.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from rankers.adaptation.learners import (
    DEFAULT_LEARNERS,
    NEIGHBOUR_LEARNER,
    GroupData,
    LearnerConfig,
    learner_folder,
    learner_for,
)
from rankers.adaptation.stacking import (
    STACKER_FOLDS,
    BlendPart,
    StackedPart,
    blend,
    blend_part,
    fit_curve,
    fit_stacker,
    on_curve,
    stack,
)
from rankers.calibration import calibration_group
from rankers.folds import fold_assignment
from rankers.members.neighbours import FEATURES, neighbour_features
from testaug.core.records import Candidate, LabelledCandidate, TestCase, content_id

PRIOR, LEARNER, GENERIC = "prior", NEIGHBOUR_LEARNER, "generic"
# Fixed-sign generator-agnostic signals (higher = more likely invalid): the neighbour
# features whose direction held on every generator measured, negated where higher is valid.
_GENERIC_COLUMNS = (
    (FEATURES.index("own_over_other"), -1.0),
    (FEATURES.index("knn_own"), -1.0),
    (FEATURES.index("knn_label_agrees"), -1.0),
    (FEATURES.index("label_probe"), -1.0),
    (FEATURES.index("repetition"), 1.0),
)
_OWN_BEST = FEATURES.index("own_best")
_MALFORMED = re.compile(
    r"[{}\[\]<>]|\bhere are\b|\bexamples?:|\bas an ai\b|\boutput:|^\s*[-*]\s", re.IGNORECASE
)


LEGACY_LEARNER_KEYS = ("min_labels", "l2", "embedding_learner", "embedding_l2", "lm_learner",
                       "cross_encoder")  # fmt: skip


class AdaptationConfig(BaseModel):
    """How an ensemble adapts to each generator's own labels: when a group's members are
    weighed on its labels, the learners of its labels (`learners`, by kind), how the
    zero-shot blend weighs the generic signals, and which labels the stacker is fitted
    on."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = Field(default=True, description="stack per-group learners (else plain Borda)")
    min_weighing_labels: int = Field(
        default=10, ge=4, description="a group's labels before its members are weighted on them"
    )
    folds: int = Field(default=5, ge=2, description="cross-fitting folds inside a group")
    fallback_weight: float = Field(
        default=1.0, ge=0, description="zero-shot: the generic signals' weight (the prior's: 1)"
    )
    min_random_labels: int = Field(
        default=20,
        ge=0,
        description=(
            "a group's random labels (both verdicts among them) before its stacker is "
            "fitted on them alone (0: always on every label)"
        ),
    )
    learners: tuple[LearnerConfig, ...] = Field(
        default=DEFAULT_LEARNERS, description="the learners of each group's own labels"
    )

    @model_validator(mode="before")
    @classmethod
    def _learner_keys_of_earlier_configs(cls, data: Any) -> Any:
        """Configs written before learners were listed: `min_labels` and `l2` (the
        neighbour learner's), `embedding_learner` and `embedding_l2`, `lm_learner` and
        `cross_encoder` become the `learners` they meant."""
        if not isinstance(data, dict) or not any(key in data for key in LEGACY_LEARNER_KEYS):
            return data
        if "learners" in data:
            keys = ", ".join(k for k in LEGACY_LEARNER_KEYS if k in data)
            raise ValueError(f"give the learners in `learners`, not also as {keys}")
        data = dict(data)
        least = data.pop("min_labels", None)
        shared = {} if least is None else {"min_labels": least}
        learners: list[dict[str, Any]] = [
            {"kind": "neighbours", **shared, **_given(l2=data.pop("l2", None))}
        ]
        embedding = data.pop("embedding_l2", None)
        if data.pop("embedding_learner", True):
            learners.append({"kind": "embedding", **shared, **_given(l2=embedding)})
        lm = data.pop("lm_learner", None)
        if lm is not None:
            learners.append({**_fields(lm), "kind": "lm-states"})
        own = data.pop("cross_encoder", {})
        if own is not None:
            learners.append({**_fields(own), "kind": "cross-encoder"})
        return {**data, "learners": learners}

    def with_learners(
        self, *learners: LearnerConfig, dropping: Sequence[str] = ()
    ) -> AdaptationConfig:
        """This config with `learners` in place of the learners of the same name (added
        where none has it), and the learners named in `dropping` left out."""
        given = {learner.name: learner for learner in learners}
        kept = [given.pop(k.name, k) for k in self.learners if k.name not in dropping]
        return self.model_copy(update={"learners": (*kept, *given.values())})

    def least_labels(self) -> int:
        """The fewest labels of a group before any of its learners."""
        return min((learner.min_labels for learner in self.learners), default=0)


def _given(**values: Any) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not None}


def _fields(config: Any) -> dict[str, Any]:
    return config.model_dump() if isinstance(config, BaseModel) else dict(config)


class GroupState(BaseModel):
    """A group's stacking: how many labels it has (and how many were sampled at random), its
    learners' folder and its stacker (each part's standardisation and weight, the bias)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    labels: int
    random_labels: int
    folder: str | None  # the learners' folder under groups/, None without learners
    parts: dict[str, StackedPart]
    bias: float = 0.0
    # P(invalid) from the stacked score, fitted on the group's stacked out-of-fold scores:
    # a logistic curve, its logit at scores 0 and 1 (empty: the stacked score as it is).
    invalid_curve: tuple[float, ...] = ()

    def shares(self) -> dict[str, float]:
        """Each part's share of the stacker's weight, largest first (0 for all: none earned)."""
        total = sum(p.weight for p in self.parts.values())
        shares = {k: (p.weight / total if total > 0 else 0.0) for k, p in self.parts.items()}
        return dict(sorted(shares.items(), key=lambda kv: -kv[1]))


class AdaptationState(BaseModel):
    """What an ensemble keeps of its adaptation: the config, the zero-shot parts (over all
    training candidates) and each adapted group."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    config: AdaptationConfig
    zero_shot: dict[str, BlendPart]
    shift_threshold: float  # own-description similarity below which data counts as far
    groups: dict[str, GroupState] = Field(default_factory=dict)
    zero_shot_curve: tuple[float, ...] = ()  # the zero-shot blend's, over every candidate
    # P(invalid) of a candidate far from the training data: the training candidates' share
    # of invalid ones, and that share among those flagged as malformed
    far_invalid: tuple[float, float] = (0.5, 1.0)


def malformed_signal(candidate: Candidate) -> float:
    """1 for text with placeholders, list markup or leaked instructions, or a pair whose two
    sides are the same; else 0."""
    text = f"{candidate.text} {candidate.text_pair or ''}"
    same = candidate.text_pair is not None and candidate.text.strip() == candidate.text_pair.strip()
    return float(bool(_MALFORMED.search(text)) or same)


def generic_signals(features: np.ndarray, candidates: Sequence[Candidate]) -> np.ndarray:
    """A score from signals whose direction does not depend on the generator (higher = more
    likely invalid): the mean of the fixed-sign neighbour features, plus 1 when malformed."""
    if not len(candidates):
        return np.zeros(0)
    columns = np.column_stack([sign * features[:, j] for j, sign in _GENERIC_COLUMNS])
    malformed = np.array([malformed_signal(c) for c in candidates])
    return columns.mean(axis=1) + malformed


def member_part(name: str) -> str:
    """The part name of a member in a group's stacking."""
    return f"member {name}"


def group_slug(group: str) -> str:
    """A folder name for a group's learner."""
    plain = re.sub(r"[^A-Za-z0-9_.-]+", "-", group).strip("-.")[:40] or "group"
    return f"{plain}-{content_id('group', group)[:8]}"


def is_random_sample(item: LabelledCandidate) -> bool:
    """Whether a label was drawn at random (a census of a labelled set counts as one)."""
    return item.sampled != "uncertain" and item.sampled != "ranked"


def earning_labels(
    members: Sequence[LabelledCandidate], invalid: np.ndarray, least: int
) -> np.ndarray | None:
    """Which of a group's labels its parts earn their weights on: those drawn at random,
    once there are `least` of them with both verdicts (labels people chose to give, such
    as the candidates the ranker was least sure of, are harder than the group's candidates
    at large, and would understate every part); else every label (None)."""
    if least <= 0:
        return None
    drawn = np.array([is_random_sample(m) for m in members])
    if drawn.all() or drawn.sum() < least or len(set(invalid[drawn].tolist())) < 2:
        return None
    return drawn


class Adaptation(NamedTuple):
    """What training an adaptation gives: its state, each training candidate's out-of-fold
    triage score (P(invalid)), and each adapted group's parts' out-of-fold scores (in the
    order of the group's candidates among the training ones)."""

    state: AdaptationState
    triage: np.ndarray
    parts: dict[str, dict[str, np.ndarray]]


def _stacked(
    members: Sequence[LabelledCandidate],
    invalid: np.ndarray,
    values: dict[str, np.ndarray],
    earned: np.ndarray | None,
    folder: str | None,
) -> tuple[GroupState, np.ndarray]:
    """A group's state from its parts' out-of-fold scores, and its labels' out-of-fold
    P(invalid) (from its stacker, cross-fitted)."""
    folds = min(STACKER_FOLDS, len(members))
    fold_of = fold_assignment(members, folds, seed=1)
    parts, bias, stacked = fit_stacker(values, invalid, fold_of, folds, earned=earned)
    state = GroupState(
        labels=len(members),
        random_labels=sum(is_random_sample(m) for m in members),
        folder=folder,
        parts=parts,
        bias=bias,
        invalid_curve=fit_curve(stacked, invalid),
    )
    return state, on_curve(stacked, state.invalid_curve)


def train_adaptation(
    items: Sequence[LabelledCandidate],
    prior_oof: np.ndarray,
    member_oof: dict[str, np.ndarray],
    reference: Sequence[TestCase],
    config: AdaptationConfig,
    folder: Path,
    *,
    sample_weight: np.ndarray | None = None,
) -> Adaptation:
    """Fit the zero-shot blend (`prior_oof`: the members' Borda position) and, for every
    group with enough labels, its learners and the stacker of each member (`member_oof`),
    the learners and the generic signals on the group's out-of-fold scores; save the
    learners under `folder/groups/`. Returns the state, each training candidate's
    out-of-fold triage score (what calibration is fitted on) and each group's parts'
    out-of-fold scores."""
    candidates = [item.candidate for item in items]
    invalid = np.array([not item.valid for item in items])
    features = neighbour_features(candidates, reference)
    generic = generic_signals(features, candidates)
    zero_parts = {
        PRIOR: blend_part(prior_oof, invalid, 1.0),
        GENERIC: blend_part(generic, invalid, config.fallback_weight),
    }
    zero_blend = blend({PRIOR: prior_oof, GENERIC: generic}, zero_parts)
    zero_shot_curve = fit_curve(zero_blend, invalid)
    triage = on_curve(zero_blend, zero_shot_curve)
    groups = np.array([calibration_group(c) for c in candidates])
    learners = [learner_for(learner) for learner in config.learners]
    states: dict[str, GroupState] = {}
    parts_oof: dict[str, dict[str, np.ndarray]] = {}
    for group in sorted(set(groups.tolist())):
        index = np.flatnonzero(groups == group)
        labels = invalid[index]
        if len(index) < config.min_weighing_labels or labels.all() or not labels.any():
            continue
        members = [items[i] for i in index]
        folds = max(1, min(config.folds, int(min(labels.sum(), (~labels).sum()))))
        fold_of = fold_assignment(members, folds, seed=0)
        values = {member_part(name): scores[index] for name, scores in member_oof.items()}
        values[GENERIC] = generic[index]
        earned = earning_labels(members, labels, config.min_random_labels)
        parts_oof[group] = values
        weights = None if sample_weight is None else sample_weight[index]
        data = GroupData(members, labels, fold_of, folds, weights, features[index])
        fitting = [learner for learner in learners if learner.applies(data)]
        slug = group_slug(group) if fitting else None
        for learner in fitting:
            values[learner.name] = learner.fit(
                data,
                learner_folder(folder / "groups" / str(slug), learner.name),
                folder / ".work" / "groups" / str(slug),
            )
        states[group], triage[index] = _stacked(members, labels, values, earned, slug)
    own_best = features[:, _OWN_BEST]
    malformed = np.array([malformed_signal(c) > 0 for c in candidates])
    state = AdaptationState(
        config=config,
        zero_shot=zero_parts,
        shift_threshold=round(float(np.quantile(own_best, 0.25)), 6) if len(own_best) else 0.0,
        groups=states,
        zero_shot_curve=zero_shot_curve,
        far_invalid=(
            round(float(invalid.mean()), 6),
            round(float(invalid[malformed].mean()), 6) if malformed.any() else 1.0,
        ),
    )
    return Adaptation(state, triage, parts_oof)


class Adapted(BaseModel):
    """The triage score of each candidate, what it rests on, and each part's score of the
    candidates it scores (None for the others: a learner scores only its group's)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scores: list[float]
    basis: list[str]
    parts: dict[str, list[float | None]] = Field(default_factory=dict)


WEAK_PRIOR = (
    "zero-shot: this generator has no labels of its own, so the order is a weak prior "
    "until people label some"
)
FAR = (
    "zero-shot: this generator has no labels of its own and its candidates lie far from the "
    "training data, where the prior is no guide: malformed ones first, the rest in random "
    "order until people label some"
)


def adapted_scores(
    candidates: Sequence[Candidate],
    prior: np.ndarray,
    member_scores: dict[str, np.ndarray],
    reference: Sequence[TestCase],
    state: AdaptationState,
    folder: Path,
) -> Adapted:
    """Each candidate's triage score: its group's stacking of the members' scores, its
    learners and the generic signals where the group has one, else the zero-shot blend of
    the members' Borda position (`prior`) and the generic signals (with the reason). A
    group without labels whose candidates lie far from the training data gets no order
    from the prior: its malformed candidates share one higher P(invalid), the others the
    training data's (ties are broken at random when ranked)."""
    features = neighbour_features(candidates, reference)
    generic = generic_signals(features, candidates)
    groups = np.array([calibration_group(c) for c in candidates])
    learners = [learner_for(learner) for learner in state.config.learners]
    scores = on_curve(
        blend({PRIOR: prior, GENERIC: generic}, state.zero_shot), state.zero_shot_curve
    )
    basis = [""] * len(candidates)
    seen: dict[str, np.ndarray] = {}

    def record(name: str, index: np.ndarray, values: np.ndarray) -> None:
        seen.setdefault(name, np.full(len(candidates), np.nan))[index] = values

    for group in sorted(set(groups.tolist())):
        index = np.flatnonzero(groups == group)
        adapted = state.groups.get(group)
        if adapted is None:
            record(PRIOR, index, prior[index])
            record(GENERIC, index, generic[index])
            far = np.median(features[index, _OWN_BEST]) < state.shift_threshold
            if far:
                flagged = np.array([malformed_signal(candidates[i]) > 0 for i in index])
                scores[index] = np.where(flagged, state.far_invalid[1], state.far_invalid[0])
            for i in index:
                basis[i] = FAR if far else WEAK_PRIOR
            continue
        parts = {
            **{member_part(name): values[index] for name, values in member_scores.items()},
            GENERIC: generic[index],
        }
        for learner in learners:
            if learner.name in adapted.parts:
                parts[learner.name] = learner.score(
                    [candidates[i] for i in index],
                    features[index],
                    learner_folder(folder / "groups" / str(adapted.folder), learner.name),
                )
        for name in adapted.parts:
            record(name, index, parts[name])
        stacked = stack(parts, adapted.parts, adapted.bias)
        scores[index] = on_curve(stacked, adapted.invalid_curve)
        text = ", ".join(f"{k} {v:.0%}" for k, v in adapted.shares().items())
        least = state.config.least_labels()
        few = "" if adapted.folder else f"; its learners wait for {least}"
        for i in index:
            basis[i] = f"stacked on {adapted.labels} labels of this generator ({text}){few}"
    return Adapted(
        scores=[float(s) for s in scores],
        basis=basis,
        parts={
            name: [None if np.isnan(v) else float(v) for v in values]
            for name, values in seen.items()
        },
    )
