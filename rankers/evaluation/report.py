"""How well an ensemble triages a labelled set, in the order people review: the candidates as
`testaug rank` orders them (the stacked triage where the ensemble adapts), each part of it
beside (the members' plain Borda count, each member, each learner and signal it stacks),
the calibration of the same P(valid), and triage.json (`TriageSummary`) that gathers them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from rankers.borda import aggregate, ranks_from_scores
from rankers.calibration import calibration_group
from rankers.evaluation.triage import kendall_tau, oracle_acc_curve, random_acc_curve, triage_report
from testaug.core.records import LabelledCandidate, RankedCandidate
from testaug.core.triage import CalibrationCheck, SourceEvaluation, TriageReport, TriageSummary

if TYPE_CHECKING:
    from rankers.ensemble import Ensemble, Triage
    from testaug.core.records import TestCase

BORDA = "plain Borda (members)"


def _report(invalid: np.ndarray, scores: np.ndarray, target: float) -> TriageReport:
    """The triage report of the candidates ordered by `scores`, highest first."""
    return triage_report(invalid[np.argsort(ranks_from_scores(scores), kind="stable")], target)


def part_reports(invalid: np.ndarray, triage: Triage, target: float) -> dict[str, TriageReport]:
    """The report of each part alone: the members' plain Borda count, each member, and each
    stacked part over the candidates it scores (ranked among themselves)."""
    reports: dict[str, TriageReport] = {}
    if len(triage.scores) > 1:
        reports[BORDA] = triage_report(invalid[aggregate(triage.scores).order], target)
    for name, values in triage.scores.items():
        reports[f"member {name}"] = _report(invalid, values, target)
    parts = triage.adapted.parts if triage.adapted is not None else {}
    for name, values in parts.items():
        if name.startswith("member "):
            continue  # the member's own row, over every candidate, is above
        scored = np.array([v is not None for v in values])
        if scored.sum() >= 2:
            part = np.array([v for v in values if v is not None], dtype=np.float64)
            reports[name] = _report(invalid[scored], part, target)
    return reports


def by_source(
    items: Sequence[LabelledCandidate], ranked: Sequence[RankedCandidate], target: float
) -> list[SourceEvaluation]:
    """The triage order's report on each source's candidates, ranked among themselves."""
    valid = {item.candidate.id: item.valid for item in items}
    sources: dict[str, list[bool]] = {}
    for row in ranked:
        sources.setdefault(calibration_group(row.candidate), []).append(not valid[row.candidate.id])
    rows = []
    for source, invalid in sorted(sources.items()):
        report = triage_report(np.array(invalid, dtype=bool), target)
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
    ensemble: Ensemble, items: Sequence[LabelledCandidate], triage: Triage
) -> CalibrationCheck | None:
    """How the P(valid) that `rank` gives holds up on labelled candidates: ECE, and what its
    acceptance rule at 90% precision accepts and how many of those are valid."""
    from testaug.review.acceptance import acceptance_rule, expected_calibration_error

    if ensemble.calibration is None or triage.p_valid is None or not items:
        return None
    valid = [item.valid for item in items]
    accepted = []
    curves = ensemble.calibration.evidence.curves
    for (p, group), is_valid in zip(triage.p_valid, valid, strict=True):
        rule = acceptance_rule(curves[group], 0.9)
        if rule is not None and p >= rule.threshold:
            accepted.append(is_valid)
    return CalibrationCheck(
        ece=expected_calibration_error([p for p, _ in triage.p_valid], valid),
        target=0.9,
        accepted=len(accepted),
        precision=sum(accepted) / len(accepted) if accepted else None,
    )


def _summary(
    invalid: np.ndarray,
    order: np.ndarray,
    parts: dict[str, TriageReport],
    scores: dict[str, np.ndarray],
    target: float,
    **more: object,
) -> TriageSummary:
    """The summary of a triage order, its parts and the rankers' agreement."""
    names = list(scores)
    return TriageSummary.model_validate(
        {
            "target": target,
            "n": len(invalid),
            "n_invalid": int(invalid.sum()),
            "triage": triage_report(invalid[order], target),
            "parts": parts,
            "kendall_tau": {
                f"{a} ~ {b}": float(kendall_tau(scores[a], scores[b]))
                for i, a in enumerate(names)
                for b in names[i + 1 :]
            },
            "random_curve": random_acc_curve(len(invalid), int(invalid.sum())).tolist(),
            "oracle_curve": oracle_acc_curve(len(invalid), int(invalid.sum())).tolist(),
            **more,
        }
    )


def evaluate_triage(
    ensemble: Ensemble,
    items: Sequence[LabelledCandidate],
    *,
    target: float = 0.9,
    reference: Sequence[TestCase] | None = None,
    per_source: bool = False,
    plot: str | None = None,
) -> TriageSummary:
    """How the ensemble triages labelled candidates, in the order `rank` gives them."""
    from rankers.members.cross_encoder import RankerError

    if not items:
        raise RankerError("no labelled candidates to evaluate on")
    triage = ensemble.triage([item.candidate for item in items], reference=reference)
    index = {item.candidate.id: i for i, item in enumerate(items)}
    invalid = np.array([not item.valid for item in items], dtype=bool)
    order = np.array([index[row.candidate.id] for row in triage.ranked])
    return _summary(
        invalid,
        order,
        part_reports(invalid, triage, target),
        triage.scores,
        target,
        calibration=calibration_check(ensemble, items, triage),
        by_source=tuple(by_source(items, triage.ranked, target)) if per_source else (),
        bases=dict(Counter(row.triage_basis for row in triage.ranked if row.triage_basis)),
        plot=plot,
        version=ensemble.version,
    )


def evaluate_scores(
    labelled: Sequence[LabelledCandidate], scores: dict[str, np.ndarray], target: float = 0.9
) -> TriageSummary:
    """The summary of rankers' scores alone (no trained ensemble): their plain Borda count
    as the triage order, each ranker's own order as a part."""
    invalid = np.array([not item.valid for item in labelled], dtype=bool)
    parts = {name: _report(invalid, values, target) for name, values in scores.items()}
    return _summary(invalid, aggregate(scores).order, parts, scores, target)
