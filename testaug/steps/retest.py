"""A test tree re-tested on a model version (the retest flow): the configuration (which
tree, which model spec, where its reports go, and what counts as a rise in a topic's
failure rate) and the step, whose work is `adaptive.tree_jobs.retest_file`."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import Field

from testaug.adaptive.retest import DEFAULT_THRESHOLD, TopicChange
from testaug.core.overwrites import refuse_overwriting_inputs
from testaug.core.records import Record
from testaug.steps.contract import StepOutput, StepSummary, step_output

# The public functions that are not steps (see tests/steps/test_step_contract.py).
HELPERS = frozenset({"reports_folder"})


def reports_folder(tree: Path) -> Path:
    """Where a tree's reports go by default: `<tree name>.reports/` beside it."""
    return tree.with_name(f"{tree.stem}.reports")


class RetestConfig(Record):
    """One retest: the tree, the model spec (often the next version of a model), the reports
    folder, the rise in failure rate (points) that counts as worse, and what the model
    predicts over (a shipped suite's `task`, or comma-separated `labels`); the report file
    (`out`: the retest flow names one in the reports folder by time and model), the earlier
    report to compare with, where the tree with the model's scores goes, the scoring batch
    size and the tree's labels mapped to the model's (`label_map`, from -> to)."""

    tree: Path
    model: str
    reports: Path | None = None  # default: <tree name>.reports/ beside the tree
    threshold: float = DEFAULT_THRESHOLD
    task: str | None = "sentiment"
    labels: str | None = None
    out: Path | None = None
    previous: Path | None = None
    scored_tree: Path | None = None
    batch_size: int = Field(default=32, ge=1)
    label_map: dict[str, str] = Field(default_factory=dict)

    def folder(self) -> Path:
        """The folder of the tree's reports."""
        return self.reports or reports_folder(self.tree)


class RetestSummary(StepSummary):
    """A tree applied to one model: its tests and failure rate over all of them (percent),
    its topics, and those whose failure rate rose since the `previous` report."""

    kind: Literal["retest"] = "retest"
    model: str
    tests: int
    failing: int
    failure_rate: float | None
    topics: int
    previous: Path | None = None
    changes: tuple[TopicChange, ...] = ()


def retest_tree(config: RetestConfig, *, when: datetime | None = None) -> StepOutput:
    """The tree applied to the model and compared with `config.previous` (if any): the
    report (`TreeReport`, dated `when`) written to `config.out`. An output that names the
    tree or the previous report is refused before any work."""
    from testaug.adaptive.tree_jobs import retest_file

    if config.out is None:
        raise ValueError("retest_tree needs config.out, the file the report goes to")
    refuse_overwriting_inputs(
        {"out": config.out, "scored_tree": config.scored_tree},
        {"tree": config.tree, "previous": config.previous},
    )
    report = retest_file(
        config.tree,
        config.model,
        config.out,
        previous=config.previous,
        threshold=config.threshold,
        task=config.task,
        labels=config.labels,
        scored_tree=config.scored_tree,
        when=when,
        batch_size=config.batch_size,
        label_map=config.label_map,
    )
    overall = report.overall
    summary = RetestSummary(
        model=report.model,
        tests=overall.tests,
        failing=overall.failing,
        failure_rate=overall.failure_rate,
        topics=len(report.topics) - 1,
        previous=config.previous,
        changes=report.changes,
    )
    return step_output("retest", config.out, len(report.topics), summary=summary)
