"""Measuring a suite from Python: models under test (spec strings or Python objects) on
its cases, the cases' diversity, and a run folder's report."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import TYPE_CHECKING, Any

from testaug.api.arguments import api_function, model_specs, step_config
from testaug.api.suites import Cases, cases_file
from testaug.core.errors import InputError, Problem

if TYPE_CHECKING:
    from testaug.diversity.measures import DiversitySummary
    from testaug.evaluation.summary import EvaluationSummary
    from testaug.steps.contract import StepOutput
    from testaug.steps.measure import DiversityConfig, ReportConfig
    from testaug.suites.provenance import Evidence


@api_function(paths=("out",))
def evaluate(
    cases: Cases,
    models: Any,
    *,
    out: str | Path | None = None,
    perturb: int = 100,
    labels: str | Sequence[str] | None = None,
    seed: int = 0,
    batch_size: int = 32,
    examples: int = 3,
    evidence: Evidence = "verified",
) -> EvaluationSummary:
    """Error rates of the models on the cases (and on `perturb` perturbed copies per INV
    and DIR test), as `testaug evaluate models` gives them.

    `cases` are test cases, a JSONL file of them, or a suite (a `Suite`, a file, folder or
    shipped name), sampled as `expand` samples by default (20 cases per template).
    `models` is one model or a list: a spec string (`vader`, `hf:PATH`, `py:module:attr`,
    ...) or a Python object, a callable over a list of texts (a list of (text, pair)
    tuples for pair tasks) returning one label or one probability row per input, or an
    object with `name`, `labels` and `predict_proba` (its labels mapped onto the task's
    by name, as `hf:` models' are). An object is named `python:NAME` after its `name` or
    `__name__`. `labels` are the task's labels (default: the shipped suite's). With
    `out`, a run folder, the cases, evaluation.json, every case's result and the work
    files are written there (`report(out)` reads them); without it nothing stays on disk.
    Every model is checked before any work; bad input is an InputError naming the
    argument (`models[1]`, `cases[3].label`, `perturb`)."""
    from testaug.core.jsonl import read_json
    from testaug.core.run_folder import RunFolder
    from testaug.evaluation.summary import EvaluationSummary
    from testaug.steps.measure import EvaluationConfig, SuiteEvaluationConfig, evaluate_suite

    options = EvaluationConfig(
        perturb=perturb,
        labels=_labels(labels),
        seed=seed,
        batch_size=batch_size,
        examples=examples,
        evidence=evidence,
    )
    with ExitStack() as stack:
        specs = model_specs(models, stack)
        if out is None:
            folder = Path(stack.enter_context(TemporaryDirectory(prefix="testaug-evaluate-")))
        else:
            folder = Path(out)
            folder.mkdir(parents=True, exist_ok=True)
        run = RunFolder(folder)
        config = SuiteEvaluationConfig(
            cases=stack.enter_context(cases_file(cases, run.cases)),
            models=specs,
            out=run.evaluation,
            work=folder,
            evaluation=options,
        )
        evaluate_suite(config)
        return read_json(run.evaluation, EvaluationSummary)


def _labels(labels: Any) -> str | None:
    """The task's labels as the steps take them (comma-separated); an InputError naming
    `labels` for anything but a string or a list of strings."""
    if labels is None or isinstance(labels, str):
        return labels
    if isinstance(labels, Sequence) and all(isinstance(label, str) for label in labels):
        return ",".join(labels)
    raise InputError(Problem(f"expected label names, got {labels!r}", field="labels"))


@api_function(paths=("out",))
def measure_diversity(
    cases: Cases | None = None,
    *,
    config: DiversityConfig | None = None,
    out: str | Path | None = None,
    **fields: Any,
) -> DiversitySummary:
    """Self-BLEU and unique dependency paths of the cases, overall and per group (`by`:
    comma-separated dimensions such as `source` or `capability`); written as JSON to
    `out` (diversity.json) when given. Give a `DiversityConfig`, or its fields as keyword
    arguments (`by`, `seed`)."""
    from testaug.core.errors import TestAugError
    from testaug.core.jsonl import read_json
    from testaug.diversity.measures import DiversitySummary, parse_dimensions
    from testaug.steps.measure import DiversityConfig
    from testaug.steps.measure import measure_diversity as diversity_step

    by = fields.get("by", config.by if isinstance(config, DiversityConfig) else "source")
    if not isinstance(by, str):
        message = f"expected dimensions (a str such as 'source'), got {by!r}"
        raise InputError(Problem(message, field="by"))
    try:
        parse_dimensions(by)
    except TestAugError as exc:
        raise InputError(Problem(str(exc), field="by")) from None
    with ExitStack() as stack:
        work = Path(stack.enter_context(TemporaryDirectory(prefix="testaug-diversity-")))
        given = dict(fields)
        if out is not None:
            given["out"] = Path(out)
        elif config is None:
            given["out"] = work / "diversity.json"
        if cases is not None or config is None:
            given["cases"] = stack.enter_context(cases_file(cases, work / "cases.jsonl"))
        record = step_config(DiversityConfig, config, given)
        diversity_step(record)
        return read_json(record.out, DiversitySummary)


@api_function(paths=("run_dir",))
def report(
    run_dir: str | Path | None = None, *, config: ReportConfig | None = None, **fields: Any
) -> StepOutput:
    """report.md and a self-contained report.html written into the run folder from the
    files its stages wrote; the output's `path` is the HTML page, `files["markdown"]` the
    Markdown. Give the folder, or a `ReportConfig`."""
    from testaug.steps.measure import ReportConfig, write_run_report

    given = {**fields, **({"run_dir": run_dir} if run_dir is not None else {})}
    return write_run_report(step_config(ReportConfig, config, given))
