"""Records of a validity triage: a ranking's review effort, and triage.json, what
`testaug rankers evaluate --json` prints. They sit in core so that the report (below
rankers/, which computes them) reads the file as a record. Fields that older files
lack are optional: None (or empty) where the file did not have them.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from testaug.core.records import Record


class TriageReport(Record):
    """Effort to reach a target accuracy with a ranking, next to random and perfect orders.

    Efforts are fractions k/N; `reduction_vs_random` is 1 - effort / random effort,
    `oracle_reduction_vs_random` the same for the perfect order (the most any ranking
    can save), `gap_closed` the share of the random-to-oracle gap this ranking closes
    and `gap_to_oracle` is effort - oracle effort. `curve[k]` is ACC@k for k = 0..N.
    The two None fields are None only in files written before they existed.
    """

    n: int
    n_invalid: int
    target: float
    effort_at_target: float
    random_effort_at_target: float
    oracle_effort_at_target: float
    reduction_vs_random: float
    oracle_reduction_vs_random: float | None = None
    gap_closed: float | None = None
    gap_to_oracle: float
    curve: list[float]


class SourceEvaluation(Record):
    """The ensemble's triage on the candidates of one source (a generator, or `rule`)."""

    source: str
    n: int
    n_invalid: int
    effort_at_target: float
    random_effort_at_target: float
    oracle_effort_at_target: float
    gap_closed: float


class CalibrationCheck(Record):
    """How an ensemble's P(valid) holds up on labelled candidates: the expected calibration
    error, and what its acceptance rule at precision `target` accepts (`precision`: the
    share of those that are valid, None when it accepts none)."""

    ece: float
    target: float
    accepted: int
    precision: float | None


class TriageSummary(Record):
    """triage.json, what `testaug rankers evaluate --json` prints: how well the order people
    review (`triage`: the candidates as `testaug rank` orders them) and each part of it
    (`parts`: the plain Borda count of the members, each member, and where the ensemble
    adapts, each learner and signal it stacks, each over the candidates it scores) triage
    labelled candidates; the members' pairwise Kendall tau; the random and perfect orders'
    curves; P(valid)'s calibration and acceptance (read as `rank` reads it); the triage on
    each source's candidates; what the order rests on (`bases`: how many candidates each
    basis covers). Files written before the triage order was evaluated (with `ensemble`
    and `members`, the Borda count) read with that count as their triage and parts."""

    target: float
    n: int
    n_invalid: int
    triage: TriageReport
    parts: dict[str, TriageReport] = Field(default_factory=dict)
    kendall_tau: dict[str, float] = Field(default_factory=dict)
    random_curve: list[float]
    oracle_curve: list[float]
    calibration: CalibrationCheck | None = None
    by_source: tuple[SourceEvaluation, ...] = ()
    bases: dict[str, int] = Field(default_factory=dict)
    plot: str | None = None
    version: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _borda_files(cls, data: Any) -> Any:
        """A file of the earlier format: its Borda count as the triage, its members as parts."""
        if not isinstance(data, dict) or "triage" in data or "ensemble" not in data:
            return data
        kept = {k: v for k, v in data.items() if k in cls.model_fields}
        members = data.get("members")
        parts = members if isinstance(members, dict) else {}
        return {**kept, "triage": data["ensemble"], "parts": parts}
