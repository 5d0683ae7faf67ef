"""The client of a Label Studio server: projects by name, tasks in, exports out, with
retries on transient faults and errors in testaug's words. What is reviewed (an interface,
tasks and verdicts) comes from a kind of item of the review kernel (testaug.review.kernel).

The client is label-studio-sdk 2.x, imported on first use. The API key never leaves
the client: errors name the server by its redacted URL and never carry headers.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import SecretStr

from testaug.core.errors import ServiceError, TransientServiceError
from testaug.core.retries import RetryNotices, RetryPolicy, call_with_retries
from testaug.core.secrets import redact_url, remember_credentials, remember_url_credentials
from testaug.review.project_record import marked_description, marker_of, new_marker

T = TypeVar("T")
logger = logging.getLogger(__name__)

DEFAULT_RETRIES = RetryPolicy(max_attempts=4, base_delay=0.5, max_delay=4.0)


class LabelStudioError(ServiceError):
    """Label Studio refused a request, or its answer was not what testaug expects."""


class TransientLabelStudioError(TransientServiceError, LabelStudioError):
    """Label Studio could not be reached or failed in a way worth retrying."""


class LabelStudio:
    """A connection to one Label Studio server: projects by name, tasks in, exports out."""

    def __init__(
        self,
        url: str,
        api_key: SecretStr,
        *,
        timeout: float = 60.0,
        retries: RetryPolicy = DEFAULT_RETRIES,
        rng: random.Random | None = None,
        client: Any | None = None,
    ) -> None:
        """Connect to the server at `url`; `client` is an SDK client to use instead (a fake
        in unit tests)."""
        self.url = redact_url(url)
        remember_credentials(api_key.get_secret_value())  # blanked wherever echoed
        remember_url_credentials(url)
        if client is None:
            from label_studio_sdk.client import LabelStudio as Client

            client = Client(
                base_url=url.rstrip("/"),
                api_key=api_key.get_secret_value(),
                timeout=timeout,
                max_retries=0,  # testaug retries, and reads what a lost write did first
            )
        self._client = client
        self._retries = retries
        self._rng = rng or random.Random(0)
        self._notices = RetryNotices()

    def call(self, what: str, send: Callable[[], T]) -> T:
        """Run one API call with retries on transient faults; errors in testaug's words."""
        return call_with_retries(
            lambda: self._translated(what, send),
            self._retries,
            self._rng,
            what=what,
            notices=self._notices,
        )[0]

    def _translated(self, what: str, send: Callable[[], T]) -> T:
        import httpx
        from label_studio_sdk.core.api_error import ApiError

        try:
            return send()
        except ApiError as exc:
            raise self._api_error(what, exc) from None
        except httpx.RemoteProtocolError as exc:
            raise TransientLabelStudioError(
                f"{what}: Label Studio at {self.url} closed the connection without an answer "
                f"({type(exc).__name__}: {exc})"
            ) from None
        except (httpx.TimeoutException, httpx.NetworkError) as exc:
            raise TransientLabelStudioError(
                f"cannot reach Label Studio at {self.url} ({type(exc).__name__}: {exc}); "
                "is the server running? (`testaug review server` starts one)"
            ) from None

    def _api_error(self, what: str, exc: Any) -> LabelStudioError:
        status = exc.status_code or 0
        body = exc.body if isinstance(exc.body, dict) else {}
        detail = body.get("validation_errors") or body.get("detail") or ""
        if status in (401, 403):
            return LabelStudioError(
                f"Label Studio at {self.url} refused the API key (HTTP {status}); set "
                "LABEL_STUDIO_API_KEY to an access token of that server"
            )
        if status == 429 or status >= 500:
            return TransientLabelStudioError(
                f"{what}: Label Studio answered HTTP {status} {detail}"
            )
        return LabelStudioError(f"{what}: Label Studio answered HTTP {status} {detail}")

    def users(self) -> dict[int, str]:
        """Every user's email (or username) by id."""
        people = self.call("list users", lambda: list(self._client.users.list()))
        return {u.id: u.email or u.username or f"user {u.id}" for u in people}

    def find_project(self, name: str, marker: str | None = None) -> int | None:
        """The id of the project with exactly this title (and with `marker`, the one whose
        description carries it); None when there is none. Of several with the title, the
        one testaug marked as its own; an error naming them when that does not settle it
        (testaug cannot tell which one is meant)."""
        found = self.call("find project", lambda: list(self._client.projects.list(title=name)))
        titled = sorted((p for p in found if p.title == name), key=lambda p: int(p.id))
        marks = {int(p.id): marker_of(getattr(p, "description", None)) for p in titled}
        if marker is not None:
            return next((i for i, mark in marks.items() if mark == marker), None)
        marked = [i for i, mark in marks.items() if mark is not None]
        if len(marks) <= 1 or len(marked) == 1:
            return next(iter(marked or marks), None)
        ids = list(marks)
        listed = ", ".join(str(i) for i in ids[:-1]) + f" and {ids[-1]}"
        each = "both" if len(ids) == 2 else "all"
        raise LabelStudioError(
            f"Label Studio projects {listed} at {self.url} are {each} titled {name!r}; "
            "rename or delete all but one (testaug cannot tell which one is meant)"
        )

    def project_by_id(self, project_id: int) -> Any | None:
        """The project with this id (its `title` and `description`); None when the server
        has none."""
        from label_studio_sdk.core.api_error import ApiError

        def get() -> Any | None:
            try:
                return self._client.projects.get(id=project_id)
            except ApiError as exc:
                if exc.status_code == 404:
                    return None
                raise

        return self.call("read project", get)

    def project(self, name: str) -> int:
        """The id of an existing project; a clear error when there is none by that name."""
        project_id = self.find_project(name)
        if project_id is None:
            raise LabelStudioError(
                f"no Label Studio project named {name!r} at {self.url} (deleted, or never pushed)"
            )
        return project_id

    def create_project(
        self,
        name: str,
        *,
        label_config: str,
        description: str = "",
        instructions: str = "",
        marker: str | None = None,
    ) -> int:
        """A new project with the labeling interface, description and instructions (HTML)
        given by the kind of review; its description carries `marker` (a new one when not
        given), so testaug tells it from a user's project of the same title.

        After a failed attempt the projects are listed again before another: a server may
        have created the project and lost its answer, and it is not created twice."""
        marker = marker or new_marker()

        def create() -> int:
            project = self._client.projects.create(
                title=name,
                description=marked_description(description, marker),
                label_config=label_config,
                expert_instruction=instructions,
                show_instruction=True,
                show_skip_button=True,
            )
            return int(project.id)

        return self.write("create project", create, lambda: self.find_project(name, marker))

    def write(self, what: str, send: Callable[[], T], settled: Callable[[], T | None]) -> T:
        """Run a request that changes the server, with retries; before each retry
        `settled` reads what the server holds and gives the result when the failed attempt
        took effect after all (its answer lost), or None to send the request again."""
        attempts = 0

        def attempt() -> T:
            nonlocal attempts
            attempts += 1
            if attempts > 1 and (done := settled()) is not None:
                logger.info("%s: the server had done it; its answer was lost", what)
                return done
            return self._translated(what, send)

        return call_with_retries(
            attempt, self._retries, self._rng, what=what, notices=self._notices
        )[0]

    def export(self, project_id: int) -> list[dict[str, Any]]:
        """Every task of the project with its annotations (JSON export)."""
        payload = self.call(
            "export project",
            lambda: b"".join(
                self._client.projects.exports.download_sync(
                    id=project_id, export_type="JSON", download_all_tasks=True
                )
            ),
        )
        try:
            tasks = json.loads(payload)
        except json.JSONDecodeError as exc:
            raise LabelStudioError(
                f"the export of project {project_id} is not JSON: {exc}"
            ) from None
        if not isinstance(tasks, list):
            raise LabelStudioError(f"the export of project {project_id} is not a list of tasks")
        return tasks

    def task_keys(self, project_id: int, key: str) -> set[Any]:
        """The `data[key]` of every task the project holds."""
        return {(task.get("data") or {}).get(key) for task in self.export(project_id)}

    def import_new(
        self, project_id: int, tasks: Sequence[Mapping[str, Any]], key: str
    ) -> tuple[int, int]:
        """Import the tasks whose `data[key]` the project lacks; returns how many were new
        to it and how many it had already.

        After a failed attempt the project is read again and only what it still lacks is
        sent: an import stored by the server but whose answer was lost (a gateway's 502 or
        504, a dropped connection, a timeout) is not imported twice."""
        present = self.task_keys(project_id, key)
        before = present
        sent: list[Mapping[str, Any]] = []

        def send() -> int:
            sent[:] = [task for task in tasks if task["data"][key] not in present]
            if not sent:
                return 0
            request = [dict(task) for task in sent]
            response = self._client.projects.import_tasks(id=project_id, request=request)
            return int(response.task_count or 0)

        def settled() -> int | None:
            nonlocal present
            present = self.task_keys(project_id, key)
            if all(task["data"][key] in present for task in sent):
                return 0
            return None

        self.write("import tasks", send, settled)
        already = sum(task["data"][key] in before for task in tasks)
        return len(tasks) - already, already
