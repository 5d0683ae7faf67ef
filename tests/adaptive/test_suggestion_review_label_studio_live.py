"""Suggestions through a real Label Studio server on 127.0.0.1 (the server fixture of
tests/review/test_label_studio.py): the project accepts the suggestions' interface and
tasks, and an accept into a typed subtopic comes back as a verdict that joins the tree."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from testaug.adaptive.review_label_studio import (
    ACCEPT_ELSEWHERE,
    SUBTOPIC,
    VERDICT,
    pull_suggestion_verdicts,
    push_suggestions,
)
from testaug.adaptive.verdicts import add_accepted
from testaug.review.label_studio import LabelStudio
from tests.adaptive.suggestion_helpers import suggestions, tree
from tests.review.test_label_studio import API_KEY, client, server  # noqa: F401  (fixture)

pytestmark = [pytest.mark.label_studio, pytest.mark.slow]

PROJECT = "suggestions for /Negation"


def test_a_round_trip_through_a_real_server_adds_the_accepted_test_to_the_tree(server):  # noqa: F811
    studio = LabelStudio(server.url, SecretStr(API_KEY))
    items = suggestions()
    assert push_suggestions(studio, PROJECT, items).imported == 3
    assert push_suggestions(studio, PROJECT, items).already_present == 3

    sdk = client(server)
    project = next(p for p in sdk.projects.list(title=PROJECT) if p.title == PROJECT)
    tasks = {t.data["suggestion_id"]: t.id for t in sdk.tasks.list(project=project.id)}
    sdk.annotations.create(
        id=tasks[items[1].id],
        result=[
            {
                "from_name": VERDICT,
                "to_name": "test",
                "type": "choices",
                "value": {"choices": [ACCEPT_ELSEWHERE]},
            },
            {
                "from_name": SUBTOPIC,
                "to_name": "test",
                "type": "textarea",
                "value": {"text": ["Double negation"]},
            },
        ],
    )
    reading = pull_suggestion_verdicts(studio, PROJECT)
    [verdict] = reading.verdicts
    assert (verdict.decision, verdict.topic) == ("accept", "/Negation/Double negation")
    assert verdict.annotator == "admin@localhost.localdomain"
    grown = add_accepted(tree(), list(reading.contexts.values()), reading.verdicts).tree
    [added] = [row for row in grown.tests if row.source == "suggestion"]
    assert added.input == items[1].test.input and added.topic == "/Negation/Double negation"
