"""The `pipeline` flow: augment and collect in one run, with an annotation mode:
`auto` (for unattended and scheduled runs: the ranker accepts only what its rule for
`accept_precision` vouches for, no person reviews anything, the rest stays pending),
`terminal`, or `label-studio` (waits up to `wait_minutes`, and a later `collect` picks
up the rest)."""

from __future__ import annotations

from prefect import flow
from pydantic import BaseModel, ConfigDict

from flows.artifacts import publish_summary
from flows.augment import Augmented, augment
from flows.collect import Collected, collect
from flows.runners import task_runner
from testaug.core.runs import new_manifest, write_manifest
from testaug.steps.config import RunConfig


class PipelineRun(BaseModel):
    """Both halves of a pipeline run."""

    model_config = ConfigDict(frozen=True)

    augmented: Augmented
    collected: Collected


@flow(name="pipeline")
def pipeline(config: RunConfig = RunConfig()) -> PipelineRun:  # noqa: B008  (a frozen record)
    """Suite to report in one run: generate, rank, review, grow the suite, measure, report.
    With `config.dask` (`local`, or a scheduler address) the tasks of both halves run on
    Dask. The manifest records the whole configuration."""
    config = config.with_task_models()
    write_manifest(
        config.run_dir / "manifest.json",
        new_manifest("pipeline", config.model_dump(mode="json"), seed=config.seed),
    )
    runner = task_runner(config.dask)
    augmented = augment.with_options(task_runner=runner)(config)
    collected = collect.with_options(task_runner=runner)(config)
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
