"""The `train-rankers` flow: the ranker ensemble retrained on every verdict people gave so
far (in every run folder) plus the shipped labelled candidates."""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger

from flows.artifacts import publish_summary
from flows.augment import default_training
from flows.tasks import ensemble_output, step_task
from testaug.core.settings import Settings
from testaug.steps import StepOutput


@step_task("train ensemble", outputs=("out_root",), retries=0)
def train_from_runs(runs: Path, config: str, base: Path, out_root: Path) -> StepOutput:
    """Train (or reuse: the folder is named by the data's hash) an ensemble on people's
    verdicts in the run folders under `runs` and the labelled candidates in `base`."""
    from rankers.active import labelled_from_runs
    from rankers.ensemble import load_config, trained_ensemble
    from testaug.core.jsonl import read_jsonl
    from testaug.core.records import LabelledCandidate

    logger = get_run_logger()
    people = labelled_from_runs(p for p in runs.glob("*") if p.is_dir()) if runs.is_dir() else []
    judged = {item.candidate.id for item in people}
    shipped = [i for i in read_jsonl(base, LabelledCandidate) if i.candidate.id not in judged]
    logger.info("training on %d verdicts of people and %d shipped", len(people), len(shipped))
    folder = trained_ensemble(load_config(config), [*shipped, *people], out_root)
    return ensemble_output(folder, from_people=len(people))


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
    get_run_logger().info("ensemble %s in %s", trained.summary["version"], trained.path.parent)
    publish_summary("train-rankers", [trained])
    return trained
