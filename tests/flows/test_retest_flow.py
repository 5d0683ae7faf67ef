"""The retest flow under Prefect's test harness: a tree applied to one model version and then
the next, each report written beside the earlier ones, and the topics that got worse logged
and published as artifacts. Models are `py:` functions with fixed probabilities."""

from __future__ import annotations

from pathlib import Path

import pytest

from testaug.adaptive.retest import read_tree_report
from testaug.adaptive.tree import TestTree, TreeTest
from testaug.adaptive.tree_files import write_tree
from testaug.steps.retest import RetestConfig

pytestmark = pytest.mark.usefixtures("prefect_harness")

V1 = "py:tests.adaptive.fixed_models:three"
V2 = "py:tests.adaptive.fixed_models:three_v2"  # "close call" now leans negative


def write_sentiment_tree(path):
    rows = [
        TreeTest(topic="/Clear positives", input="clear win", output="positive"),
        TreeTest(topic="/Clear positives", input="close call", output="positive"),
        TreeTest(topic="/Negative", input="negative one", output="negative"),
    ]
    write_tree(path, TestTree(rows=tuple(rows)))


def test_a_retest_on_the_next_version_reports_the_topics_that_newly_fail(tmp_path):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from flows.retest import latest_report, retest

    tree = tmp_path / "tree.jsonl"
    write_sentiment_tree(tree)
    first = retest(RetestConfig(tree=tree, model=V1))
    assert first.previous is None and first.changes == ()
    assert first.report.parent == tmp_path / "tree.reports"
    assert first.failure_rate == 0.0

    second = retest(RetestConfig(tree=tree, model=V2))
    assert second.previous == first.report
    assert latest_report(tmp_path / "tree.reports") == second.report
    changes = {(c.topic, c.kind, c.after) for c in second.changes}
    assert ("/Clear positives", "newly failing", 50.0) in changes
    assert not any(c.topic == "/Negative" for c in second.changes)
    report = read_tree_report(second.report)
    assert report.previous_model == first.model and report.model == second.model

    html = second.html.read_text(encoding="utf-8")
    assert second.html == tmp_path / "tree.reports" / "report.html"
    assert "/Clear positives" in html and "newly failing" in html.lower()
    assert read_tree_report(tmp_path / "tree.reports" / "tree_report.json") == report

    keys = ["testaug-retest-topics", "testaug-retest-changes", "testaug-retest-report"]
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=keys))
        )
    latest = {a.key: a for a in sorted(artifacts, key=lambda a: a.created)}
    assert "/Clear positives" in str(latest["testaug-retest-changes"].data)
    assert "newly failing" in str(latest["testaug-retest-topics"].data)
    assert "report.html" in str(latest["testaug-retest-report"].data)


def test_a_tree_without_tests_fails_the_run_and_writes_no_report(tmp_path):
    from flows.retest import retest

    tree = tmp_path / "tree.jsonl"
    write_tree(tree, TestTree(rows=(TreeTest(kind="topic", topic="/Empty"),)))
    state = retest(RetestConfig(tree=tree, model=V1), return_state=True)
    assert state.is_failed()
    assert not list((tmp_path / "tree.reports").glob("*.json"))


def test_the_weekly_retest_deployment_has_its_schedule_and_parameters_the_flow_takes():
    from flows.deployments import PREFECT_YAML, read_deployments, runner_deployment

    [spec] = [s for s in read_deployments(PREFECT_YAML) if s.name == "weekly-retest"]
    deployment = runner_deployment(spec)
    assert deployment.entrypoint == "flows.retest.retest"
    assert [s.schedule.cron for s in deployment.schedules] == ["0 5 * * 1"]
    assert deployment.parameters == {
        "config": {"tree": "trees/sentiment.jsonl", "model": "vader", "task": "sentiment"}
    }
    from flows.retest import retest

    checked = retest.validate_parameters(deployment.parameters)["config"]
    assert checked == RetestConfig(tree=Path("trees/sentiment.jsonl"), model="vader")
