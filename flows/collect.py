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
from testaug.core.run_sizes import run_size
from testaug.steps import StepOutput
from testaug.steps.measure import model_slug
from testaug.steps.review import AnnotationMode
from testaug.suites.provenance import Evidence

DEFAULT_MODELS = ("vader", "spacy:eng_spacysentiment")


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


@flow(name="collect")
def collect(
    run_dir: str = "runs/latest",
    annotation: AnnotationMode = "label-studio",
    project: str | None = None,
    wait_minutes: float = 0.0,
    models: list[str] = list(DEFAULT_MODELS),  # noqa: B006  (Prefect copies parameters)
    size: str = "default",
    seed: int = 0,
    evidence: Evidence = "verified",
) -> Collected:
    """Bring verdicts back, grow the suite from the accepted cases, measure it, report.
    The headline error rates rest on `evidence`: verified cases only (template seeds, cases
    accepted by people, their expansions) or all."""
    logger = get_run_logger()
    folder = Path(run_dir)
    cases, ranked, annotations = (
        folder / "cases.jsonl",
        folder / "ranked.jsonl",
        folder / "annotations.jsonl",
    )
    missing = [path for path in (cases, ranked) if not path.is_file()]
    if missing:
        raise InputError(
            [Problem("missing: run the augment flow for this folder first", p) for p in missing]
        )
    numbers = run_size(size)
    pulled = None
    if annotation == "label-studio":
        pulled = tasks.pull_from_label_studio(
            annotations, ranked, project=project, wait_minutes=wait_minutes
        )
        if pulled.summary.get("pending"):
            logger.info(
                "%d candidates still wait for people; a later collect run picks them up",
                pulled.summary["pending"],
            )
    accepted = tasks.current(tasks.merge_reviewed, annotations, ranked, folder)
    templates = tasks.current(
        tasks.induce_templates, accepted.path, cases, folder / "templates.yaml", allow_empty=True
    )
    expanded = tasks.current(
        tasks.expand_induced,
        templates,
        [cases, accepted.path],
        folder / "expanded.jsonl",
        per_template=numbers.per_template,
        seed=seed,
    )
    suite = tasks.current(
        tasks.extend_suite, cases, [accepted.path, expanded.path], folder / "suite.jsonl"
    )
    logger.info(
        "suite of %d cases: %d accepted from the LLM, %d from %d induced templates",
        suite.records,
        accepted.records,
        expanded.records,
        templates.records,
    )
    diversity_call = dict(cases_path=suite.path, out=folder / "diversity.json")
    diversity_future = tasks.measure_diversity.submit(**diversity_call)
    evaluation = None
    if models:
        perturbed = tasks.current(
            tasks.perturb_suite, suite.path, folder / "perturbed.jsonl", per_test=numbers.perturb
        )
        calls = [
            dict(
                cases=suite,
                perturbed=perturbed,
                spec=spec,
                out=folder / "evaluation" / f"{model_slug(spec)}.json",
            )
            for spec in models
        ]
        futures = [tasks.evaluate_one_model.submit(**call) for call in calls]
        per_model = tasks.current_all(tasks.evaluate_one_model, futures, calls)
        evaluation = tasks.current(
            tasks.combine_evaluations, per_model, folder / "evaluation.json", evidence=evidence
        )
    (diversity,) = tasks.current_all(tasks.measure_diversity, [diversity_future], [diversity_call])
    report = tasks.write_run_report(folder)
    logger.info("report: %s", report.path)
    outputs = [pulled, accepted, templates, expanded, suite, diversity, evaluation, report]
    publish_summary("collect", outputs, report=report.path)
    return Collected(
        run_dir=folder,
        pulled=pulled,
        accepted=accepted,
        templates=templates,
        expanded=expanded,
        suite=suite,
        diversity=diversity,
        evaluation=evaluation,
        report=report,
    )
