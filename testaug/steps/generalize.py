"""BeLUGA's cross-functional analysis from files: a suite, an i.i.d. file and a model spec
in, crossfunctional.json out (`testaug evaluate generalization` and the generalize flow); the summary
holds each pair's mean G per scenario, the full report is the file (`read_report`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from testaug.core.errors import InputError, Problem, TestAugError
from testaug.core.jsonl import read_jsonl
from testaug.core.records import Record, TestCase
from testaug.fixing.crossfunctional.records import PAIR_SCENARIOS, TrainingSetting
from testaug.steps.contract import StepOutput, StepSummary, step_output

if TYPE_CHECKING:
    from testaug.fixing.crossfunctional.analysis import CrossFunctionalReport

DEFAULT_CONFIGURATIONS = ("IID->T", "IID+T", "IID->(IID+T)")
DEFAULT_METHODS = ("vanilla",)

# The public functions that are not steps (see tests/steps/test_step_contract.py).
HELPERS = frozenset({"generalize_summary"})


class GeneralizeConfig(Record):
    """What the analysis runs: configuration-method pairs, scenarios, seeds (42, 43, ...),
    the suite split, and the training (BeLUGA's grid holds lr 2e-5, batch 16, 3 epochs)."""

    configurations: tuple[str, ...] = DEFAULT_CONFIGURATIONS
    methods: tuple[str, ...] = DEFAULT_METHODS
    scenarios: tuple[str, ...] = PAIR_SCENARIOS
    standard: bool = True
    seeds: int = Field(default=1, ge=1)
    split_seed: int = 123
    test_fraction: float = Field(default=0.5, ge=0.05, le=0.95)
    per_functionality: int | None = Field(default=None, ge=2)
    epochs: int = Field(default=3, ge=1)
    learning_rate: float = Field(default=2e-5, gt=0)
    batch_size: int = Field(default=16, ge=1)
    max_length: int = Field(default=128, ge=8)
    device: str = "cpu"
    labels: str | None = None  # comma-separated task labels; default the suite's
    # BL-12: tune each pair's suite step on T_val over this grid (BeLUGA's: lr 2e-5, 3e-5,
    # 5e-5; epochs 1, 2, 3; batch 8, 16); empty: one setting (the fields above) everywhere.
    select: bool = False
    grid_learning_rates: tuple[float, ...] = (2e-5, 3e-5, 5e-5)
    grid_epochs: tuple[int, ...] = (1, 2, 3)
    grid_batch_sizes: tuple[int, ...] = (16,)
    significance_trials: int = Field(default=10_000, ge=100)

    def grid(self) -> list[TrainingSetting]:
        """The settings tried on T_val (none without `select`); the learning rate varies fastest."""
        if not self.select:
            return []
        return [
            TrainingSetting(learning_rate=lr, epochs=epochs, batch_size=batch)
            for batch in self.grid_batch_sizes
            for epochs in self.grid_epochs
            for lr in self.grid_learning_rates
        ]


class GeneralizeFilesConfig(Record):
    """One analysis from files: the suite's cases, the i.i.d. file (D_train; and D_test as
    `iid_test`, or the file split in two seeded halves), the model spec (hf:PATH[?labels=..],
    a path or hub id, or minilm), where the report goes, a run folder's perturbed.jsonl for
    the INV and DIR tests, and what the analysis runs (`analysis`)."""

    suite: Path
    iid: Path
    model: str
    out: Path
    iid_test: Path | None = None
    perturbed: Path | None = None
    analysis: GeneralizeConfig = GeneralizeConfig()


def generalize_files(
    config: GeneralizeFilesConfig, *, on_progress: Callable[[str], None] | None = None
) -> StepOutput:
    """Run the analysis of `config.model` on the suite's cases with the i.i.d. examples and
    the perturbed tests (see `GeneralizeFilesConfig`); write the report to `config.out`."""
    from testaug.evaluation.perturbations.cases import PerturbedCase
    from testaug.fixing.crossfunctional.analysis import (
        behaviour_trainer,
        classifier_check,
        classifier_predict,
        configuration_name,
        iid_halves,
        run_crossfunctional,
        sample_per_functionality,
        write_report,
    )
    from testaug.fixing.finetune import FineTuneConfig
    from testaug.fixing.patching.base_model import base_model, check_base_model
    from testaug.fixing.patching.protocol import IidExample
    from testaug.suites.task_labels import task_labels_and_lexicons

    suite, iid, iid_test, perturbed = config.suite, config.iid, config.iid_test, config.perturbed
    model, options = config.model, config.analysis
    check_base_model(model)
    cases = list(read_jsonl(suite, TestCase))
    if not cases:
        raise InputError(Problem("no cases", file=suite))
    if options.per_functionality:
        cases = sample_per_functionality(cases, options.per_functionality, options.split_seed)
    tests = list(read_jsonl(perturbed, PerturbedCase)) if perturbed else []
    if options.per_functionality and tests:
        kept = {case.id for case in cases}
        tests = [t for t in tests if t.original.id in kept]
    examples = list(read_jsonl(iid, IidExample))
    if iid_test is None:
        if len(examples) < 2:
            raise InputError(Problem("needs at least two i.i.d. examples to split", file=iid))
        train_iid, test_iid = iid_halves(examples, options.split_seed)
    else:
        train_iid, test_iid = examples, list(read_jsonl(iid_test, IidExample))
        if not test_iid:
            raise InputError(Problem("no i.i.d. test examples", file=iid_test))
    if not train_iid:
        raise InputError(Problem("no i.i.d. examples", file=iid))
    try:
        configurations = [configuration_name(c) for c in options.configurations]
    except TestAugError as exc:
        raise InputError(Problem(str(exc), field="configs")) from exc
    unknown = [s for s in options.scenarios if s not in PAIR_SCENARIOS]
    if unknown:
        raise InputError(
            Problem(f"unknown scenario {unknown[0]!r}: seen, func, class, type", field="scenarios")
        )
    from testaug.fixing.behaviour.training import METHODS

    for method in options.methods:
        if method not in METHODS:
            raise InputError(
                Problem(f"unknown method {method!r}: one of {', '.join(METHODS)}", field="methods")
            )
    labels = task_labels_and_lexicons(cases, options.labels)[0]
    path, model_labels = base_model(model)
    tuning = FineTuneConfig(
        learning_rate=options.learning_rate,
        batch_size=options.batch_size,
        epochs=options.epochs,
        max_length=options.max_length,
        device=options.device,
    )
    report = run_crossfunctional(
        cases,
        iid_train=train_iid,
        iid_test=test_iid,
        pairs=[(c, m) for c in configurations for m in options.methods],
        train=behaviour_trainer(path, labels=labels, config=tuning, model_labels=model_labels),
        predict=classifier_predict(tuning),
        perturbed=tests,
        check=classifier_check(tuning),
        base_model=model,
        labels=labels,
        seeds=[42 + i for i in range(options.seeds)],
        scenarios=options.scenarios,  # type: ignore[arg-type]  # checked above
        standard=options.standard,
        split_seed=options.split_seed,
        test_fraction=options.test_fraction,
        grid=options.grid(),
        significance_trials=options.significance_trials,
        on_progress=on_progress,
    )
    write_report(config.out, report)
    return step_output(
        "generalize", config.out, len(report.runs), summary=generalize_summary(report)
    )


class GeneralizeSummary(StepSummary):
    """The analysis in numbers: the model, seeds and data sizes, the IID baseline's mean G,
    each pair's mean G per scenario (fractions), its p-value against the baseline, and the
    setting chosen on T_val (with selection)."""

    kind: Literal["generalize"] = "generalize"
    model: str
    seeds: tuple[int, ...]
    cases: int
    iid_train: int
    iid_test: int
    g_standard: float | None
    g: dict[str, dict[str, float]]  # pair -> scenario -> mean G
    g_p: dict[str, dict[str, float]] = Field(default_factory=dict)
    selected: dict[str, str] = Field(default_factory=dict)  # pair -> setting


def generalize_summary(report: CrossFunctionalReport) -> GeneralizeSummary:
    """The numbers of a report worth passing on (see `GeneralizeSummary`)."""
    return GeneralizeSummary(
        model=report.base_model,
        seeds=report.seeds,
        cases=report.n_cases,
        iid_train=report.n_iid_train,
        iid_test=report.n_iid_test,
        g_standard=None if report.standard is None else report.standard.g.mean,
        g={
            pair.name: {name: s.g.mean for name, s in pair.scenarios.items()}
            for pair in report.pairs
        },
        g_p={
            pair.name: {
                name: s.versus_baseline.g_p
                for name, s in pair.scenarios.items()
                if s.versus_baseline is not None
            }
            for pair in report.pairs
        },
        selected={
            pair.name: pair.selection.chosen.name
            for pair in report.pairs
            if pair.selection is not None
        },
    )
