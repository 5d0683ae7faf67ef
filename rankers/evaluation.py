"""How well rankers triage a labelled set: ACC@k curves, review effort, agreement."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from testaug.borda import aggregate, ranks_from_scores
from testaug.records import LabelledCandidate
from testaug.triage import (
    TriageReport,
    kendall_tau,
    oracle_acc_curve,
    random_acc_curve,
    triage_report,
)

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
