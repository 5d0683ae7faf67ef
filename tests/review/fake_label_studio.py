"""A fake Label Studio SDK client for unit tests: projects, tasks, exports and users in
memory, answers typed by the test, and HTTP or network faults on demand.

It answers the calls testaug.review.label_studio makes of `label_studio_sdk.client.
LabelStudio` (2.x) as the server does, down to the project list filtering titles by
"contains". The live server (tests/review/test_label_studio.py) stays for the integration
tests; the fixtures are in the conftest of tests/review and tests/steps."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from pydantic import SecretStr

from testaug.core.retries import RetryPolicy
from testaug.review.label_studio import LabelStudio

URL = "http://127.0.0.1:9/"
KEY = "not-a-key-4f1c9a"


@dataclass
class FakeProject:
    id: int
    title: str
    label_config: str
    tasks: list[dict[str, Any]] = field(default_factory=list)


class FakeLabelStudioClient:
    """The parts of `label_studio_sdk.client.LabelStudio` that testaug calls."""

    def __init__(self) -> None:
        self.people = {1: "ann@example.org", 2: "bob@example.org"}  # emails by user id
        self.store: dict[int, FakeProject] = {}
        # How the next calls fail, in order: an HTTP status, an exception to raise, or None
        # for a call that goes through; calls after the last answer normally.
        self.faults: list[int | Exception | None] = []
        self.calls: list[str] = []  # every request the server received, faulty ones too
        self.export_body: bytes | None = None  # what an export sends instead of the tasks
        self.users = SimpleNamespace(list=self._list_users)
        self.projects = SimpleNamespace(
            list=self._list_projects,
            create=self._create_project,
            import_tasks=self._import_tasks,
            exports=SimpleNamespace(download_sync=self._download),
        )

    def _fault(self, what: str) -> None:
        from label_studio_sdk.core.api_error import ApiError

        self.calls.append(what)
        if not self.faults:
            return
        fault = self.faults.pop(0)
        if fault is None:
            return
        if isinstance(fault, Exception):
            raise fault
        raise ApiError(status_code=fault, body={"detail": f"fake HTTP {fault}"})

    def _list_users(self) -> list[SimpleNamespace]:
        self._fault("users")
        return [
            SimpleNamespace(id=i, email=email, username=f"person{i}")
            for i, email in self.people.items()
        ]

    def _list_projects(self, title: str | None = None) -> Iterator[SimpleNamespace]:
        self._fault("list")
        for project in self.store.values():  # the server's title filter is "icontains"
            if title is None or title.lower() in project.title.lower():
                yield SimpleNamespace(id=project.id, title=project.title)

    def _create_project(self, *, title: str, label_config: str, **_: Any) -> SimpleNamespace:
        self._fault("create")
        project = FakeProject(max(self.store, default=0) + 1, title, label_config)
        self.store[project.id] = project
        return SimpleNamespace(id=project.id)

    def _import_tasks(self, id: int, *, request: list[dict[str, Any]]) -> SimpleNamespace:
        self._fault("import")
        project = self.store[id]
        for task in request:
            task_id = 100 * id + len(project.tasks) + 1
            project.tasks.append({**json.loads(json.dumps(task)), "id": task_id, "annotations": []})
        return SimpleNamespace(task_count=len(request))

    def _download(
        self, id: int, *, export_type: str | None = None, download_all_tasks: bool | None = None
    ) -> Iterator[bytes]:
        self._fault("export")
        if export_type != "JSON":
            raise ValueError(f"testaug reads JSON exports, not {export_type}")
        tasks = self.store[id].tasks
        if not download_all_tasks:  # the server's default: annotated tasks only
            tasks = [task for task in tasks if task["annotations"]]
        payload = self.export_body if self.export_body is not None else json.dumps(tasks).encode()
        yield payload[: len(payload) // 2]  # the SDK streams the file in chunks
        yield payload[len(payload) // 2 :]

    def project_named(self, title: str) -> FakeProject:
        """The project with exactly this title."""
        return next(p for p in self.store.values() if p.title == title)

    def answer(self, title: str, candidate_id: str, user: int, **choices: str) -> None:
        """A person answers the task of a candidate: choices by control name (validity,
        reason, corrected_label); no choices at all is a skipped (cancelled) task."""
        project = self.project_named(title)
        task = next(t for t in project.tasks if t["data"]["candidate_id"] == candidate_id)
        result = [
            {"from_name": name, "to_name": "text", "type": "choices", "value": {"choices": [v]}}
            for name, v in choices.items()
        ]
        task["annotations"].append(
            {
                "id": 1000 * task["id"] + len(task["annotations"]) + 1,
                "completed_by": user,
                "result": result,
                "was_cancelled": not choices,
                "created_at": "2026-11-25T10:00:00Z",
                "updated_at": "2026-11-25T10:05:00Z",
            }
        )


def connect(client: FakeLabelStudioClient, url: str = URL) -> LabelStudio:
    """testaug's Label Studio connection over the fake client: three attempts, no waiting."""
    return LabelStudio(
        url,
        SecretStr(KEY),
        client=client,
        retries=RetryPolicy(max_attempts=3, base_delay=0.0, max_delay=0.0),
        rng=random.Random(0),
    )
