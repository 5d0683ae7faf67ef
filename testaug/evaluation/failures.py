"""How a model under test fails: per-case results and CheckList's failure rates.

Failure rates are aggregated (`error_rates`) in percent of the cases that count
(filtered DIR cases, which cannot fail, are left out as in CheckList): overall,
per capability, per description, per test type, per source, per provenance
(`testaug.suites.provenance`; a perturbed case has its original's), and the
capability x test type matrix. Every rate carries up to k failing examples.
Perturbed cases count one by one (CheckList groups an original with all its
perturbations; with one perturbation per case the two agree). How a model is run
over cases to get these results is `testaug.evaluation.model_runs`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from pydantic import Field

from testaug.core.records import Record, Source, TestType
from testaug.evaluation.intervals import Interval, wilson
from testaug.suites.provenance import Provenance

TEST_TYPES: tuple[TestType, ...] = ("MFT", "INV", "DIR")


class CaseResult(Record):
    """One case checked against one model: the prediction, the verdict and why."""

    case_id: str
    model: str
    test_type: TestType
    capability: str
    description_id: str
    description: str
    source: Source
    provenance: Provenance | None = None  # None in results written before it was kept
    text: str
    text_pair: str | None = None
    passed: bool
    filtered: bool = False  # a DIR case that cannot fail: left out of failure rates
    # The model's answer held no label (an LLM's unparseable answer): filtered too, so it
    # is neither a pass nor a failure, and counted apart as `FailureRate.unparsed`.
    unparsed: bool = False
    predicted: str
    expected: str
    probabilities: dict[str, float]
    reason: str
    perturbation: str | None = None
    original_id: str | None = None
    original_text: str | None = None
    original_text_pair: str | None = None
    original_predicted: str | None = None
    original_probabilities: dict[str, float] | None = None


class FailureRate(Record):
    """A group's failure rate (% of the n counted cases), its 95% interval (Wilson; None in
    files written before intervals), its counts and failing examples."""

    name: str
    n: int
    failed: int
    filtered: int = 0
    unparsed: int = 0  # cases whose answer held no label, left out like filtered ones
    rate: float | None = Field(ge=0.0, le=100.0, allow_inf_nan=False)  # None: no case counts
    interval: Interval | None = None
    examples: tuple[CaseResult, ...] = ()


class ErrorRates(Record):
    """Failure rates overall, per group, and as CheckList's capability x test type matrix."""

    overall: FailureRate
    by_capability: dict[str, FailureRate]
    by_description: dict[str, FailureRate]  # keyed by description id
    by_test_type: dict[str, FailureRate]
    by_source: dict[str, FailureRate]
    by_provenance: dict[str, FailureRate]
    matrix: dict[str, dict[str, FailureRate]]  # capability -> test type -> cell; absent = N/A
    # description id -> test type -> cell, without examples (what a gate per test type reads)
    description_matrix: dict[str, dict[str, FailureRate]] = Field(default_factory=dict)


class ModelEvaluation(Record):
    """Everything a report or `--json` shows about one model: rates, failures, all results."""

    model: str
    labels: tuple[str, ...]
    overall: FailureRate
    by_capability: dict[str, FailureRate]
    by_description: dict[str, FailureRate]
    by_test_type: dict[str, FailureRate]
    by_source: dict[str, FailureRate]
    by_provenance: dict[str, FailureRate]
    matrix: dict[str, dict[str, FailureRate]]
    description_matrix: dict[str, dict[str, FailureRate]] = Field(default_factory=dict)
    failures: tuple[CaseResult, ...]
    results: tuple[CaseResult, ...]


def failure_rate(name: str, results: Iterable[CaseResult], *, k: int = 3) -> FailureRate:
    """The failure rate of some results, its Wilson interval, the first k failures as examples."""
    results = list(results)
    counted = [r for r in results if not r.filtered]
    failed = [r for r in counted if not r.passed]
    return FailureRate(
        name=name,
        n=len(counted),
        failed=len(failed),
        filtered=sum(r.filtered and not r.unparsed for r in results),
        unparsed=sum(r.unparsed for r in results),
        rate=100 * len(failed) / len(counted) if counted else None,
        interval=wilson(len(failed), len(counted)),
        examples=tuple(failed[:k]),
    )


def _grouped(
    results: Sequence[CaseResult],
    key: Callable[[CaseResult], str],
    name: Callable[[CaseResult], str],
    k: int,
) -> dict[str, FailureRate]:
    """Failure rates per group, groups in order of first appearance."""
    groups = _members(results, key)
    return {g: failure_rate(name(members[0]), members, k=k) for g, members in groups.items()}


def _by_test_type(
    results: Sequence[CaseResult], name: Callable[[CaseResult], str], k: int
) -> dict[str, FailureRate]:
    """Failure rates per test type, in the order MFT, INV, DIR."""
    grouped = _grouped(results, lambda r: r.test_type, name, k)
    return {t: grouped[t] for t in TEST_TYPES if t in grouped}


def error_rates(results: Sequence[CaseResult], *, k: int = 3) -> ErrorRates:
    """Failure rates overall, per capability, description, test type, source, provenance,
    and the matrix."""
    capabilities = dict.fromkeys(r.capability for r in results)
    return ErrorRates(
        overall=failure_rate("all", results, k=k),
        by_capability=_grouped(results, lambda r: r.capability, lambda r: r.capability, k),
        by_description=_grouped(
            results, lambda r: r.description_id, lambda r: f"{r.capability}: {r.description}", k
        ),
        by_test_type=_by_test_type(results, lambda r: r.test_type, k),
        by_source=_grouped(results, lambda r: r.source, lambda r: r.source, k),
        by_provenance=_grouped(
            results, lambda r: str(r.provenance), lambda r: str(r.provenance), k
        ),
        matrix={
            capability: _by_test_type(
                [r for r in results if r.capability == capability],
                lambda r: f"{r.capability} {r.test_type}",
                k,
            )
            for capability in capabilities
        },
        description_matrix={
            description: _by_test_type(members, lambda r: f"{r.capability}: {r.description}", 0)
            for description, members in _members(results, lambda r: r.description_id).items()
        },
    )


def _members(
    results: Sequence[CaseResult], key: Callable[[CaseResult], str]
) -> dict[str, list[CaseResult]]:
    """The results of each group, groups in order of first appearance."""
    groups: dict[str, list[CaseResult]] = {}
    for result in results:
        groups.setdefault(key(result), []).append(result)
    return groups


def interval_text(cell: FailureRate | None) -> str:
    """A failure rate with its 95% interval, `12.5% (8.1–18.6)`; under prediction-powered
    inference the PPI estimate leads. `n/a` where no case counts."""
    if cell is None or cell.rate is None:
        return "n/a"
    interval = cell.interval
    if interval is None:
        return f"{cell.rate:.1f}%"
    shown = cell.rate if interval.estimate is None else 100 * interval.estimate
    return f"{shown:.1f}% ({interval.text()})"


def interval_sentence(cell: FailureRate | None) -> str:
    """The 95% interval of a rate in words, `95% interval 8.1–18.6%` (with the PPI
    estimate, or `on verified cases only`, where it is taken so)."""
    if cell is None or cell.interval is None or cell.rate is None:
        return "no interval"
    interval = cell.interval
    text = f"95% interval {interval.text()}%"
    if interval.method == "ppi" and interval.estimate is not None:
        return f"PPI estimate {100 * interval.estimate:.1f}%, {text}"
    if interval.method == "wilson-verified":
        return f"{text} on {interval.n:,} verified cases only"
    return text
