"""The summary of an evaluation (`testaug evaluate models --json`, evaluation.json), led by its
headline: each model's error rate overall and per capability on verified evidence only
(template seeds, cases accepted by people, expansions of those; see `testaug.suites.provenance`),
unless every case is asked for (`evidence="all"`) or no verified case counts. Every
breakdown over all cases follows, by provenance too.

Every rate carries a 95% interval (`testaug.evaluation.intervals`): Wilson's on verified
evidence. A headline that rests on unverified cases carries, where people labelled a
random sample of their generators' cases (the calibration sample; see
`testaug.evaluation.validity`), the prediction-powered interval and estimate of the error
rate over valid cases. Labels picked because the ranker was unsure of a case or ranked it
high are left out of it. Without enough random labels of a generator, the interval is
Wilson's on the verified cases alone, and its note says so. Where no case is verified at all
(a suite imported with `--source llm`), the headline is the rate over every case and its
interval Wilson's over the same cases, as every breakdown's is.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from typing import Annotated

from pydantic import Field

from testaug.core.records import Record
from testaug.evaluation.failures import (
    TEST_TYPES,
    CaseResult,
    FailureRate,
    ModelEvaluation,
    failure_rate,
)
from testaug.evaluation.intervals import MIN_LABELS, Generated, Interval, ppi_error_rate, wilson
from testaug.evaluation.validity import ValidityEvidence
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
    # capability -> test type -> rate on the same evidence (Wilson intervals, no examples);
    # empty in files written before it was kept
    matrix: dict[str, dict[str, FailureRate]] = Field(default_factory=dict)
    left_out: int  # counted cases (perturbed ones too) that the rates leave out
    left_out_by_provenance: dict[str, int]
    unverified: int  # counted unverified cases the rates rest on (evidence `all`)
    note: str
    interval_note: str = ""  # how the rates' intervals were taken (empty before intervals)


def headline(
    results: Sequence[CaseResult],
    evidence: Evidence = "verified",
    validity: ValidityEvidence | None = None,
) -> Headline:
    """The headline rates of one model's results on the evidence asked for; with `verified`
    and no verified case that counts, on every case (their intervals Wilson's, as the
    breakdowns'), and the note says so. Where `all` was asked for and the rates rest on
    unverified cases, their intervals come from `validity` (see the module doc)."""
    counted = [r for r in results if not r.filtered]
    verified = [r for r in results if is_verified(r.provenance)]
    fallback = evidence == "verified" and not any(not r.filtered for r in verified)
    used: Evidence = "verified" if evidence == "verified" and not fallback else "all"
    chosen = verified if used == "verified" else list(results)
    groups: dict[str, list[CaseResult]] = {}
    for result in chosen:
        groups.setdefault(result.capability, []).append(result)
    overall = failure_rate(used, chosen, k=0)
    by_capability = {c: failure_rate(c, members, k=0) for c, members in groups.items()}
    matrix = {c: _by_test_type(members) for c, members in groups.items()}
    interval_note = "95% intervals: Wilson score"
    if fallback and overall.n:
        interval_note = (
            f"95% intervals: Wilson score on the {overall.n:,} cases the rates rest on, as in "
            "the tables; no case is verified, so they leave out whether the cases are valid"
        )
    elif used == "all" and any(not is_verified(r.provenance) for r in chosen if not r.filtered):
        overall, by_capability, interval_note = _unverified_intervals(
            results, overall, by_capability, groups, validity
        )
    unverified = Counter(str(r.provenance) for r in counted if not is_verified(r.provenance))
    left_out = dict(unverified) if used == "verified" else {}
    head = Headline(
        requested=evidence,
        evidence=used,
        fallback=fallback,
        overall=overall,
        by_capability=by_capability,
        matrix=matrix,
        left_out=sum(left_out.values()),
        left_out_by_provenance=left_out,
        unverified=0 if used == "verified" else sum(unverified.values()),
        note=_note(used, fallback, overall.n, unverified),
        interval_note=interval_note,
    )
    if fallback and counted:
        logger.warning("no verified case counts: the headline rests on all %d cases", len(counted))
    return head


def _by_test_type(results: Sequence[CaseResult]) -> dict[str, FailureRate]:
    """Some results' rates per test type, in the order MFT, INV, DIR."""
    grouped: dict[str, list[CaseResult]] = {}
    for result in results:
        grouped.setdefault(result.test_type, []).append(result)
    return {
        t: failure_rate(f"{results[0].capability} {t}", grouped[t], k=0)
        for t in TEST_TYPES
        if t in grouped
    }


def _unverified_intervals(
    results: Sequence[CaseResult],
    overall: FailureRate,
    by_capability: dict[str, FailureRate],
    groups: dict[str, list[CaseResult]],
    validity: ValidityEvidence | None,
) -> tuple[FailureRate, dict[str, FailureRate], str]:
    """The headline rates with intervals that carry the uncertainty of the unverified
    cases' validity (PPI, from people's random labels only), or, where a generator of
    theirs has too few random labels, Wilson's on the verified cases alone; and the
    sentence that says which."""
    plain = {r.case_id: r for r in results if r.perturbation is None and not r.filtered}
    counted = [r for r in results if not r.filtered]
    missing = _unlabelled_generators(counted, validity)
    if missing:
        lacking = (
            "no people's labels of the generator of "
            if validity is None
            else "no random labels (people's labels of a calibration sample drawn at random; "
            f"fewer than {MIN_LABELS}) of the generator of "
        )
        note = (
            "95% intervals: "
            + lacking
            + ", ".join(missing)
            + ", so the intervals are Wilson's on the verified cases only and leave out "
            "the uncertainty of the unverified cases' validity"
        )

        def interval(members: Sequence[CaseResult]) -> Interval:
            verified = [r for r in members if not r.filtered and is_verified(r.provenance)]
            failed = sum(not r.passed for r in verified)
            return wilson(failed, len(verified)).model_copy(update={"method": "wilson-verified"})
    else:
        assert validity is not None
        generators = _generators(counted, validity)
        labelled = sum(len(validity.random_labels(g)) for g in generators)
        picked = sum(len(validity.labels_of(g)) for g in generators) - labelled
        note = (
            "95% intervals: prediction-powered inference; the validity of the unverified "
            f"cases is estimated from the ranker's P(valid) and {labelled:,} people's labels "
            "of their generators drawn at random, and the estimate is the error rate over "
            "valid cases"
            + (
                f" ({picked:,} labels picked because the ranker was unsure or ranked them "
                "high are left out)"
                if picked
                else ""
            )
        )

        def interval(members: Sequence[CaseResult]) -> Interval:
            return _ppi(members, plain, validity)

    def with_interval(cell: FailureRate, members: Sequence[CaseResult]) -> FailureRate:
        return cell.model_copy(update={"interval": interval(members)})

    return (
        with_interval(overall, list(results)),
        {c: with_interval(cell, groups[c]) for c, cell in by_capability.items()},
        note,
    )


def _case_key(result: CaseResult) -> str:
    """The generated case behind a result (a perturbed case's original)."""
    return result.original_id or result.case_id


def _generators(
    counted: Sequence[CaseResult], validity: ValidityEvidence
) -> dict[str | None, None]:
    """The generators of the counted unverified cases (None: not recorded), in order."""
    return dict.fromkeys(
        validity.generator.get(_case_key(r)) for r in counted if not is_verified(r.provenance)
    )


def _unlabelled_generators(
    counted: Sequence[CaseResult], validity: ValidityEvidence | None
) -> list[str]:
    """The generators of unverified cases with fewer than `MIN_LABELS` random labels."""
    if validity is None:
        return ["the unverified cases (no ranking or annotations found)"]
    return [
        "unrecorded generators" if g is None else g
        for g in _generators(counted, validity)
        if len(validity.random_labels(g)) < MIN_LABELS
    ]


def _ppi(
    members: Sequence[CaseResult], plain: dict[str, CaseResult], validity: ValidityEvidence
) -> Interval:
    """The PPI interval of some results' error rate (every generator has enough random
    labels; no other label enters it)."""
    counted = [r for r in members if not r.filtered]
    verified = [not r.passed for r in counted if is_verified(r.provenance)]
    by_generator: dict[str | None, list[CaseResult]] = {}
    for r in counted:
        if not is_verified(r.provenance):
            by_generator.setdefault(validity.generator.get(_case_key(r)), []).append(r)
    generated = []
    for generator, cases in by_generator.items():
        p_valid = [validity.p_valid.get(_case_key(r), 1.0) for r in cases]
        scored = [validity.p_valid[_case_key(r)] for r in cases if _case_key(r) in validity.p_valid]
        labels = validity.random_labels(generator)
        # the random labels of the region of P(valid) the ranker accepted these cases from
        region = [x for x in labels if x.p_valid >= min(scored)] if scored else labels
        labels = region if len(region) >= MIN_LABELS else labels
        generated.append(
            Generated(
                failed=[not r.passed for r in cases],
                p_valid=p_valid,
                labelled_failed=[
                    None if x.case_id not in plain else not plain[x.case_id].passed for x in labels
                ],
                labelled_p_valid=[x.p_valid for x in labels],
                labelled_valid=[x.valid for x in labels],
            )
        )
    return ppi_error_rate(verified, generated)


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
    error_rate_interval: Interval | None = None  # the headline rate's (None before intervals)
    labels: tuple[str, ...]
    overall: FailureRate
    by_capability: dict[str, FailureRate]
    by_description: dict[str, FailureRate]
    by_test_type: dict[str, FailureRate]
    by_source: dict[str, FailureRate]
    by_provenance: dict[str, FailureRate] = Field(default_factory=dict)
    matrix: dict[str, dict[str, FailureRate]]
    description_matrix: dict[str, dict[str, FailureRate]] = Field(default_factory=dict)
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
        "error_rate_interval": head.overall.interval,
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
    validity: ValidityEvidence | None = None,
) -> EvaluationSummary:
    """The summary of an evaluation: per model the headline (error rate overall and per
    capability on the evidence asked for, with intervals, what it rests on and leaves
    out), then every breakdown over all cases with failing examples (not every result)."""
    models = tuple(
        model_summary(evaluation, headline(evaluation.results, evidence, validity))
        for evaluation in evaluations
    )
    return EvaluationSummary(
        n_cases=n_cases, n_perturbed=n_perturbed, evidence=evidence, models=models
    )
