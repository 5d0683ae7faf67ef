"""The CI gate on a re-tested test tree (`testaug tree retest`): each topic a check, a
first-level topic as a capability and a second-level one as its description, failing above
its limit or, when asked, when it newly fails against the previous report."""

from __future__ import annotations

from testaug.adaptive.retest import TreeReport
from testaug.evaluation.gate import Check, GateResult, gate_result, unmatched
from testaug.suites.gate import GateConfig, Kind, outranked, ranked_limits


def check_tree_gate(report: TreeReport, config: GateConfig) -> GateResult:
    """The gate on a re-tested tree: each topic listed (a first-level topic is a capability,
    a second-level one its description), failing when newly failing (if asked) or above
    its limit."""
    checks = []
    used: set[tuple[str, str, str | None]] = set()
    newly = {change.topic for change in report.newly_failing}
    for topic in report.topics:
        parts = [part for part in topic.topic.split("/") if part]
        kind: Kind | None = {1: "capability", 2: "description"}.get(len(parts))
        ranked = ranked_limits(config.thresholds, kind, (parts[-1],), report.model) if kind else []
        used.update(each.key for each in ranked)
        threshold = ranked[0] if ranked else None
        overrules = tuple(lost.stated() for lost in outranked(ranked))
        limit = threshold.max_error if threshold else None
        failure, check_kind = None, kind or "capability"
        if config.fail_on_new_failures and topic.topic in newly:
            failure = f"topic {topic.topic} newly fails: {topic.failing}/{topic.tests} tests"
            check_kind = "newly failing"
        elif limit is not None and topic.failure_rate is not None and topic.failure_rate > limit:
            failure = (
                f"topic {topic.topic}: error rate {topic.failure_rate:.1f}% "
                f"({topic.failing}/{topic.tests}) above the limit {threshold.stated()}"
                + (f", which overrules {' and '.join(overrules)}" if overrules else "")
            )
        checks.append(
            Check(
                model=report.model,
                kind=check_kind,
                classname=parts[0] if parts else "/",
                name=topic.topic,
                rate=topic.failure_rate,
                n=topic.tests,
                failed=topic.failing,
                limit=limit,
                origin=threshold.origin if threshold else None,
                source=threshold.source if threshold else None,
                overrules=overrules,
                failure=failure,
            )
        )
    names = {
        "capability": {p for t in report.topics for p in t.topic.split("/")[1:2] if p},
        "description": {p for t in report.topics for p in t.topic.split("/")[2:3] if p},
        "test_type": set(),
    }
    checks += unmatched(config.thresholds, used, {report.model}, names)
    return gate_result(config, checks)
