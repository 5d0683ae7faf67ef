"""The `pipeline` flow: augment and collect in one run, with an annotation mode:
`auto` (for unattended and scheduled runs: the ranker accepts only what its rule for
`accept_precision` vouches for, no person reviews anything, the rest stays pending),
`terminal`, or `label-studio` (waits up to `wait_minutes`, and a later `collect` picks
up the rest)."""

from __future__ import annotations

from pathlib import Path

from prefect import flow
from pydantic import BaseModel, ConfigDict

from flows.artifacts import publish_summary
from flows.augment import Augmented, augment
from flows.collect import DEFAULT_MODELS, Collected, collect
from flows.runners import task_runner
from testaug.core.runs import new_manifest, write_manifest
from testaug.review.acceptance import DEFAULT_TARGET, check_target
from testaug.steps.augment import BackendSpec
from testaug.steps.review import AnnotationMode
from testaug.suites.provenance import Evidence


class PipelineRun(BaseModel):
    """Both halves of a pipeline run."""

    model_config = ConfigDict(frozen=True)

    augmented: Augmented
    collected: Collected


@flow(name="pipeline")
def pipeline(
    suite: str = "sentiment",
    run_dir: str = "runs/latest",
    size: str = "default",
    generator: BackendSpec = BackendSpec(),  # noqa: B008  (a frozen record)
    rankers: str = "offline",
    annotation: AnnotationMode = "auto",
    top: float = 0.3,
    accept_precision: float = DEFAULT_TARGET,
    project: str | None = None,
    wait_minutes: float = 0.0,
    models: list[str] = list(DEFAULT_MODELS),  # noqa: B006  (Prefect copies parameters)
    capabilities: list[str] | None = None,
    seed: int = 0,
    prompts_per_description: int | None = None,
    samples: int | None = None,
    dask: str | None = None,
    evidence: Evidence = "verified",
) -> PipelineRun:
    """Suite to report in one run: generate, rank, review, grow the suite, measure, report.
    With `dask` (`local`, or a scheduler address) the tasks of both halves run on Dask.
    The headline error rates rest on `evidence`: verified cases only, or all. The ranker
    accepts a candidate only where its rule for `accept_precision` vouches for it."""
    check_target(accept_precision)
    augment_options = {
        "suite": suite,
        "run_dir": run_dir,
        "size": size,
        "generator": generator,
        "rankers": rankers,
        "annotation": annotation,
        "top": top,
        "accept_precision": accept_precision,
        "project": project,
        "capabilities": capabilities,
        "seed": seed,
        "prompts_per_description": prompts_per_description,
        "samples": samples,
    }
    recorded = {**augment_options, "generator": generator.model_dump(mode="json")}
    write_manifest(
        Path(run_dir) / "manifest.json",
        new_manifest(
            "pipeline",
            {
                **recorded,
                "models": list(models),
                "wait_minutes": wait_minutes,
                "dask": dask,
                "evidence": evidence,
            },
            seed=seed,
        ),
    )
    runner = task_runner(dask)
    augmented = augment.with_options(task_runner=runner)(**augment_options)
    collected = collect.with_options(task_runner=runner)(
        run_dir=run_dir,
        annotation=annotation,
        project=project,
        wait_minutes=wait_minutes,
        models=models,
        size=size,
        seed=seed,
        evidence=evidence,
    )
    publish_summary(
        "pipeline",
        [
            augmented.cases,
            augmented.candidates,
            augmented.ranked,
            augmented.annotations,
            collected.accepted,
            collected.expanded,
            collected.suite,
            collected.diversity,
            collected.evaluation,
        ],
        report=collected.report.path,
    )
    return PipelineRun(augmented=augmented, collected=collected)
