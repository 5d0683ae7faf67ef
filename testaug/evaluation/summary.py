"""The JSON summary of an evaluation (`testaug evaluate --json`, evaluation.json), led by its
headline: each model's error rate overall and per capability on verified evidence only
(template seeds, cases accepted by people, expansions of those; see `testaug.suites.provenance`),
unless every case is asked for (`evidence="all"`) or no verified case counts. Every
breakdown over all cases follows, by provenance too.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from typing import Any

from testaug.core.records import Record
from testaug.evaluation.failures import CaseResult, FailureRate, ModelEvaluation, failure_rate
from testaug.suites.provenance import Evidence, is_verified

logger = logging.getLogger(__name__)

HEADLINE_KEYS = (
    "model",
    "error_rate",
    "error_rate_by_capability",
    "headline_evidence",
    "headline_left_out",
    "headline",
)


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


def with_headline(model: dict[str, Any], head: Headline) -> dict[str, Any]:
    """A model's summary (its breakdowns as JSON) led by the headline's rates."""
    rest = {key: value for key, value in model.items() if key not in HEADLINE_KEYS}
    return {
        "model": model["model"],
        "error_rate": head.overall.rate,
        "error_rate_by_capability": {name: r.rate for name, r in head.by_capability.items()},
        "headline_evidence": head.evidence,
        "headline_left_out": head.left_out,
        "headline": head.model_dump(mode="json"),
        **rest,
    }


def evaluation_summary(
    evaluations: Sequence[ModelEvaluation],
    *,
    n_cases: int,
    n_perturbed: int,
    evidence: Evidence = "verified",
) -> dict[str, Any]:
    """The JSON of an evaluation: per model the headline (error rate overall and per
    capability on the evidence asked for, what it rests on and leaves out), then every
    breakdown over all cases with failing examples (not every result)."""
    models = [
        with_headline(
            evaluation.model_dump(mode="json", exclude={"results"}),
            headline(evaluation.results, evidence),
        )
        for evaluation in evaluations
    ]
    return {"n_cases": n_cases, "n_perturbed": n_perturbed, "evidence": evidence, "models": models}
