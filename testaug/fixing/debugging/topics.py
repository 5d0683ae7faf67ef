"""Topics before and after a round of the debugging loop (AT-E3): which topics fail, which a
round fixed and which it broke, each topic's row with its mean and spread over seeds, and the
bootstrap p-value of its change with Benjamini–Hochberg over the topics.

A topic fails when its failure rate is above `fail_above` percent (20 in AdaTest); it is
fixed when it failed before and does not after, broken when it did not fail before and does
after. The root "/" (the whole tree) is reported but never counted. Significance: each
topic's change is tested on its tests' outcomes before and after (a test fails when its
failure score is > 0; after: the share of seeds it fails on), paired by test, over 5,000
seeded bootstrap re-samples; DIR tests that cannot fail count as passing here, while the
printed rates leave them out."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from testaug.adaptive.retest import TreeReport
from testaug.adaptive.tree import ROOT, TestTree, TreeTest, is_within, normalize_topic
from testaug.fixing.debugging.records import (
    FixExample,
    FixRound,
    SeedFix,
    TopicFix,
    TopicStatus,
)
from testaug.fixing.patching.protocol import stat
from testaug.fixing.significance import (
    ALPHA,
    BOOTSTRAP_SAMPLES,
    SEED,
    benjamini_hochberg,
    bootstrap_difference,
)


def is_failing(rate: float | None, fail_above: float) -> bool:
    """Whether a topic fails: its failure rate is above `fail_above` percent."""
    return rate is not None and rate > fail_above


def topic_status(before: float | None, after: float | None, fail_above: float) -> TopicStatus:
    """AT-E3's labels: fixed (failing -> not failing), broken (not failing -> failing)."""
    if before is None or after is None:
        return "untested"
    was, now = is_failing(before, fail_above), is_failing(after, fail_above)
    if was and not now:
        return "fixed"
    if now and not was:
        return "broken"
    return "failing" if now else "passing"


def whole_tree_status(after: float | None, fail_above: float) -> TopicStatus:
    """The root's label: failing or passing after the round (it is never counted as fixed
    or broken)."""
    if after is None:
        return "untested"
    return "failing" if is_failing(after, fail_above) else "passing"


def labelled(
    before: dict[str, float | None], after: dict[str, float | None], fail_above: float
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The fixed and broken topics (the root left out), in `before`'s order."""
    fixed, broken = [], []
    for topic, old in before.items():
        if topic == ROOT:
            continue
        status = topic_status(old, after.get(topic), fail_above)
        if status == "fixed":
            fixed.append(topic)
        elif status == "broken":
            broken.append(topic)
    return tuple(fixed), tuple(broken)


def failing_topics(
    by_topic: dict[str, float | None], fail_above: float, within: Sequence[str] = ()
) -> list[str]:
    """The topics (not the root) that fail at these rates, only those within `within` when
    given."""
    wanted = [normalize_topic(topic) for topic in within]
    return [
        topic
        for topic, rate in by_topic.items()
        if topic != ROOT
        and is_failing(rate, fail_above)
        and (not wanted or any(is_within(topic, w) for w in wanted))
    ]


def rates(report: TreeReport) -> dict[str, float | None]:
    """Each topic's failure rate in a report, in report order."""
    return {result.topic: result.failure_rate for result in report.topics}


def failing_by_id(scored: TestTree, model: str) -> dict[str, bool]:
    """Whether each test (by id) fails `model`: its failure score is > 0."""
    return {test.id: test.scores.get(model, 0.0) > 0 for test in scored.tests}


def failing_tests(scored: TestTree, model: str, topics: Sequence[str] = ()) -> list[TreeTest]:
    """Tests whose failure score on `model` is > 0, within `topics` when given."""
    wanted = [normalize_topic(topic) for topic in topics]
    return [
        test
        for test in scored.tests
        if test.scores.get(model, 0.0) > 0
        and (not wanted or any(is_within(test.topic, topic) for topic in wanted))
    ]


def topic_rows(
    before: TreeReport,
    runs: Sequence[SeedFix],
    examples: Sequence[FixExample],
    fail_above: float,
) -> list[TopicFix]:
    """Each topic's row: the rate before, the mean and spread after over seeds, its label."""
    rows = []
    for result in before.topics:
        values = [run.after.get(result.topic) for run in runs]
        after = stat([v for v in values if v is not None]) if None not in values else None
        change = (
            after.mean - result.failure_rate
            if after is not None and result.failure_rate is not None
            else None
        )
        rows.append(
            TopicFix(
                topic=result.topic,
                tests=result.tests,
                before=result.failure_rate,
                after=after,
                change=change,
                fixing_tests=sum(is_within(e.topic, result.topic) for e in examples),
                status=topic_status(result.failure_rate, after.mean if after else None, fail_above)
                if result.topic != ROOT
                else whole_tree_status(after.mean if after else None, fail_above),
            )
        )
    return rows


def topic_p_values(
    tree: TestTree,
    before: dict[str, bool],
    after: Sequence[dict[str, bool]],
    *,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = SEED,
) -> dict[str, float | None]:
    """Each topic's bootstrap p-value (the root "/" first) that its failure rate did not
    change: its tests' failures before against the share of `after` runs they fail on."""
    out: dict[str, float | None] = {}
    for topic in [ROOT, *tree.topics()]:
        ids = [test.id for test in tree.tests if is_within(test.topic, topic)]
        if not ids or not after:
            out[topic] = None
            continue
        was = np.array([before.get(i, False) for i in ids], dtype=float)
        now = np.array([np.mean([run.get(i, False) for run in after]) for i in ids])
        out[topic] = bootstrap_difference(was, now, samples=samples, seed=seed)
    return out


def with_significance(
    rows: Sequence[TopicFix], p_values: dict[str, float | None], alpha: float = ALPHA
) -> list[TopicFix]:
    """The rows with their p-values, and `significant` from Benjamini-Hochberg over the
    topics that have one (the root gets its p-value only)."""
    tested = [
        row.topic for row in rows if row.topic != ROOT and p_values.get(row.topic) is not None
    ]
    flags = dict(zip(tested, benjamini_hochberg([p_values[t] for t in tested], alpha), strict=True))
    return [
        row.model_copy(
            update={"p_value": p_values.get(row.topic), "significant": flags.get(row.topic)}
        )
        for row in rows
    ]


def p_cell(row: TopicFix) -> str:
    """A topic's p-value as shown: "0.004 *" when significant (BH), "<0.001" below that
    (the bootstrap's floor), "-" without one."""
    if row.p_value is None:
        return "-"
    shown = "<0.001" if row.p_value < 0.001 else f"{row.p_value:.3f}"
    return shown + (" *" if row.significant else "")


def has_p_values(report: FixRound) -> bool:
    """Whether the round's topics carry p-values (reports written before them do not)."""
    return any(row.p_value is not None for row in report.topics)
