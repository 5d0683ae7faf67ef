"""What every kind of Label Studio review shares: tasks pushed once into a project found or
created by name, and answers read back from its export.

The review of candidates (testaug.review.label_studio) brings its own interface, tasks and
verdicts; suggested tests (testaug.adaptive.review_label_studio) and suggested words
(testaug.editor.review_label_studio) are kinds of the review kernel (testaug.review.kernel),
whose `push_items` and `read_export` are built on these.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from testaug.review.label_studio import LabelStudio

R = TypeVar("R")


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
    labels: Sequence[str] = (),
    label_config: str | None = None,
    description: str | None = None,
    instructions: str | None = None,
) -> TaskPush:
    """Import tasks into a project (created with the interface given, if needed), skipping
    those whose `data[key]` it already has: pushing twice imports nothing twice, and an
    import or a creation whose answer was lost is not repeated (see `LabelStudio.write`)."""
    project_id = studio.find_project(project)
    created = project_id is None
    if project_id is None:
        project_id = studio.create_project(
            project,
            labels,
            label_config=label_config,
            description=description,
            instructions=instructions,
        )
    imported, already_present = studio.import_new(project_id, tasks, key)
    return TaskPush(project_id, created, imported, already_present)


def pull_export(
    studio: LabelStudio,
    project: str,
    read: Callable[[list[dict[str, Any]], dict[int, str]], R],
) -> R:
    """`read` applied to the export of a project (every answer so far) and the users."""
    project_id = studio.project(project)
    return read(studio.export(project_id), studio.users())


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
