"""The `collect` flow: annotations in -> accepted cases merged -> templates induced and
expanded -> the updated suite -> diversity and the models under test (one task per
model, run concurrently) -> the HTML report."""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger
from pydantic import BaseModel, ConfigDict

from flows import tasks
from flows.artifacts import publish_summary
from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_jsonl
from testaug.core.records import TestCase
from testaug.core.run_folder import RunFolder
from testaug.steps.config import RunConfig
from testaug.steps.contract import StepOutput
from testaug.steps.grow import ExpandInducedConfig, ExtendConfig, InduceConfig
from testaug.steps.measure import (
    CombineEvaluationsConfig,
    DiversityConfig,
    EvaluationConfig,
    ModelEvaluationConfig,
    PerturbConfig,
    ReportConfig,
    model_slug,
)
from testaug.steps.review import ReviewConfig


class Collected(BaseModel):
    """What a collect run wrote, step by step."""

    model_config = ConfigDict(frozen=True)

    run_dir: Path
    pulled: StepOutput | None
    accepted: StepOutput
    templates: StepOutput
    expanded: StepOutput
    suite: StepOutput
    diversity: StepOutput
    evaluation: StepOutput | None
    report: StepOutput


class Grown(BaseModel):
    """The suite grown from a run's accepted candidates."""

    model_config = ConfigDict(frozen=True)

    accepted: StepOutput
    templates: StepOutput
    expanded: StepOutput
    suite: StepOutput


@flow(name="collect")
def collect(config: RunConfig = RunConfig()) -> Collected:  # noqa: B008  (a frozen record)
    """Bring verdicts back (from Label Studio in that annotation mode), grow the suite from
    the accepted cases, measure it, report. The headline error rates rest on
    `config.evidence`: verified cases only (template seeds, cases accepted by people, their
    expansions) or all."""
    folder = config.run_dir
    run = RunFolder(folder)
    missing = [p for p in (run.cases, run.ranked) if not p.is_file()]
    if missing:
        raise InputError(
            [Problem("missing: run the augment flow for this folder first", p) for p in missing]
        )
    pulled = pull(config) if config.annotation == "label-studio" else None
    grown = grow(config)
    diversity_config = DiversityConfig(cases=grown.suite.path, out=run.diversity)
    diversity_future = tasks.measure_diversity.submit(diversity_config)
    evaluation = evaluate(config, grown.suite)
    (diversity,) = tasks.current_all(
        tasks.measure_diversity, [diversity_future], [diversity_config]
    )
    report = tasks.write_run_report(ReportConfig(run_dir=folder))
    get_run_logger().info("report: %s", report.path)
    collected = Collected(
        run_dir=folder,
        pulled=pulled,
        **dict(grown),
        diversity=diversity,
        evaluation=evaluation,
        report=report,
    )
    outputs = [pulled, *dict(grown).values(), diversity, evaluation, report]
    publish_summary("collect", outputs, report=report.path)
    return collected


def pull(config: RunConfig) -> StepOutput:
    """People's verdicts so far from the run's Label Studio project."""
    run = RunFolder(config.run_dir)
    pulled = tasks.pull_from_label_studio(
        ReviewConfig(
            ranked=run.ranked,
            annotations=run.annotations,
            project=config.project,
            wait_seconds=config.wait_minutes * 60,
        )
    )
    if pulled.summary.pending:
        get_run_logger().info(
            "%d candidates still wait for people; a later collect run picks them up",
            pulled.summary.pending,
        )
    return pulled


def grow(config: RunConfig) -> Grown:
    """Accepted candidates merged, templates induced from them and expanded, the suite."""
    run = RunFolder(config.run_dir)
    cases = run.cases
    accepted = tasks.current(
        tasks.merge_reviewed,
        ReviewConfig(ranked=run.ranked, annotations=run.annotations, out=run.root),
    )
    templates = tasks.current(
        tasks.induce_templates,
        InduceConfig(accepted=accepted.path, cases=cases, out=run.templates, allow_empty=True),
    )
    expanded = tasks.current(
        tasks.expand_induced,
        ExpandInducedConfig(
            templates=templates,
            known=(cases, accepted.path),
            out=run.expanded,
            per_template=config.sizes().per_template,
            seed=config.seed,
        ),
    )
    suite = tasks.current(
        tasks.extend_suite,
        ExtendConfig(suite=cases, new_cases=(accepted.path, expanded.path), out=run.suite),
    )
    get_run_logger().info(
        "suite of %d cases: %d accepted from the LLM, %d from %d induced templates",
        suite.records,
        accepted.records,
        expanded.records,
        templates.records,
    )
    return Grown(accepted=accepted, templates=templates, expanded=expanded, suite=suite)


def evaluate(config: RunConfig, suite: StepOutput) -> StepOutput | None:
    """The models under test on the suite and its perturbations, one task per model."""
    first = next(iter(read_jsonl(suite.path, TestCase)), None)
    models = config.task_models(first.task) if first is not None else ()
    if not models:
        return None
    run = RunFolder(config.run_dir)
    perturbed = tasks.current(
        tasks.perturb_suite,
        PerturbConfig(
            cases=suite.path,
            out=run.perturbed,
            evaluation=EvaluationConfig(perturb=config.sizes().perturb),
        ),
    )
    configs = [
        ModelEvaluationConfig(
            cases=suite.path,
            perturbed=perturbed.path,
            model=spec,
            out=run.evaluations / f"{model_slug(spec)}.json",
        )
        for spec in models
    ]
    futures = [tasks.evaluate_one_model.submit(one) for one in configs]
    per_model = tasks.current_all(tasks.evaluate_one_model, futures, configs)
    combined = CombineEvaluationsConfig(
        parts=tuple(per_model),
        out=run.evaluation,
        evaluation=EvaluationConfig(evidence=config.evidence),
    )
    return tasks.current(tasks.combine_evaluations, combined)
