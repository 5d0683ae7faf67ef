"""The `adapt` flow: AdaTest's testing loop in rounds, one round per flow run.

People are not waited for inside a run. A run

1. gathers the verdicts given so far on every earlier round (pulled from the work folder's
   Label Studio project, or read from each round's verdicts.jsonl, which
   `testaug review tests terminal` writes, plus a verdicts file the run is given), and adds
   what they accept to the tree;
2. stops there while the latest round has no verdict yet (unless told not to wait), so a
   schedule can run it often without piling up unread rounds;
3. otherwise suggests the next round from the grown tree into
   `<work folder>/round-NNN/suggestions.jsonl` (steered by the first model's failures)
   and, in Label Studio mode, pushes it there; in file mode it logs the command that
   reviews it in the terminal.

The next run picks up what people did in between. A run reserves its round number before
suggesting, so two runs at once on one work folder write two rounds, never one twice.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NO_CACHE
from pydantic import BaseModel, ConfigDict

from flows.tasks import LABEL_STUDIO_RETRIES, retry_delays, transient_fault
from testaug.core.settings import Settings
from testaug.generation.backend_config import connect_backend
from testaug.review.project_record import PROJECT_RECORD
from testaug.steps import review
from testaug.steps.adapt import AdaptConfig, adapt_round
from testaug.steps.contract import StepOutput
from testaug.steps.suggestion_review import (
    SUGGESTIONS_FILE,
    RoundsSummary,
    SuggestionReviewConfig,
    gather_rounds,
    pull_rounds,
    push_suggestions_file,
    reserved_round,
    round_folder,
    round_folders,
)


class AdaptRun(BaseModel):
    """What one run did: the verdicts gathered, and the round it suggested (if any)."""

    model_config = ConfigDict(frozen=True)

    gathered: RoundsSummary | None
    round: int | None  # the round suggested by this run; None when it waited
    suggestions: Path | None
    suggested: int = 0
    failing: int = 0
    pushed: int = 0


# The tasks read what people did since the last run: never cached.
@task(name="gather verdicts", cache_policy=NO_CACHE, **LABEL_STUDIO_RETRIES)
def gather_verdicts(config: AdaptConfig) -> StepOutput:
    """People's verdicts on every round so far, saved by round, and the accepted
    suggestions added to the tree."""
    if config.review == "label-studio":
        return pull_rounds(config, studio=review.connect_label_studio())
    return gather_rounds(config)


@task(
    name="suggest",
    task_run_name="suggest round {number}",
    cache_policy=NO_CACHE,
    retries=2,
    retry_delay_seconds=retry_delays(),
    retry_condition_fn=transient_fault,
)
def suggest(config: AdaptConfig, number: int) -> StepOutput:
    """Round `number` of suggestions for the focus topic from the tree as it is now."""
    settings = Settings()
    backend = connect_backend(
        config.generator,
        api_key=settings.openai_api_key,
        cache_dir=settings.cache_dir,
        userinfo=settings.base_url_userinfo,
    )
    rankers = None
    if config.rankers:
        from testaug.steps.rankers import PrepareRankersConfig, prepare_rankers

        trained = prepare_rankers(PrepareRankersConfig.in_cache(config.rankers, settings))
        rankers = str(trained.path.parent)
    this_round = config.model_copy(
        update={
            "round": config.round_config(number),
            "number": number,
            "out": round_folder(config.folder(), number) / SUGGESTIONS_FILE,
            "cache_path": config.cache_path or settings.response_cache_path,
            "rankers": rankers,
        }
    )
    return adapt_round(this_round, backend=backend)


@task(name="push suggestions", cache_policy=NO_CACHE, **LABEL_STUDIO_RETRIES)
def push(config: AdaptConfig, suggestions: Path) -> StepOutput:
    """A round's suggestions into the loop's Label Studio project."""
    studio = review.connect_label_studio()
    review_config = SuggestionReviewConfig(
        suggestions=suggestions,
        project=config.project_name(),
        record=config.folder() / PROJECT_RECORD,  # the rounds share one project
    )
    return push_suggestions_file(review_config, studio=studio)


@flow(name="adapt")
def adapt(config: AdaptConfig) -> AdaptRun:
    """Gather the verdicts on earlier rounds into the tree, then suggest (and push) the
    next round unless the latest one waits for its first verdict; see the module docstring."""
    logger = get_run_logger()
    folder = config.folder()
    rounds = round_folders(folder)
    gathered = gather_verdicts(config).summary if rounds else None
    if gathered is not None:
        logger.info(
            "%d verdicts on %d rounds (%d new); %d accepted, %d new tests in %s",
            gathered.verdicts,
            gathered.rounds,
            gathered.new_verdicts,
            gathered.accepted,
            gathered.added,
            config.tree,
        )
    if config.wait_for_verdicts and gathered is not None and _unread(gathered):
        if config.review == "label-studio":  # again, in case an earlier push failed
            push(config, rounds[-1] / SUGGESTIONS_FILE)
        logger.info(
            "%s has no verdict yet: no new round; %s, then run again",
            rounds[-1].name,
            _how_to_review(config, rounds[-1] / SUGGESTIONS_FILE),
        )
        run = AdaptRun(gathered=gathered, round=None, suggestions=None)
        _publish(config, run)
        return run
    with reserved_round(folder) as number:
        suggested = suggest(config, number)
    pushed = push(config, suggested.path) if config.review == "label-studio" else None
    logger.info(
        "round %d: %d suggestions (%d failing on %s) in %s; %s",
        number,
        suggested.records,
        suggested.summary.failing,
        suggested.summary.target,
        suggested.path,
        _how_to_review(config, suggested.path),
    )
    run = AdaptRun(
        gathered=gathered,
        round=number,
        suggestions=suggested.path,
        suggested=suggested.records,
        failing=suggested.summary.failing,
        pushed=pushed.summary.imported if pushed is not None else 0,
    )
    _publish(config, run)
    return run


def _unread(gathered: RoundsSummary) -> bool:
    """The latest round has suggestions and no verdict on any of them."""
    return gathered.latest_suggestions > 0 and gathered.latest_verdicts == 0


def _how_to_review(config: AdaptConfig, suggestions: Path) -> str:
    """What people do next with a round's suggestions."""
    if config.review == "label-studio":
        return f"judge them in Label Studio project {config.project_name()!r}"
    return (
        f"judge them with `testaug review tests terminal {suggestions} --tree {config.tree}` "
        f"(or write {suggestions.with_name('verdicts.jsonl')})"
    )


def _publish(config: AdaptConfig, run: AdaptRun) -> None:
    """A table artifact of what the run gathered and suggested."""
    gathered = run.gathered
    row = {
        "tree": str(config.tree),
        "topic": config.topic,
        "verdicts": str(gathered.verdicts if gathered else 0),
        "new verdicts": str(gathered.new_verdicts if gathered else 0),
        "tests added": str(gathered.added if gathered else 0),
        "round": "waiting" if run.round is None else str(run.round),
        "suggestions": str(run.suggested),
        "failing": str(run.failing),
        "pushed": str(run.pushed),
    }
    create_table_artifact(
        table=[row],
        key="testaug-adapt-summary",
        description=f"testaug tree adapt: {config.topic} of {config.tree}",
    )
