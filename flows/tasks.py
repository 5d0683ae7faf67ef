"""The library's steps as Prefect tasks: cached on inputs, file contents and code version,
results persisted, transient faults retried. Wiring only: the work is in testaug.steps."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from prefect import Task, get_run_logger, task
from prefect.futures import PrefectFuture
from prefect.settings import get_current_settings

from flows.caching import step_cache
from testaug.core.settings import Settings
from testaug.generation.backend_config import BackendConfig, connect_backend
from testaug.generation.backends import TransientBackendError
from testaug.generation.sampling import GenerationConfig, GenerationError
from testaug.review.acceptance import calibration_beside
from testaug.review.selection import SelectionConfig
from testaug.steps import augment, grow, measure, rank, review
from testaug.steps import rankers as steps_rankers
from testaug.steps.augment import PromptPlan
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
    name: str, *, outputs: tuple[str, ...] = ("out",), **options: Any
) -> Callable[[Callable[..., T]], Task[..., T]]:
    """A task for one pipeline step, with the project's caching, persistence and retries.
    `outputs` names the parameters that are paths the step writes (not cache inputs)."""
    defaults: dict[str, Any] = {
        "name": name,
        "cache_policy": step_cache(outputs),
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


def current(step: Task[..., StepOutput], *args: Any, **kwargs: Any) -> StepOutput:
    """Run a step (or take its cached result); run it again if its file has gone or changed."""
    output = step(*args, **kwargs)
    if not is_current(output):
        output = step.with_options(refresh_cache=True)(*args, **kwargs)
    return output


def current_all(
    step: Task[..., StepOutput], futures: list[PrefectFuture[StepOutput]], calls: list[dict]
) -> list[StepOutput]:
    """Results of steps submitted concurrently, each run again where its file has gone."""
    outputs = []
    for future, call in zip(futures, calls, strict=True):
        output = future.result()
        if not is_current(output):
            output = step.with_options(refresh_cache=True)(**call)
        outputs.append(output)
    return outputs


expand_seed_cases = step_task("expand seed cases")(augment.expand_seed_cases)
combine_candidates = step_task("combine candidates")(augment.combine_candidates)
rank_candidates = step_task("rank candidates")(rank.rank_candidates)
induce_templates = step_task("induce templates")(grow.induce_templates_file)
expand_induced = step_task("expand induced templates")(grow.expand_induced)
extend_suite = step_task("extend suite")(grow.extend_suite)
measure_diversity = step_task("measure diversity")(measure.measure_diversity)
perturb_suite = step_task("perturb suite")(measure.perturb_suite)
combine_evaluations = step_task("combine evaluations")(measure.combine_evaluations)
# The report and the Label Studio steps read state outside their inputs: never cached.
write_run_report = task(name="write report")(measure.write_run_report)


@step_task("generate", task_run_name="generate {capability}")
def generate_candidates(
    cases: StepOutput,
    out: Path,
    *,
    capability: str,
    generator: BackendConfig,
    plan: PromptPlan,
    generation: GenerationConfig,
) -> StepOutput:
    """One capability's candidates from the seed cases, logging progress every few prompts."""
    settings = Settings()
    logger = get_run_logger()
    backend = connect_backend(
        generator,
        api_key=settings.openai_api_key,
        cache_dir=settings.cache_dir,
        userinfo=settings.base_url_userinfo,
    )
    done = 0

    def progress() -> None:
        nonlocal done
        done += 1
        if done % 5 == 0:
            logger.info("%s: %d prompts answered", capability, done)

    output = augment.generate_candidates(
        cases.path,
        out,
        backend=backend,
        generation=generation,
        plan=plan,
        cache_path=settings.response_cache_path,
        capabilities=[capability],
        generator=generator,
        on_prompt_done=progress,
    )
    logger.info(
        "%s: %d candidates from %d prompts (%d requests, %d samples from the cache)",
        capability,
        output.records,
        output.summary.prompts,
        output.summary.requests,
        output.summary.cached_samples,
    )
    return output


@step_task("review automatically", outputs=("annotations_path",))
def review_automatically(
    ranked_path: Path,
    annotations_path: Path,
    *,
    calibration_path: Path,
    target: float,
    selection: SelectionConfig,
) -> StepOutput:
    """Mode `auto`: the ranker accepts what its rule for `target` vouches for, alone."""
    return review.review_automatically(
        ReviewConfig(
            ranked=ranked_path,
            annotations=annotations_path,
            calibration=calibration_path,
            target=target,
            selection=selection,
        )
    )


@step_task("merge verdicts", outputs=("out_dir",))
def merge_reviewed(annotations_path: Path, ranked_path: Path, out_dir: Path) -> StepOutput:
    """Every ranked candidate decided; the accepted ones as suite cases into `out_dir`."""
    config = ReviewConfig(ranked=ranked_path, annotations=annotations_path)
    return review.merge_reviewed(config, out_dir)


@step_task("evaluate", task_run_name="evaluate {spec}")
def evaluate_one_model(
    cases: StepOutput, perturbed: StepOutput, spec: str, out: Path, *, batch_size: int = 32
) -> StepOutput:
    """One model under test on the suite and its perturbations."""
    return measure.evaluate_one_model(cases.path, perturbed.path, spec, out, batch_size=batch_size)


@step_task("prepare rankers", outputs=("cache_root",), retries=0)
def prepare_rankers(rankers: str, training: Path, cache_root: Path) -> StepOutput:
    """A trained ensemble: a folder as given, or a config trained at first use."""
    return steps_rankers.prepare_rankers(
        rankers, training, cache_root, on_progress=log_training_progress
    )


@step_task("train ensemble", outputs=("out_root",), retries=0)
def train_from_runs(runs: Path, config: str, base: Path, out_root: Path) -> StepOutput:
    """An ensemble trained (or reused) on people's verdicts in the run folders and `base`."""
    record = steps_rankers.TrainRankersConfig(runs=runs, ensemble=config, base=base, out=out_root)
    trained = steps_rankers.train_from_runs(record, on_progress=log_training_progress)
    get_run_logger().info(
        "trained on %d verdicts of people and %d shipped",
        trained.summary.from_people,
        trained.summary.shipped,
    )
    return trained


def log_training_progress(name: str, fold: int, folds: int) -> None:
    """A line in the flow's log as each fold of a ranker member is trained."""
    get_run_logger().info(
        "training ranker %s, fold %d of %d (first use only)", name, min(fold + 1, folds), folds
    )


LABEL_STUDIO_RETRIES: dict[str, Any] = {
    "retries": 2,
    "retry_delay_seconds": retry_delays(),
    "retry_condition_fn": transient_fault,
}


@task(name="push to Label Studio", **LABEL_STUDIO_RETRIES)
def push_to_label_studio(
    ranked_path: Path,
    annotations_path: Path,
    cases_path: Path,
    *,
    project: str | None,
    top: float,
    accept_precision: float,
    pooled_rule: bool = False,
) -> StepOutput:
    """The ranker accepts what its rule for `accept_precision` vouches for; the top of the
    rest into the run's Label Studio project (nothing imported twice)."""
    config = ReviewConfig(
        ranked=ranked_path,
        annotations=annotations_path,
        cases=cases_path,
        calibration=calibration_beside(ranked_path),
        project=project,
        top=top,
        target=accept_precision,
        selection=SelectionConfig(pooled_rule=pooled_rule),
    )
    return review.push_to_label_studio(config, studio=review.connect_label_studio())


@task(name="pull from Label Studio", **LABEL_STUDIO_RETRIES)
def pull_from_label_studio(
    annotations_path: Path,
    ranked_path: Path,
    *,
    project: str | None,
    wait_minutes: float = 0.0,
    poll_seconds: float = 30.0,
) -> StepOutput:
    """People's verdicts so far; with `wait_minutes`, poll until none is pending or time is up."""
    return review.wait_for_label_studio(
        ReviewConfig(ranked=ranked_path, annotations=annotations_path, project=project),
        studio=review.connect_label_studio(),
        timeout=wait_minutes * 60,
        poll_seconds=poll_seconds,
    )
