"""Accepted suggestions added to a tree: in the verdict's topic, labelled with who accepted
them, once however often they were offered, and never taken out by a later rejection."""

from __future__ import annotations

from testaug.adaptive.suggestion import SuggestionVerdict
from testaug.adaptive.verdicts import add_accepted
from tests.adaptive.suggestion_helpers import suggestions, tree


def accept(sid: str, who: str = "ann", topic: str | None = None) -> SuggestionVerdict:
    return SuggestionVerdict(suggestion_id=sid, decision="accept", topic=topic, annotator=who)


def test_accepted_suggestions_join_their_topic_with_the_annotator():
    items = suggestions()
    done = add_accepted(tree(), items, [accept(items[0].id), accept(items[1].id, "bob", "/New")])
    added = done.tree.tests[len(tree().tests) :]
    assert [(t.topic, t.labeler) for t in added] == [("/Negation", "ann"), ("/New", "bob")]
    assert (done.accepted, done.added) == (2, 2)
    assert "/New" in done.tree.topics()


def test_a_suggestion_offered_in_two_rounds_is_added_once():
    items = suggestions()
    done = add_accepted(tree(), [items[0], items[0]], [accept(items[0].id)])
    assert done.added == 1 and len(done.tree) == len(tree()) + 1


def test_a_later_rejection_does_not_take_out_an_accepted_test():
    items = suggestions()
    grown = add_accepted(tree(), items, [accept(items[0].id)]).tree
    reject = SuggestionVerdict(suggestion_id=items[0].id, decision="reject_invalid", annotator="b")
    again = add_accepted(grown, items, [accept(items[0].id), reject])
    assert again.added == 0 and again.accepted == 0 and again.tree == grown
