"""The summary of an evaluation (`testaug evaluate models --json`, evaluation.json), led by its
headline: each model's error rate overall and per capability on verified evidence only
(template seeds, cases accepted by people, expansions of those; see `testaug.suites.provenance`),
unless every case is asked for (`evidence="all"`) or no verified case counts. Every
breakdown over all cases follows, by provenance too.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from typing import Annotated

from pydantic import Field

from testaug.core.records import Record
from testaug.evaluation.failures import CaseResult, FailureRate, ModelEvaluation, failure_rate
from testaug.suites.provenance import Evidence, is_verified

logger = logging.getLogger(__name__)

Percent = Annotated[float, Field(ge=0.0, le=100.0, allow_inf_nan=False)]


class Headline(Record):
    """The rates a summary leads with, the evidence they rest on, and what they leave out.
    `evidence` is `all` where `verified` was asked for but no verified case counts."""

    requested: Evidence
    evidence: Evidence
    fallback: bool
    overall: FailureRate
    by_capability: dict[str, FailureRate]
    left_out: int  # counted cases (perturbed ones too) that the rates leave out
    left_out_by_provenance: dict[str, int]
    unverified: int  # counted unverified cases the rates rest on (evidence `all`)
    note: str


def headline(results: Sequence[CaseResult], evidence: Evidence = "verified") -> Headline:
    """The headline rates of one model's results on the evidence asked for; with `verified`
    and no verified case that counts, on every case, and the note says so."""
    counted = [r for r in results if not r.filtered]
    verified = [r for r in results if is_verified(r.provenance)]
    fallback = evidence == "verified" and not any(not r.filtered for r in verified)
    used: Evidence = "verified" if evidence == "verified" and not fallback else "all"
    chosen = verified if used == "verified" else list(results)
    groups: dict[str, list[CaseResult]] = {}
    for result in chosen:
        groups.setdefault(result.capability, []).append(result)
    overall = failure_rate(used, chosen, k=0)
    unverified = Counter(str(r.provenance) for r in counted if not is_verified(r.provenance))
    left_out = dict(unverified) if used == "verified" else {}
    head = Headline(
        requested=evidence,
        evidence=used,
        fallback=fallback,
        overall=overall,
        by_capability={c: failure_rate(c, members, k=0) for c, members in groups.items()},
        left_out=sum(left_out.values()),
        left_out_by_provenance=left_out,
        unverified=0 if used == "verified" else sum(unverified.values()),
        note=_note(used, fallback, overall.n, unverified),
    )
    if fallback and counted:
        logger.warning("no verified case counts: the headline rests on all %d cases", len(counted))
    return head


def _note(used: Evidence, fallback: bool, n: int, unverified: Counter[str]) -> str:
    """What the headline rests on, in one sentence."""
    parts = ", ".join(f"{count:,} {name}" for name, count in unverified.items())
    if fallback:
        if not n:
            return "no case counts: there is no error rate"
        return (
            f"no verified case (template seed, accepted by people, or expanded from those): "
            f"the error rates rest on all {n:,} cases, unverified evidence ({parts})"
        )
    if used == "all":
        if not unverified:
            return f"error rates on all {n:,} cases, every one verified"
        return (
            f"error rates on all {n:,} cases, verified or not "
            f"({sum(unverified.values()):,} unverified: {parts})"
        )
    left = f"{sum(unverified.values()):,} unverified left out ({parts})" if unverified else ""
    return (
        f"error rates on verified evidence only (template seeds, cases accepted by people, "
        f"expansions of those): {n:,} cases" + (f"; {left}" if left else ", none left out")
    )


class ModelSummary(Record):
    """One model in evaluation.json: the headline's rates and what they rest on first, then
    every breakdown over all cases with failing examples (`ModelEvaluation` without its
    results). Files written before provenance lack the headline fields (None here) and
    the rates by provenance (empty)."""

    model: str
    error_rate: Percent | None
    error_rate_by_capability: dict[str, Percent | None]
    headline_evidence: Evidence | None = None
    headline_left_out: int | None = None
    headline: Headline | None = None
    labels: tuple[str, ...]
    overall: FailureRate
    by_capability: dict[str, FailureRate]
    by_description: dict[str, FailureRate]
    by_test_type: dict[str, FailureRate]
    by_source: dict[str, FailureRate]
    by_provenance: dict[str, FailureRate] = Field(default_factory=dict)
    matrix: dict[str, dict[str, FailureRate]]
    failures: tuple[CaseResult, ...]


class EvaluationSummary(Record):
    """evaluation.json (`testaug evaluate models --json`, and each model's file in a run): the case
    counts, the evidence the headlines were asked to rest on (None in files written before
    provenance) and one summary per model."""

    n_cases: int
    n_perturbed: int
    evidence: Evidence | None = None
    models: tuple[ModelSummary, ...]


def _headline_fields(head: Headline) -> dict[str, object]:
    """The fields of a model's summary that the headline fills."""
    return {
        "error_rate": head.overall.rate,
        "error_rate_by_capability": {name: r.rate for name, r in head.by_capability.items()},
        "headline_evidence": head.evidence,
        "headline_left_out": head.left_out,
        "headline": head,
    }


def with_headline(model: ModelSummary, head: Headline) -> ModelSummary:
    """A model's summary led by another headline's rates."""
    return model.model_copy(update=_headline_fields(head))


def model_summary(evaluation: ModelEvaluation, head: Headline) -> ModelSummary:
    """A model's evaluation without its per-case results, led by the headline's rates."""
    breakdowns = {k: v for k, v in evaluation if k not in ("model", "results")}
    return ModelSummary(model=evaluation.model, **_headline_fields(head), **breakdowns)


def evaluation_summary(
    evaluations: Sequence[ModelEvaluation],
    *,
    n_cases: int,
    n_perturbed: int,
    evidence: Evidence = "verified",
) -> EvaluationSummary:
    """The summary of an evaluation: per model the headline (error rate overall and per
    capability on the evidence asked for, what it rests on and leaves out), then every
    breakdown over all cases with failing examples (not every result)."""
    models = tuple(
        model_summary(evaluation, headline(evaluation.results, evidence))
        for evaluation in evaluations
    )
    return EvaluationSummary(
        n_cases=n_cases, n_perturbed=n_perturbed, evidence=evidence, models=models
    )
