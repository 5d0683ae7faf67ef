"""The `train-rankers` flow: the ranker ensemble retrained on every verdict people gave so
far (in every run folder) plus the shipped labelled candidates."""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger

from flows.artifacts import publish_summary
from flows.tasks import train_from_runs
from testaug.core.settings import Settings
from testaug.steps import StepOutput
from testaug.steps.rankers import default_training


@flow(name="train-rankers")
def train_rankers(
    runs: str = "runs",
    config: str = "offline",
    base: str | None = None,
    out: str | None = None,
) -> StepOutput:
    """Retrain the ensemble from all annotations so far; the folder is printed in the log."""
    out_root = Path(out) if out else Settings().cache_dir / "rankers"
    trained = train_from_runs(
        Path(runs), config, Path(base) if base else default_training(), out_root
    )
    get_run_logger().info("ensemble %s in %s", trained.summary.version, trained.path.parent)
    publish_summary("train-rankers", [trained])
    return trained
