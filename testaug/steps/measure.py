"""Steps that measure a suite: diversity, the models under test on it (and on CheckList
perturbations of it), and the run's report."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field

from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_json, read_jsonl, write_jsonl
from testaug.core.records import Record, TestCase
from testaug.core.run_folder import RunFolder
from testaug.core.runs import sibling, write_json, write_text_atomic
from testaug.evaluation.perturbations.cases import PerturbedCase
from testaug.steps.contract import StepOutput, StepSummary, step_output
from testaug.suites.provenance import Evidence

logger = logging.getLogger(__name__)

# The public functions that are not steps (see tests/steps/test_step_contract.py).
HELPERS = frozenset({"model_slug"})


class DiversityStepSummary(StepSummary):
    """The whole suite's diversity (the rest of diversity.json is in the file)."""

    kind: Literal["diversity"] = "diversity"
    self_bleu: float
    dependency_paths: int
    n_cases: int


class PerturbSummary(StepSummary):
    """CheckList's perturbations of a suite: their number is the step's record count."""

    kind: Literal["perturb"] = "perturb"


class EvaluateSummary(StepSummary):
    """One model under test: its headline error rate and the evidence it rests on."""

    kind: Literal["evaluate"] = "evaluate"
    model: str
    error_rate: float | None
    evidence: Evidence | None


class HeadlineSummary(Record):
    """What a run's summary keeps of a model's `Headline` (the rest is in evaluation.json)."""

    evidence: Evidence
    fallback: bool
    left_out: int
    note: str


class CombineEvaluationsSummary(StepSummary):
    """The models' evaluations in one file: each model's headline error rate, the evidence
    asked for, and what each headline rests on and leaves out."""

    kind: Literal["combine-evaluations"] = "combine-evaluations"
    error_rates: dict[str, float | None]
    evidence: Evidence
    headline: dict[str, HeadlineSummary]


class ReportSummary(StepSummary):
    """The run report's sections."""

    kind: Literal["report"] = "report"
    sections: tuple[str, ...]


def _cases(path: Path, labels: str | None = None) -> list[TestCase]:
    """The cases in the file; an error when it has none or a label outside its task's labels
    (`labels`, comma-separated, or the shipped suite's)."""
    from testaug.suites.task_labels import check_labels

    cases = list(read_jsonl(path, TestCase))
    if not cases:
        raise InputError(Problem("no test cases in the file", file=path))
    given = [name.strip() for name in labels.split(",")] if labels else None
    check_labels(cases, known=given, file=path)
    return cases


class DiversityConfig(Record):
    """What `measure_diversity` measures: the cases, the file the measures go to
    (diversity.json), the groups (`by`: comma-separated dimensions such as `source` or
    `capability`) and the seed of the samples Self-BLEU is taken on."""

    WRITES: ClassVar[tuple[str, ...]] = ("out",)

    cases: Path
    out: Path
    by: str = "source"
    seed: int = 0


def measure_diversity(config: DiversityConfig) -> StepOutput:
    """Self-BLEU and unique dependency paths of the cases, per group (diversity.json)."""
    from testaug.diversity.measures import diversity_report, diversity_summary, parse_dimensions

    report = diversity_report(
        _cases(config.cases), by=parse_dimensions(config.by), seed=config.seed
    )
    summary = diversity_summary(report)
    write_json(config.out, summary.model_dump(mode="json"))
    return step_output(
        "diversity",
        config.out,
        len(report.groups),
        summary=DiversityStepSummary(
            self_bleu=report.whole.self_bleu,
            dependency_paths=report.whole.dependency_paths,
            n_cases=report.whole.n_cases,
        ),
    )


class EvaluationConfig(Record):
    """How a suite is evaluated (`evaluate_suite`, and each of its steps the part it
    uses): perturbed cases per INV/DIR test (0: none), the task's labels (comma-separated;
    default: the shipped suite's), the perturbations' seed, the batch size, failing
    examples kept per group, and the headline's evidence."""

    perturb: int = Field(default=100, ge=0)
    labels: str | None = None
    seed: int = 0
    batch_size: int = Field(default=32, ge=1)
    examples: int = Field(default=3, ge=0)
    evidence: Evidence = "verified"


class PerturbConfig(Record):
    """What `perturb_suite` perturbs: the cases, the file the perturbed cases go to, and
    of `evaluation` the cases per test (`perturb`), their seed and the task's labels."""

    WRITES: ClassVar[tuple[str, ...]] = ("out",)

    cases: Path
    out: Path
    evaluation: EvaluationConfig = EvaluationConfig()


def perturb_suite(config: PerturbConfig) -> StepOutput:
    """CheckList's INV and DIR perturbations of a seeded sample of the cases
    (`config.evaluation.labels`, comma-separated, name the task's labels; default: the
    shipped suite's)."""
    from testaug.evaluation.battery import default_battery, run_battery
    from testaug.suites.task_labels import task_labels_and_lexicons

    options = config.evaluation
    cases = _cases(config.cases, options.labels)
    task_labels, lexicons = task_labels_and_lexicons(cases, options.labels)
    perturbed = (
        run_battery(
            cases,
            default_battery(task_labels, lexicons),
            per_test=options.perturb,
            seed=options.seed,
        )
        if options.perturb
        else []
    )
    written = write_jsonl(config.out, perturbed)
    return step_output("perturb", config.out, written, summary=PerturbSummary())


def model_slug(spec: str) -> str:
    """A file-name-safe form of a model spec: `spacy:eng_spacysentiment` -> `spacy-eng_spacysentiment`."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", spec).strip("-") or "model"


class ModelEvaluationConfig(Record):
    """What `evaluate_one_model` evaluates: the cases, their perturbations (a file
    `perturb_suite` wrote), the model's spec, the file its summary goes to, and of
    `evaluation` the batch size, failing examples kept per group, the headline's evidence
    and the task's labels."""

    WRITES: ClassVar[tuple[str, ...]] = ("out",)

    cases: Path
    perturbed: Path
    model: str
    out: Path
    evaluation: EvaluationConfig = EvaluationConfig()


def evaluate_one_model(
    config: ModelEvaluationConfig, *, on_progress: Callable[[int, int], None] | None = None
) -> StepOutput:
    """One model on the cases (MFT) and their perturbations (INV, DIR): its summary as
    JSON at `config.out` (headline rates on the evidence asked for, so many failing
    examples per group), every case's result beside it. Labels as in `perturb_suite`."""
    from testaug.evaluation.model_runs import evaluate_model
    from testaug.evaluation.models import load_model
    from testaug.evaluation.summary import evaluation_summary
    from testaug.suites.task_labels import task_labels_and_lexicons

    options = config.evaluation
    cases = _cases(config.cases, options.labels)
    perturbed = list(read_jsonl(config.perturbed, PerturbedCase))
    task_labels, _ = task_labels_and_lexicons(cases, options.labels)
    model = load_model(config.model, task_labels=task_labels)
    evaluation = evaluate_model(
        model,
        cases,
        perturbed,
        batch_size=options.batch_size,
        on_progress=on_progress,
        k=options.examples,
    )
    summary = evaluation_summary(
        [evaluation], n_cases=len(cases), n_perturbed=len(perturbed), evidence=options.evidence
    )
    write_json(config.out, summary.model_dump(mode="json"))
    results = sibling(config.out, "results")
    write_jsonl(results, evaluation.results)
    return step_output(
        "evaluate",
        config.out,
        len(evaluation.results),
        files={"results": results},
        summary=EvaluateSummary(
            model=evaluation.model,
            error_rate=summary.models[0].error_rate,
            evidence=summary.models[0].headline_evidence,
        ),
    )


class CombineEvaluationsConfig(Record):
    """What `combine_evaluations` combines: the models' evaluations (what
    `evaluate_one_model` returned), the file they go to (evaluation.json), of `evaluation`
    the headline's evidence, and the run folder whose ranking and people's labels give the
    intervals (default: `out`'s folder)."""

    WRITES: ClassVar[tuple[str, ...]] = ("out",)

    parts: tuple[StepOutput, ...]
    out: Path
    evaluation: EvaluationConfig = EvaluationConfig()
    run_folder: Path | None = None


def combine_evaluations(config: CombineEvaluationsConfig) -> StepOutput:
    """The per-model evaluations as one evaluation.json (what `testaug evaluate -o` writes),
    with every case's result in evaluation.results.jsonl. Each model's headline rates are
    taken again from its results, on the evidence asked for (verified cases only, or all),
    their intervals from the ranking and people's labels in the run folder."""
    from testaug.evaluation.failures import CaseResult, interval_sentence
    from testaug.evaluation.summary import EvaluationSummary, headline, with_headline
    from testaug.evaluation.validity import run_validity

    parts, out, evidence = config.parts, config.out, config.evaluation.evidence
    validity = run_validity(config.run_folder or out.parent) if evidence == "all" else None

    summaries = [read_json(part.path, EvaluationSummary) for part in parts]
    if not summaries:
        raise InputError(Problem("no model evaluations to combine", file=out))
    models = []
    heads: dict[str, HeadlineSummary] = {}
    for part, summary in zip(parts, summaries, strict=True):
        results = list(read_jsonl(part.files["results"], CaseResult))
        for model in summary.models:
            head = headline([r for r in results if r.model == model.model], evidence, validity)
            models.append(with_headline(model, head))
            heads[model.model] = HeadlineSummary(
                evidence=head.evidence,
                fallback=head.fallback,
                left_out=head.left_out,
                note=f"{interval_sentence(head.overall)}; {head.note}",
            )
    combined = EvaluationSummary(
        n_cases=summaries[0].n_cases,
        n_perturbed=summaries[0].n_perturbed,
        evidence=evidence,
        models=tuple(models),
    )
    write_json(out, combined.model_dump(mode="json"))
    results = sibling(out, "results")
    lines = [
        line
        for part in parts
        for line in part.files["results"].read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    write_text_atomic(results, "".join(f"{line}\n" for line in lines))
    outline = CombineEvaluationsSummary(
        error_rates={model.model: model.error_rate for model in models},
        evidence=evidence,
        headline=heads,
    )
    return step_output("evaluate", out, len(models), summary=outline)


class SuiteEvaluationConfig(Record):
    """What `evaluate_suite` evaluates: the cases, the models' specs, the file the
    evaluation goes to (evaluation.json), the work folder (the perturbed cases and each
    model's evaluation) and how (`evaluation`)."""

    WRITES: ClassVar[tuple[str, ...]] = ("out", "work")

    cases: Path
    models: tuple[str, ...]
    out: Path
    work: Path
    evaluation: EvaluationConfig = EvaluationConfig()


def evaluate_suite(
    config: SuiteEvaluationConfig,
    *,
    on_progress: Callable[[str, int, int | None], None] | None = None,
) -> StepOutput:
    """Every model on the cases and their perturbations, as the steps of a run do it one
    by one: `perturb_suite`, `evaluate_one_model` per model, `combine_evaluations` into
    `config.out` (evaluation.json, with every case's result beside it). The perturbed
    cases and each model's evaluation are written into `config.work`.
    `on_progress(what, done, total)` hears of each stage (total None while it is not
    known). The specs are checked before any work (an InputError naming --model)."""
    from testaug.evaluation.models import check_model_specs

    check_model_specs(config.models)
    report = on_progress or (lambda what, done, total: None)
    folder, options = RunFolder(config.work), config.evaluation
    perturbing = "perturbing cases (INV, DIR)"
    report(perturbing, 0, None)
    perturbed = perturb_suite(
        PerturbConfig(cases=config.cases, out=folder.perturbed, evaluation=options)
    )
    report(perturbing, 1, 1)
    parts = []
    for index, spec in enumerate(config.models):
        what = f"evaluating {spec}"
        one = ModelEvaluationConfig(
            cases=config.cases,
            perturbed=perturbed.path,
            model=spec,
            out=folder.evaluations / f"{index:02d}-{model_slug(spec)}.json",
            evaluation=options,
        )
        parts.append(
            evaluate_one_model(
                one, on_progress=lambda done, total, what=what: report(what, done, total)
            )
        )
    combined = CombineEvaluationsConfig(
        parts=tuple(parts), out=config.out, evaluation=options, run_folder=config.cases.parent
    )
    return combine_evaluations(combined)


class ReportConfig(Record):
    """Which run folder `write_run_report` reports on (and writes report.md and
    report.html into)."""

    WRITES: ClassVar[tuple[str, ...]] = ("run_dir",)

    run_dir: Path


def write_run_report(config: ReportConfig) -> StepOutput:
    """report.md and a self-contained report.html from the files in the run folder."""
    from testaug.reports.run_report import write_report

    written = write_report(config.run_dir)
    return step_output(
        "report",
        written.html,
        len(written.sections),
        files={"markdown": written.markdown},
        summary=ReportSummary(sections=written.sections),
    )
