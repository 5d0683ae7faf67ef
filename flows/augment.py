"""The `augment` flow: suite -> seed cases -> generation (one task per capability, run
concurrently) -> ranking -> annotation: the ranker accepts what its rule for a stated
precision vouches for, and the top of the rest goes to people (in mode `auto`, no one:
everything the rule does not accept stays pending)."""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger
from pydantic import BaseModel, ConfigDict

from flows import tasks
from flows.artifacts import publish_summary
from testaug.core.bundled import bundled_dir
from testaug.core.jsonl import read_jsonl
from testaug.core.records import TestCase
from testaug.core.run_sizes import run_size
from testaug.core.settings import Settings
from testaug.generation.sampling import GenerationSettings
from testaug.review.acceptance import DEFAULT_TARGET, calibration_beside, check_target
from testaug.steps import StepOutput
from testaug.steps.augment import BackendSpec, PromptPlan
from testaug.steps.review import AnnotationMode


class Augmented(BaseModel):
    """What an augment run wrote, step by step."""

    model_config = ConfigDict(frozen=True)

    run_dir: Path
    cases: StepOutput
    candidates: StepOutput
    rankers: StepOutput
    ranked: StepOutput
    annotations: StepOutput | None = None


def default_training() -> Path:
    """The shipped labelled candidates the offline ensemble trains on at first use."""
    return bundled_dir("data") / "validity" / "train.jsonl"


@flow(name="augment")
def augment(
    suite: str = "sentiment",
    run_dir: str = "runs/latest",
    size: str = "default",
    generator: BackendSpec = BackendSpec(),  # noqa: B008  (a frozen record)
    rankers: str = "offline",
    annotation: AnnotationMode = "auto",
    top: float = 0.3,
    accept_precision: float = DEFAULT_TARGET,
    project: str | None = None,
    capabilities: list[str] | None = None,
    seed: int = 0,
    prompts_per_description: int | None = None,
    samples: int | None = None,
) -> Augmented:
    """Generate candidates for a suite, rank them, and send the doubtful ones for review."""
    logger = get_run_logger()
    check_target(accept_precision)
    folder = Path(run_dir)
    numbers = run_size(size, prompts_per_description=prompts_per_description, samples=samples)
    cases = tasks.current(
        tasks.expand_seed_cases,
        suite,
        folder / "cases.jsonl",
        per_template=numbers.per_template,
        seed=seed,
    )
    chosen = capabilities or sorted({case.capability for case in read_jsonl(cases.path, TestCase)})
    logger.info("%d seed cases; generating for %d capabilities", cases.records, len(chosen))
    plan = PromptPlan(
        prompts_per_description=numbers.prompts_per_description,
        seeds_per_prompt=numbers.seeds_per_prompt,
        seed=seed,
    )
    generation = GenerationSettings(samples=numbers.samples, temperature=numbers.temperature)
    calls = [
        dict(
            cases=cases,
            out=folder / "generated" / f"{index:02d}.candidates.jsonl",
            capability=capability,
            generator=generator,
            plan=plan,
            generation=generation,
        )
        for index, capability in enumerate(chosen)
    ]
    rankers_ready = tasks.prepare_rankers.submit(
        rankers, default_training(), Settings().cache_dir / "rankers"
    )
    futures = [tasks.generate_candidates.submit(**call) for call in calls]
    parts = tasks.current_all(tasks.generate_candidates, futures, calls)
    candidates = tasks.current(tasks.combine_candidates, parts, folder / "candidates.jsonl")
    ranker_output = rankers_ready.result()
    ranked = tasks.current(
        tasks.rank_candidates,
        candidates.path,
        ranker_output.path.parent,
        folder / "ranked.jsonl",
        cases_path=cases.path,
    )
    result = Augmented(
        run_dir=folder, cases=cases, candidates=candidates, rankers=ranker_output, ranked=ranked
    )
    annotations_path = folder / "annotations.jsonl"
    if annotation == "auto":
        annotations = tasks.review_automatically(
            ranked.path,
            annotations_path,
            calibration_path=calibration_beside(ranked.path),
            target=accept_precision,
        )
        log_acceptance(annotations)
        result = result.model_copy(update={"annotations": annotations})
    elif annotation == "label-studio":
        annotations = tasks.push_to_label_studio(
            ranked.path,
            annotations_path,
            cases.path,
            project=project,
            top=top,
            accept_precision=accept_precision,
        )
        log_acceptance(annotations)
        result = result.model_copy(update={"annotations": annotations})
    elif annotation == "terminal":
        annotations = review_in_terminal(
            ranked.path, annotations_path, cases.path, top, accept_precision
        )
        log_acceptance(annotations)
        result = result.model_copy(update={"annotations": annotations})
    publish_summary("augment", [cases, candidates, ranker_output, ranked, result.annotations])
    return result


def log_acceptance(output: StepOutput) -> None:
    """What the ranker accepted under its rules, group by group, in the flow's log."""
    logger = get_run_logger()
    summary = output.summary
    logger.info(
        "the ranker accepted %d candidates (precision target %.0f%%); %d wait for people",
        summary.get("accepted_by_ranker", 0),
        100 * summary.get("accept_precision", DEFAULT_TARGET),
        summary.get("pending", 0) + summary.get("sent", 0),
    )
    if summary.get("no_rule"):
        logger.info("%s", summary["no_rule"])


def review_in_terminal(
    ranked_path: Path, annotations_path: Path, cases_path: Path, top: float, accept_precision: float
) -> StepOutput:
    """Mode `terminal`: the ranker accepts what its rule vouches for, and the person who
    started the run reviews the top of the rest."""
    import getpass
    import sys

    from rich.console import Console

    from testaug.review.terminal import key_reader
    from testaug.steps import review, step_output

    seeds = {case.id: case for case in read_jsonl(cases_path, TestCase)}
    done = review.review_in_terminal(
        ranked_path,
        annotations_path,
        seeds=seeds,
        annotator=getpass.getuser(),
        read_key=key_reader(sys.stdin),
        console=Console(),
        top=top,
        target=accept_precision,
        calibration_path=calibration_beside(ranked_path),
    )
    session = done.session
    return step_output(
        "annotate",
        annotations_path,
        session.annotated,
        mode="terminal",
        valid=session.valid,
        invalid=session.invalid,
        skipped=session.skipped,
        remaining=session.remaining,
        pending=len(done.plan.pending),
        **done.plan.acceptance.summary(),
    )
