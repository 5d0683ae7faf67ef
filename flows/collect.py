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
from testaug.steps.measure import model_slug


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
    diversity_call = dict(cases_path=grown.suite.path, out=run.diversity)
    diversity_future = tasks.measure_diversity.submit(**diversity_call)
    evaluation = evaluate(config, grown.suite)
    (diversity,) = tasks.current_all(tasks.measure_diversity, [diversity_future], [diversity_call])
    report = tasks.write_run_report(folder)
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
        run.annotations,
        run.ranked,
        project=config.project,
        wait_minutes=config.wait_minutes,
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
    accepted = tasks.current(tasks.merge_reviewed, run.annotations, run.ranked, run.root)
    templates = tasks.current(
        tasks.induce_templates, accepted.path, cases, run.templates, allow_empty=True
    )
    expanded = tasks.current(
        tasks.expand_induced,
        templates,
        [cases, accepted.path],
        run.expanded,
        per_template=config.sizes().per_template,
        seed=config.seed,
    )
    suite = tasks.current(tasks.extend_suite, cases, [accepted.path, expanded.path], run.suite)
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
        suite.path,
        run.perturbed,
        per_test=config.sizes().perturb,
    )
    calls = [
        dict(
            cases=suite,
            perturbed=perturbed,
            spec=spec,
            out=run.evaluations / f"{model_slug(spec)}.json",
        )
        for spec in models
    ]
    futures = [tasks.evaluate_one_model.submit(**call) for call in calls]
    per_model = tasks.current_all(tasks.evaluate_one_model, futures, calls)
    return tasks.current(
        tasks.combine_evaluations,
        per_model,
        run.evaluation,
        evidence=config.evidence,
    )
