"""Suggested tests and people's verdicts on them.

A round of suggestions proposes new tests for a focus topic. Each
suggestion carries the failure score and output of every model under test (one
of them targeted) and, when the ranker ensemble triaged it, how likely it
is to be valid. A verdict accepts it into a topic (the focus topic, another one
or a new subtopic) or rejects it as invalid or off-topic; accepted suggestions
join the tree with the name of whoever accepted them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from testaug.adaptive.tree import TreeTest, normalize_topic
from testaug.core.records import Record

Decision = Literal["accept", "reject_invalid", "reject_off_topic"]


class Suggestion(Record):
    """A proposed test (labeler "imputed", topic = the focus topic) and what is known of it."""

    test: TreeTest
    focus_topic: str
    target_model: str  # the model whose failures steered the prompts
    outputs: dict[str, str] = Field(default_factory=dict)  # model name -> predicted label
    # From the ranker ensemble, a probability; None when not triaged.
    p_valid: float | None = Field(default=None, ge=0.0, le=1.0, allow_inf_nan=False)
    round: int = 0
    prompt_index: int = 0  # which of the round's prompts produced it

    @property
    def id(self) -> str:
        """The suggested test's id."""
        return self.test.id

    @property
    def failure_score(self) -> float:
        """The target model's failure score (higher = failing harder; NaN when unscored)."""
        return self.test.scores.get(self.target_model, float("nan"))


class SuggestionVerdict(Record):
    """A person's decision on one suggestion."""

    suggestion_id: str
    decision: Decision
    topic: str | None = None  # accept: where the test goes (None: the focus topic)
    annotator: str = ""

    @model_validator(mode="after")
    def _check(self) -> SuggestionVerdict:
        if self.topic is not None:
            object.__setattr__(self, "topic", normalize_topic(self.topic))
        if self.decision != "accept" and self.topic is not None:
            raise ValueError("only an accepted suggestion has a topic")
        return self


def accepted_tests(
    suggestions: list[Suggestion], verdicts: list[SuggestionVerdict]
) -> list[TreeTest]:
    """The tests that verdicts accept, in suggestion order, moved to the verdict's topic and
    labelled with the annotator who accepted them (the last verdict on a suggestion counts)."""
    last = {verdict.suggestion_id: verdict for verdict in verdicts}
    out = []
    for suggestion in suggestions:
        verdict = last.get(suggestion.id)
        if verdict is None or verdict.decision != "accept":
            continue
        topic = verdict.topic or suggestion.focus_topic
        test = suggestion.test
        out.append(
            TreeTest(
                **{
                    **test.model_dump(exclude={"id"}),
                    "topic": topic,
                    "labeler": verdict.annotator or "unknown",
                }
            )
        )
    return out
