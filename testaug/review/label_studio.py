"""Label Studio projects for the doubtful candidates: the labeling interface, tasks with the
ensemble's predictions, and verdicts read back from a JSON export.

The client is label-studio-sdk 2.x, imported on first use. The API key never leaves
the client: errors name the server by its redacted URL and never carry headers.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, TypeVar
from xml.sax.saxutils import quoteattr

from pydantic import SecretStr, ValidationError

from testaug.core.errors import ServiceError, TransientServiceError
from testaug.core.records import Annotation, Candidate, RankedCandidate, TestCase, label_options
from testaug.core.retries import RetryNotices, RetryPolicy, call_with_retries
from testaug.core.secrets import redact_url
from testaug.review.label_studio_tasks import (
    annotator_of,
    answered_at,
    pull_export,
    push_tasks,
    tally_answers,
)
from testaug.review.plans import GUIDELINES, INVALID_REASONS, ReviewPlan, invalidity_score
from testaug.review.project_record import marked_description, marker_of, new_marker

T = TypeVar("T")
logger = logging.getLogger(__name__)

VALIDITY = "validity"
REASON = "reason"
CORRECTED_LABEL = "corrected_label"
# What annotators see for each reason code.
REASON_CHOICES = {text: code for code, text in INVALID_REASONS.items()}
DEFAULT_RETRIES = RetryPolicy(max_attempts=4, base_delay=0.5, max_delay=4.0)
DESCRIPTION = "Validity of generated test cases (testaug)"
# When an answer whose export gives no time was given.
EPOCH = datetime.fromisoformat("1970-01-01T00:00:00+00:00")


class LabelStudioError(ServiceError):
    """Label Studio refused a request, or its answer was not what testaug expects."""


class TransientLabelStudioError(TransientServiceError, LabelStudioError):
    """Label Studio could not be reached or failed in a way worth retrying."""


def labeling_config(labels: Sequence[str]) -> str:
    """The labeling interface: description, seed examples, the candidate and its proposed
    label; valid or invalid, a reason for invalid, and an optional corrected label."""
    reasons = "\n".join(f"      <Choice value={quoteattr(text)}/>" for text in REASON_CHOICES)
    corrections = "\n".join(f"    <Choice value={quoteattr(label)}/>" for label in labels)
    return f"""<View>
  <Header value="Test-case description"/>
  <Text name="description" value="$description"/>
  <Header value="Examples from the template suite"/>
  <Text name="seeds" value="$seeds"/>
  <Header value="Generated case"/>
  <Text name="text" value="$text"/>
  <Text name="text_pair" value="$text_pair"/>
  <Header value="Proposed label: $label"/>
  <Choices name="{VALIDITY}" toName="text" choice="single" required="true" showInLine="true">
    <Choice value="valid"/>
    <Choice value="invalid"/>
  </Choices>
  <View visibleWhen="choice-selected" whenTagName="{VALIDITY}" whenChoiceValue="invalid">
    <Header value="Why is it invalid?"/>
    <Choices name="{REASON}" toName="text" choice="single">
{reasons}
    </Choices>
  </View>
  <Header value="Corrected label (only if the proposed label is wrong)"/>
  <Choices name="{CORRECTED_LABEL}" toName="text" choice="single" showInLine="true">
{corrections}
  </Choices>
</View>"""


def instructions_html() -> str:
    """The annotation guidelines as the project's instructions."""
    return "<p>" + GUIDELINES.replace("\n", "<br/>") + "</p>"


def task_for(item: RankedCandidate, n: int, seeds: Mapping[str, TestCase]) -> dict[str, Any]:
    """A Label Studio task for a ranked candidate, with the ensemble's score as a prediction."""
    candidate = item.candidate
    examples = [_case_line(seeds[i]) for i in candidate.seed_case_ids if i in seeds]
    score = invalidity_score(item, n)
    return {
        "data": {
            "candidate_id": candidate.id,
            "description": f"{candidate.capability}: {candidate.description}",
            "seeds": "\n".join(examples) or "(seed cases not available)",
            "text": candidate.text,
            "text_pair": candidate.text_pair or "",
            "label": " or ".join(label_options(candidate.label)),
            "rank": item.rank,
            "candidate": candidate.model_dump(mode="json"),
        },
        "predictions": [
            {
                "model_version": item.ensemble_version or "unversioned",
                "score": score,
                "result": [_choice(VALIDITY, "invalid" if score >= 0.5 else "valid")],
            }
        ],
    }


def _case_line(case: TestCase) -> str:
    text = case.text if case.text_pair is None else f"{case.text} || {case.text_pair}"
    return f"{text}  ({' or '.join(label_options(case.label))})"


def _choice(name: str, value: str) -> dict[str, Any]:
    return {"from_name": name, "to_name": "text", "type": "choices", "value": {"choices": [value]}}


@dataclass
class ExportReading:
    """Verdicts read from an export, and what could not become one."""

    annotations: list[Annotation] = field(default_factory=list)
    candidates: dict[str, Candidate] = field(default_factory=dict)
    task_ids: dict[str, int] = field(default_factory=dict)
    cancelled: int = 0
    unanswered: int = 0
    problems: list[str] = field(default_factory=list)


def read_export(tasks: Iterable[Mapping[str, Any]], users: Mapping[int, str]) -> ExportReading:
    """Annotation records from a Label Studio JSON export.

    Skipped (cancelled) annotations and ones without a valid/invalid choice are counted,
    not turned into verdicts, so their candidates stay pending.
    """
    reading = ExportReading()
    for task in tasks:
        data = task.get("data") or {}
        cid = data.get("candidate_id")
        if not isinstance(cid, str):
            reading.problems.append(f"task {task.get('id')}: no candidate_id in its data")
            continue
        reading.task_ids[cid] = task.get("id", 0)
        try:
            reading.candidates[cid] = Candidate.model_validate(data.get("candidate"))
        except ValidationError as exc:
            reading.problems.append(
                f"task {task.get('id')}: data.candidate: {exc.errors()[0]['msg']}"
            )
        cancelled, unanswered = tally_answers(
            task, partial(_annotation, cid, users=users), reading.annotations
        )
        reading.cancelled += cancelled
        reading.unanswered += unanswered
    return reading


def _annotation(cid: str, answer: Mapping[str, Any], users: Mapping[int, str]) -> Annotation | None:
    choices = {
        item.get("from_name"): (item.get("value") or {}).get("choices") or []
        for item in answer.get("result") or []
        if item.get("type") == "choices"
    }
    validity = choices.get(VALIDITY) or []
    if len(validity) != 1 or validity[0] not in ("valid", "invalid"):
        return None
    valid = validity[0] == "valid"
    reason = next(iter(choices.get(REASON) or []), None)
    corrected = next(iter(choices.get(CORRECTED_LABEL) or []), None)
    return Annotation(
        candidate_id=cid,
        valid=valid,
        reason=None if valid else REASON_CHOICES.get(reason or "", "capability"),
        corrected_label=corrected,
        annotator=annotator_of(answer, users),
        origin="label-studio",
        created_at=answered_at(answer, EPOCH),
    )


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
        labels: Sequence[str],
        *,
        label_config: str | None = None,
        description: str | None = None,
        instructions: str | None = None,
        marker: str | None = None,
    ) -> int:
        """A new project with testaug's labeling interface and guidelines, or with the
        interface and guidelines given (other kinds of review, such as suggestions); its
        description carries `marker` (a new one when not given), so testaug tells it from
        a user's project of the same title.

        After a failed attempt the projects are listed again before another: a server may
        have created the project and lost its answer, and it is not created twice."""
        marker = marker or new_marker()

        def create() -> int:
            project = self._client.projects.create(
                title=name,
                description=marked_description(description or DESCRIPTION, marker),
                label_config=label_config or labeling_config(labels),
                expert_instruction=instructions or instructions_html(),
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


@dataclass(frozen=True)
class PushResult:
    """What a push did: the project, how many candidates went to people, how many were new."""

    project_id: int
    created: bool
    plan: ReviewPlan
    imported: int
    already_present: int


def push_for_review(
    studio: LabelStudio,
    project: str,
    plan: ReviewPlan,
    *,
    seeds: Mapping[str, TestCase],
    labels: Sequence[str],
    record: Path | None = None,
) -> PushResult:
    """Import the candidates a plan sends to people into a project (created if needed),
    skipping candidates it already has, so pushing twice imports nothing twice. With a
    `record`, the project is the one it names, and one found or created is recorded there."""
    n = len(plan.candidate_ids)
    tasks = [task_for(item, n, seeds) for item in plan.review]
    pushed = push_tasks(studio, project, tasks, key="candidate_id", labels=labels, record=record)
    return PushResult(
        pushed.project_id, pushed.created, plan, pushed.imported, pushed.already_present
    )


def pull_verdicts(
    studio: LabelStudio, project: str, *, record: Path | None = None
) -> ExportReading:
    """Every verdict people gave in the project so far (with a `record`, the one it names)."""
    return pull_export(studio, project, read_export, record=record)
