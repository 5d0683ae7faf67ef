"""Suggestions in Label Studio (the fake client of tests/review): the interface, tasks in
failure order with outputs and scores, idempotent pushes, and verdicts pulled back."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from testaug.adaptive.review_label_studio import (
    ACCEPT,
    ACCEPT_ELSEWHERE,
    SUBTOPIC,
    VERDICT,
    pull_suggestion_verdicts,
    push_suggestions,
    suggestion_labeling_config,
)
from testaug.review.label_studio import LabelStudioError
from tests.adaptive.suggestion_helpers import suggestions
from tests.review.fake_label_studio import FakeLabelStudioClient, connect

PROJECT = "testaug suggestions round-1"


@pytest.fixture
def fake_client() -> FakeLabelStudioClient:
    return FakeLabelStudioClient()


@pytest.fixture
def studio(fake_client):
    return connect(fake_client)


def answer(client, suggestion_id: str, user: int, verdict: str | None, topic: str = "") -> None:
    """A person answers the task of a suggestion (no verdict: the task is skipped)."""
    task = next(
        t
        for t in client.project_named(PROJECT).tasks
        if t["data"]["suggestion_id"] == suggestion_id
    )
    result = []
    if verdict is not None:
        result.append(
            {
                "from_name": VERDICT,
                "to_name": "test",
                "type": "choices",
                "value": {"choices": [verdict]},
            }
        )
    if topic:
        result.append(
            {
                "from_name": SUBTOPIC,
                "to_name": "test",
                "type": "textarea",
                "value": {"text": [topic]},
            }
        )
    task["annotations"].append(
        {
            "id": len(task["annotations"]) + 1,
            "completed_by": user,
            "result": result,
            "was_cancelled": verdict is None and not topic,
        }
    )


def test_the_interface_is_valid_xml_with_the_four_verdicts_and_a_topic_field():
    root = ET.fromstring(suggestion_labeling_config())
    choices = [c.get("value") for c in root.iter("Choice")]
    assert choices == [ACCEPT, ACCEPT_ELSEWHERE, "reject: invalid", "reject: off-topic"]
    assert [t.get("name") for t in root.iter("TextArea")] == [SUBTOPIC]
    shown = {t.get("value") for t in root.iter("Text")}
    assert shown == {"$test", "$input", "$expectation", "$models"}


def test_a_push_creates_the_project_with_tasks_in_failure_order(studio, fake_client):
    pushed = push_suggestions(studio, PROJECT, suggestions())
    assert pushed.created and pushed.imported == 3 and pushed.already_present == 0
    project = fake_client.project_named(PROJECT)
    assert project.label_config == suggestion_labeling_config()
    data = [task["data"] for task in project.tasks]
    assert [d["failure_score"] for d in data] == [0.9, 0.2, -0.5]
    assert [d["rank"] for d in data] == [1, 2, 3]
    first = data[0]
    assert "vader (targeted): positive, failure score 0.90" in first["models"]
    assert "spacy: negative, failure score -0.90" in first["models"]
    assert first["expectation"] == "should not be positive"
    assert first["p_valid"] == "0.80" and first["focus_topic"] == "/Negation"


def test_pushing_again_imports_only_new_suggestions(studio, fake_client):
    items = suggestions()
    push_suggestions(studio, PROJECT, items[:2])
    again = push_suggestions(studio, PROJECT, items)
    assert not again.created and again.imported == 1 and again.already_present == 2
    assert len(fake_client.project_named(PROJECT).tasks) == 3
    assert sum(c == "create" for c in fake_client.calls) == 1


def test_pulled_answers_become_verdicts_with_topics_and_annotators(studio, fake_client):
    items = suggestions()
    push_suggestions(studio, PROJECT, items)
    answer(fake_client, items[0].id, 1, ACCEPT)
    answer(fake_client, items[1].id, 2, ACCEPT_ELSEWHERE, "Double negation")
    answer(fake_client, items[2].id, 1, "reject: off-topic")
    answer(fake_client, items[2].id, 2, "reject: invalid")
    reading = pull_suggestion_verdicts(studio, PROJECT)
    got = {(v.suggestion_id, v.annotator): (v.decision, v.topic) for v in reading.verdicts}
    assert got == {
        (items[0].id, "ann@example.org"): ("accept", None),
        (items[1].id, "bob@example.org"): ("accept", "/Negation/Double negation"),
        (items[2].id, "ann@example.org"): ("reject_off_topic", None),
        (items[2].id, "bob@example.org"): ("reject_invalid", None),
    }
    assert set(reading.contexts) == {s.id for s in items}
    assert reading.contexts[items[1].id] == items[1]


def test_skipped_tasks_and_accepts_elsewhere_without_a_path_are_counted_not_verdicts(
    studio, fake_client
):
    items = suggestions()
    push_suggestions(studio, PROJECT, items)
    answer(fake_client, items[0].id, 1, None)
    answer(fake_client, items[1].id, 1, ACCEPT_ELSEWHERE)
    answer(fake_client, items[2].id, 1, ACCEPT_ELSEWHERE, "/Sarcasm")
    reading = pull_suggestion_verdicts(studio, PROJECT)
    assert [(v.decision, v.topic) for v in reading.verdicts] == [("accept", "/Sarcasm")]
    assert reading.cancelled == 1 and reading.unanswered == 1
    assert "no topic path" in reading.problems[0]


def test_a_transient_fault_is_retried_and_a_missing_project_is_named(studio, fake_client):
    fake_client.faults = [503]
    assert push_suggestions(studio, PROJECT, suggestions()).imported == 3
    with pytest.raises(LabelStudioError, match="no Label Studio project named 'other'"):
        pull_suggestion_verdicts(studio, "other")
