"""The library's steps as Prefect tasks: cached on inputs, file contents and code version,
results persisted, transient faults retried. Wiring only: the work is in testaug.steps."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from prefect import Task, get_run_logger, task
from prefect.futures import PrefectFuture
from prefect.settings import get_current_settings

from flows.caching import step_cache
from testaug.core.records import Record
from testaug.core.settings import Settings
from testaug.generation.backend_config import connect_backend
from testaug.generation.backends import TransientBackendError
from testaug.generation.sampling import GenerationError
from testaug.steps import augment, grow, measure, rank, review
from testaug.steps import rankers as steps_rankers
from testaug.steps.contract import StepOutput, is_current
from testaug.steps.review import ReviewConfig

T = TypeVar("T")

# Faults worth another try of a whole step: the generation stage already retried each
# request with backoff; a server that stays down for minutes may be back later.
TRANSIENT = (TransientBackendError, GenerationError, ConnectionError, TimeoutError)


def transient_fault(task: Task[..., Any], task_run: Any, state: Any) -> bool:
    """Retry a failed step only when it failed on a network fault, never on bad input."""
    try:
        state.result()
    except TRANSIENT:
        return True
    except Exception:
        return False
    return False


def step_task(
    name: str, *, writes: tuple[str, ...] | None = None, **options: Any
) -> Callable[[Callable[..., T]], Task[..., T]]:
    """A task for one pipeline step, with the project's caching, persistence and retries.
    The step takes its config record whole; the cache fingerprints the files the record
    names, except those its class declares the step writes (`writes` names them instead
    where one record serves steps that write different files)."""
    defaults: dict[str, Any] = {
        "name": name,
        "cache_policy": step_cache(writes),
        "persist_result": True,
        "result_serializer": "json",
        "retries": 2,
        "retry_delay_seconds": retry_delays(),
        "retry_condition_fn": transient_fault,
    }
    return task(**{**defaults, **options})


def retry_delays() -> Any:
    """Seconds before a failed step's two retries: 10 and 60, unless Prefect's setting
    PREFECT_TASKS_DEFAULT_RETRY_DELAY_SECONDS is set (read when the flows are imported)."""
    settings = get_current_settings().tasks
    if "default_retry_delay_seconds" in settings.model_fields_set:
        return settings.default_retry_delay_seconds
    return [10, 60]


def current(step: Task[..., StepOutput], config: Record) -> StepOutput:
    """Run a step (or take its cached result); run it again if its file has gone or changed."""
    output = step(config)
    if not is_current(output):
        output = step.with_options(refresh_cache=True)(config)
    return output


def current_all(
    step: Task[..., StepOutput], futures: list[PrefectFuture[StepOutput]], configs: list[Record]
) -> list[StepOutput]:
    """Results of steps submitted concurrently, each run again where its file has gone."""
    outputs = []
    for future, config in zip(futures, configs, strict=True):
        output = future.result()
        if not is_current(output):
            output = step.with_options(refresh_cache=True)(config)
        outputs.append(output)
    return outputs


# Each task is its step, taking the step's config record whole: the cache fingerprints
# the files the record names (see flows.caching.InputFiles).
expand_seed_cases = step_task("expand seed cases")(augment.expand_seed_cases)
combine_candidates = step_task("combine candidates")(augment.combine_candidates)
rank_candidates = step_task("rank candidates")(rank.rank_candidates)
induce_templates = step_task("induce templates")(grow.induce_templates_file)
expand_induced = step_task("expand induced templates")(grow.expand_induced)
extend_suite = step_task("extend suite")(grow.extend_suite)
measure_diversity = step_task("measure diversity")(measure.measure_diversity)
perturb_suite = step_task("perturb suite")(measure.perturb_suite)
combine_evaluations = step_task("combine evaluations")(measure.combine_evaluations)
# A review writes the annotations; the merge reads them and writes into `out`.
review_automatically = step_task("review automatically", writes=("annotations",))(
    review.review_automatically
)
merge_reviewed = step_task("merge verdicts", writes=("out",))(review.merge_reviewed)

# The report reads state outside its inputs: never cached.
write_run_report = task(name="write report")(measure.write_run_report)


@step_task("evaluate", task_run_name="evaluate {config.model}")
def evaluate_one_model(config: measure.ModelEvaluationConfig) -> StepOutput:
    """One model under test on the suite and its perturbations."""
    return measure.evaluate_one_model(config)


@step_task("generate", task_run_name="generate {config.capabilities[0]}")
def generate_candidates(config: augment.GenerateConfig) -> StepOutput:
    """One capability's candidates from the seed cases (`config.generator`'s backend,
    credentials from the settings), logging progress every few prompts."""
    settings = Settings()
    logger = get_run_logger()
    if config.generator is None:
        raise ValueError("the generate task needs config.generator, the LLM's record")
    backend = connect_backend(
        config.generator,
        api_key=settings.openai_api_key,
        cache_dir=settings.cache_dir,
        userinfo=settings.base_url_userinfo,
    )
    name = ", ".join(config.capabilities) or "all capabilities"
    done = 0

    def progress() -> None:
        nonlocal done
        done += 1
        if done % 5 == 0:
            logger.info("%s: %d prompts answered", name, done)

    output = augment.generate_candidates(config, backend=backend, on_prompt_done=progress)
    logger.info(
        "%s: %d candidates from %d prompts (%d requests, %d samples from the cache)",
        name,
        output.records,
        output.summary.prompts,
        output.summary.requests,
        output.summary.cached_samples,
    )
    return output


@step_task("prepare rankers", retries=0)
def prepare_rankers(config: steps_rankers.PrepareRankersConfig) -> StepOutput:
    """A trained ensemble: a folder as given, or a config trained at first use."""
    return steps_rankers.prepare_rankers(config, on_progress=log_training_progress)


@step_task("train ensemble", retries=0)
def train_from_runs(config: steps_rankers.TrainRankersConfig) -> StepOutput:
    """An ensemble trained (or reused) on people's verdicts in the run folders and `base`."""
    trained = steps_rankers.train_from_runs(config, on_progress=log_training_progress)
    get_run_logger().info(
        "trained on %d verdicts of people and %d shipped",
        trained.summary.from_people,
        trained.summary.shipped,
    )
    return trained


def log_training_progress(name: str, fold: int, folds: int) -> None:
    """A line in the flow's log as each fold of a ranker member, then its final model, is
    trained (`fold` counts from 0; `folds` means the final model)."""
    step = f"fold {fold + 1} of {folds}" if fold < folds else "its final model"
    get_run_logger().info("training ranker %s, %s (first use only)", name, step)


LABEL_STUDIO_RETRIES: dict[str, Any] = {
    "retries": 2,
    "retry_delay_seconds": retry_delays(),
    "retry_condition_fn": transient_fault,
}


# The Label Studio steps read state outside their inputs: never cached.
@task(name="push to Label Studio", **LABEL_STUDIO_RETRIES)
def push_to_label_studio(config: ReviewConfig) -> StepOutput:
    """The ranker accepts what its rule for the precision vouches for; the top of the rest
    into the run's Label Studio project (nothing imported twice)."""
    return review.push_to_label_studio(config, studio=review.connect_label_studio())


@task(name="pull from Label Studio", **LABEL_STUDIO_RETRIES)
def pull_from_label_studio(config: ReviewConfig) -> StepOutput:
    """People's verdicts so far; with `config.wait_seconds`, poll until none is pending or
    time is up."""
    return review.wait_for_label_studio(config, studio=review.connect_label_studio())
