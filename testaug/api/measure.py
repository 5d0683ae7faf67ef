"""Measuring a suite from Python: models under test (spec strings or Python objects) on
its cases, the cases' diversity, and a run folder's report."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import TYPE_CHECKING, Any

from testaug.api.suites import Cases, cases_file

if TYPE_CHECKING:
    from testaug.diversity.measures import DiversitySummary
    from testaug.evaluation.summary import EvaluationSummary
    from testaug.steps.contract import StepOutput
    from testaug.suites.provenance import Evidence


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

    `models` is one model or a list: a spec string (`vader`, `hf:PATH`, `py:module:attr`,
    ...) or a Python object, a callable over a list of texts (a list of (text, pair)
    tuples for pair tasks) returning one label or one probability row per input, or an
    object with `name`, `labels` and `predict_proba`. An object is named `python:NAME`
    after its `name` or `__name__`. `labels` are the task's labels (default: the shipped
    suite's). With `out`, a run folder, the cases, evaluation.json, every case's result
    and the work files are written there (`report(out)` reads them); without it nothing
    stays on disk."""
    from testaug.core.jsonl import read_json
    from testaug.core.run_folder import RunFolder
    from testaug.evaluation.models.python_object import registered
    from testaug.evaluation.summary import EvaluationSummary
    from testaug.steps.measure import EvaluationConfig, SuiteEvaluationConfig, evaluate_suite

    given = [models] if isinstance(models, str) or not isinstance(models, Sequence) else models
    options = EvaluationConfig(
        perturb=perturb,
        labels=labels if labels is None or isinstance(labels, str) else ",".join(labels),
        seed=seed,
        batch_size=batch_size,
        examples=examples,
        evidence=evidence,
    )
    with ExitStack() as stack:
        if out is None:
            folder = Path(stack.enter_context(TemporaryDirectory(prefix="testaug-evaluate-")))
        else:
            folder = Path(out)
            folder.mkdir(parents=True, exist_ok=True)
        run = RunFolder(folder)
        specs = [
            model if isinstance(model, str) else stack.enter_context(registered(model))
            for model in given
        ]
        config = SuiteEvaluationConfig(
            cases=cases_file(cases, run.cases),
            models=tuple(specs),
            out=run.evaluation,
            work=folder,
            evaluation=options,
        )
        evaluate_suite(config)
        return read_json(run.evaluation, EvaluationSummary)


def measure_diversity(
    cases: Cases, *, by: str = "source", seed: int = 0, out: str | Path | None = None
) -> DiversitySummary:
    """Self-BLEU and unique dependency paths of the cases, overall and per group (`by`:
    comma-separated dimensions such as `source` or `capability`); written as JSON to
    `out` (diversity.json) when given."""
    from testaug.core.jsonl import read_json
    from testaug.diversity.measures import DiversitySummary
    from testaug.steps.measure import DiversityConfig
    from testaug.steps.measure import measure_diversity as diversity_step

    with TemporaryDirectory(prefix="testaug-diversity-") as work:
        target = Path(out) if out is not None else Path(work) / "diversity.json"
        path = cases_file(cases, Path(work) / "cases.jsonl")
        diversity_step(DiversityConfig(cases=path, out=target, by=by, seed=seed))
        return read_json(target, DiversitySummary)


def report(run_dir: str | Path) -> StepOutput:
    """report.md and a self-contained report.html written into the run folder from the
    files its stages wrote; the output's `path` is the HTML page, `files["markdown"]` the
    Markdown."""
    from testaug.steps.measure import ReportConfig, write_run_report

    return write_run_report(ReportConfig(run_dir=Path(run_dir)))
