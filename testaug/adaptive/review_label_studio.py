"""Suggestions reviewed in Label Studio: one task per suggestion showing the test, every
model's output and failure score and P(valid); the verdicts read back from an export.

The connection, retries and exports are the review stage's (testaug.review.label_studio);
this module adds the suggestions' labeling interface, their tasks and their verdicts.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from xml.sax.saxutils import quoteattr

from pydantic import ValidationError

from testaug.adaptive.review_terminal import describe_test, failure_order
from testaug.adaptive.suggestion import Decision, Suggestion, SuggestionVerdict
from testaug.adaptive.tree import normalize_topic
from testaug.review.label_studio import LabelStudio
from testaug.review.label_studio_tasks import (
    TaskPush,
    annotator_of,
    pull_export,
    push_tasks,
    tally_answers,
)

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


def suggestion_task(suggestion: Suggestion, rank: int) -> dict[str, Any]:
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
            "p_valid": "not triaged" if suggestion.p_valid is None else f"{suggestion.p_valid:.2f}",
            "failure_score": None if math.isnan(score) else score,
            "rank": rank,
            "round": suggestion.round,
            "suggestion": suggestion.model_dump(mode="json"),
        }
    }


@dataclass
class SuggestionReading:
    """Verdicts read from an export, the suggestions the tasks carry, and what could not
    become a verdict."""

    verdicts: list[SuggestionVerdict] = field(default_factory=list)
    suggestions: dict[str, Suggestion] = field(default_factory=dict)
    cancelled: int = 0
    unanswered: int = 0
    problems: list[str] = field(default_factory=list)


def read_suggestion_export(
    tasks: Iterable[Mapping[str, Any]], users: Mapping[int, str]
) -> SuggestionReading:
    """Verdicts from a Label Studio JSON export of a suggestions project. Skipped (cancelled)
    annotations, ones without a verdict, and accepts elsewhere without a topic path are
    counted (the last two also listed as problems), not turned into verdicts."""
    reading = SuggestionReading()
    for task in tasks:
        data = task.get("data") or {}
        sid = data.get("suggestion_id")
        if not isinstance(sid, str):
            reading.problems.append(f"task {task.get('id')}: no suggestion_id in its data")
            continue
        try:
            suggestion = Suggestion.model_validate(data.get("suggestion"))
        except ValidationError as exc:
            reading.problems.append(
                f"task {task.get('id')}: data.suggestion: {exc.errors()[0]['msg']}"
            )
            continue
        reading.suggestions[sid] = suggestion
        cancelled, unanswered = tally_answers(
            task,
            partial(
                _verdict, suggestion, users=users, problems=reading.problems, task_id=task.get("id")
            ),
            reading.verdicts,
        )
        reading.cancelled += cancelled
        reading.unanswered += unanswered
    return reading


def _verdict(
    suggestion: Suggestion,
    answer: Mapping[str, Any],
    *,
    users: Mapping[int, str],
    problems: list[str],
    task_id: Any,
) -> SuggestionVerdict | None:
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
            problems.append(f"task {task_id}: accepted into another topic, but no topic path")
            return None
        topic = normalize_topic(
            path if path.startswith("/") else f"{suggestion.focus_topic}/{path}"
        )
    return SuggestionVerdict(
        suggestion_id=suggestion.id,
        decision=CHOICES[chosen[0]],
        topic=topic,
        annotator=annotator_of(answer, users),
    )


# What a push did: the project, how many suggestions were new to it, how many were there.
SuggestionPush = TaskPush


def push_suggestions(
    studio: LabelStudio, project: str, suggestions: Sequence[Suggestion]
) -> SuggestionPush:
    """Import suggestions, in failure order, into a project (created with the suggestions'
    interface if needed), skipping those it already has: pushing twice imports nothing twice."""
    ordered = failure_order(suggestions)
    return push_tasks(
        studio,
        project,
        [suggestion_task(s, rank) for rank, s in enumerate(ordered, start=1)],
        key="suggestion_id",
        label_config=suggestion_labeling_config(),
        description="Suggested tests for a test tree (testaug)",
        instructions=INSTRUCTIONS,
    )


def pull_suggestion_verdicts(studio: LabelStudio, project: str) -> SuggestionReading:
    """Every verdict people gave in a suggestions project so far."""
    return pull_export(studio, project, read_suggestion_export)
