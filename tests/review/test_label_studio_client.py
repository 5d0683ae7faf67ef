"""testaug's Label Studio client over a fake server (tests/review/fake_label_studio.py):
projects found or created, tasks imported once, exports read into verdicts, faults retried
or reported in testaug's words. test_label_studio.py runs the same against a real server."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from testaug.core.errors import ServiceError, TestAugError
from testaug.core.jsonl import read_jsonl
from testaug.core.records import RankedCandidate, TestCase
from testaug.core.retries import RetriesExhausted
from testaug.review.acceptance import accept_by_rule
from testaug.review.label_studio import (
    LabelStudio,
    LabelStudioError,
    TransientLabelStudioError,
    redact_url,
)
from testaug.review.label_studio_candidates import pull_verdicts, push_for_review
from testaug.review.plans import INVALID_REASONS, ReviewPlan
from tests.review.fake_label_studio import KEY, FakeLabelStudioClient, connect
from tests.tiny_models import write_ranked_run

PROJECT = "validity of tiny candidates"
LABELS = ["negative", "positive"]
SHOWN = INVALID_REASONS  # what annotators see for each reason code


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """ranked.jsonl with six candidates (no calibration: people see the top) and cases.jsonl."""
    return write_ranked_run(tmp_path, [f"Candidate {i} was lovely." for i in range(6)])


@pytest.fixture
def ranked(run_dir: Path) -> list[RankedCandidate]:
    return list(read_jsonl(run_dir / "ranked.jsonl", RankedCandidate))


@pytest.fixture
def seeds(run_dir: Path) -> dict[str, TestCase]:
    return {case.id: case for case in read_jsonl(run_dir / "cases.jsonl", TestCase)}


def push(studio: LabelStudio, ranked, seeds, *, budget: int, project: str = PROJECT):
    """Push the top `budget` of the ranking (which candidates a plan picks is tested in
    test_selection.py; here only the client is)."""
    acceptance = accept_by_rule(ranked, None)
    plan = ReviewPlan(
        review=list(ranked[:budget]), accepted=[], pending=list(ranked[budget:]),
        acceptance=acceptance,
    )  # fmt: skip
    return push_for_review(studio, project, plan, seeds=seeds, labels=LABELS)


def task_ids(fake: FakeLabelStudioClient, project: str = PROJECT) -> list[str]:
    return [task["data"]["candidate_id"] for task in fake.project_named(project).tasks]


def test_the_first_push_creates_the_project_and_later_ones_import_nothing_twice(
    studio, fake_client, ranked, seeds
):
    first = push(studio, ranked, seeds, budget=3)
    assert (first.created, first.imported, first.already_present) == (True, 3, 0)
    assert task_ids(fake_client) == [item.candidate.id for item in ranked[:3]]

    again = push(studio, ranked, seeds, budget=3)
    assert (again.created, again.project_id) == (False, first.project_id)
    assert (again.imported, again.already_present) == (0, 3)

    more = push(studio, ranked, seeds, budget=5)
    assert (more.imported, more.already_present) == (2, 3)
    assert task_ids(fake_client) == [item.candidate.id for item in ranked[:5]]
    assert len(fake_client.store) == 1


def test_a_project_whose_title_only_contains_the_name_is_not_taken_for_it(
    studio, fake_client, ranked, seeds
):
    other = fake_client.projects.create(title=f"old {PROJECT} (copy)", label_config="<View/>")
    assert studio.find_project(PROJECT) is None  # the server matched it; testaug does not
    done = push(studio, ranked, seeds, budget=2)
    assert done.created and done.project_id != other.id
    assert fake_client.store[other.id].tasks == []


def test_two_projects_with_the_same_title_are_an_error_naming_both(studio, fake_client):
    first = fake_client.projects.create(title=PROJECT, label_config="<View/>")
    second = fake_client.projects.create(title=PROJECT, label_config="<View/>")
    with pytest.raises(LabelStudioError, match=f"projects {first.id} and {second.id} at"):
        studio.find_project(PROJECT)
    with pytest.raises(LabelStudioError, match=f"both titled {PROJECT!r}"):
        studio.project(PROJECT)


def test_a_new_project_asks_for_validity_a_reason_and_a_corrected_label_among_the_labels(
    studio, fake_client, ranked, seeds
):
    push(studio, ranked, seeds, budget=1)
    config = fake_client.project_named(PROJECT).label_config
    for control in ('name="validity"', 'name="reason"', 'name="corrected_label"'):
        assert control in config
    assert '<Choice value="negative"/>' in config and '<Choice value="positive"/>' in config


def test_a_task_shows_the_candidate_its_seed_examples_and_the_ensembles_score(
    studio, fake_client, ranked, seeds
):
    push(studio, ranked, seeds, budget=2)
    first, second = fake_client.project_named(PROJECT).tasks
    data = first["data"]
    assert (data["text"], data["label"], data["rank"]) == ("Candidate 0 was lovely.", "positive", 1)
    assert data["seeds"] == "The seat was great.  (positive)"  # the seed id that is gone: left out
    assert data["candidate"]["id"] == ranked[0].candidate.id
    [prediction] = first["predictions"]
    assert prediction["model_version"] == "v1"
    assert prediction["result"][0]["value"]["choices"] == ["invalid"]  # rank 1 of 2: doubtful
    assert second["predictions"][0]["score"] < prediction["score"]


def test_a_push_without_seed_cases_says_they_are_not_available(studio, fake_client, ranked):
    push(studio, ranked, {}, budget=1)
    assert fake_client.project_named(PROJECT).tasks[0]["data"]["seeds"] == (
        "(seed cases not available)"
    )


def test_a_pull_turns_answers_into_verdicts_by_email_and_counts_skipped_and_unanswered(
    studio, fake_client, ranked, seeds
):
    push(studio, ranked, seeds, budget=4)
    first, second, third, fourth = (item.candidate.id for item in ranked[:4])
    fake_client.answer(PROJECT, first, 1, validity="valid")
    fake_client.answer(PROJECT, first, 2, validity="invalid", reason=SHOWN["malformed"])
    fake_client.answer(
        PROJECT, second, 1, validity="invalid", reason=SHOWN["label"], corrected_label="negative"
    )
    fake_client.answer(PROJECT, third, 2)  # skipped
    fake_client.answer(PROJECT, fourth, 1, reason=SHOWN["label"])  # no valid/invalid choice

    reading = pull_verdicts(studio, PROJECT)

    by = {(a.candidate_id, a.annotator): a for a in reading.annotations}
    assert set(by) == {
        (first, "ann@example.org"),
        (first, "bob@example.org"),
        (second, "ann@example.org"),
    }
    assert by[first, "ann@example.org"].valid and by[first, "ann@example.org"].reason is None
    assert (by[first, "bob@example.org"].valid, by[first, "bob@example.org"].reason) == (
        False,
        "malformed",
    )
    corrected = by[second, "ann@example.org"]
    assert (corrected.reason, corrected.corrected_label) == ("label", "negative")
    assert {a.origin for a in reading.annotations} == {"label-studio"}
    assert corrected.created_at.isoformat() == "2026-11-25T10:05:00+00:00"  # updated_at first
    assert (reading.cancelled, reading.unanswered, reading.problems) == (1, 1, [])
    assert reading.candidates == {item.candidate.id: item.candidate for item in ranked[:4]}
    assert set(reading.task_ids) == {first, second, third, fourth}


def test_annotators_are_named_by_email_then_username_then_user_id(
    studio, fake_client, ranked, seeds
):
    fake_client.people[3] = ""  # a user without an email
    push(studio, ranked, seeds, budget=1)
    cid = ranked[0].candidate.id
    for user in (1, 3, 9):  # 9: a user deleted since
        fake_client.answer(PROJECT, cid, user, validity="valid")
    reading = pull_verdicts(studio, PROJECT)
    assert [a.annotator for a in reading.annotations] == ["ann@example.org", "person3", "user 9"]


def test_tasks_that_testaug_did_not_write_are_reported_and_the_rest_still_read(
    studio, fake_client, ranked, seeds
):
    done = push(studio, ranked, seeds, budget=1)
    fake_client.answer(PROJECT, ranked[0].candidate.id, 1, validity="valid")
    fake_client.projects.import_tasks(
        done.project_id,
        request=[
            {"data": {"text": "typed in by hand"}},
            {"data": {"candidate_id": "c-broken", "candidate": {"text": "no task"}}},
        ],
    )
    reading = pull_verdicts(studio, PROJECT)
    assert len(reading.annotations) == 1
    assert len(reading.problems) == 2
    assert "no candidate_id in its data" in reading.problems[0]
    assert "data.candidate" in reading.problems[1]


def test_pulling_from_a_project_that_is_not_there_is_a_clear_error(studio):
    with pytest.raises(LabelStudioError, match="no Label Studio project named 'gone' at http"):
        pull_verdicts(studio, "gone")


@pytest.mark.parametrize(
    ("body", "message"),
    [(b"<html>Bad gateway</html>", "is not JSON"), (b'{"detail": "x"}', "is not a list of tasks")],
)
def test_an_export_that_is_not_a_list_of_tasks_is_an_error_naming_the_project(
    studio, fake_client, body, message
):
    project = fake_client.projects.create(title=PROJECT, label_config="<View/>")
    fake_client.export_body = body
    with pytest.raises(LabelStudioError, match=f"export of project {project.id} {message}"):
        pull_verdicts(studio, PROJECT)


@pytest.mark.parametrize("status", [429, 500, 502, 503])
def test_a_passing_fault_is_retried_and_the_call_goes_through(studio, fake_client, status):
    project = fake_client.projects.create(title=PROJECT, label_config="<View/>")
    fake_client.calls.clear()
    fake_client.faults = [status, status]
    assert studio.find_project(PROJECT) == project.id
    assert fake_client.calls == ["list"] * 3


def test_a_push_through_a_flaky_server_creates_one_project_and_imports_each_task_once(
    studio, fake_client, ranked, seeds
):
    # list; create, re-list (twice), create; the third create goes through
    fake_client.faults = [502, None, 503, 429, None, 500]
    done = push(studio, ranked, seeds, budget=3)
    assert (done.created, done.imported) == (True, 3)
    assert len(fake_client.store) == 1 and len(task_ids(fake_client)) == 3
    assert fake_client.calls.count("create") == 3 and fake_client.calls.count("import") == 1


def test_a_fault_that_persists_gives_up_after_the_policys_attempts(studio, fake_client):
    fake_client.faults = [503] * 5
    with pytest.raises(RetriesExhausted, match="find project failed 3 times") as raised:
        studio.find_project(PROJECT)
    assert isinstance(raised.value, ServiceError) and isinstance(raised.value, TestAugError)
    assert "HTTP 503" in str(raised.value)
    assert len(fake_client.calls) == 3 and len(fake_client.faults) == 2


@pytest.mark.parametrize("status", [400, 404, 409, 422])
def test_a_refusal_is_not_retried_and_says_what_the_server_answered(studio, fake_client, status):
    fake_client.faults = [status]
    with pytest.raises(LabelStudioError) as raised:
        studio.users()
    assert not isinstance(raised.value, TransientLabelStudioError)
    assert (
        str(raised.value) == f"list users: Label Studio answered HTTP {status} fake HTTP {status}"
    )
    assert fake_client.calls == ["users"]


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_key_names_the_server_and_the_variable_to_set_but_never_the_key(
    fake_client, status
):
    studio = connect(fake_client, url="http://admin:s3cret@127.0.0.1:9/ls/?token=t0k#top")
    fake_client.faults = [status]
    with pytest.raises(LabelStudioError) as raised:
        studio.find_project(PROJECT)
    message = str(raised.value)
    assert f"Label Studio at http://127.0.0.1:9/ls/ refused the API key (HTTP {status})" in message
    assert "LABEL_STUDIO_API_KEY" in message
    assert not any(secret in message for secret in (KEY, "s3cret", "t0k", "admin"))
    assert fake_client.calls == ["list"]


def test_an_unreachable_server_is_retried_then_named_by_its_url_without_credentials(fake_client):
    studio = connect(fake_client, url="https://admin:s3cret@ls.example.org:8443/?token=t0k")
    fake_client.faults = [httpx.ConnectError("connection refused")] * 3
    with pytest.raises(RetriesExhausted) as raised:
        studio.users()
    message = str(raised.value)
    assert "cannot reach Label Studio at https://ls.example.org:8443/" in message
    assert "testaug review server" in message
    assert not any(secret in message for secret in (KEY, "s3cret", "t0k"))
    assert fake_client.calls == ["users"] * 3


def test_a_timeout_once_is_retried(studio, fake_client):
    fake_client.faults = [httpx.ReadTimeout("slow")]
    assert studio.users() == {1: "ann@example.org", 2: "bob@example.org"}


@pytest.mark.parametrize(
    ("url", "safe"),
    [
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("http://user:pw@host:8080/base/?api_key=k#frag", "http://host:8080/base/"),
        ("https://token@LS.example.org/", "https://ls.example.org/"),
    ],
)
def test_urls_in_messages_lose_credentials_query_and_fragment(url, safe):
    assert redact_url(url) == safe


def test_the_connection_keeps_only_the_redacted_url(fake_client):
    studio = connect(fake_client, url="http://user:pw@host:8080/?api_key=k")
    assert studio.url == "http://host:8080/"
