"""The Label Studio review steps on files, over the fake server of tests/review: push the top
of what the ranker leaves, people answer, pull (or wait) brings their verdicts into the
annotations file, and the merge accepts what they and the rule accepted."""

from __future__ import annotations

from pathlib import Path

import pytest

from testaug.core.jsonl import read_jsonl
from testaug.core.records import RankedCandidate, TestCase
from testaug.review.label_studio import LabelStudioError
from testaug.review.plans import read_annotations
from testaug.review.run_files import pending_count
from testaug.steps import review
from testaug.steps.review import ReviewConfig
from tests.tiny_models import VOUCHED_CURVE, make_calibration, write_ranked_run

PROJECT = "tiny run"
TEXTS = [f"Case {i} is nice." for i in range(10)]
P_VALID = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.9, 0.92, 0.95]  # ranks 8, 9, 10 clear 0.9


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """ranked.jsonl (rank i + 1 has P(valid) P_VALID[i]), ranked.calibration.json with the
    rule P(valid) >= 0.9 at precision 0.9, and cases.jsonl."""
    return write_ranked_run(
        tmp_path, TEXTS, p_valid=P_VALID, calibration=make_calibration(m=VOUCHED_CURVE)
    )


def by_rank(run_dir: Path) -> list[str]:
    """Candidate ids in rank order."""
    return [item.candidate.id for item in read_jsonl(run_dir / "ranked.jsonl", RankedCandidate)]


def config(run_dir: Path, **options) -> ReviewConfig:
    """The review of the run's ranking in project PROJECT (seeds: cases.jsonl beside it)."""
    return ReviewConfig(ranked=run_dir / "ranked.jsonl", project=PROJECT, **options)


def push(run_dir: Path, studio, top: float | None = 0.3, **options):
    return review.push_to_label_studio(config(run_dir, top=top, **options), studio=studio)


def pull(run_dir: Path, studio):
    return review.pull_from_label_studio(config(run_dir), studio=studio)


def wait(run_dir: Path, studio, *, sleep, **options):
    return review.wait_for_label_studio(config(run_dir, **options), studio=studio, sleep=sleep)


def never(seconds: float) -> None:
    raise AssertionError(f"waited {seconds} s")


def test_push_creates_the_project_with_the_top_of_what_the_rule_leaves_and_records_the_rest(
    run_dir, studio, fake_client
):
    done = push(run_dir, studio)
    ids = by_rank(run_dir)
    tasks = fake_client.project_named(PROJECT).tasks
    assert [task["data"]["candidate_id"] for task in tasks] == ids[:3]
    assert tasks[0]["data"]["seeds"].startswith("The seat was great.")
    summary = done.summary
    assert (summary.created, summary.sent, summary.imported) == (True, 3, 3)
    assert (summary.acceptance.accepted_by_ranker, summary.pending) == (3, 4)
    records = read_annotations(run_dir / "annotations.jsonl")
    assert sorted(a.candidate_id for a in records) == sorted(ids[7:])  # the rule's three
    assert {a.origin for a in records} == {"ranker"}


def test_pushing_again_reuses_the_project_and_imports_nothing_twice(run_dir, studio, fake_client):
    first = push(run_dir, studio)
    again = push(run_dir, studio)
    assert again.summary.project_id == first.summary.project_id
    assert (again.summary.created, again.summary.imported) == (False, 0)
    assert again.summary.already_present == 3
    wider = push(run_dir, studio, budget=5, top=None)
    assert (wider.summary.imported, wider.summary.already_present) == (2, 3)
    assert len(fake_client.project_named(PROJECT).tasks) == 5


def test_push_then_pull_brings_peoples_verdicts_and_the_merge_accepts_them(
    run_dir, studio, fake_client
):
    push(run_dir, studio)
    first, second, third = by_rank(run_dir)[:3]
    fake_client.answer(PROJECT, first, 1, validity="valid")
    fake_client.answer(PROJECT, first, 2, validity="valid")
    fake_client.answer(
        PROJECT, second, 1, validity="invalid", reason="does not have the right label"
    )
    fake_client.answer(PROJECT, third, 2)  # skipped

    pulled = pull(run_dir, studio)
    assert (pulled.summary.verdicts, pulled.summary.added) == (3, 3)
    assert (pulled.summary.cancelled, pulled.summary.unanswered) == (1, 0)
    people = [a for a in read_annotations(run_dir / "annotations.jsonl") if a.origin != "ranker"]
    assert {(a.candidate_id, a.annotator, a.valid) for a in people} == {
        (first, "ann@example.org", True),
        (first, "bob@example.org", True),
        (second, "ann@example.org", False),
    }

    merged = review.merge_reviewed(config(run_dir))
    accepted = {case.id: case for case in read_jsonl(merged.path, TestCase)}
    assert first in accepted and second not in accepted and third not in accepted
    assert accepted[first].meta["accepted_by"] == "people"
    assert merged.records == 4  # and the rule's three


def test_pulling_again_adds_nothing_and_leaves_the_file_as_it_was(run_dir, studio, fake_client):
    push(run_dir, studio)
    fake_client.answer(PROJECT, by_rank(run_dir)[0], 1, validity="valid")
    pull(run_dir, studio)
    before = (run_dir / "annotations.jsonl").read_bytes()
    again = pull(run_dir, studio)
    assert (again.summary.added, again.summary.changed) == (0, 0)
    assert (run_dir / "annotations.jsonl").read_bytes() == before


def test_a_changed_answer_replaces_the_persons_earlier_verdict(run_dir, studio, fake_client):
    push(run_dir, studio)
    first = by_rank(run_dir)[0]
    fake_client.answer(PROJECT, first, 1, validity="valid")
    pull(run_dir, studio)
    task = fake_client.project_named(PROJECT).tasks[0]
    task["annotations"][0]["result"][0]["value"]["choices"] = ["invalid"]
    task["annotations"][0]["updated_at"] = "2026-11-26T09:00:00Z"
    again = pull(run_dir, studio)
    assert (again.summary.added, again.summary.changed) == (0, 1)
    [verdict] = [a for a in read_annotations(run_dir / "annotations.jsonl") if a.origin != "ranker"]
    assert not verdict.valid


def test_waiting_with_timeout_zero_pulls_once_and_says_how_many_sent_still_wait(
    run_dir, studio, fake_client
):
    push(run_dir, studio)
    fake_client.answer(PROJECT, by_rank(run_dir)[0], 1, validity="valid")
    waited = wait(run_dir, studio, wait_seconds=0, sleep=never)
    assert (waited.summary.verdicts, waited.summary.pending) == (1, 2)  # of the 3 sent
    assert pending_count(run_dir / "annotations.jsonl", run_dir / "ranked.jsonl") == 6


def test_waiting_polls_until_people_have_answered_every_task_sent(run_dir, studio, fake_client):
    push(run_dir, studio)
    sent = by_rank(run_dir)[:3]
    naps: list[float] = []

    def people_answer_meanwhile(seconds: float) -> None:
        naps.append(seconds)
        fake_client.answer(PROJECT, sent[len(naps)], 2, validity="valid")

    fake_client.answer(PROJECT, sent[0], 1, validity="valid")
    waited = wait(run_dir, studio, wait_seconds=600, poll_seconds=5, sleep=people_answer_meanwhile)
    assert naps == [5, 5]
    assert (waited.summary.verdicts, waited.summary.pending) == (3, 0)


def test_pulling_from_a_deleted_project_is_an_error_that_keeps_the_annotations(
    run_dir, studio, fake_client
):
    push(run_dir, studio)
    before = (run_dir / "annotations.jsonl").read_bytes()
    [project_id] = fake_client.store
    fake_client.store.clear()
    with pytest.raises(LabelStudioError) as raised:
        pull(run_dir, studio)
    message = str(raised.value)
    assert f"project {project_id} ({PROJECT!r}), recorded in " in message
    assert f"delete {run_dir / 'label-studio-projects.json'}" in message
    assert (run_dir / "annotations.jsonl").read_bytes() == before


def test_a_push_the_server_refuses_records_nothing(run_dir, studio, fake_client):
    fake_client.faults = [None, 400]  # the project list answers, creating it is refused
    with pytest.raises(LabelStudioError, match="create project: Label Studio answered HTTP 400"):
        push(run_dir, studio)
    assert not (run_dir / "annotations.jsonl").exists()
    assert fake_client.store == {}
