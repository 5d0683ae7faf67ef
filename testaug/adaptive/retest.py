"""Re-testing a tree on a model: failure rates per topic, and the topics that got worse.

Applying a tree to a model scores every test and
counts, for each topic, its tests and failing tests, both with its subtopics and
directly at it. Rates are in percent of the tests that count: a DIR test that
cannot fail (P(L) already at the edge it would move towards) is left out, as in
CheckList. Compared with an earlier report of the tree (often an older model
version), a topic is "newly failing" when its rate was 0 and is now above 0, and
"worse" when it rose by more than a threshold (percentage points).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from testaug.adaptive.scores import TestOutcome, apply_tests
from testaug.adaptive.tree import ROOT, TestTree, TreeTest, is_within
from testaug.core.errors import TestAugError
from testaug.core.jsonl import read_json
from testaug.core.records import Record
from testaug.core.runs import write_json
from testaug.evaluation.expectations import NEUTRAL_BAND, Band
from testaug.evaluation.models import ModelUnderTest

DEFAULT_THRESHOLD = 5.0  # percentage points
EXAMPLES = 3
TREE_REPORT_FILE = "tree_report.json"
ChangeKind = Literal["newly failing", "worse"]
Rate = Annotated[float, Field(ge=0.0, le=100.0, allow_inf_nan=False)]  # percent
Count = Annotated[int, Field(ge=0)]


class TopicResult(Record):
    """One topic's counts: with its subtopics, and directly at it; rates in percent."""

    topic: str
    tests: Count
    failing: Count
    filtered: Count = 0
    failure_rate: Rate | None  # None when no test counts
    direct_tests: Count
    direct_failing: Count
    direct_failure_rate: Rate | None
    examples: tuple[str, ...] = ()  # inputs of its most failing tests, worst first


class TopicChange(Record):
    """A topic whose failure rate rose since the previous report."""

    topic: str
    kind: ChangeKind
    before: Rate
    after: Rate


class TreeReport(Record):
    """A tree applied to one model: per-topic results (the root "/" first), and the changes
    against a previous report when one was given."""

    model: str
    tree_file: str
    created_at: datetime
    topics: tuple[TopicResult, ...]
    previous_model: str | None = None
    previous_created_at: datetime | None = None
    threshold: float = Field(default=DEFAULT_THRESHOLD, ge=0.0, allow_inf_nan=False)
    changes: tuple[TopicChange, ...] = Field(default_factory=tuple)

    @property
    def overall(self) -> TopicResult:
        """The root's result: every test."""
        return self.topics[0]

    def topic(self, topic: str) -> TopicResult | None:
        """One topic's result (None when the tree has no such topic)."""
        return next((result for result in self.topics if result.topic == topic), None)

    @property
    def newly_failing(self) -> list[TopicChange]:
        """The changes whose topic failed no test before."""
        return [change for change in self.changes if change.kind == "newly failing"]


def rate(failing: int, counted: int) -> float | None:
    """`failing` in percent of `counted` (None when nothing counts)."""
    return 100.0 * failing / counted if counted else None


def topic_results(
    tree: TestTree, outcomes: Sequence[TestOutcome], *, examples: int = EXAMPLES
) -> list[TopicResult]:
    """Each topic's counts (the root "/" first, then the tree's topics in order) from the
    outcomes of its tests, given in `tree.tests` order."""
    tests = tree.tests
    if len(tests) != len(outcomes):
        raise ValueError(f"{len(outcomes)} outcomes for {len(tests)} tests")
    pairs = list(zip(tests, outcomes, strict=True))
    return [_topic_result(topic, pairs, examples) for topic in [ROOT, *tree.topics()]]


def _topic_result(
    topic: str, pairs: list[tuple[TreeTest, TestOutcome]], examples: int
) -> TopicResult:
    """One topic's counts."""
    within = [(t, o) for t, o in pairs if is_within(t.topic, topic)]
    direct = [(t, o) for t, o in within if t.topic == topic]
    counted = [(t, o) for t, o in within if not o.filtered]
    failing = sorted(((t, o) for t, o in counted if not o.passed), key=lambda pair: -pair[1].score)
    direct_counted = [o for _, o in direct if not o.filtered]
    direct_failing = sum(not o.passed for o in direct_counted)
    return TopicResult(
        topic=topic,
        tests=len(counted),
        failing=len(failing),
        filtered=len(within) - len(counted),
        failure_rate=rate(len(failing), len(counted)),
        direct_tests=len(direct_counted),
        direct_failing=direct_failing,
        direct_failure_rate=rate(direct_failing, len(direct_counted)),
        examples=tuple(t.input for t, _ in failing[:examples]),
    )


def compare_reports(
    current: TreeReport, previous: TreeReport, *, threshold: float = DEFAULT_THRESHOLD
) -> list[TopicChange]:
    """Topics in both reports whose failure rate went from 0 to above 0 ("newly failing") or
    rose by more than `threshold` percentage points ("worse"), in the current report's order."""
    before = {result.topic: result.failure_rate for result in previous.topics}
    changes = []
    for result in current.topics:
        old, new = before.get(result.topic), result.failure_rate
        if old is None or new is None:
            continue
        if old == 0 and new > 0:
            changes.append(
                TopicChange(topic=result.topic, kind="newly failing", before=old, after=new)
            )
        elif new - old > threshold:
            changes.append(TopicChange(topic=result.topic, kind="worse", before=old, after=new))
    return changes


def retest_tree(
    tree: TestTree,
    model: ModelUnderTest,
    *,
    tree_file: Path | str,
    previous: TreeReport | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    when: datetime | None = None,
    batch_size: int = 32,
    neutral_band: Band = NEUTRAL_BAND,
) -> tuple[TestTree, TreeReport]:
    """Apply the tree to `model`: the tree with the model's scores filled in, and the report
    (compared with `previous` when given). A tree without tests is an error."""
    tests = tree.tests
    if not tests:
        raise TestAugError(f"{tree_file}: the tree has no tests to apply")
    outcomes = apply_tests(model, tests, batch_size=batch_size, neutral_band=neutral_band)
    by_id = {test.id: outcome.score for test, outcome in zip(tests, outcomes, strict=True)}
    scored = TestTree(
        rows=tuple(
            row.with_scores({model.name: by_id[row.id]}) if row.kind == "test" else row
            for row in tree.rows
        )
    )
    report = TreeReport(
        model=model.name,
        tree_file=str(tree_file),
        created_at=when or datetime.now(UTC),
        topics=tuple(topic_results(tree, outcomes)),
        threshold=threshold,
    )
    if previous is not None:
        report = with_previous(report, previous, threshold=threshold)
    return scored, report


def with_previous(
    report: TreeReport, previous: TreeReport, *, threshold: float = DEFAULT_THRESHOLD
) -> TreeReport:
    """The report with its changes against `previous`."""
    return report.model_copy(
        update={
            "previous_model": previous.model,
            "previous_created_at": previous.created_at,
            "threshold": threshold,
            "changes": tuple(compare_reports(report, previous, threshold=threshold)),
        }
    )


def write_tree_report(path: Path | str, report: TreeReport) -> None:
    """Write the report as JSON, atomically."""
    write_json(Path(path), report.model_dump(mode="json"))


def read_tree_report(path: Path | str) -> TreeReport:
    """A tree report written by `write_tree_report`; InputError naming file and field."""
    return read_json(path, TreeReport)
