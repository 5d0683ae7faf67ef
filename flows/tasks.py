"""The library's steps as Prefect tasks: cached on inputs, file contents and code version,
results persisted, transient faults retried. Wiring only: the work is in testaug.steps."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from prefect import Task, get_run_logger, task
from prefect.futures import PrefectFuture

from flows.caching import step_cache
from testaug.core.settings import Settings
from testaug.generation.backends import TransientBackendError
from testaug.generation.sampling import GenerationError, GenerationSettings
from testaug.review.acceptance import calibration_beside
from testaug.steps import StepOutput, augment, grow, is_current, measure, review, step_output
from testaug.steps.augment import BackendSpec, PromptPlan

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
        "retry_delay_seconds": [10, 60],
        "retry_condition_fn": transient_fault,
    }
    return task(**{**defaults, **options})


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
rank_candidates = step_task("rank candidates")(augment.rank_candidates)
review_automatically = step_task("review automatically", outputs=("annotations_path",))(
    review.review_automatically
)
merge_reviewed = step_task("merge verdicts", outputs=("out_dir",))(review.merge_reviewed)
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
    generator: BackendSpec,
    plan: PromptPlan,
    generation: GenerationSettings,
) -> StepOutput:
    """One capability's candidates from the seed cases, logging progress every few prompts."""
    settings = Settings()
    logger = get_run_logger()
    backend = augment.connect_backend(
        generator, api_key=settings.openai_api_key, cache_dir=settings.cache_dir
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
        arguments={"generator": generator.model_dump(mode="json")},
        on_prompt_done=progress,
    )
    logger.info(
        "%s: %d candidates from %d prompts (%d requests, %d samples from the cache)",
        capability,
        output.records,
        output.summary["prompts"],
        output.summary["requests"],
        output.summary["cached_samples"],
    )
    return output


@step_task("evaluate", task_run_name="evaluate {spec}")
def evaluate_one_model(
    cases: StepOutput, perturbed: StepOutput, spec: str, out: Path, *, batch_size: int = 32
) -> StepOutput:
    """One model under test on the suite and its perturbations."""
    return measure.evaluate_one_model(cases.path, perturbed.path, spec, out, batch_size=batch_size)


@step_task("prepare rankers", outputs=("cache_root",), retries=0)
def prepare_rankers(rankers: str, training: Path, cache_root: Path) -> StepOutput:
    """A trained ensemble: a folder as given, or a config (shipped name or YAML file)
    trained on the labelled candidates the first time it is asked for."""
    from rankers.ensemble import MANIFEST, load_config, trained_ensemble
    from testaug.core.jsonl import read_jsonl
    from testaug.core.records import LabelledCandidate

    given = Path(rankers)
    if (given / MANIFEST).is_file():
        folder = given
    else:
        logger = get_run_logger()
        config = load_config(rankers)
        labelled = list(read_jsonl(training, LabelledCandidate))
        folder = trained_ensemble(
            config,
            labelled,
            cache_root,
            on_progress=lambda name, fold, folds: logger.info(
                "training ranker %s, fold %d of %d (first use only)",
                name,
                min(fold + 1, folds),
                folds,
            ),
        )
    return ensemble_output(folder)


def ensemble_output(folder: Path, **summary: Any) -> StepOutput:
    """The record of a trained ensemble folder: its manifest, members, version, data size."""
    from rankers.ensemble import MANIFEST, EnsembleManifest

    manifest = EnsembleManifest.model_validate_json((folder / MANIFEST).read_text("utf-8"))
    return step_output(
        "rankers",
        folder / MANIFEST,
        len(manifest.config.members),
        version=manifest.version,
        trained_on=manifest.trained_on,
        **summary,
    )


def label_studio() -> Any:
    """A Label Studio connection from the environment (LABEL_STUDIO_URL, LABEL_STUDIO_API_KEY)."""
    from testaug.core.errors import InputError, Problem
    from testaug.review.label_studio import LabelStudio

    settings = Settings()
    if settings.label_studio_api_key is None:
        raise InputError(
            Problem("no Label Studio API key: set LABEL_STUDIO_API_KEY", field="api_key")
        )
    return LabelStudio(settings.label_studio_url, settings.label_studio_api_key)


def default_project(run_dir: Path) -> str:
    """The Label Studio project of a run folder, as `testaug annotate push` names it."""
    return f"testaug {run_dir.resolve().name}"


LABEL_STUDIO_RETRIES: dict[str, Any] = {
    "retries": 2,
    "retry_delay_seconds": [10, 60],
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
) -> StepOutput:
    """The ranker accepts what its rule for `accept_precision` vouches for; the top of the
    rest into the run's Label Studio project (nothing imported twice)."""
    from testaug.core.jsonl import read_jsonl
    from testaug.core.records import TestCase

    seeds = {case.id: case for case in read_jsonl(cases_path, TestCase)}
    return review.push_to_label_studio(
        ranked_path,
        annotations_path,
        studio=label_studio(),
        project=project or default_project(ranked_path.parent),
        seeds=seeds,
        top=top,
        target=accept_precision,
        calibration_path=calibration_beside(ranked_path),
    )


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
    project = project or default_project(annotations_path.parent)
    return review.wait_for_label_studio(
        annotations_path,
        ranked_path,
        studio=label_studio(),
        project=project,
        timeout=wait_minutes * 60,
        poll_seconds=poll_seconds,
    )
