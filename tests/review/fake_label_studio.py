"""A fake Label Studio SDK client for unit tests: projects, tasks, exports and users in
memory, answers typed by the test, and HTTP or network faults on demand.

It answers the calls testaug.review.label_studio makes of `label_studio_sdk.client.
LabelStudio` (2.x) as the server does, down to the project list filtering titles by
"contains". `FakeLabelStudioServer` serves the same over HTTP on 127.0.0.1, so the real
SDK client (and a fault proxy in front) can talk to it. The live server
(tests/review/test_label_studio.py) stays for the integration tests; the fixtures are in the
conftest of tests/review and tests/steps."""

from __future__ import annotations

import json
import random
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qs, urlsplit

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
    description: str = ""
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
            get=self._get_project,
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
                yield _listed(project)

    def _get_project(self, id: int) -> SimpleNamespace:
        from label_studio_sdk.core.api_error import ApiError

        self._fault("get")
        if id not in self.store:
            raise ApiError(status_code=404, body={"detail": "Not found."})
        return _listed(self.store[id])

    def _create_project(
        self, *, title: str, label_config: str, description: str = "", **_: Any
    ) -> SimpleNamespace:
        self._fault("create")
        project = FakeProject(max(self.store, default=0) + 1, title, label_config, description)
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


def _listed(project: FakeProject) -> SimpleNamespace:
    """A project as the server lists it: id, title and description."""
    return SimpleNamespace(id=project.id, title=project.title, description=project.description)


def connect(client: FakeLabelStudioClient, url: str = URL) -> LabelStudio:
    """testaug's Label Studio connection over the fake client: three attempts, no waiting."""
    return LabelStudio(
        url,
        SecretStr(KEY),
        client=client,
        retries=RetryPolicy(max_attempts=3, base_delay=0.0, max_delay=0.0),
        rng=random.Random(0),
    )


class FakeLabelStudioServer:
    """The fake client's projects, tasks and users served over HTTP on 127.0.0.1, on the
    paths label-studio-sdk 2.x calls; the client's `faults` apply (HTTP statuses only)."""

    def __init__(self, client: FakeLabelStudioClient) -> None:
        self.client = client
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(client))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeLabelStudioServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def _handler_for(client: FakeLabelStudioClient) -> type[BaseHTTPRequestHandler]:
    from label_studio_sdk.core.api_error import ApiError

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

        def do_GET(self) -> None:
            self._answer()

        def do_POST(self) -> None:
            self._answer()

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            try:
                status, payload = 200, self._route(body)
            except ApiError as exc:
                status, payload = exc.status_code or 500, json.dumps(exc.body).encode()
            except (KeyError, StopIteration):
                status, payload = 404, b'{"detail": "Not found."}'
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _route(self, body: Any) -> bytes:
            url = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            route = (self.command, url.path.rstrip("/"))
            if route == ("GET", "/api/users"):
                found = [vars(user) for user in client.users.list()]
                return json.dumps(found).encode()
            if route == ("GET", "/api/projects"):
                page = int(query.get("page", "1"))
                found = [vars(p) for p in client.projects.list(title=query.get("title"))]
                results = found if page == 1 else []
                return json.dumps({"count": len(found), "results": results}).encode()
            if route == ("POST", "/api/projects"):
                made = client.projects.create(**body)
                return json.dumps(vars(_listed(client.store[made.id]))).encode()
            if self.command == "GET" and (
                match := re.fullmatch(r"/api/projects/(\d+)", url.path.rstrip("/"))
            ):
                return json.dumps(vars(client.projects.get(int(match[1])))).encode()
            if self.command == "POST" and (
                match := re.fullmatch(r"/api/projects/(\d+)/import", url.path)
            ):
                done = client.projects.import_tasks(int(match[1]), request=body)
                return json.dumps({"task_count": done.task_count}).encode()
            if self.command == "GET" and (
                match := re.fullmatch(r"/api/projects/(\d+)/export", url.path)
            ):
                chunks = client.projects.exports.download_sync(
                    int(match[1]),
                    export_type=query.get("export_type"),
                    download_all_tasks=query.get("download_all_tasks") == "true",
                )
                return b"".join(chunks)
            raise KeyError(url.path)

    return Handler
