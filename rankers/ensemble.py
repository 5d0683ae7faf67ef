"""Ranker ensembles: configured in YAML, cross-fitted into a folder, merged by Borda count,
calibrated to P(valid).

Training splits the labelled candidates into k folds (a prompt's candidates stay in one
fold) and trains every member k times, each time on the other folds, scoring the fold
it left out. A member scores new candidates with the mean of its k fold models; its
out-of-fold scores are what the ensemble's weights and calibration are fitted on, so
they rest on verdicts no model of the ensemble saw.

A trained ensemble folder holds `<member>/fold-<i>/` for each member and fold, and
`ensemble.json` (the config, the version: a hash of the config, the training verdicts and
the rankers code; the members' out-of-fold scores and weights, the calibration).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from rankers.adaptation.groups import AdaptationState, Adapted, adapted_scores
from rankers.borda import aggregate
from rankers.calibration import FittedCalibration
from rankers.config import EnsembleConfig, load_config, shipped_configs
from rankers.members.cross_encoder import RankerError
from rankers.members.kinds import Ranker, load_member
from rankers.members.reference import bundled_reference
from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_json
from testaug.core.records import Candidate, RankedCandidate, TestCase, content_id

logger = logging.getLogger(__name__)

MANIFEST = "ensemble.json"
ProgressCallback = Callable[[str, int, int], None]  # (member, fold done, folds)


class MemberState(BaseModel):
    """What the ensemble keeps of a member's cross-fitting: its sorted out-of-fold scores
    (the reference its new scores are placed against), its AUC there and its weight."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    oof_scores: tuple[float, ...]
    oof_auc: float
    weight: float = 1.0


class EnsembleManifest(BaseModel):
    """What a trained ensemble folder holds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: str
    config: EnsembleConfig
    trained_on: int
    invalid: int
    train_seconds: dict[str, float]
    folds: int = 0  # 0: an ensemble trained before cross-fitting (one model per member)
    members: dict[str, MemberState] = Field(default_factory=dict)
    calibration: FittedCalibration | None = None
    adaptation: AdaptationState | None = None  # None: plain Borda (older or not adapted)


@dataclass(frozen=True)
class Triage:
    """How an ensemble triages candidates: each member's scores (by name), the members'
    Borda position, the stacked triage (scores, bases, each part's scores) where the
    ensemble adapts, P(valid) with the group it was read from, and the candidates in the
    order people review them."""

    scores: dict[str, np.ndarray]
    position: np.ndarray | None
    adapted: Adapted | None
    p_valid: list[tuple[float, str]] | None
    ranked: list[RankedCandidate]


class FoldedRanker:
    """A member's fold models; its score is their mean."""

    def __init__(self, name: str, folds: Sequence[Ranker]) -> None:
        self.name = name
        self.folds = list(folds)

    def score(
        self,
        candidates: Sequence[Candidate],
        *,
        batch_size: int = 64,
        reference: Sequence[TestCase] = (),
    ) -> np.ndarray:
        scores = [
            model.score(candidates, batch_size=batch_size, reference=reference)
            for model in self.folds
        ]
        return np.mean(scores, axis=0)


class Ensemble:
    """Trained members, their version and calibration; ranks candidates by Borda count."""

    def __init__(
        self, members: Sequence[FoldedRanker], manifest: EnsembleManifest, folder: Path
    ) -> None:
        self.members = list(members)
        self.manifest = manifest
        self.folder = folder

    @property
    def version(self) -> str:
        return self.manifest.version

    @property
    def calibration(self) -> FittedCalibration | None:
        return self.manifest.calibration

    @classmethod
    def load(cls, folder: Path) -> Ensemble:
        """Load a trained ensemble folder."""
        path = folder / MANIFEST
        if not path.is_file():
            raise RankerError(
                f"{folder} is not a trained ensemble (no {MANIFEST}); train one first"
            )
        manifest = read_json(path, EnsembleManifest)
        members = []
        for index, member in enumerate(manifest.config.members):
            paths = (
                [folder / member.name / f"fold-{i}" for i in range(manifest.folds)]
                if manifest.folds
                else [folder / member.name]
            )
            missing = next((p for p in paths if not p.is_dir()), None)
            if missing is not None:
                message = (
                    f"member {member.name!r} has no folder {missing}; train the ensemble again"
                )
                raise InputError(Problem(message, path, field=f"config.members[{index}].name"))
            members.append(FoldedRanker(member.name, [load_member(member, p) for p in paths]))
        return cls(members, manifest, folder)

    def reference_for(
        self, candidates: Sequence[Candidate], reference: Sequence[TestCase] | None
    ) -> Sequence[TestCase]:
        """The cases candidates are compared with: those given, else the bundled suites'."""
        if reference is not None:
            return reference
        settings = self.manifest.config.reference
        return bundled_reference({c.task for c in candidates}, settings.per_template, settings.seed)

    def score(
        self,
        candidates: Sequence[Candidate],
        *,
        batch_size: int = 64,
        reference: Sequence[TestCase] | None = None,
    ) -> dict[str, np.ndarray]:
        """Every member's invalidity scores, by member name."""
        cases = self.reference_for(candidates, reference) if self._needs_reference() else ()
        return {
            m.name: m.score(candidates, batch_size=batch_size, reference=cases)
            for m in self.members
        }

    def weights(self) -> dict[str, float] | None:
        """Borda weights by member (None: plain Borda)."""
        if self.manifest.config.weighting == "plain" or not self.manifest.members:
            return None
        return {name: state.weight for name, state in self.manifest.members.items()}

    def ensemble_score(self, scores: dict[str, np.ndarray]) -> np.ndarray | None:
        """The weighted Borda position of each candidate against the out-of-fold scores
        (0..1, higher = more likely invalid); None for an ensemble without them."""
        if not self.manifest.members:
            return None
        return borda_position(scores, self.manifest.members)

    def triage(
        self,
        candidates: Sequence[Candidate],
        *,
        batch_size: int = 64,
        reference: Sequence[TestCase] | None = None,
    ) -> Triage:
        """How the ensemble triages the candidates: each member's scores, their Borda
        position, the stacked triage where the ensemble adapts, P(valid), and the
        candidates in the order people review them (what `rank` writes)."""
        scores = self.score(candidates, batch_size=batch_size, reference=reference)
        calibrated: list[tuple[float, str]] | None = None
        position = self.ensemble_score(scores)
        borda = position
        adapted = None
        state = self.manifest.adaptation
        if state is not None and position is not None and candidates:
            cases = self.reference_for(candidates, reference)
            adapted = adapted_scores(candidates, position, scores, cases, state, self.folder)
            position = np.asarray(adapted.scores)
        if self.calibration is not None and position is not None and candidates:
            calibrated = self.calibration.p_valid(candidates, position)
        ranked = ranked_candidates(
            candidates,
            scores,
            version=self.version,
            weights=self.weights(),
            p_valid=calibrated,
            triage=None if adapted is None else (adapted.scores, adapted.basis),
        )
        return Triage(scores, borda, adapted, calibrated, ranked)

    def rank(
        self,
        candidates: Sequence[Candidate],
        *,
        batch_size: int = 64,
        reference: Sequence[TestCase] | None = None,
    ) -> list[RankedCandidate]:
        """The candidates ordered most-likely-invalid first, with scores, Borda points,
        rank and, for a calibrated ensemble, P(valid) and the group it was read from."""
        return self.triage(candidates, batch_size=batch_size, reference=reference).ranked

    def _needs_reference(self) -> bool:
        return any(member.kind == "neighbours" for member in self.manifest.config.members)


def borda_position(scores: dict[str, np.ndarray], states: dict[str, MemberState]) -> np.ndarray:
    """Each candidate's weighted mean, over members, of the share of the member's
    out-of-fold scores at or below its score."""
    total = np.zeros(len(next(iter(scores.values()))))
    weight = 0.0
    for name, values in scores.items():
        state = states[name]
        reference = np.asarray(state.oof_scores)
        total += state.weight * np.searchsorted(reference, values, side="right") / len(reference)
        weight += state.weight
    return total / weight if weight > 0 else total


def ranked_candidates(
    candidates: Sequence[Candidate],
    scores: dict[str, np.ndarray],
    *,
    version: str | None = None,
    weights: dict[str, float] | None = None,
    p_valid: Sequence[tuple[float, str]] | None = None,
    triage: tuple[Sequence[float], Sequence[str]] | None = None,
) -> list[RankedCandidate]:
    """Candidates with their member scores, merged by (weighted) Borda count, in rank order;
    with `triage` (stacked scores and what each rests on), in the order of those scores
    (highest first; ties, where the triage has no order to give, in a random order fixed by
    the candidates' ids)."""
    if not candidates:
        return []
    result = aggregate(scores, weights)
    order = list(result.order)
    if triage is not None:
        values = np.asarray(triage[0])
        order = sorted(order, key=lambda i: (-values[i], content_id("tie", candidates[i].id)))
    return [
        RankedCandidate(
            candidate=candidates[i],
            scores={name: float(values[i]) for name, values in scores.items()},
            borda_points=float(result.points[i]),
            rank=rank,
            ensemble_version=version,
            p_valid=p_valid[i][0] if p_valid else None,
            calibration_group=p_valid[i][1] if p_valid else None,
            triage_score=None if triage is None else round(float(triage[0][i]), 6),
            triage_basis=None if triage is None else triage[1][i] or None,
        )
        for rank, i in enumerate(order, start=1)
    ]


__all__ = [
    "MANIFEST",
    "Ensemble",
    "EnsembleConfig",
    "EnsembleManifest",
    "load_config",
    "ranked_candidates",
    "shipped_configs",
]
