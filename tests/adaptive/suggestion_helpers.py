"""Suggestion records for the review tests: sentiment tests under /Negation, scored on two
models (vader targeted), as a suggestion round would write them."""

from __future__ import annotations

from testaug.adaptive.suggestion import Suggestion
from testaug.adaptive.tree import TestTree, TreeTest

FOCUS = "/Negation"


def suggestion(
    text: str, score: float | None, *, p_valid: float | None = 0.8, **test
) -> Suggestion:
    """A "should not be positive" suggestion for /Negation with vader's failure `score`
    (None: unscored) and a second model's."""
    scores = {} if score is None else {"vader": score, "spacy": -score}
    fields = {"comparator": "should not be", "output": "positive", **test}
    return Suggestion(
        test=TreeTest(
            topic=FOCUS, input=text, labeler="imputed", source="suggestion", scores=scores, **fields
        ),
        focus_topic=FOCUS,
        target_model="vader",
        outputs={"vader": "positive", "spacy": "negative"},
        p_valid=p_valid,
        round=1,
    )


def suggestions() -> list[Suggestion]:
    """Three suggestions in file order (scores 0.2, 0.9, -0.5), so failure order differs."""
    return [
        suggestion("I don't love it.", 0.2),
        suggestion("It is not great at all.", 0.9),
        suggestion("Not bad, really.", -0.5),
    ]


def tree() -> TestTree:
    """A tree with the focus topic, one subtopic and another top-level topic."""
    return TestTree(
        rows=(
            TreeTest(
                topic=FOCUS,
                input="I do not like it.",
                output="positive",
                comparator="should not be",
                labeler="ann",
            ),
            TreeTest(
                topic=f"{FOCUS}/Negated positive",
                input="Not good.",
                output="positive",
                comparator="should not be",
                labeler="ann",
            ),
            TreeTest(topic="/Vocabulary", input="Great!", output="positive", labeler="ann"),
        )
    )
