"""Reviewing suggestions in the terminal: failure order, one key per verdict, a topic chosen by
number or typed, verdicts saved one by one, and a restart that skips what was judged."""

from __future__ import annotations

import io
import math

from rich.console import Console

from testaug.adaptive.review_terminal import (
    describe_test,
    failure_order,
    review_suggestions,
)
from testaug.adaptive.suggestion import SuggestionVerdict
from testaug.adaptive.tree import TreeTest
from testaug.adaptive.verdicts import judged_by, read_verdicts, save_verdicts
from testaug.review.terminal import key_reader
from tests.adaptive.suggestion_helpers import FOCUS, suggestion, suggestions, tree


def session(keys: str, items=None, done=(), topics=None):
    """Run a review on `keys`; returns the session, the verdicts saved and the screen text."""
    saved: list[SuggestionVerdict] = []
    screen = io.StringIO()
    result = review_suggestions(
        items if items is not None else suggestions(),
        topics=topics if topics is not None else tree().topics(),
        annotator="ann",
        done=set(done),
        read_key=key_reader(io.StringIO(keys)),
        console=Console(file=screen, width=200, color_system=None),
        save=saved.append,
    )
    return result, saved, screen.getvalue()


def test_suggestions_come_in_failure_score_order_with_scores_outputs_and_p_valid():
    _, _, screen = session("sss")
    first, second, third = (screen.index(t) for t in ("not great", "don't love", "Not bad"))
    assert first < second < third
    assert "failure score 0.90 (vader, targeted)" in screen
    assert "P(valid) 0.80" in screen
    assert "spacy: negative (failure score -0.90)" in screen
    assert 'The model output for "It is not great at all." should not be "positive"' in screen


def test_unscored_suggestions_come_last():
    items = [suggestion("No score here.", None), *suggestions()]
    assert math.isnan(failure_order(items)[-1].failure_score)
    _, _, screen = session("ssss", items)
    assert "not scored" in screen


def test_one_key_per_verdict_accepts_into_the_focus_topic_or_rejects():
    result, saved, _ = session("\nio")
    assert [(v.decision, v.topic) for v in saved] == [
        ("accept", None),
        ("reject_invalid", None),
        ("reject_off_topic", None),
    ]
    assert [v.suggestion_id for v in saved] == [s.id for s in failure_order(suggestions())]
    assert {v.annotator for v in saved} == {"ann"}
    assert (result.judged, result.accepted, result.invalid, result.off_topic) == (3, 1, 1, 1)
    assert not result.quit and result.remaining == 0


def test_an_existing_subtopic_is_offered_by_number():
    _, saved, screen = session("t1\nq")
    assert "1 /Negation/Negated positive" in screen
    assert saved[0].topic == "/Negation/Negated positive"


def test_a_typed_name_is_a_new_subtopic_and_is_offered_next_time():
    _, saved, screen = session("tDoublx\x7fe negation\nt1\nt2\n")
    assert [v.topic for v in saved] == [
        "/Negation/Double negation",
        "/Negation/Negated positive",
        "/Negation/Double negation",
    ]
    assert "2 /Negation/Double negation" in screen


def test_a_typed_path_is_taken_as_is_and_an_empty_line_goes_back():
    _, saved, _ = session("t/Sarcasm/Mild\nt\ni")
    assert [(v.decision, v.topic) for v in saved][:2] == [
        ("accept", "/Sarcasm/Mild"),
        ("reject_invalid", None),
    ]


def test_skip_leaves_a_suggestion_and_q_stops_the_session():
    result, saved, screen = session("sa" + "q")
    assert len(saved) == 1 and result.skipped == 1 and result.quit
    assert result.remaining == 2
    assert "Stopped" in screen


def test_an_unknown_key_asks_again():
    _, saved, screen = session("x\nq")
    assert len(saved) == 1 and "press Enter, a, t, i, o, s or q" in screen


def test_verdicts_are_saved_as_given_and_a_restart_skips_what_was_judged(tmp_path):
    path = tmp_path / "verdicts.jsonl"
    saved: list[SuggestionVerdict] = []

    def run(keys: str):
        done = judged_by(read_verdicts(path), "ann")
        return review_suggestions(
            suggestions(),
            topics=tree().topics(),
            annotator="ann",
            done=done,
            read_key=key_reader(io.StringIO(keys)),
            console=Console(file=io.StringIO()),
            save=lambda verdict: (saved.append(verdict), save_verdicts(path, [verdict])),
        )

    first = run("a")  # then the input ends: a quit
    assert first.quit and len(read_verdicts(path)) == 1
    second = run("ii")
    assert second.judged == 2 and second.remaining == 0
    assert {v.suggestion_id for v in read_verdicts(path)} == {s.id for s in suggestions()}
    assert saved[0].suggestion_id == failure_order(suggestions())[0].id


def test_comparisons_are_described_in_words():
    inv = TreeTest(topic=FOCUS, input="a", comparator="should be the same as for", output="b")
    dir_ = TreeTest(
        topic=FOCUS,
        input="a",
        input_pair="x",
        comparator="should be no less than",
        output="b",
        output_pair="y",
        watched="positive",
    )
    assert describe_test(inv) == 'The model output for "a" should be the same as for "b"'
    assert describe_test(dir_) == 'P(positive) for "a" || "x" should be no less than for "b" || "y"'
