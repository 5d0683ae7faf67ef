"""The library's steps as Prefect tasks: cached on inputs, file contents and code version,
results persisted, transient faults retried. Wiring only: the work is in testaug.steps."""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
from testaug.steps.measure import EvaluationConfig
from testaug.steps.review import ReviewConfig
from testaug.suites.provenance import Evidence

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


# The steps take one config record; each task keeps the paths as its own parameters, so
# that the cache fingerprints the files it reads (see flows.caching.InputFiles).
@step_task("expand seed cases")
def expand_seed_cases(suite: str, out: Path, *, per_template: int | None, seed: int) -> StepOutput:
    """The suite's templates filled into seed cases (a seeded sample per template)."""
    config = augment.ExpandConfig(suite=suite, out=out, per_template=per_template, seed=seed)
    return augment.expand_seed_cases(config)


@step_task("combine candidates")
def combine_candidates(parts: Sequence[StepOutput], out: Path) -> StepOutput:
    """Candidates (and rejects) of several generation steps in one file, each candidate once."""
    return augment.combine_candidates(augment.CombineConfig(parts=tuple(parts), out=out))


@step_task("rank candidates")
def rank_candidates(
    candidates_path: Path,
    rankers: Path,
    out: Path,
    *,
    cases_path: Path | None = None,
    batch_size: int = 64,
) -> StepOutput:
    """Candidates ordered most-likely-invalid first by the ensemble in `rankers`."""
    config = rank.RankConfig(
        candidates=candidates_path,
        rankers=rankers,
        out=out,
        cases=cases_path,
        batch_size=batch_size,
    )
    return rank.rank_candidates(config)


@step_task("induce templates")
def induce_templates(
    accepted_path: Path,
    cases_path: Path,
    out: Path,
    *,
    suite: str | None = None,
    allow_empty: bool = False,
) -> StepOutput:
    """Templates from accepted cases that reuse slot words of their seed cases."""
    config = grow.InduceConfig(
        accepted=accepted_path, cases=cases_path, out=out, suite=suite, allow_empty=allow_empty
    )
    return grow.induce_templates_file(config)


@step_task("expand induced templates")
def expand_induced(
    templates: StepOutput,
    known: Sequence[Path],
    out: Path,
    *,
    per_template: int | None,
    seed: int,
) -> StepOutput:
    """Cases filled from induced templates, leaving out any already in the `known` files."""
    config = grow.ExpandInducedConfig(
        templates=templates, out=out, known=tuple(known), per_template=per_template, seed=seed
    )
    return grow.expand_induced(config)


@step_task("extend suite")
def extend_suite(suite_path: Path, new_cases: Sequence[Path], out: Path) -> StepOutput:
    """The suite's cases with the new ones appended (each case once)."""
    config = grow.ExtendConfig(suite=suite_path, new_cases=tuple(new_cases), out=out)
    return grow.extend_suite(config)


@step_task("measure diversity")
def measure_diversity(
    cases_path: Path, out: Path, *, by: str = "source", seed: int = 0
) -> StepOutput:
    """Self-BLEU and unique dependency paths of the cases, per group (diversity.json)."""
    config = measure.DiversityConfig(cases=cases_path, out=out, by=by, seed=seed)
    return measure.measure_diversity(config)


@step_task("perturb suite")
def perturb_suite(
    cases_path: Path, out: Path, *, per_test: int, seed: int = 0, labels: str | None = None
) -> StepOutput:
    """CheckList's INV and DIR perturbations of a seeded sample of the cases."""
    evaluation = EvaluationConfig(perturb=per_test, seed=seed, labels=labels)
    return measure.perturb_suite(
        measure.PerturbConfig(cases=cases_path, out=out, evaluation=evaluation)
    )


@step_task("combine evaluations")
def combine_evaluations(
    parts: Sequence[StepOutput],
    out: Path,
    *,
    evidence: Evidence = "verified",
    run_folder: Path | None = None,
) -> StepOutput:
    """The per-model evaluations as one evaluation.json, every case's result beside it."""
    config = measure.CombineEvaluationsConfig(
        parts=tuple(parts),
        out=out,
        evaluation=EvaluationConfig(evidence=evidence),
        run_folder=run_folder,
    )
    return measure.combine_evaluations(config)


# The report and the Label Studio steps read state outside their inputs: never cached.
@task(name="write report")
def write_run_report(run_dir: Path) -> StepOutput:
    """report.md and a self-contained report.html from the files in the run folder."""
    return measure.write_run_report(measure.ReportConfig(run_dir=run_dir))


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

    config = augment.GenerateConfig(
        cases=cases.path,
        out=out,
        generation=generation,
        plan=plan,
        cache=settings.response_cache_path,
        capabilities=(capability,),
        generator=generator,
    )
    output = augment.generate_candidates(config, backend=backend, on_prompt_done=progress)
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
    config = ReviewConfig(ranked=ranked_path, annotations=annotations_path, out=out_dir)
    return review.merge_reviewed(config)


@step_task("evaluate", task_run_name="evaluate {spec}")
def evaluate_one_model(
    cases: StepOutput, perturbed: StepOutput, spec: str, out: Path, *, batch_size: int = 32
) -> StepOutput:
    """One model under test on the suite and its perturbations."""
    config = measure.ModelEvaluationConfig(
        cases=cases.path,
        perturbed=perturbed.path,
        model=spec,
        out=out,
        evaluation=EvaluationConfig(batch_size=batch_size),
    )
    return measure.evaluate_one_model(config)


@step_task("prepare rankers", outputs=("cache_root",), retries=0)
def prepare_rankers(rankers: str, training: Path, cache_root: Path) -> StepOutput:
    """A trained ensemble: a folder as given, or a config trained at first use."""
    config = steps_rankers.PrepareRankersConfig(
        rankers=rankers, training=training, cache_root=cache_root
    )
    return steps_rankers.prepare_rankers(config, on_progress=log_training_progress)


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
    """A line in the flow's log as each fold of a ranker member, then its final model, is
    trained (`fold` counts from 0; `folds` means the final model)."""
    step = f"fold {fold + 1} of {folds}" if fold < folds else "its final model"
    get_run_logger().info("training ranker %s, %s (first use only)", name, step)


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
    config = ReviewConfig(
        ranked=ranked_path,
        annotations=annotations_path,
        project=project,
        wait_seconds=wait_minutes * 60,
        poll_seconds=poll_seconds,
    )
    return review.wait_for_label_studio(config, studio=review.connect_label_studio())
