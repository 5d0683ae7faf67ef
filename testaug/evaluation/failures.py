"""How a model under test fails: per-case results and CheckList's failure rates.

A model is a `ModelUnderTest` (`testaug.evaluation.models`): `name`, `labels`
and `predict_proba(inputs, *, batch_size)` returning an (n, len(labels)) array.
`evaluate_model` predicts every distinct input once (MFT cases, the originals of
perturbed cases, the perturbed inputs), checks each case (`testaug.evaluation.expectations`) and aggregates
failure rates, in percent of the cases that count (filtered DIR cases, which
cannot fail, are left out as in CheckList): overall, per capability, per
description, per test type, per source, per provenance (`testaug.suites.provenance`; a
perturbed case has its original's), and the capability x test type matrix.
Every rate carries up to k failing examples. Perturbed cases count one by one
(CheckList groups an original with all its perturbations; with one perturbation
per case the two agree). Suite cases of any test type are checked by their label.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import Field

from testaug.core.errors import TestAugError
from testaug.core.records import Record, Source, TestCase, TestType, label_options
from testaug.evaluation.expectations import (
    NEUTRAL_BAND,
    Band,
    Outcome,
    check_expectation,
    check_mft,
    predicted_labels,
)
from testaug.evaluation.intervals import Interval, wilson
from testaug.evaluation.models import ModelUnderTest
from testaug.evaluation.perturbations.cases import PerturbedCase
from testaug.suites.provenance import Provenance, case_provenance

logger = logging.getLogger(__name__)

Inputs = tuple[str, str | None]
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
    groups: dict[str, list[CaseResult]] = {}
    for result in results:
        groups.setdefault(key(result), []).append(result)
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
    )


def needed_inputs(
    cases: Iterable[TestCase], perturbed: Iterable[PerturbedCase] = ()
) -> list[Inputs]:
    """Every distinct input to predict, once each, in order of first need."""
    wanted: dict[Inputs, None] = {}
    for case in cases:
        wanted[(case.text, case.text_pair)] = None
    for item in perturbed:
        wanted[(item.original.text, item.original.text_pair)] = None
        wanted[item.inputs] = None
    return list(wanted)


def predict_inputs(
    model: ModelUnderTest,
    inputs: Sequence[Inputs],
    *,
    batch_size: int = 32,
    on_progress: Callable[[int, int], None] | None = None,
) -> dict[Inputs, np.ndarray]:
    """The model's probabilities per input, asked in batches of `batch_size` (progress: done, total)."""
    if batch_size < 1:
        raise TestAugError(f"batch_size must be at least 1, got {batch_size}")
    out: dict[Inputs, np.ndarray] = {}
    for start in range(0, len(inputs), batch_size):
        batch = list(inputs[start : start + batch_size])
        rows = np.asarray(model.predict_proba(batch, batch_size=batch_size), dtype=float)
        if rows.shape != (len(batch), len(model.labels)) or not np.isfinite(rows).all():
            raise TestAugError(
                f"model {model.name!r} returned probabilities of shape {rows.shape} for "
                f"{len(batch)} inputs and {len(model.labels)} labels (expected finite numbers)"
            )
        out.update(zip(batch, rows, strict=True))
        if on_progress is not None:
            on_progress(min(start + batch_size, len(inputs)), len(inputs))
    return out


def evaluate_model(
    model: ModelUnderTest,
    cases: Iterable[TestCase],
    perturbed: Iterable[PerturbedCase] = (),
    *,
    batch_size: int = 32,
    on_progress: Callable[[int, int], None] | None = None,
    neutral_band: Band = NEUTRAL_BAND,
    k: int = 3,
) -> ModelEvaluation:
    """Predict every needed input once, in batches, then check and aggregate (see module doc)."""
    cases, perturbed = list(cases), list(perturbed)
    inputs = needed_inputs(cases, perturbed)
    logger.info("%s: predicting %d distinct inputs", model.name, len(inputs))
    probabilities = predict_inputs(model, inputs, batch_size=batch_size, on_progress=on_progress)
    return evaluate_from_probabilities(
        model.name,
        tuple(model.labels),
        cases,
        perturbed,
        probabilities,
        neutral_band=neutral_band,
        k=k,
        unparsed=getattr(model, "unparsed", None) or {},
    )


def evaluate_from_probabilities(
    model: str,
    labels: Sequence[str],
    cases: Iterable[TestCase],
    perturbed: Iterable[PerturbedCase],
    probabilities: Mapping[Inputs, Sequence[float] | np.ndarray],
    *,
    neutral_band: Band = NEUTRAL_BAND,
    k: int = 3,
    unparsed: Mapping[Inputs, str] | None = None,
) -> ModelEvaluation:
    """Check cases against known probabilities per input (text, text_pair) and aggregate.
    A case whose input (or its original's) is in `unparsed` (input -> the model's answer)
    is marked unparsed: left out of the rates and counted apart."""
    labels = tuple(labels)
    cases, perturbed = list(cases), list(perturbed)
    missing = [i for i in needed_inputs(cases, perturbed) if i not in probabilities]
    if missing:
        raise TestAugError(f"no probabilities for {len(missing)} inputs, e.g. {missing[0]!r}")
    results = _mft_results(model, labels, cases, probabilities, neutral_band)
    results += _perturbed_results(model, labels, perturbed, probabilities, neutral_band)
    if unparsed:
        results = [_mark_unparsed(result, unparsed) for result in results]
    rates = error_rates(results, k=k)
    return ModelEvaluation(
        model=model,
        labels=labels,
        **dict(rates),
        failures=tuple(r for r in results if not r.passed and not r.filtered),
        results=tuple(results),
    )


def _mark_unparsed(result: CaseResult, unparsed: Mapping[Inputs, str]) -> CaseResult:
    """The result marked unparsed (neither passed nor failed) when the model's answer to
    its input, or to its original's, held no label."""
    for inputs in (
        (result.text, result.text_pair),
        (result.original_text, result.original_text_pair),
    ):
        if inputs[0] is not None and inputs in unparsed:
            return result.model_copy(
                update={
                    "unparsed": True,
                    "filtered": True,
                    "passed": False,
                    "reason": f"the answer held no label: {unparsed[inputs]!r}",
                }
            )
    return result


def _stack(
    probabilities: Mapping[Inputs, Sequence[float] | np.ndarray], keys: Sequence[Inputs], width: int
) -> np.ndarray:
    """The rows of those inputs as one (n, width) array."""
    if not keys:
        return np.zeros((0, width))
    return np.asarray([np.asarray(probabilities[key], dtype=float) for key in keys])


def _as_dict(labels: Sequence[str], row: np.ndarray) -> dict[str, float]:
    """A probability row by label."""
    return {label: float(p) for label, p in zip(labels, row, strict=True)}


def _mft_results(
    model: str,
    labels: tuple[str, ...],
    cases: Sequence[TestCase],
    probabilities: Mapping[Inputs, Sequence[float] | np.ndarray],
    band: Band,
) -> list[CaseResult]:
    """Each suite case checked by its label."""
    rows = _stack(probabilities, [(c.text, c.text_pair) for c in cases], len(labels))
    outcomes = check_mft(labels, rows, [c.label for c in cases], neutral_band=band) if cases else []
    predicted = predicted_labels(labels, rows, neutral_band=band) if cases else []
    return [
        _result(
            model,
            case,
            outcome,
            pred,
            " or ".join(label_options(case.label)),
            _as_dict(labels, row),
        )
        for case, outcome, pred, row in zip(cases, outcomes, predicted, rows, strict=True)
    ]


def _perturbed_results(
    model: str,
    labels: tuple[str, ...],
    perturbed: Sequence[PerturbedCase],
    probabilities: Mapping[Inputs, Sequence[float] | np.ndarray],
    band: Band,
) -> list[CaseResult]:
    """Each perturbed case checked against its original, grouped by expectation."""
    outcomes: dict[int, Outcome] = {}
    for expectation in dict.fromkeys(p.expectation for p in perturbed):
        indices = [i for i, p in enumerate(perturbed) if p.expectation == expectation]
        original = _stack(
            probabilities,
            [(perturbed[i].original.text, perturbed[i].original.text_pair) for i in indices],
            len(labels),
        )
        new = _stack(probabilities, [perturbed[i].inputs for i in indices], len(labels))
        checked = check_expectation(expectation, labels, original, new, neutral_band=band)
        outcomes.update(zip(indices, checked, strict=True))
    results = []
    for i, item in enumerate(perturbed):
        source = item.original
        before = np.asarray(probabilities[(source.text, source.text_pair)], dtype=float)
        after = np.asarray(probabilities[item.inputs], dtype=float)
        old, new = predicted_labels(labels, np.stack([before, after]), neutral_band=band)
        results.append(
            _result(
                model,
                source,
                outcomes[i],
                new,
                item.expectation.describe(),
                _as_dict(labels, after),
                case_id=item.id,
                test_type=item.test_type,
                text=item.text,
                text_pair=item.text_pair,
                perturbation=item.perturbation,
                original_id=source.id,
                original_text=source.text,
                original_text_pair=source.text_pair,
                original_predicted=old,
                original_probabilities=_as_dict(labels, before),
            )
        )
    return results


def _result(
    model: str,
    case: TestCase,
    outcome: Outcome,
    predicted: str,
    expected: str,
    probabilities: dict[str, float],
    **overrides: Any,
) -> CaseResult:
    """A case's result record; `overrides` set the perturbed case's own fields."""
    fields: dict[str, Any] = {
        "case_id": case.id,
        "test_type": case.test_type,
        "text": case.text,
        "text_pair": case.text_pair,
    }
    return CaseResult(
        model=model,
        capability=case.capability,
        description_id=case.description_id,
        description=case.description,
        source=case.source,
        provenance=case_provenance(case),
        passed=outcome.passed,
        filtered=outcome.filtered,
        predicted=predicted,
        expected=expected,
        probabilities=probabilities,
        reason=outcome.reason,
        **(fields | overrides),
    )


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
