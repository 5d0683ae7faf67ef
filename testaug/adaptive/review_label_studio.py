"""Suggestions reviewed in Label Studio: one task per suggestion showing the test, every
model's output and failure score and P(valid); the verdicts read back from an export.

The pushes and pulls are the review kernel's (testaug.review.kernel); this module says what
the suggestions' kind is: their labeling interface, their tasks and their verdicts.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from pydantic import ValidationError

from testaug.adaptive.review_terminal import describe_test, failure_order
from testaug.adaptive.suggestion import Decision, Suggestion, SuggestionVerdict
from testaug.adaptive.tree import normalize_topic
from testaug.review.kernel import LabelStudioReading, Problem, push_items, read_export, read_tasks
from testaug.review.label_studio import LabelStudio
from testaug.review.label_studio_tasks import TaskPush, annotator_of

VERDICT = "verdict"
SUBTOPIC = "subtopic"
ACCEPT = "accept into the focus topic"
ACCEPT_ELSEWHERE = "accept into a subtopic or another topic"
# What annotators see for each decision (accepting elsewhere also needs a topic path).
CHOICES: dict[str, Decision] = {
    ACCEPT: "accept",
    ACCEPT_ELSEWHERE: "accept",
    "reject: invalid": "reject_invalid",
    "reject: off-topic": "reject_off_topic",
}
INSTRUCTIONS = (
    "<p>Each task is a test an LLM suggested for the focus topic, with how the models under "
    "test answer it (a high failure score means the model fails the test).</p>"
    "<p>Accept a test that is valid and belongs to the focus topic; accept it into a "
    "subtopic or another topic by typing the topic path (a bare name is a new subtopic of "
    "the focus topic). Reject a test that is not a valid test of the task as invalid, and a "
    "valid one outside the topic as off-topic.</p>"
)


def suggestion_labeling_config() -> str:
    """The labeling interface: the focus topic, the test, outputs and scores, P(valid); a
    verdict, and the topic path for a test accepted elsewhere."""
    choices = "\n".join(f"    <Choice value={quoteattr(text)}/>" for text in CHOICES)
    elsewhere = quoteattr(ACCEPT_ELSEWHERE)
    return f"""<View>
  <Header value="Focus topic: $focus_topic"/>
  <Text name="test" value="$test"/>
  <Header value="Input"/>
  <Text name="input" value="$input"/>
  <Header value="Expectation"/>
  <Text name="expectation" value="$expectation"/>
  <Header value="Model outputs (failure score: higher fails harder)"/>
  <Text name="models" value="$models"/>
  <Header value="P(valid) from the ranker ensemble: $p_valid"/>
  <Choices name="{VERDICT}" toName="test" choice="single" required="true">
{choices}
  </Choices>
  <View visibleWhen="choice-selected" whenTagName="{VERDICT}" whenChoiceValue={elsewhere}>
    <Header value="Topic path (/A/B, or a name for a new subtopic of the focus topic)"/>
    <TextArea name="{SUBTOPIC}" toName="test" maxSubmissions="1" editable="true"/>
  </View>
</View>"""


class SuggestionsInLabelStudio:
    """Suggested tests as a kind of Label Studio review: a task per suggestion, read back
    with the suggestion it carries."""

    task_key = "suggestion_id"
    description = "Suggested tests for a test tree (testaug)"
    instructions = INSTRUCTIONS

    @property
    def label_config(self) -> str:
        """The suggestions' labeling interface."""
        return suggestion_labeling_config()

    def task(self, suggestion: Suggestion, rank: int) -> dict[str, Any]:
        """A Label Studio task for a suggestion; `rank` is its place in failure order."""
        test = suggestion.test
        lines = []
        for model in dict.fromkeys([suggestion.target_model, *suggestion.outputs, *test.scores]):
            score = test.scores.get(model)
            number = "not scored" if score is None else f"{score:.2f}"
            target = " (targeted)" if model == suggestion.target_model else ""
            lines.append(
                f"{model}{target}: {suggestion.outputs.get(model, '?')}, failure score {number}"
            )
        score = suggestion.failure_score
        return {
            "data": {
                "suggestion_id": suggestion.id,
                "focus_topic": suggestion.focus_topic,
                "test": describe_test(test),
                "input": test.input
                if test.input_pair is None
                else f"{test.input} || {test.input_pair}",
                "expectation": f"{test.comparator} {test.output}"
                + (f" || {test.output_pair}" if test.output_pair else ""),
                "models": "\n".join(lines),
                "p_valid": "not triaged"
                if suggestion.p_valid is None
                else f"{suggestion.p_valid:.2f}",
                "failure_score": None if math.isnan(score) else score,
                "rank": rank,
                "round": suggestion.round,
                "suggestion": suggestion.model_dump(mode="json"),
            }
        }

    def read_task(self, task: Mapping[str, Any]) -> Suggestion | Problem:
        """The suggestion a task carries."""
        data = task.get("data") or {}
        if not isinstance(data.get("suggestion_id"), str):
            return Problem("no suggestion_id in its data")
        try:
            return Suggestion.model_validate(data.get("suggestion"))
        except ValidationError as exc:
            return Problem(f"data.suggestion: {exc.errors()[0]['msg']}")

    def verdict(
        self, suggestion: Suggestion, answer: Mapping[str, Any], users: Mapping[int, str]
    ) -> SuggestionVerdict | Problem | None:
        """The verdict of one answer; an accept elsewhere without a topic path is a problem."""
        values: dict[str, list[str]] = {}
        for item in answer.get("result") or []:
            value = item.get("value") or {}
            values[item.get("from_name")] = value.get("choices") or value.get("text") or []
        chosen = values.get(VERDICT) or []
        if len(chosen) != 1 or chosen[0] not in CHOICES:
            return None
        topic = None
        if chosen[0] == ACCEPT_ELSEWHERE:
            path = " ".join(values.get(SUBTOPIC) or []).strip()
            if not path:
                return Problem("accepted into another topic, but no topic path")
            topic = normalize_topic(
                path if path.startswith("/") else f"{suggestion.focus_topic}/{path}"
            )
        return SuggestionVerdict(
            suggestion_id=suggestion.id,
            decision=CHOICES[chosen[0]],
            topic=topic,
            annotator=annotator_of(answer, users),
        )


SUGGESTIONS = SuggestionsInLabelStudio()
# Verdicts read from an export, with the suggestions the tasks carry (`contexts`, by id).
SuggestionReading = LabelStudioReading[Suggestion, SuggestionVerdict]
# What a push did: the project, how many suggestions were new to it, how many were there.
SuggestionPush = TaskPush


def read_suggestion_export(
    tasks: Iterable[Mapping[str, Any]], users: Mapping[int, str]
) -> SuggestionReading:
    """Verdicts from a Label Studio JSON export of a suggestions project."""
    return read_tasks(SUGGESTIONS, tasks, users)


def push_suggestions(
    studio: LabelStudio,
    project: str,
    suggestions: Sequence[Suggestion],
    *,
    record: Path | None = None,
) -> SuggestionPush:
    """Import suggestions, in failure order, into a project (created with the suggestions'
    interface if needed), skipping those it already has: pushing twice imports nothing twice.
    With a `record`, the project is the one it names (one found or created is recorded)."""
    return push_items(studio, project, SUGGESTIONS, failure_order(suggestions), record=record)


def pull_suggestion_verdicts(
    studio: LabelStudio, project: str, *, record: Path | None = None
) -> SuggestionReading:
    """Every verdict people gave in a suggestions project so far (with a `record`, in the
    project it names)."""
    return read_export(studio, project, SUGGESTIONS, record=record)
