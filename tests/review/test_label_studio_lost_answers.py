"""Label Studio writes whose answers are lost after the server acted: the real SDK client
talks through a fault proxy (testaug.testing.fault_proxy) to the fake server over HTTP.
Imports and project creations are not repeated, two projects with one title are an error,
and a connection closed without an answer is retried in testaug's words. The same runs
against a real server in test_label_studio_lost_answers_live.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from testaug.adaptive.review_label_studio import (
    ACCEPT,
    VERDICT,
    pull_suggestion_verdicts,
    push_suggestions,
)
from testaug.core.errors import ServiceError
from testaug.core.jsonl import read_jsonl
from testaug.core.records import RankedCandidate, TestCase
from testaug.core.retries import RetriesExhausted, RetryPolicy
from testaug.editor.lexicon_verdicts import review_words
from testaug.editor.review_label_studio import push_words
from testaug.review.acceptance import accept_by_rule
from testaug.review.label_studio import LabelStudio, LabelStudioError
from testaug.review.label_studio_candidates import pull_verdicts, push_for_review
from testaug.review.plans import ReviewPlan
from testaug.testing.fault_proxy import FaultProxy
from tests.adaptive.suggestion_helpers import suggestion
from tests.editor.lexicon_suite import suggestions as word_suggestions
from tests.review.fake_label_studio import (
    KEY,
    FakeLabelStudioClient,
    FakeLabelStudioServer,
    connect,
)
from tests.tiny_models import write_ranked_run

PROJECT = "lost answers"
IMPORT = r"/api/projects/\d+/import"
CREATE = "/api/projects/"
# How an answer is lost: a gateway's 502 or 504, or a connection closed without an answer.
LOST = [pytest.param(502, id="502"), pytest.param(504, id="504"), pytest.param(None, id="drop")]


@pytest.fixture
def proxy(fake_client: FakeLabelStudioClient) -> Iterator[FaultProxy]:
    """A fault proxy in front of the fake server, served over HTTP."""
    with FakeLabelStudioServer(fake_client) as server, FaultProxy(server.url) as proxy:
        yield proxy


@pytest.fixture
def studio(proxy: FaultProxy) -> LabelStudio:
    """testaug's connection (the real SDK client) through the proxy, retrying at once."""
    return LabelStudio(
        proxy.url, SecretStr(KEY), retries=RetryPolicy(max_attempts=3, base_delay=0, max_delay=0)
    )


def candidate_plan(folder: Path, n: int) -> tuple[ReviewPlan, dict[str, TestCase]]:
    run = write_ranked_run(folder, [f"Candidate {i} was lovely." for i in range(n)])
    ranked = list(read_jsonl(run / "ranked.jsonl", RankedCandidate))
    seeds = {case.id: case for case in read_jsonl(run / "cases.jsonl", TestCase)}
    plan = ReviewPlan(
        review=ranked, accepted=[], pending=[], acceptance=accept_by_rule(ranked, None)
    )
    return plan, seeds


def twenty_suggestions():
    return [suggestion(f"I do not love test {i}.", i / 20) for i in range(20)]


def keys(fake: FakeLabelStudioClient, key: str, project: str = PROJECT) -> list[str]:
    return [task["data"][key] for task in fake.project_named(project).tasks]


@pytest.mark.parametrize("lost", LOST)
def test_twenty_candidates_whose_import_answer_is_lost_become_twenty_tasks(
    studio, proxy, fake_client, tmp_path, lost
):
    plan, seeds = candidate_plan(tmp_path, 20)
    proxy.lose_answer("POST", IMPORT, answer=lost)
    pushed = push_for_review(studio, PROJECT, plan, seeds=seeds, labels=["negative", "positive"])
    assert len(proxy.lost_after_acting("POST", IMPORT)) == 1  # stored, and its answer lost
    ids = keys(fake_client, "candidate_id")
    assert len(ids) == 20 and sorted(ids) == sorted(item.candidate.id for item in plan.review)
    assert (pushed.imported, pushed.already_present) == (20, 0)
    assert fake_client.calls.count("import") == 1

    again = push_for_review(studio, PROJECT, plan, seeds=seeds, labels=["negative", "positive"])
    assert (again.imported, again.already_present) == (0, 20)
    assert len(keys(fake_client, "candidate_id")) == 20


def test_suggestions_whose_import_answer_is_lost_are_imported_once_and_answers_pulled(
    studio, proxy, fake_client
):
    proxy.lose_answer("POST", IMPORT, answer=504)
    pushed = push_suggestions(studio, PROJECT, twenty_suggestions())
    assert len(proxy.lost_after_acting("POST", IMPORT)) == 1
    assert len(keys(fake_client, "suggestion_id")) == 20 and pushed.imported == 20

    task = fake_client.project_named(PROJECT).tasks[0]
    choice = {"from_name": VERDICT, "to_name": "test", "type": "choices"}
    task["annotations"].append(
        {"id": 1, "completed_by": 1, "result": [{**choice, "value": {"choices": [ACCEPT]}}]}
    )
    reading = pull_suggestion_verdicts(studio, PROJECT)
    assert [(v.suggestion_id, v.decision) for v in reading.verdicts] == [
        (task["data"]["suggestion_id"], "accept")
    ]
    assert len(reading.contexts) == 20


def test_four_words_whose_import_connection_drops_are_four_tasks(studio, proxy, fake_client):
    words = review_words(word_suggestions())
    proxy.lose_answer("POST", IMPORT, answer=None)
    pushed = push_words(studio, PROJECT, words, ["pos_verb", "neg_verb"])
    assert len(proxy.lost_after_acting("POST", IMPORT)) == 1
    assert sorted(keys(fake_client, "word")) == sorted(item.word for item in words)
    assert (pushed.imported, len(words)) == (4, 4)


def test_an_import_the_server_never_got_is_sent_again_after_reading_the_project(
    studio, proxy, fake_client, tmp_path
):
    plan, seeds = candidate_plan(tmp_path, 20)
    proxy.lose_answer("POST", IMPORT, answer=502, forward=False)
    pushed = push_for_review(studio, PROJECT, plan, seeds=seeds, labels=["negative"])
    assert len(keys(fake_client, "candidate_id")) == 20 and pushed.imported == 20
    assert fake_client.calls.count("import") == 1  # the first never reached the server
    assert [(lost.server_status, lost.sent) for lost in proxy.lost] == [(None, 502)]
    assert [s.status for s in proxy.seen if s.path.endswith("/import")] == [502, 200]


@pytest.mark.parametrize("lost", LOST)
def test_a_project_created_but_its_answer_lost_is_found_not_created_twice(
    studio, proxy, fake_client, tmp_path, lost
):
    plan, seeds = candidate_plan(tmp_path, 20)
    proxy.lose_answer("POST", CREATE, answer=lost)
    pushed = push_for_review(studio, PROJECT, plan, seeds=seeds, labels=["negative"])
    assert len(proxy.lost_after_acting("POST", CREATE)) == 1  # created, and its answer lost
    assert [p.title for p in fake_client.store.values()] == [PROJECT]
    assert pushed.created and pushed.project_id == fake_client.project_named(PROJECT).id
    assert len(keys(fake_client, "candidate_id")) == 20

    fake_client.answer(PROJECT, plan.review[0].candidate.id, 1, validity="valid")
    assert len(pull_verdicts(studio, PROJECT).annotations) == 1


def test_two_projects_with_one_title_are_an_error_that_names_both(studio, fake_client, tmp_path):
    first = fake_client.projects.create(title=PROJECT, label_config="<View/>")
    second = fake_client.projects.create(title=PROJECT, label_config="<View/>")
    plan, seeds = candidate_plan(tmp_path, 2)
    for act in (
        lambda: push_for_review(studio, PROJECT, plan, seeds=seeds, labels=["negative"]),
        lambda: pull_verdicts(studio, PROJECT),
    ):
        with pytest.raises(LabelStudioError) as raised:
            act()
        message = str(raised.value)
        assert f"projects {first.id} and {second.id}" in message
        assert f"both titled {PROJECT!r}" in message
    assert fake_client.store[first.id].tasks == fake_client.store[second.id].tasks == []


def test_a_connection_closed_without_an_answer_once_is_retried(studio, proxy):
    proxy.lose_answer("GET", "/api/users/", answer=None)
    assert studio.users() == {1: "ann@example.org", 2: "bob@example.org"}
    assert [s.status for s in proxy.seen] == [None, 200]
    assert len(proxy.lost_after_acting("GET", "/api/users/")) == 1


def test_a_connection_that_keeps_closing_without_an_answer_is_a_testaug_error(studio, proxy):
    proxy.lose_answer("GET", "/api/users/", answer=None, times=10)
    with pytest.raises(RetriesExhausted) as raised:
        studio.users()
    assert isinstance(raised.value, ServiceError)
    assert "list users failed 3 times" in str(raised.value)
    assert "closed the connection without an answer" in str(raised.value)
    assert len(proxy.seen) == 3  # testaug's attempts only: the SDK does not retry on its own


def test_a_remote_protocol_error_from_the_client_is_retried(fake_client):
    studio = connect(fake_client)
    fake_client.faults = [httpx.RemoteProtocolError("Server disconnected without a response")]
    assert studio.users() == {1: "ann@example.org", 2: "bob@example.org"}
    assert fake_client.calls == ["users", "users"]
