"""Reading a words project's export: a choice becomes a verdict by its annotator, a skipped
(cancelled) answer or one without a choice is counted, a task without a word is a problem;
the interface offers one choice per lexicon and one to drop."""

from __future__ import annotations

from testaug.editor.lexicon_verdicts import review_words
from testaug.editor.review_label_studio import (
    DROP,
    VERDICT,
    choice_for,
    read_word_export,
    word_labeling_config,
    word_task,
)
from tests.editor.lexicon_suite import suggestions


def answer(choice: str | None, user: int = 1, **fields) -> dict:
    result = [] if choice is None else [{"from_name": VERDICT, "value": {"choices": [choice]}}]
    return {"result": result, "completed_by": user, "created_at": "2026-11-25T17:00:00Z"} | fields


def test_choices_become_verdicts_and_skips_blanks_and_wordless_tasks_are_counted():
    item = review_words(suggestions())[0]
    task = word_task(item, 1, ["pos_verb"])
    task["annotations"] = [
        answer(choice_for("pos_verb")),
        answer(DROP, user=2),
        answer(None),
        answer(choice_for("pos_verb"), was_cancelled=True),
    ]
    reading = read_word_export([task, {"id": 9, "data": {}}], {1: "ann@x", 2: "bob@x"})
    assert [(v.word, v.decision, v.lexicon, v.annotator) for v in reading.verdicts] == [
        ("adore", "keep", "pos_verb", "ann@x"),
        ("adore", "drop", None, "bob@x"),
    ]
    assert reading.verdicts[0].masked == "I really {mask} the flight."
    assert reading.verdicts[0].sources == ("wordnet", "lm")
    assert (reading.unanswered, reading.cancelled) == (1, 1)
    assert reading.problems == ["task 9: no word in its data"]


def test_the_interface_offers_each_lexicon_and_a_drop():
    config = word_labeling_config(["pos_verb", "neg_verb"])
    assert '<Choice value="into pos_verb"/>' in config
    assert '<Choice value="into neg_verb"/>' in config
    assert f'<Choice value="{DROP}"/>' in config
