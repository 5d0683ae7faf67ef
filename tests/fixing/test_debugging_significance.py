"""Per-topic significance in a debugging round (issue 19, AT-E3): bootstrap p-values of each
topic's change and Benjamini–Hochberg over the topics; old fix reports still read."""

from __future__ import annotations

from testaug.adaptive.tree import ROOT, TestTree, TreeTest
from testaug.fixing.debugging.records import TopicFix
from testaug.fixing.debugging.topics import (
    failing_by_id,
    p_cell,
    topic_p_values,
    with_significance,
)

# /fixed: 30 tests all failing before, none after; /same: 30 tests, the same 10 fail both times.
_TESTS = [
    TreeTest(id=f"f{i}", topic="/fixed", input=f"fixed {i}", output="positive") for i in range(30)
] + [TreeTest(id=f"s{i}", topic="/same", input=f"same {i}", output="positive") for i in range(30)]
TREE = TestTree(rows=tuple(_TESTS))
BEFORE = {**{f"f{i}": True for i in range(30)}, **{f"s{i}": i < 10 for i in range(30)}}
AFTER = {**{f"f{i}": False for i in range(30)}, **{f"s{i}": i < 10 for i in range(30)}}


def _row(topic: str) -> TopicFix:
    return TopicFix(
        topic=topic,
        tests=30,
        before=None,
        after=None,
        change=None,
        fixing_tests=0,
        status="passing",
    )


def test_failures_read_positive_scores_as_failing() -> None:
    scored = TestTree(
        rows=(
            TreeTest(id="a", topic="/t", input="a", output="positive", scores={"m": 0.3}),
            TreeTest(id="b", topic="/t", input="b", output="positive", scores={"m": -0.2}),
            TreeTest(id="c", topic="/t", input="c", output="positive"),
        )
    )
    assert failing_by_id(scored, "m") == {"a": True, "b": False, "c": False}


def test_a_fixed_topic_is_significant_and_an_unchanged_one_is_not() -> None:
    p = topic_p_values(TREE, BEFORE, [AFTER, AFTER], samples=1_000)
    assert list(p) == [ROOT, "/fixed", "/same"]
    assert p["/fixed"] == 0.0
    assert p["/same"] == 1.0
    rows = with_significance([_row(ROOT), _row("/fixed"), _row("/same")], p)
    assert [row.significant for row in rows] == [None, True, False]
    assert [p_cell(row) for row in rows][1:] == ["<0.001 *", "1.000"]


def test_p_values_are_seeded() -> None:
    noisy = {
        key: (not value) if key in {"s1", "s12", "s20"} else value for key, value in AFTER.items()
    }
    first = topic_p_values(TREE, BEFORE, [noisy, AFTER], samples=500, seed=42)
    assert first == topic_p_values(TREE, BEFORE, [noisy, AFTER], samples=500, seed=42)
    assert 0.0 < first["/same"] <= 1.0  # type: ignore[operator]


def test_a_topic_row_without_p_value_reads_as_before() -> None:
    old = _row("/x").model_dump(mode="json")
    old.pop("p_value")
    old.pop("significant")
    row = TopicFix.model_validate(old)
    assert row.p_value is None and row.significant is None
    assert p_cell(row) == "-"
