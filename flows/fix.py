"""The `fix` flow: one round of AdaTest's debugging loop (AT-10) per run. The model is
fine-tuned from the work folder's last checkpoint (or `model` for the first round) on the
tests it fails mixed 1:1 with i.i.d. data, every topic is re-tested, and the topics the
round fixed and broke are logged and published as Prefect artifacts. Each round's
checkpoint, reports and re-scored tree stay in `<work>/round-NNN/`, so the next run (or
the next `adapt` round, on the scored tree) continues from them."""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from testaug.adaptive.debugging import FAIL_ABOVE, FixRound, Trainer
from testaug.evaluation.finetune import FineTuneConfig
from testaug.steps.fix import fix_files


@task(name="fix round", cache_policy=NO_CACHE)
def fix_round_task(
    work: Path,
    iid: Path,
    *,
    tree: Path | None,
    cases: Path | None,
    model: str | None,
    iid_eval: Path | None,
    topics: tuple[str, ...],
    seeds: int,
    config: FineTuneConfig,
    task: str | None,
    labels: str | None,
    fail_above: float,
    trainer: Trainer,
) -> FixRound:
    """One round of the loop from files (see `testaug.steps.fix.fix_files`)."""
    logger = get_run_logger()
    return fix_files(
        work,
        iid,
        tree=tree,
        cases=cases,
        model=model,
        iid_eval=iid_eval,
        topics=topics,
        seeds=range(seeds),
        config=config,
        task=task,
        labels=labels,
        fail_above=fail_above,
        trainer=trainer,
        on_progress=logger.info,
    )


@flow(name="fix")
def fix(
    work: Path,
    iid: Path,
    tree: Path | None = None,
    cases: Path | None = None,
    model: str | None = None,
    iid_eval: Path | None = None,
    topics: tuple[str, ...] = (),
    seeds: int = 1,
    epochs: int = 3,
    learning_rate: float = 5e-6,
    batch_size: int = 8,
    device: str = "cpu",
    task: str | None = "sentiment",
    labels: str | None = None,
    fail_above: float = FAIL_ABOVE,
    trainer: Trainer = "behaviour",
) -> FixRound:
    """Run the next round of the debugging loop in `work` on `tree` (or test `cases`) with
    i.i.d. examples `iid`, and publish each topic's failure rate before and after."""
    config = FineTuneConfig(
        epochs=epochs, learning_rate=learning_rate, batch_size=batch_size, device=device
    )
    report = fix_round_task(
        work,
        iid,
        tree=tree,
        cases=cases,
        model=model,
        iid_eval=iid_eval,
        topics=tuple(topics),
        seeds=seeds,
        config=config,
        task=task,
        labels=labels,
        fail_above=fail_above,
        trainer=trainer,
    )
    log_round(report)
    publish_round(report)
    return report


def log_round(report: FixRound) -> None:
    """One line for the round, one per fixed or broken topic, and the i.i.d. accuracy."""
    logger = get_run_logger()
    logger.info(
        "round %d: %d fixing + %d i.i.d. examples, %d fixed and %d broken topic(s); checkpoint %s",
        report.round,
        report.fixing_examples,
        report.iid_examples,
        len(report.fixed),
        len(report.broken),
        report.checkpoint,
    )
    for name in report.fixed:
        row = report.topic(name)
        assert row is not None and row.after is not None
        logger.info("%s: fixed, %.1f%% -> %.1f%%", name, row.before, row.after.mean)
    for name in report.broken:
        row = report.topic(name)
        assert row is not None and row.after is not None
        logger.warning("%s: broken, %.1f%% -> %.1f%%", name, row.before, row.after.mean)
    if report.iid_before is not None and report.iid_after is not None:
        logger.info(
            "i.i.d. accuracy %.1f%% -> %.1f%%", 100 * report.iid_before, 100 * report.iid_after.mean
        )


def publish_round(report: FixRound) -> None:
    """A table artifact of every topic before and after, and a markdown one naming the
    fixed and broken topics."""
    rows = [
        {
            "topic": row.topic,
            "tests": str(row.tests),
            "before": "-" if row.before is None else f"{row.before:.1f}%",
            "after": "-" if row.after is None else f"{row.after.mean:.1f}% ± {row.after.std:.1f}",
            "status": row.status,
        }
        for row in report.topics
    ]
    create_table_artifact(
        table=rows,
        key="testaug-fix-topics",
        description=f"testaug fix: round {report.round}, {report.checkpoint}",
    )
    lines = [
        f"Round {report.round} ({len(report.seeds)} seed(s)), checkpoint `{report.checkpoint}`.",
        "",
        f"- fixed ({len(report.fixed)}): {', '.join(report.fixed) or 'none'}",
        f"- broken ({len(report.broken)}): {', '.join(report.broken) or 'none'}",
    ]
    create_markdown_artifact(
        markdown="\n".join(lines),
        key="testaug-fix-changes",
        description=f"testaug fix: topics fixed and broken in round {report.round}",
    )
