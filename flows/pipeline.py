"""The `pipeline` flow: augment and collect in one run, with an annotation mode:
`auto` (for unattended and scheduled runs: the ranker accepts only what its rule for
`accept_precision` vouches for, no person reviews anything, the rest stays pending),
`terminal`, or `label-studio` (waits up to `wait_minutes`, and a later `collect` picks
up the rest)."""

from __future__ import annotations

from prefect import flow, get_run_logger
from pydantic import BaseModel, ConfigDict

from flows.artifacts import publish_summary
from flows.augment import Augmented, augment
from flows.collect import Collected, collect
from flows.runners import task_runner
from testaug.core.run_folder import RunFolder
from testaug.core.runs import new_manifest, remove_stale_temporaries, write_manifest
from testaug.core.settings import Settings
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
    remove_stale_writes(config)
    write_manifest(
        RunFolder(config.run_dir).manifest,
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


def remove_stale_writes(config: RunConfig) -> None:
    """Remove the temporary files that killed writes left in the run folder and the rankers
    cache, saying how many and how big."""
    for folder, recursive in ((config.run_dir, False), (Settings().rankers_cache_path, True)):
        files, size = remove_stale_temporaries(folder, recursive=recursive)
        if files:
            get_run_logger().info(
                "removed %d stale temporary file(s) of %s bytes in %s (left by an interrupted "
                "write)",
                files,
                f"{size:,}",
                folder,
            )
