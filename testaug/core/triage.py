"""Records of a validity triage: a ranking's review effort, and triage.json, what
`testaug rankers evaluate --json` prints. They sit in core so that the report (below
rankers/, which computes them) reads the file as a record. Fields that older files
lack are optional: None (or empty) where the file did not have them.
"""

from __future__ import annotations

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
    """triage.json: the ensemble's headline figures, the calibration check and the per-source
    rows first, then the whole evaluation (`rankers.evaluation.RankerEvaluation`'s fields)."""

    calibration: CalibrationCheck | None = None
    by_source: tuple[SourceEvaluation, ...] = ()
    effort_at_target: float | None = None
    random_effort_at_target: float | None = None
    oracle_effort_at_target: float | None = None
    reduction_vs_random: float | None = None
    oracle_reduction_vs_random: float | None = None
    gap_closed: float | None = None
    plot: str | None = None
    version: str | None = None
    target: float
    n: int
    n_invalid: int
    ensemble: TriageReport
    members: dict[str, TriageReport]
    kendall_tau: dict[str, float]
    random_curve: list[float]
    oracle_curve: list[float]
