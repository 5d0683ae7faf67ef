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
from testaug.core.jsonl import read_jsonl
from testaug.core.records import TestCase
from testaug.core.run_folder import RunFolder
from testaug.core.run_sizes import RunSize
from testaug.core.settings import Settings
from testaug.generation.sampling import GenerationConfig
from testaug.review.acceptance import calibration_beside
from testaug.review.selection import SelectionConfig
from testaug.steps.augment import CombineConfig, ExpandConfig, GenerateConfig, PromptPlan
from testaug.steps.config import RunConfig
from testaug.steps.contract import StepOutput
from testaug.steps.rank import RankConfig
from testaug.steps.rankers import PrepareRankersConfig
from testaug.steps.review import ReviewConfig


class Augmented(BaseModel):
    """What an augment run wrote, step by step."""

    model_config = ConfigDict(frozen=True)

    run_dir: Path
    cases: StepOutput
    candidates: StepOutput
    rankers: StepOutput
    ranked: StepOutput
    annotations: StepOutput | None = None


@flow(name="augment")
def augment(config: RunConfig = RunConfig()) -> Augmented:  # noqa: B008  (a frozen record)
    """Generate candidates for a suite, rank them, and send the doubtful ones for review."""
    folder = config.run_dir
    run = RunFolder(folder)
    numbers = config.sizes()
    cases = tasks.current(
        tasks.expand_seed_cases,
        ExpandConfig(
            suite=config.suite, out=run.cases, per_template=numbers.per_template, seed=config.seed
        ),
    )
    rankers_ready = tasks.prepare_rankers.submit(
        PrepareRankersConfig.in_cache(config.rankers, Settings())
    )
    candidates = generate(config, cases, numbers)
    ranker_output = rankers_ready.result()
    ranked = tasks.current(
        tasks.rank_candidates,
        RankConfig(
            candidates=candidates.path,
            rankers=ranker_output.path.parent,
            out=run.ranked,
            cases=cases.path,
        ),
    )
    annotations = review(config, ranked, cases)
    if annotations is not None:
        log_acceptance(annotations)
    publish_summary("augment", [cases, candidates, ranker_output, ranked, annotations])
    return Augmented(
        run_dir=folder,
        cases=cases,
        candidates=candidates,
        rankers=ranker_output,
        ranked=ranked,
        annotations=annotations,
    )


def generate(config: RunConfig, cases: StepOutput, numbers: RunSize) -> StepOutput:
    """Candidates for every capability (one task each, run concurrently), combined."""
    chosen = config.capabilities or sorted(
        {case.capability for case in read_jsonl(cases.path, TestCase)}
    )
    get_run_logger().info(
        "%d seed cases; generating for %d capabilities", cases.records, len(chosen)
    )
    plan = PromptPlan(
        prompts_per_description=numbers.prompts_per_description,
        seeds_per_prompt=numbers.seeds_per_prompt,
        seed=config.seed,
    )
    generation = GenerationConfig(samples=numbers.samples, temperature=numbers.temperature)
    configs = [
        GenerateConfig(
            cases=cases.path,
            out=RunFolder(config.run_dir).generated_part(index),
            generation=generation,
            plan=plan,
            capabilities=(capability,),  # the response cache: the worker's own
            generator=config.generator,
        )
        for index, capability in enumerate(chosen)
    ]
    futures = [tasks.generate_candidates.submit(one) for one in configs]
    parts = tasks.current_all(tasks.generate_candidates, futures, configs)
    combined = CombineConfig(parts=tuple(parts), out=RunFolder(config.run_dir).candidates)
    return tasks.current(tasks.combine_candidates, combined)


def review(config: RunConfig, ranked: StepOutput, cases: StepOutput) -> StepOutput:
    """The annotation mode's review of the ranking: the ranker accepts what its rule
    vouches for, and people (none in mode `auto`) review the top of the rest."""
    if config.annotation == "auto":
        return tasks.review_automatically(review_config(config, ranked, cases))
    if config.annotation == "label-studio":
        return tasks.push_to_label_studio(review_config(config, ranked, cases))
    return review_in_terminal(config, ranked, cases)


def review_config(config: RunConfig, ranked: StepOutput, cases: StepOutput) -> ReviewConfig:
    """The review of a run's ranking, in whichever annotation mode: the ranker's rule for
    the run's precision, the seed cases beside, the top of the rest for people."""
    return ReviewConfig(
        ranked=ranked.path,
        annotations=RunFolder(config.run_dir).annotations,
        cases=cases.path,
        calibration=calibration_beside(ranked.path),
        project=config.project,
        top=config.top,
        accept_precision=config.accept_precision,
        selection=SelectionConfig(pooled_rule=config.pooled_rule),
    )


def log_acceptance(output: StepOutput) -> None:
    """What the ranker accepted under its rules, group by group, in the flow's log."""
    logger = get_run_logger()
    summary = output.summary
    acceptance = summary.acceptance
    logger.info(
        "the ranker accepted %d candidates (precision target %.0f%%); %d wait for people",
        acceptance.accepted_by_ranker,
        100 * acceptance.accept_precision,
        summary.pending + (summary.sent or 0),
    )
    if acceptance.no_rule:
        logger.info("%s", acceptance.no_rule)


def review_in_terminal(config: RunConfig, ranked: StepOutput, cases: StepOutput) -> StepOutput:
    """Mode `terminal`: the person who started the run reviews the top of what the
    ranker's rule leaves, here in this terminal."""
    import getpass
    import sys

    from rich.console import Console

    from testaug.review.terminal import key_reader
    from testaug.steps.review import review_in_terminal as review_here

    review_config_ = review_config(config, ranked, cases).model_copy(
        update={"annotator": getpass.getuser()}
    )
    return review_here(
        review_config_,
        read_key=key_reader(sys.stdin),
        console=Console(),
    )
