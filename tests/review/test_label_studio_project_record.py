"""A review folder's record of its Label Studio project: pushes and pulls use the recorded
id, never another project of the same title; a recorded project gone from the server is an
error naming it and the record; a folder without a record finds its project by title and
gains one. Over the fake server of fake_label_studio.py (in memory, and served over HTTP
to the real SDK client)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from testaug.core.errors import InputError
from testaug.core.retries import RetryPolicy
from testaug.review.kernel import Problem, push_items, read_export
from testaug.review.label_studio import LabelStudio, LabelStudioError
from testaug.review.project_record import PROJECT_RECORD, marker_of, read_record
from tests.review.fake_label_studio import (
    KEY,
    FakeLabelStudioClient,
    FakeLabelStudioServer,
    connect,
)

PROJECT = "fruit"


class Fruit:
    """A kind of review: one task per fruit, answered with a choice of `ripe`."""

    task_key = "fruit"
    label_config = '<View><Text name="fruit" value="$fruit"/></View>'
    description = "Fruit to judge"
    instructions = "<p>Ripe or rotten?</p>"

    def task(self, item: str, rank: int) -> dict[str, Any]:
        return {"data": {"fruit": item, "rank": rank}}

    def read_task(self, task: Mapping[str, Any]) -> str | Problem:
        return (task.get("data") or {}).get("fruit") or Problem("no fruit")

    def verdict(self, context: str, answer: Mapping[str, Any], users: Mapping[int, str]) -> str:
        return f"{context} by {users.get(answer.get('completed_by'), '?')}"


def answer(client: FakeLabelStudioClient, project_id: int, fruit: str, user: int = 1) -> None:
    """A person answers the task of a fruit in the project with this id."""
    task = next(t for t in client.store[project_id].tasks if t["data"]["fruit"] == fruit)
    task["annotations"].append({"id": len(task["annotations"]) + 1, "completed_by": user})


def push(studio: LabelStudio, record: Path, *items: str):
    return push_items(studio, PROJECT, Fruit(), list(items), record=record)


def pull(studio: LabelStudio, record: Path) -> list[str]:
    return read_export(studio, PROJECT, Fruit(), record=record).verdicts


@pytest.fixture
def record(tmp_path: Path) -> Path:
    return tmp_path / PROJECT_RECORD


def test_a_push_records_the_project_it_creates_and_never_a_credential(fake_client, record):
    studio = connect(fake_client, url="http://admin:s3cret@127.0.0.1:9/ls/?token=t0k")
    pushed = push(studio, record, "plum", "fig")
    assert pushed.created
    text = record.read_text(encoding="utf-8")
    [entry] = json.loads(text)["projects"]
    assert entry["url"] == "http://127.0.0.1:9/ls"
    assert (entry["id"], entry["title"]) == (pushed.project_id, PROJECT)
    description = fake_client.store[pushed.project_id].description
    assert description.startswith("Fruit to judge\n")
    assert entry["marker"] == marker_of(description) is not None
    assert not any(secret in text for secret in (KEY, "s3cret", "t0k", "admin"))


def test_a_second_project_of_the_same_title_does_not_take_the_recorded_ones_place(
    studio, fake_client, record
):
    ours = push(studio, record, "plum").project_id
    users = fake_client.projects.create(title=PROJECT, label_config="<View/>").id
    copy = studio.create_project(PROJECT, label_config="<View/>")  # testaug's, elsewhere
    again = push(studio, record, "plum", "fig")
    assert (again.project_id, again.created, again.imported) == (ours, False, 1)
    assert [t["data"]["fruit"] for t in fake_client.store[ours].tasks] == ["plum", "fig"]
    assert fake_client.store[users].tasks == fake_client.store[copy].tasks == []
    answer(fake_client, ours, "fig", user=2)
    assert pull(studio, record) == ["fig by bob@example.org"]


def test_a_recorded_project_deleted_on_the_server_is_an_error_naming_it_and_the_record(
    studio, fake_client, record
):
    gone = push(studio, record, "plum").project_id
    fake_client.projects.create(title=PROJECT, label_config="<View/>")  # not the one recorded
    del fake_client.store[gone]
    for act in (lambda: push(studio, record, "fig"), lambda: pull(studio, record)):
        with pytest.raises(LabelStudioError) as raised:
            act()
        message = str(raised.value)
        assert f"project {gone} ({PROJECT!r}), recorded in {record}, is not at" in message
        assert f"delete {record}" in message
    assert [p.tasks for p in fake_client.store.values()] == [[]]  # nothing created or moved


def test_a_project_with_the_recorded_id_but_not_its_marker_is_an_error(studio, fake_client, record):
    pushed = push(studio, record, "plum").project_id
    fake_client.store.clear()  # the server was reset: its next project takes the same id
    reused = fake_client.projects.create(title=PROJECT, label_config="<View/>").id
    assert reused == pushed
    with pytest.raises(LabelStudioError, match=f"lacks the marker .* delete {record}"):
        push(studio, record, "fig")
    assert fake_client.store[reused].tasks == []


def test_a_folder_without_a_record_finds_its_project_by_title_and_gains_a_record(
    studio, fake_client, record
):
    old = fake_client.projects.create(title=PROJECT, label_config="<View/>").id  # unmarked
    fake_client.projects.import_tasks(old, request=[{"data": {"fruit": "plum", "rank": 1}}])
    answer(fake_client, old, "plum")
    assert pull(studio, record) == ["plum by ann@example.org"]
    [entry] = read_record(record).projects
    assert (entry.id, entry.title, entry.marker) == (old, PROJECT, None)
    fake_client.projects.create(title=PROJECT, label_config="<View/>")  # a same-titled copy
    again = push(studio, record, "plum", "fig")
    assert (again.project_id, again.created, again.imported) == (old, False, 1)


def test_a_push_without_a_record_prefers_testaugs_marked_project_to_a_users_of_its_title(
    studio, fake_client, record
):
    users = fake_client.projects.create(title=PROJECT, label_config="<View/>").id
    ours = studio.create_project(PROJECT, label_config="<View/>")
    assert studio.find_project(PROJECT) == ours != users
    assert push(studio, record, "plum").project_id == ours
    assert read_record(record).projects[0].id == ours
    studio.create_project(PROJECT, label_config="<View/>")  # two of testaug's own
    with pytest.raises(LabelStudioError, match=f"are all titled {PROJECT!r}"):
        studio.find_project(PROJECT)


def test_projects_on_two_servers_are_recorded_side_by_side(fake_client, record):
    other = FakeLabelStudioClient()
    here = push(connect(fake_client), record, "plum").project_id
    other.projects.create(title="unrelated", label_config="<View/>")
    there = push(connect(other, url="http://127.0.0.1:10/"), record, "plum").project_id
    entries = {(e.url, e.id) for e in read_record(record).projects}
    assert entries == {("http://127.0.0.1:9", here), ("http://127.0.0.1:10", there)}
    assert push(connect(fake_client), record, "fig").project_id == here


def test_a_damaged_record_is_an_error_naming_the_file(studio, record):
    record.write_text('{"projects": [{"url": "http://127.0.0.1:9", "id": "one"}]}')
    with pytest.raises(InputError, match=re.escape(f"{record}: projects[0].id: Input should")):
        push(studio, record, "plum")


@pytest.fixture
def served(fake_client: FakeLabelStudioClient) -> Iterator[LabelStudio]:
    """testaug's connection through the real SDK client to the fake server over HTTP."""
    with FakeLabelStudioServer(fake_client) as server:
        yield LabelStudio(
            server.url, SecretStr(KEY), retries=RetryPolicy(max_attempts=2, base_delay=0)
        )


def test_over_http_the_recorded_project_is_used_and_its_deletion_is_named(
    served, fake_client, record
):
    ours = push(served, record, "plum").project_id
    fake_client.projects.create(title=PROJECT, label_config="<View/>")
    answer(fake_client, ours, "plum")
    assert pull(served, record) == ["plum by ann@example.org"]
    del fake_client.store[ours]
    with pytest.raises(LabelStudioError, match=f"project {ours} .* recorded in {record}"):
        pull(served, record)
