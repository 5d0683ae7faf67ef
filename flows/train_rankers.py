"""The `train-rankers` flow: the ranker ensemble retrained on every verdict people gave so
far (in every run folder) plus the shipped labelled candidates."""

from __future__ import annotations

from prefect import flow, get_run_logger

from flows.artifacts import publish_summary
from flows.tasks import train_from_runs
from testaug.core.settings import Settings
from testaug.steps.contract import StepOutput
from testaug.steps.rankers import TrainRankersConfig, default_training


@flow(name="train-rankers")
def train_rankers(config: TrainRankersConfig = TrainRankersConfig()) -> StepOutput:  # noqa: B008
    """Retrain the ensemble from all annotations so far; the folder is printed in the log."""
    trained = train_from_runs(
        config.model_copy(
            update={
                "out": config.out or Settings().rankers_cache_path,
                "base": config.base or default_training(),
            }
        )
    )
    get_run_logger().info("ensemble %s in %s", trained.summary.version, trained.path.parent)
    publish_summary("train-rankers", [trained])
    return trained
