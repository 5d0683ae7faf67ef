"""What every kind of Label Studio review shares: tasks pushed once into a project found or
created by name, and answers read back from its export. Given a review folder's project
record (testaug.review.project_record), pushes and pulls use the project it names, and
record the one they find or create.

Candidates (testaug.review.label_studio_candidates), suggested tests
(testaug.adaptive.review_label_studio) and suggested words (testaug.editor.review_label_studio)
are kinds of the review kernel (testaug.review.kernel), whose `push_items` and `read_export`
are built on these.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from testaug.review.project_record import (
    RecordedProject,
    marker_of,
    new_marker,
    record_project,
    recorded,
)

if TYPE_CHECKING:
    from testaug.review.label_studio import LabelStudio

R = TypeVar("R")
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TaskPush:
    """What a push did: the project, whether it was created, how many tasks were new to it
    and how many it had already."""

    project_id: int
    created: bool
    imported: int
    already_present: int


def push_tasks(
    studio: LabelStudio,
    project: str,
    tasks: Sequence[Mapping[str, Any]],
    *,
    key: str,
    label_config: str,
    description: str,
    instructions: str,
    record: Path | None = None,
) -> TaskPush:
    """Import tasks into a project (created with the interface given, if needed), skipping
    those whose `data[key]` it already has: pushing twice imports nothing twice, and an
    import or a creation whose answer was lost is not repeated (see `LabelStudio.write`).
    With a `record`, the project is the one it names (see `find_recorded`), and a project
    created is recorded there."""
    project_id = find_recorded(studio, project, record)
    created = project_id is None
    if project_id is None:
        marker = new_marker()
        project_id = studio.create_project(
            project,
            label_config=label_config,
            description=description,
            instructions=instructions,
            marker=marker,
        )
        if record is not None:
            record_project(record, studio.url, project_id, project, marker)
    imported, already_present = studio.import_new(project_id, tasks, key)
    return TaskPush(project_id, created, imported, already_present)


def pull_export(
    studio: LabelStudio,
    project: str,
    read: Callable[[list[dict[str, Any]], dict[int, str]], R],
    *,
    record: Path | None = None,
) -> R:
    """`read` applied to the export of a project (every answer so far) and the users; with
    a `record`, of the project it names (see `find_recorded`)."""
    project_id = find_recorded(studio, project, record)
    if project_id is None:
        project_id = studio.project(project)  # an error saying there is none
    return read(studio.export(project_id), studio.users())


def find_recorded(studio: LabelStudio, project: str, record: Path | None) -> int | None:
    """The id of a review's project: the one `record` names for this server and title (an
    error naming the record when the server no longer has it: never another in its place),
    else the one titled `project`, then recorded; None when there is none."""
    entry = recorded(record, studio.url, project) if record is not None else None
    if entry is not None:
        return _check_recorded(studio, entry, record)
    project_id = studio.find_project(project)
    if project_id is not None and record is not None:
        found = studio.project_by_id(project_id)
        marker = marker_of(getattr(found, "description", None))
        record_project(record, studio.url, project_id, project, marker)
        logger.info("recorded Label Studio project %d (%r) in %s", project_id, project, record)
    return project_id


def _check_recorded(studio: LabelStudio, entry: RecordedProject, record: Path | None) -> int:
    """The recorded project's id; an error naming it and the record when the server has no
    such project, or one without the recorded marker (a server reset reuses ids)."""
    from testaug.review.label_studio import LabelStudioError

    found = studio.project_by_id(entry.id)
    start_over = (
        f"to start over in a new project, delete {record} (or its entry for {entry.url}) "
        "and push again"
    )
    if found is None:
        raise LabelStudioError(
            f"Label Studio project {entry.id} ({entry.title!r}), recorded in {record}, is "
            f"not at {studio.url} any more (deleted?); testaug does not pick or create "
            f"another in its place: {start_over}"
        )
    if entry.marker is not None and marker_of(getattr(found, "description", None)) != entry.marker:
        raise LabelStudioError(
            f"Label Studio project {entry.id} at {studio.url} is not the project "
            f"{entry.title!r} recorded in {record}: its description lacks the marker "
            f"{entry.marker} (was the server reset?); {start_over}"
        )
    return entry.id


def tally_answers(
    task: Mapping[str, Any], verdict: Callable[[Mapping[str, Any]], R | None], into: list[R]
) -> tuple[int, int]:
    """Add to `into` the verdict of each of a task's answers; returns how many answers were
    skipped (cancelled) and how many held no verdict (`verdict` gave None)."""
    cancelled = unanswered = 0
    for answer in task.get("annotations") or []:
        if answer.get("was_cancelled"):
            cancelled += 1
            continue
        found = verdict(answer)
        if found is None:
            unanswered += 1
        else:
            into.append(found)
    return cancelled, unanswered


def annotator_of(answer: Mapping[str, Any], users: Mapping[int, str]) -> str:
    """Who gave an answer: the user's email or name, "user <id>" for an unknown id."""
    who = answer.get("completed_by")
    who_id = who.get("id") if isinstance(who, dict) else who
    return users.get(who_id, f"user {who_id}") if isinstance(who_id, int) else "unknown"


def answered_at(answer: Mapping[str, Any], fallback: datetime) -> datetime:
    """When an answer was last updated (or created); `fallback` when the export does not say."""
    value = answer.get("updated_at") or answer.get("created_at")
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return fallback
