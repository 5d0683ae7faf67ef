"""The report's per-test summary (CheckList's visual summary): for each test of
an evaluation (a description and its test type; an INV or DIR test per perturbation), its
description, capability, type and failure rate per model, and its cases, failing ones first,
with the original and perturbed text and each model's prediction and confidence.

The cases come from evaluation.results.jsonl (every case's result, beside evaluation.json);
without it, from the failures evaluation.json keeps, with no rates. Report.md gets one table
row per test; report.html gets the cases, filterable in the page (`testaug.reports.test_summary_html`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from testaug.core.jsonl import read_jsonl
from testaug.core.records import Record, TestType
from testaug.core.runs import sibling
from testaug.evaluation.failures import (
    TEST_TYPES,
    CaseResult,
    FailureRate,
    failure_rate,
    interval_text,
)
from testaug.evaluation.summary import EvaluationSummary

SECTION = "Per-test summary"
MAX_FAILING = 50  # failing cases shown per test
MAX_PASSING = 5  # passing cases shown per test

TestKey = tuple[
    str, str, TestType, str | None
]  # capability, description id, test type, perturbation


class ModelVerdict(Record):
    """One model's verdict on one case: its prediction and confidence (the probability of
    the predicted label; None where the label comes from the neutral band), and for INV and
    DIR cases the same on the original."""

    passed: bool
    filtered: bool
    predicted: str
    confidence: float | None
    original_predicted: str | None = None
    original_confidence: float | None = None
    reason: str


class SummaryCase(Record):
    """One case of a test with every model's verdict on it (by model name)."""

    case_id: str
    text: str
    text_pair: str | None = None
    original_text: str | None = None
    original_text_pair: str | None = None
    expected: str
    verdicts: dict[str, ModelVerdict]

    @property
    def failing_models(self) -> tuple[str, ...]:
        """The models the case fails for (a filtered DIR case fails none)."""
        return tuple(m for m, v in self.verdicts.items() if not v.passed and not v.filtered)


class TestInfo(Record):
    """One test: what it checks, its failure rate per model (empty when only failures were
    read), how many distinct cases fail for some model or pass for all, and the cases shown."""

    __test__ = False

    capability: str
    description_id: str
    description: str
    test_type: TestType
    perturbation: str | None = None
    stats: dict[str, FailureRate]
    n_failing: int
    n_passing: int
    cases: tuple[SummaryCase, ...]

    @property
    def name(self) -> str:
        """`INV: description (typos)`."""
        extra = f" ({self.perturbation})" if self.perturbation else ""
        return f"{self.test_type}: {self.description}{extra}"


class TestSummary(Record):
    """Every test of an evaluation; `complete` when every case's result was read (False: the
    failures evaluation.json keeps, with no passing cases and no rates)."""

    __test__ = False

    models: tuple[str, ...]
    complete: bool
    tests: tuple[TestInfo, ...]


def read_test_summary(evaluation_path: Path, evaluation: EvaluationSummary) -> TestSummary:
    """The per-test summary of an evaluation (evaluation.json, read), from every case's
    result beside it or, where that file is missing, from the failures it keeps."""
    models = [m.model for m in evaluation.models]
    results_path = sibling(evaluation_path, "results")
    if results_path.exists():
        return summarize_tests(models, read_jsonl(results_path, CaseResult))
    failures = [f for m in evaluation.models for f in m.failures]
    return summarize_tests(models, failures, complete=False)


def summarize_tests(
    models: Sequence[str],
    results: Iterable[CaseResult],
    *,
    complete: bool = True,
    max_failing: int = MAX_FAILING,
    max_passing: int = MAX_PASSING,
) -> TestSummary:
    """Group results into tests (in the order capability, description, MFT/INV/DIR,
    perturbation, each by first appearance) and merge each case's verdicts across models;
    per test up to `max_failing` failing and `max_passing` passing cases are kept."""
    groups: dict[TestKey, list[CaseResult]] = {}
    for result in results:
        key = (result.capability, result.description_id, result.test_type, result.perturbation)
        groups.setdefault(key, []).append(result)
    capabilities = {c: i for i, c in enumerate(dict.fromkeys(k[0] for k in groups))}
    descriptions = {d: i for i, d in enumerate(dict.fromkeys(k[1] for k in groups))}
    order = {k: i for i, k in enumerate(groups)}
    keys = sorted(
        groups,
        key=lambda k: (
            capabilities[k[0]],
            descriptions[k[1]],
            TEST_TYPES.index(k[2]),
            order[k],
        ),
    )
    tests = tuple(_test(groups[key], models, complete, max_failing, max_passing) for key in keys)
    return TestSummary(models=tuple(models), complete=complete, tests=tests)


def _test(
    results: Sequence[CaseResult],
    models: Sequence[str],
    complete: bool,
    max_failing: int,
    max_passing: int,
) -> TestInfo:
    """One test from its results (every model's)."""
    first = results[0]
    cases = _cases(results)
    failing = [c for c in cases if c.failing_models]
    passing = [c for c in cases if not c.failing_models]
    by_model: dict[str, list[CaseResult]] = {}
    for result in results:
        by_model.setdefault(result.model, []).append(result)
    stats = (
        {m: failure_rate(m, by_model[m], k=0) for m in models if m in by_model} if complete else {}
    )
    return TestInfo(
        capability=first.capability,
        description_id=first.description_id,
        description=first.description,
        test_type=first.test_type,
        perturbation=first.perturbation,
        stats=stats,
        n_failing=len(failing),
        n_passing=len(passing),
        cases=(*failing[:max_failing], *passing[:max_passing]),
    )


def _cases(results: Sequence[CaseResult]) -> list[SummaryCase]:
    """The distinct cases of a test, in order of first appearance, with each model's verdict."""
    merged: dict[str, tuple[CaseResult, dict[str, ModelVerdict]]] = {}
    for result in results:
        merged.setdefault(result.case_id, (result, {}))[1][result.model] = _verdict(result)
    return [
        SummaryCase(
            case_id=case_id,
            text=first.text,
            text_pair=first.text_pair,
            original_text=first.original_text,
            original_text_pair=first.original_text_pair,
            expected=first.expected,
            verdicts=verdicts,
        )
        for case_id, (first, verdicts) in merged.items()
    ]


def _verdict(result: CaseResult) -> ModelVerdict:
    return ModelVerdict(
        passed=result.passed,
        filtered=result.filtered,
        predicted=result.predicted,
        confidence=result.probabilities.get(result.predicted),
        original_predicted=result.original_predicted,
        original_confidence=(result.original_probabilities or {}).get(
            result.original_predicted or ""
        ),
        reason=result.reason,
    )


def rate_cell(stats: Mapping[str, FailureRate], model: str) -> str:
    """A test's failure rate for a model with its 95% interval and counts,
    `12.5% (8.1–18.6), 3/24`, with the DIR cases left out (`, 2 filtered`); n/a when not
    known."""
    cell = stats.get(model)
    filtered = f", {cell.filtered} filtered" if cell is not None and cell.filtered else ""
    if cell is None or cell.rate is None:
        return "n/a" + filtered
    shown = f"{cell.rate:.1f}%" if cell.interval is None else interval_text(cell)
    return f"{shown}, {cell.failed}/{cell.n}{filtered}"


def prediction_text(verdict: ModelVerdict) -> str:
    """`negative (0.81)`, or for a perturbed case `positive (0.90) -> negative (0.81)`."""
    new = _labelled(verdict.predicted, verdict.confidence)
    if verdict.original_predicted is None:
        return new
    return f"{_labelled(verdict.original_predicted, verdict.original_confidence)} -> {new}"


def _labelled(label: str, confidence: float | None) -> str:
    return label if confidence is None else f"{label} ({confidence:.2f})"


def case_text(text: str | None, pair: str | None) -> str:
    """A case's input as one line (`text || pair` for pairs)."""
    return (text or "") + (f" || {pair}" if pair else "")
