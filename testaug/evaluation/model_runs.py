"""How a model is run over cases: predict every distinct input once, check each case.

A model is a `ModelUnderTest` (`testaug.evaluation.models`): `name`, `labels`
and `predict_proba(inputs, *, batch_size)` returning an (n, len(labels)) array.
`evaluate_model` predicts every distinct input once (MFT cases, the originals of
perturbed cases, the perturbed inputs), checks each case (`testaug.evaluation.expectations`)
and aggregates the results into failure rates (`testaug.evaluation.failures`).
Suite cases of any test type are checked by their label.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from testaug.core.errors import TestAugError
from testaug.core.records import TestCase, label_options
from testaug.evaluation.expectations import (
    NEUTRAL_BAND,
    Band,
    Outcome,
    check_expectation,
    check_mft,
    predicted_labels,
)
from testaug.evaluation.failures import CaseResult, ModelEvaluation, error_rates
from testaug.evaluation.models import ModelUnderTest
from testaug.evaluation.perturbations.cases import PerturbedCase
from testaug.suites.provenance import case_provenance

logger = logging.getLogger(__name__)

Inputs = tuple[str, str | None]


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
