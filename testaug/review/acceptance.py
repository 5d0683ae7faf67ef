"""Acceptance with a stated precision: which candidates the ranker ensemble may accept
without a person, and how sure we are that enough of them are valid.

The ensemble gives each candidate P(valid), calibrated on out-of-fold scores of its
labelled training data. Its `PrecisionCurve` says, for every threshold on P(valid),
how many of those out-of-fold candidates reach it and how many of them are valid.
The acceptance rule for a precision target is the lowest threshold, no lower than the
target itself, whose accepted candidates reach the target with a one-sided
Clopper-Pearson lower confidence bound (95% by default): the largest set we can vouch
for in which every candidate is itself at least that likely to be valid (a set whose
precision the purest candidates carry would otherwise take in doubtful ones at its
edge). No threshold may qualify; then the ranker accepts nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_input_text
from testaug.core.records import (
    AcceptanceRule,
    Annotation,
    Calibration,
    PrecisionCurve,
    PrecisionPoint,
    RankedCandidate,
    Record,
)
from testaug.core.runs import sibling
from testaug.review.binomial import DEFAULT_CONFIDENCE, clopper_pearson_lower

logger = logging.getLogger(__name__)

DEFAULT_TARGET = 0.9


def precision_curve(group: str, p_valid: Sequence[float], valid: Sequence[bool]) -> PrecisionCurve:
    """For each distinct P(valid), highest first: how many candidates reach it, how many are valid."""
    if len(p_valid) != len(valid):
        raise ValueError("p_valid and valid must have one entry per candidate")
    pairs = sorted(zip(p_valid, valid, strict=True), key=lambda pair: -pair[0])
    points: list[PrecisionPoint] = []
    correct = 0
    for index, (p, is_valid) in enumerate(pairs):
        correct += bool(is_valid)
        if index + 1 == len(pairs) or pairs[index + 1][0] != p:
            points.append(PrecisionPoint(threshold=round(p, 6), accepted=index + 1, valid=correct))
    return PrecisionCurve(group=group, n=len(pairs), n_valid=correct, points=tuple(points))


def acceptance_rule(
    curve: PrecisionCurve,
    target: float = DEFAULT_TARGET,
    confidence: float = DEFAULT_CONFIDENCE,
) -> AcceptanceRule | None:
    """The lowest threshold on P(valid), at least `target`, whose accepted out-of-fold
    candidates reach `target` precision with a one-sided `confidence` lower bound; None
    when no threshold does."""
    if not 0.0 < target <= 1.0:
        raise ValueError(f"target precision must be in (0, 1], got {target}")
    chosen: AcceptanceRule | None = None
    for point in curve.points:
        if point.threshold < target:
            break  # points run from the highest threshold down
        bound = clopper_pearson_lower(point.valid, point.accepted, confidence)
        if bound >= target:
            chosen = AcceptanceRule(
                group=curve.group,
                target=target,
                confidence=confidence,
                threshold=point.threshold,
                precision_estimate=point.valid / point.accepted,
                precision_lower_bound=bound,
                accepted=point.accepted,
                calibration_n=curve.n,
            )
    return chosen


def describe_rule(rule: AcceptanceRule) -> str:
    """The rule in one line, as annotation records and reports state it."""
    return (
        f"P(valid) >= {rule.threshold:.3f}: precision {rule.precision_estimate:.1%} "
        f"(one-sided {rule.confidence:.0%} lower bound {rule.precision_lower_bound:.1%}, "
        f"target {rule.target:.0%}) on {rule.accepted} of {rule.calibration_n} "
        f"out-of-fold labelled candidates ({rule.group})"
    )


def no_rule_message(
    curve: PrecisionCurve | Sequence[PrecisionCurve] | None, target: float, confidence: float
) -> str:
    """Why the ranker accepts nothing, in one line (for one curve, or for several groups)."""
    if curve is None:
        return "the ranker accepts nothing: the ensemble has no calibration (retrain it)"
    curves = [curve] if isinstance(curve, PrecisionCurve) else list(curve)
    if len(curves) == 1:
        where = f"on the {curves[0].n} out-of-fold labelled candidates ({curves[0].group})"
    else:
        groups = ", ".join(f"{c.group}: {c.n}" for c in curves)
        where = f"in any calibration group (out-of-fold labelled candidates: {groups})"
    return (
        f"the ranker accepts nothing: no threshold on P(valid) reaches precision {target:.0%} "
        f"with {confidence:.0%} confidence {where}; every candidate waits for people"
    )


def check_target(target: float, *, field: str = "accept_precision") -> float:
    """A precision target in (0, 1]; an InputError naming the field otherwise."""
    if not 0.0 < target <= 1.0:  # also false for NaN
        raise InputError(Problem(f"must be a precision in (0, 1], got {target}", field=field))
    return target


class GroupAcceptance(Record):
    """One calibration group under the rules: its ranked candidates, how many the ranker
    accepted, and its rule (None where no threshold qualifies)."""

    candidates: int
    accepted: int
    rule: AcceptanceRule | None


class AcceptanceSummary(Record):
    """What the ranker accepted under the rules for a precision target, group by group,
    and (`no_rule`) why it accepts nothing when it cannot accept anything."""

    accept_precision: float
    confidence: float
    accepted_by_ranker: int
    groups: dict[str, GroupAcceptance]
    no_rule: str | None
    unpooled: str | None = None  # the pooled group whose rule was withheld (no opt-in)


@dataclass(frozen=True)
class RuleAcceptance:
    """What the ranker accepts under the rules for a precision target, and what it leaves.

    `rules` has every calibration group of the ranked candidates: its rule, or None where
    no threshold qualifies; `candidates` counts the ranked candidates of each group.
    `rest` keeps rank order. `message` says, in one line, why the ranker accepts nothing
    when it cannot accept anything (no calibration, no P(valid), no group with a rule)."""

    target: float
    confidence: float
    rules: dict[str, AcceptanceRule | None]
    candidates: dict[str, int]
    accepted: list[Annotation]
    rest: list[RankedCandidate]
    message: str | None = None
    unpooled: str | None = None  # the pooled group whose rule was withheld (no opt-in)

    def summary(self) -> AcceptanceSummary:
        """The numbers a step output and a report state: per group, its rule or None."""
        accepted = {g: 0 for g in self.rules}
        for record in self.accepted:
            if record.acceptance is not None:
                accepted[record.acceptance.group] = accepted.get(record.acceptance.group, 0) + 1
        return AcceptanceSummary(
            accept_precision=self.target,
            confidence=self.confidence,
            accepted_by_ranker=len(self.accepted),
            groups={
                group: GroupAcceptance(
                    candidates=self.candidates.get(group, 0),
                    accepted=accepted.get(group, 0),
                    rule=rule,
                )
                for group, rule in self.rules.items()
            },
            no_rule=self.message,
            unpooled=self.unpooled,
        )


def accept_by_rule(
    ranked: Sequence[RankedCandidate],
    calibration: Calibration | None,
    *,
    target: float = DEFAULT_TARGET,
    confidence: float = DEFAULT_CONFIDENCE,
    judged: Collection[str] = (),
    note: str | None = None,
    source: Path | None = None,
    pooled: bool = False,
) -> RuleAcceptance:
    """Accept, as the ranker, each candidate whose P(valid) reaches the threshold of the rule
    of its calibration group; leave every other one (in rank order) to people.

    Never accepted: candidates without P(valid) (older ranked files, uncalibrated
    ensembles), of another ensemble than the calibration's, of a group without a rule,
    and those a person already judged (`judged`). A generator without calibration labels
    of its own reads the pooled curve of other generators: it accepts nothing unless
    `pooled` opts in to that rule. Where the ranker can accept nothing for want of a
    rule, one line says why (logged once). `note` ends every record's rule text; `source`
    is where the calibration was to be read from, for that line.
    """
    check_target(target)
    ordered = sorted(ranked, key=lambda item: item.rank)
    curves = calibration.curves if calibration is not None else {}
    usable = [item for item in ordered if _calibrated(item, calibration)]
    usable_ids = {item.candidate.id for item in usable}
    groups = sorted({str(item.calibration_group) for item in usable})
    fallback = calibration.fallback if calibration is not None else None
    rules = {
        group: None
        if group == fallback and not pooled
        else acceptance_rule(curves[group], target, confidence)
        for group in groups
    }
    counts = {group: sum(item.calibration_group == group for item in usable) for group in groups}
    accepted: list[Annotation] = []
    rest: list[RankedCandidate] = []
    for item in ordered:
        rule = rules.get(str(item.calibration_group)) if item.candidate.id in usable_ids else None
        if (
            rule is None
            or item.p_valid is None
            or item.p_valid < rule.threshold
            or item.candidate.id in judged
        ):
            rest.append(item)
            continue
        text = f"{describe_rule(rule)}; this one: P(valid) {item.p_valid:.3f}, rank {item.rank}"
        accepted.append(
            Annotation(
                candidate_id=item.candidate.id,
                valid=True,
                annotator=f"ensemble {item.ensemble_version or 'unversioned'}",
                origin="ranker",
                rule=f"{text}; {note}" if note else text,
                p_valid=item.p_valid,
                acceptance=rule,
            )
        )
    message = _nothing_accepted(ordered, usable, calibration, rules, target, confidence, source)
    if message is not None:
        logger.warning(message)
    unpooled = fallback if fallback in rules and not pooled else None
    return RuleAcceptance(target, confidence, rules, counts, accepted, rest, message, unpooled)


def _calibrated(item: RankedCandidate, calibration: Calibration | None) -> bool:
    """Whether the calibration evidence speaks for this candidate's P(valid)."""
    return (
        calibration is not None
        and item.p_valid is not None
        and item.calibration_group in calibration.curves
        and item.ensemble_version in (None, calibration.ensemble_version)
    )


def _nothing_accepted(
    ordered: Sequence[RankedCandidate],
    usable: Sequence[RankedCandidate],
    calibration: Calibration | None,
    rules: dict[str, AcceptanceRule | None],
    target: float,
    confidence: float,
    source: Path | None,
) -> str | None:
    """Why the ranker can accept nothing at all, in one line; None when some rule applies."""
    if not ordered or any(rule is not None for rule in rules.values()):
        return None
    if calibration is None:
        if source is None:
            return no_rule_message(None, target, confidence)
        return (
            f"the ranker accepts nothing: no calibration evidence ({source} is missing; rank "
            "the candidates with a calibrated ensemble to write it); every candidate waits "
            "for people"
        )
    if calibration is not None and set(rules) == {calibration.fallback}:
        return (
            "the ranker accepts nothing: this generator has no calibration labels of its "
            f"own (the pooled rule of other generators, {calibration.fallback!r}, applies "
            "only when you opt in with --pooled-rule); label a random sample of its "
            "candidates first; every candidate waits for people"
        )
    if not usable:
        versions = sorted({str(item.ensemble_version) for item in ordered if item.p_valid})
        why = (
            f"ranked by ensemble {', '.join(versions)}, not {calibration.ensemble_version} "
            "whose calibration this is"
            if versions
            else "the ranked candidates carry no P(valid) (an uncalibrated ensemble or an "
            "older ranked file)"
        )
        return f"the ranker accepts nothing: {why}; every candidate waits for people"
    return no_rule_message([calibration.curves[g] for g in rules], target, confidence)


def expected_calibration_error(
    p_valid: Sequence[float], valid: Sequence[bool], bins: int = 10
) -> float:
    """ECE: |mean P(valid) - share valid| over equal-width bins, weighted by bin size."""
    if len(p_valid) != len(valid):
        raise ValueError("p_valid and valid must have one entry per candidate")
    if not p_valid:
        return 0.0
    totals = [[0, 0.0, 0] for _ in range(bins)]  # count, sum of p, valid
    for p, is_valid in zip(p_valid, valid, strict=True):
        index = min(int(p * bins), bins - 1)
        totals[index][0] += 1
        totals[index][1] += p
        totals[index][2] += bool(is_valid)
    return sum(abs(s - v) for n, s, v in totals if n) / len(p_valid)


def calibration_beside(ranked_path: Path) -> Path:
    """Where `testaug rank` writes the ensemble's calibration evidence: `<ranked>.calibration.json`."""
    return sibling(ranked_path, "calibration", ".json")


def read_calibration(path: Path) -> Calibration | None:
    """The calibration evidence (a `Calibration` record); None when the file does not exist."""
    if not path.is_file():
        return None
    try:
        return Calibration.model_validate_json(read_input_text(path))
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or None
        raise InputError(Problem(error["msg"], file=path, field=field)) from None
