"""The `retest` flow: a test tree applied to a model spec (often the next version of a model),
its report written beside the earlier ones, and the topics whose failure rate rose since the
latest of them logged and published as Prefect artifacts. The reports folder also keeps the
latest report as tree_report.json with its HTML report (the tree section of `testaug report`).
The flow takes one `RetestConfig`, whole."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE
from pydantic import BaseModel, ConfigDict

from flows import tasks
from flows.artifacts import publish_summary
from testaug.adaptive.retest import (
    TREE_REPORT_FILE,
    TopicChange,
    TreeReport,
    read_tree_report,
    write_tree_report,
)
from testaug.steps.contract import StepOutput
from testaug.steps.measure import ReportConfig, model_slug
from testaug.steps.retest import RetestConfig, retest_tree

REPORT_GLOB = "tree_report.*.json"


class Retested(BaseModel):
    """What a retest run wrote and found."""

    model_config = ConfigDict(frozen=True)

    report: Path
    previous: Path | None
    html: Path
    model: str
    failure_rate: float | None  # of the whole tree, in percent
    changes: tuple[TopicChange, ...]


def report_path(folder: Path, spec: str, when: datetime) -> Path:
    """The report file of one retest: `tree_report.<UTC time>.<model>.json`, so that file
    names sort by time."""
    return folder / f"tree_report.{when:%Y%m%dT%H%M%S%fZ}.{model_slug(spec)}.json"


def latest_report(folder: Path) -> Path | None:
    """The newest report in the folder (by the time in its name), if any."""
    found = sorted(folder.glob(REPORT_GLOB))
    return found[-1] if found else None


@task(name="retest tree", task_run_name="retest on {config.model}", cache_policy=NO_CACHE)
def retest_tree_file(config: RetestConfig, *, when: datetime) -> StepOutput:
    """The tree applied to the model, compared with the previous report; written to
    `config.out`."""
    return retest_tree(config, when=when)


@flow(name="retest")
def retest(config: RetestConfig) -> Retested:
    """Apply `config.tree` to `config.model`, write the report into `config.reports`
    (default: `<tree>.reports/` beside it) next to the earlier ones, and report the topics
    whose failure rate rose since the latest of them: newly failing (from 0%) or worse by
    more than `config.threshold` points. `config.task` (a shipped suite's) or
    `config.labels` (comma-separated) are what the model predicts over."""
    folder = config.folder()
    previous = latest_report(folder)
    when = datetime.now(UTC)
    out = report_path(folder, config.model, when)
    named = config.model_copy(update={"out": out, "previous": previous})
    retested = retest_tree_file(named, when=when)
    report = read_tree_report(retested.path)
    write_tree_report(folder / TREE_REPORT_FILE, report)
    html = tasks.write_run_report(ReportConfig(run_dir=folder))
    log_changes(report, previous)
    publish_changes(report, out, previous)
    publish_summary("retest", [retested, html], report=html.path)
    return Retested(
        report=out,
        previous=previous,
        html=html.path,
        model=report.model,
        failure_rate=report.overall.failure_rate,
        changes=report.changes,
    )


def log_changes(report: TreeReport, previous: Path | None) -> None:
    """One log line for the tree, and a warning per topic whose failure rate rose."""
    logger = get_run_logger()
    overall = report.overall
    rate = "n/a" if overall.failure_rate is None else f"{overall.failure_rate:.1f}%"
    logger.info(
        "%s fails %d of %d tests (%s) in %d topics",
        report.model,
        overall.failing,
        overall.tests,
        rate,
        len(report.topics) - 1,
    )
    if previous is None:
        logger.info("no earlier report: this one is the baseline for the next retest")
        return
    if not report.changes:
        logger.info("no topic's failure rate rose since %s", previous.name)
    for change in report.changes:
        logger.warning(
            "%s: %s, %.1f%% -> %.1f%% (since %s)",
            change.topic,
            change.kind,
            change.before,
            change.after,
            previous.name,
        )


def publish_changes(report: TreeReport, out: Path, previous: Path | None) -> None:
    """A table artifact of every topic's failure rate with its change, and a markdown
    artifact naming the topics whose rate rose."""
    changed = {change.topic: change for change in report.changes}
    rows = []
    for result in report.topics:
        change = changed.get(result.topic)
        rows.append(
            {
                "topic": result.topic,
                "tests": str(result.tests),
                "failing": str(result.failing),
                "failure rate": "-"
                if result.failure_rate is None
                else f"{result.failure_rate:.1f}%",
                "change": f"{change.kind} (was {change.before:.1f}%)" if change else "",
            }
        )
    create_table_artifact(
        table=rows,
        key="testaug-retest-topics",
        description=f"testaug retest: {report.model} on {report.tree_file} ({out.name})",
    )
    if previous is None:
        lines = [f"First report of `{report.tree_file}` ({report.model}): no earlier one."]
    elif not report.changes:
        lines = [f"No topic's failure rate rose since `{previous.name}`."]
    else:
        lines = [f"Topics whose failure rate rose since `{previous.name}`:", ""]
        lines += [
            f"- **{c.topic}**: {c.kind}, {c.before:.1f}% -> {c.after:.1f}%" for c in report.changes
        ]
    create_markdown_artifact(
        markdown="\n".join(lines),
        key="testaug-retest-changes",
        description=f"testaug retest: topics whose failure rate rose ({report.model})",
    )
