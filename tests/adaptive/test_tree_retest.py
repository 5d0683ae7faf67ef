"""Re-testing a tree: failure rates per topic, and topics that newly fail on a new version."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from testaug.adaptive.retest import (
    compare_reports,
    read_tree_report,
    retest_tree,
    write_tree_report,
)
from testaug.adaptive.tree import TestTree, TreeTest
from testaug.core.errors import InputError, TestAugError
from testaug.evaluation.models import load_model

SENTIMENT = ("negative", "neutral", "positive")
WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def row(topic, text, comparator="should be", output="positive", **fields) -> TreeTest:
    return TreeTest(topic=topic, input=text, comparator=comparator, output=output, **fields)


TREE = TestTree(
    rows=(
        TreeTest(kind="topic", topic="/Empty"),
        row("/Clear", "clear win"),
        row("/Clear/Close", "close call"),
        row("/Clear/Close", "slightly neg"),  # fails on both versions
        row("/Neg", "negative one", output="negative"),
        row(
            "/Dir",
            "clear win",
            "should be no more than",
            "close call",
            watched="positive",
        ),
    )
)


@pytest.fixture(scope="module")
def models():
    return [
        load_model(f"py:tests.adaptive.fixed_models:{name}", task_labels=SENTIMENT)
        for name in ("three", "three_v2")
    ]


def test_topics_count_their_subtopics_and_their_direct_tests(models):
    scored, report = retest_tree(TREE, models[0], tree_file="tree.jsonl", when=WHEN)
    by_topic = {r.topic: r for r in report.topics}
    assert list(by_topic) == ["/", "/Clear", "/Clear/Close", "/Dir", "/Empty", "/Neg"]
    clear = by_topic["/Clear"]
    assert (clear.tests, clear.failing, clear.failure_rate) == (3, 1, pytest.approx(100 / 3))
    assert (clear.direct_tests, clear.direct_failing, clear.direct_failure_rate) == (1, 0, 0.0)
    assert clear.examples == ("slightly neg",)
    assert by_topic["/Empty"].failure_rate is None
    assert (by_topic["/"].tests, by_topic["/"].failing) == (5, 2)
    assert by_topic["/Dir"].failing == 1
    assert scored.rows[0] == TREE.rows[0]
    assert all(models[0].name in row.scores for row in scored.tests)


def test_a_new_version_shows_which_topics_newly_fail(models, tmp_path):
    _, before = retest_tree(TREE, models[0], tree_file="tree.jsonl", when=WHEN)
    path = tmp_path / "before.json"
    write_tree_report(path, before)
    previous = read_tree_report(path)
    assert previous == before
    _, after = retest_tree(
        TREE, models[1], tree_file="tree.jsonl", previous=previous, threshold=10.0
    )
    changes = {c.topic: (c.kind, c.before, c.after) for c in after.changes}
    assert changes == {
        "/": ("worse", 40.0, 60.0),
        "/Clear": ("worse", pytest.approx(100 / 3), pytest.approx(200 / 3)),
        "/Clear/Close": ("worse", 50.0, 100.0),
    }
    _, after = retest_tree(TREE, models[1], tree_file="tree.jsonl", previous=previous)
    assert after.previous_model == models[0].name
    assert [c.topic for c in after.newly_failing] == []
    assert [c.topic for c in compare_reports(before, after)] == []


def test_a_topic_that_failed_nothing_before_is_newly_failing(models):
    tree = TestTree(rows=(row("/Close", "close call"), row("/Win", "clear win")))
    _, before = retest_tree(tree, models[0], tree_file="t", when=WHEN)
    _, after = retest_tree(tree, models[1], tree_file="t", previous=before)
    assert [(c.topic, c.kind) for c in after.changes] == [
        ("/", "newly failing"),
        ("/Close", "newly failing"),
    ]


def test_a_tree_without_tests_and_a_bad_report_are_errors(models, tmp_path):
    with pytest.raises(TestAugError, match="no tests"):
        retest_tree(TestTree(rows=TREE.rows[:1]), models[0], tree_file="t")
    path = tmp_path / "report.json"
    path.write_text('{"model": "m"}')
    with pytest.raises(InputError, match=r"report\.json: tree_file"):
        read_tree_report(path)
