"""TestAug's suite-comparison protocol, the "patched error rate", with BeLUGA's splits.

Suites A and B are merged and split (seeded, stratified by description, or one of
BeLUGA's leave-one-out splits). The base model's error on the test side is the
unpatched error; the base model fine-tuned on train ∩ A, and separately on
train ∩ B, gives the patched errors on the same test side. The suite whose cases
patch more errors (the larger delta = unpatched − patched) found more bugs. An
optional i.i.d. set adds BeLUGA's i.i.d. score and G score per model.

Rates are fractions in [0, 1]. A case fails when the argmax label is not among its
acceptable labels. Each seed drives the split, the new head (where one is needed),
the shuffling and dropout.
"""

from __future__ import annotations

import logging
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from testaug.core.errors import TestAugError
from testaug.core.records import Label, Record, TestCase, label_options
from testaug.fixing.finetune import (
    Classifier,
    FineTuneConfig,
    LabelledInput,
    fine_tune,
    load_classifier,
    predict_labels,
)
from testaug.fixing.patching.report import (
    CapabilityErrors,
    IidSummary,
    PatchingReport,
    PatchingRun,
    PatchingSummary,
    Stat,
)
from testaug.fixing.splits import Split, Strategy, dedupe, in_suite, merge_suites, splits_for

logger = logging.getLogger(__name__)

Progress = Callable[[str], None]


class IidExample(Record):
    """A labelled i.i.d. example (a row of the task's own test set)."""

    text: str
    text_pair: str | None = None
    label: Label


def _silent(message: str) -> None:
    """A progress callback that ignores its messages."""


def g_score(suite_pass_rate: float, iid_score: float) -> float:
    """BeLUGA's G (Eq. 8): the harmonic mean 2·s_T·s_iid / (s_T + s_iid); 0 when both are 0."""
    total = suite_pass_rate + iid_score
    return 0.0 if total == 0 else 2 * suite_pass_rate * iid_score / total


def stat(values: Sequence[float]) -> Stat:
    """Mean and sample standard deviation of the values."""
    if not values:
        raise TestAugError("no values to aggregate")
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return Stat(mean=statistics.fmean(values), std=std, n=len(values))


def failed(predicted: str, label: Label) -> bool:
    """Whether a prediction fails a case: it is not one of the acceptable labels."""
    return predicted not in label_options(label)


def error_rate(predicted: Sequence[str], cases: Sequence[LabelledInput]) -> float:
    """The fraction of cases the predictions fail (0 for no cases)."""
    if not cases:
        return 0.0
    return sum(failed(p, c.label) for p, c in zip(predicted, cases, strict=True)) / len(cases)


def summarize(errors: Sequence[CapabilityErrors]) -> PatchingSummary:
    """Mean and standard deviation over runs of each error rate and delta."""
    unpatched = [e.err_unpatched for e in errors]
    patched_a = [e.err_patched_a for e in errors]
    patched_b = [e.err_patched_b for e in errors]
    return PatchingSummary(
        n_runs=len(errors),
        err_unpatched=stat(unpatched),
        err_patched_a=stat(patched_a),
        err_patched_b=stat(patched_b),
        delta_a=stat([u - p for u, p in zip(unpatched, patched_a, strict=True)]),
        delta_b=stat([u - p for u, p in zip(unpatched, patched_b, strict=True)]),
    )


def summarize_iid(runs: Sequence[PatchingRun]) -> IidSummary | None:
    """i.i.d. and G aggregates, when the runs have i.i.d. scores."""
    if not runs or runs[0].iid_unpatched is None:
        return None
    fields = IidSummary.model_fields
    return IidSummary(**{name: stat([getattr(run, name) for run in runs]) for name in fields})


def aggregate(runs: Sequence[PatchingRun]) -> tuple[PatchingSummary, dict[str, PatchingSummary]]:
    """The overall and per-capability summaries of the runs."""
    fields = set(CapabilityErrors.model_fields)
    overall = summarize([CapabilityErrors(**run.model_dump(include=fields)) for run in runs])
    by_capability: dict[str, list[CapabilityErrors]] = {}
    for run in runs:
        for capability, errors in run.per_capability.items():
            by_capability.setdefault(capability, []).append(errors)
    return overall, {name: summarize(by_capability[name]) for name in sorted(by_capability)}


@dataclass
class _Base:
    """The unpatched model, its label for every merged case (by id) and its i.i.d. accuracy."""

    classifier: Classifier
    predicted: dict[str, str]
    iid_accuracy: float | None


def iid_accuracy(
    classifier: Classifier, iid: Sequence[LabelledInput] | None, config: FineTuneConfig
) -> float | None:
    """Accuracy on the i.i.d. set (a prediction among the acceptable labels is right)."""
    if not iid:
        return None
    return 1 - error_rate(predict_labels(classifier, iid, config), iid)


class _Scores:
    """Failures of each model of one split on its test cases, and their i.i.d. accuracy."""

    def __init__(self, test: Sequence[TestCase]) -> None:
        self.test = test
        self.failures: dict[str, list[bool]] = {}
        self.iid: dict[str, float | None] = {}

    def add(self, key: str, predicted: Sequence[str], iid: float | None) -> None:
        self.failures[key] = [failed(p, c.label) for p, c in zip(predicted, self.test, strict=True)]
        self.iid[key] = iid

    def rate(self, key: str, capability: str | None = None) -> float:
        """The model's error rate on the test cases (of one capability)."""
        flags = [
            flag
            for flag, case in zip(self.failures[key], self.test, strict=True)
            if capability is None or case.capability == capability
        ]
        return sum(flags) / len(flags) if flags else 0.0

    def errors(self, capability: str | None = None) -> CapabilityErrors:
        """The three error rates on the test cases (of one capability)."""
        return CapabilityErrors(
            n_test=sum(capability in (None, case.capability) for case in self.test),
            err_unpatched=self.rate("unpatched", capability),
            err_patched_a=self.rate("patched_a", capability),
            err_patched_b=self.rate("patched_b", capability),
        )


@dataclass
class _Protocol:
    """What every split of one protocol run shares."""

    base_model: str
    labels: Sequence[str]
    model_labels: Sequence[str] | None
    suites: tuple[dict[str, TestCase], dict[str, TestCase]]
    merged: dict[str, TestCase]
    iid: Sequence[LabelledInput] | None
    progress: Progress


def _run_split(
    protocol: _Protocol, split: Split, base: _Base, config: FineTuneConfig
) -> PatchingRun:
    """Unpatched and patched error rates (and i.i.d. scores) on one split's test side."""
    test = [protocol.merged[i] for i in split.test_ids]
    scores = _Scores(test)
    scores.add("unpatched", [base.predicted[case.id] for case in test], base.iid_accuracy)
    trains = [[suite[i] for i in split.train_ids if i in suite] for suite in protocol.suites]
    new_head = False
    for key, train in zip(("patched_a", "patched_b"), trains, strict=True):
        where = f"seed {split.seed} {split.held_out or 'all'}"
        protocol.progress(f"{where}: fine-tuning on {len(train)} cases ({key})")
        tuned = fine_tune(
            protocol.base_model,
            train,
            labels=protocol.labels,
            config=config,
            model_labels=protocol.model_labels,
        )
        new_head = tuned.head_replaced
        iid = iid_accuracy(tuned, protocol.iid, config)
        scores.add(key, predict_labels(tuned, test, config), iid)
    iid_and_g: dict[str, float | None] = {}
    for key in ("unpatched", "patched_a", "patched_b"):
        accuracy = scores.iid[key]
        iid_and_g[f"iid_{key}"] = accuracy
        iid_and_g[f"g_{key}"] = (
            None if accuracy is None else g_score(1 - scores.rate(key), accuracy)
        )
    capabilities = sorted({case.capability for case in test})
    return PatchingRun(
        seed=split.seed,
        strategy=split.strategy,
        held_out=split.held_out,
        n_train_a=len(trains[0]),
        n_train_b=len(trains[1]),
        **scores.errors().model_dump(),
        per_capability={name: scores.errors(name) for name in capabilities},
        new_head_unpatched=base.classifier.head_replaced,
        new_head_patched=new_head,
        **iid_and_g,
    )


def _base(
    base_model: str,
    cases: Sequence[TestCase],
    labels: Sequence[str],
    model_labels: Sequence[str] | None,
    iid: Sequence[LabelledInput] | None,
    config: FineTuneConfig,
) -> _Base:
    """The unpatched model (a new head from the config's seed where its own cannot serve),
    its predictions on the merged cases and its i.i.d. accuracy."""
    classifier = load_classifier(
        base_model, labels=labels, model_labels=model_labels, seed=config.seed, device=config.device
    )
    predicted = predict_labels(classifier, cases, config)
    return _Base(
        classifier,
        {case.id: label for case, label in zip(cases, predicted, strict=True)},
        iid_accuracy(classifier, iid, config),
    )


def run_patching(
    suite_a: Sequence[TestCase],
    suite_b: Sequence[TestCase],
    base_model: str | Path,
    *,
    labels: Sequence[str],
    seeds: Sequence[int] = (42,),
    strategy: Strategy = "random",
    config: FineTuneConfig | None = None,
    iid: Sequence[LabelledInput] | None = None,
    on_progress: Progress | None = None,
    test_fraction: float = 0.5,
    model_labels: Sequence[str] | None = None,
    suite_names: tuple[str, str] = ("A", "B"),
) -> PatchingReport:
    """The patched-error-rate comparison of suites A and B on a base model, over seeds.

    `strategy` is TestAug's random split ("random", BeLUGA's seen evaluation) or a
    BeLUGA leave-one-out split ("func", "class", "type": one run per held-out value).
    `model_labels` names the base model's outputs with task labels where its config
    does not (see `finetune.output_labels`).
    """
    if not seeds:
        raise TestAugError("run_patching needs at least one seed")
    config = config or FineTuneConfig()
    suites = (
        {case.id: case for case in dedupe(suite_a)},
        {case.id: case for case in dedupe(suite_b)},
    )
    merged_cases = merge_suites(suites[0].values(), suites[1].values(), names=suite_names)
    merged = {case.id: case for case in merged_cases}
    protocol = _Protocol(
        str(base_model), labels, model_labels, suites, merged, iid, on_progress or _silent
    )
    runs: list[PatchingRun] = []
    base_cache: dict[int | None, _Base] = {}
    for seed in seeds:
        seeded = config.model_copy(update={"seed": seed})
        base = base_cache.get(None) or base_cache.get(seed)
        if base is None:
            protocol.progress(f"seed {seed}: the base model on {len(merged)} cases")
            base = _base(str(base_model), merged_cases, labels, model_labels, iid, seeded)
            # A kept head predicts the same for every seed; a new head differs by seed.
            base_cache[seed if base.classifier.head_replaced else None] = base
        for split in splits_for(merged_cases, strategy, seed=seed, test_fraction=test_fraction):
            runs.append(_run_split(protocol, split, base, seeded))
    overall, per_capability = aggregate(runs)
    return PatchingReport(
        base_model=str(base_model),
        strategy=strategy,
        seeds=tuple(seeds),
        labels=tuple(labels),
        suite_names=suite_names,
        config=config,
        test_fraction=test_fraction,
        n_a=len(suites[0]),
        n_b=len(suites[1]),
        n_merged=len(merged),
        n_both=sum(
            in_suite(c, suite_names[0]) and in_suite(c, suite_names[1]) for c in merged_cases
        ),
        runs=tuple(runs),
        overall=overall,
        per_capability=per_capability,
        iid=summarize_iid(runs),
    )
