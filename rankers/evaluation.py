"""How well rankers triage a labelled set: ACC@k curves, review effort, agreement, the
calibration of P(valid), and triage.json (`TriageSummary`) that gathers them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, ConfigDict

from rankers.borda import aggregate, ranks_from_scores
from rankers.triage import kendall_tau, oracle_acc_curve, random_acc_curve, triage_report
from testaug.core.records import LabelledCandidate
from testaug.core.triage import CalibrationCheck, SourceEvaluation, TriageReport, TriageSummary

if TYPE_CHECKING:
    from rankers.ensemble import Ensemble

ENSEMBLE = "ensemble"


class RankerEvaluation(BaseModel):
    """The ensemble's triage report, each member's, and the members' pairwise Kendall tau."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    target: float
    n: int
    n_invalid: int
    ensemble: TriageReport
    members: dict[str, TriageReport]
    kendall_tau: dict[str, float]
    random_curve: list[float]
    oracle_curve: list[float]


def evaluate_scores(
    labelled: Sequence[LabelledCandidate], scores: dict[str, np.ndarray], target: float = 0.9
) -> RankerEvaluation:
    """Triage reports for the Borda ensemble of `scores` and for each member alone."""
    invalid = np.array([not item.valid for item in labelled], dtype=bool)

    def report(order: np.ndarray) -> TriageReport:
        return triage_report(invalid[order], target)

    members = {
        name: report(np.argsort(ranks_from_scores(values), kind="stable"))
        for name, values in scores.items()
    }
    names = list(scores)
    taus = {
        f"{a} ~ {b}": float(kendall_tau(scores[a], scores[b]))
        for i, a in enumerate(names)
        for b in names[i + 1 :]
    }
    return RankerEvaluation(
        target=target,
        n=len(labelled),
        n_invalid=int(invalid.sum()),
        ensemble=report(aggregate(scores).order),
        members=members,
        kendall_tau=taus,
        random_curve=random_acc_curve(len(invalid), int(invalid.sum())).tolist(),
        oracle_curve=oracle_acc_curve(len(invalid), int(invalid.sum())).tolist(),
    )


def evaluate_by_source(
    labelled: Sequence[LabelledCandidate],
    scores: dict[str, np.ndarray],
    target: float = 0.9,
    weights: dict[str, float] | None = None,
) -> list[SourceEvaluation]:
    """The Borda ensemble's triage report on each source's candidates, ranked among themselves."""
    from rankers.calibration import calibration_group

    sources: dict[str, list[int]] = {}
    for index, item in enumerate(labelled):
        sources.setdefault(calibration_group(item.candidate), []).append(index)
    rows = []
    for source, indices in sorted(sources.items()):
        invalid = np.array([not labelled[i].valid for i in indices], dtype=bool)
        part = {name: values[indices] for name, values in scores.items()}
        report = triage_report(invalid[aggregate(part, weights).order], target)
        rows.append(
            SourceEvaluation(
                source=source,
                n=report.n,
                n_invalid=report.n_invalid,
                effort_at_target=report.effort_at_target,
                random_effort_at_target=report.random_effort_at_target,
                oracle_effort_at_target=report.oracle_effort_at_target,
                gap_closed=report.gap_closed,
            )
        )
    return rows


def calibration_check(
    ensemble: Ensemble, items: Sequence[LabelledCandidate], scores: dict[str, np.ndarray]
) -> CalibrationCheck | None:
    """How the ensemble's P(valid) holds up on labelled candidates: ECE, and what its
    acceptance rule at 90% precision accepts and how many of those are valid."""
    from testaug.review.acceptance import acceptance_rule, expected_calibration_error

    position = ensemble.ensemble_score(scores)
    if ensemble.calibration is None or position is None or not items:
        return None
    candidates = [item.candidate for item in items]
    p_valid = ensemble.calibration.p_valid(candidates, position)
    valid = [item.valid for item in items]
    accepted = []
    curves = ensemble.calibration.evidence.curves
    for (p, group), is_valid in zip(p_valid, valid, strict=True):
        rule = acceptance_rule(curves[group], 0.9)
        if rule is not None and p >= rule.threshold:
            accepted.append(is_valid)
    return CalibrationCheck(
        ece=expected_calibration_error([p for p, _ in p_valid], valid),
        target=0.9,
        accepted=len(accepted),
        precision=sum(accepted) / len(accepted) if accepted else None,
    )


def triage_summary(
    evaluation: RankerEvaluation,
    *,
    calibration: CalibrationCheck | None,
    by_source: Sequence[SourceEvaluation],
    plot: str,
    version: str,
) -> TriageSummary:
    """triage.json: the ensemble's figures, the calibration check and the per-source rows,
    then the whole evaluation."""
    first = evaluation.ensemble
    return TriageSummary(
        calibration=calibration,
        by_source=tuple(by_source),
        effort_at_target=first.effort_at_target,
        random_effort_at_target=first.random_effort_at_target,
        oracle_effort_at_target=first.oracle_effort_at_target,
        reduction_vs_random=first.reduction_vs_random,
        oracle_reduction_vs_random=first.oracle_reduction_vs_random,
        gap_closed=first.gap_closed,
        plot=plot,
        version=version,
        **dict(evaluation),
    )
