"""The `fix` flow: AdaTest's debugging loop, one or more rounds per run. The model is
fine-tuned from the work folder's last checkpoint (or `config.model` for the first round)
on the tests it fails mixed 1:1 with i.i.d. data, every topic is re-tested, and the topics
each round fixed and broke are logged and published as Prefect artifacts, with why the run
stopped (`config.rounds`, or earlier: no topic fixed, none failing, i.i.d. accuracy lost).
Each round's checkpoints, reports and re-scored tree stay in `<work>/round-NNN/`, so the
next run (or the next `adapt` round, on the scored tree) continues from them. The flow
takes the same `FixConfig` record `testaug tree fix` builds, whole."""

from __future__ import annotations

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from testaug.fixing.debugging.records import FixLoop, FixRound
from testaug.steps.contract import StepOutput
from testaug.steps.fix import FixConfig, fix_files


@task(name="fix rounds", cache_policy=NO_CACHE)
def fix_rounds_task(config: FixConfig) -> StepOutput:
    """Rounds of the loop from files until the stop rule says so (`steps.fix.fix_files`)."""
    logger = get_run_logger()
    return fix_files(config, on_progress=logger.info)


@flow(name="fix")
def fix(config: FixConfig) -> FixLoop:
    """Run the next rounds of the debugging loop in `config.work`, and publish each topic's
    failure rate before and after each round and why the run stopped."""
    loop = fix_rounds_task(config).summary.loop
    for report in loop.rounds:
        log_round(report)
        publish_round(report)
    get_run_logger().info(
        "stopped after round %d (%s): %s",
        loop.rounds[-1].round,
        loop.stop.reason,
        loop.stop.message,
    )
    return loop


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
    logger.info("kept seed %d (%s): %s", report.chain_seed, report.chain_reason, report.checkpoint)


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
        description=f"testaug tree fix: round {report.round}, {report.checkpoint}",
    )
    lines = [
        f"Round {report.round} ({len(report.seeds)} seed(s)), checkpoint `{report.checkpoint}`.",
        "",
        f"- fixed ({len(report.fixed)}): {', '.join(report.fixed) or 'none'}",
        f"- broken ({len(report.broken)}): {', '.join(report.broken) or 'none'}",
        f"- kept seed {report.chain_seed} ({report.chain_reason})",
    ]
    if report.stop is not None:
        lines.append(f"- stopped after this round ({report.stop.reason}): {report.stop.message}")
    create_markdown_artifact(
        markdown="\n".join(lines),
        key="testaug-fix-changes",
        description=f"testaug tree fix: topics fixed and broken in round {report.round}",
    )
