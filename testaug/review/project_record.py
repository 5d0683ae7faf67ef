"""Which Label Studio project a review uses, recorded beside what is reviewed.

A review folder (a run folder, a round of suggestions, a folder of suggested words) holds
`label-studio-projects.json`: for each server and project title pushed to from it, the
project's id and the marker testaug put in its description. Later pushes and pulls use the
recorded id, so a second project of the same title (a user's, or a copy) never takes its
place. The server is named by its URL without user info or query: no credential is written.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from testaug.core.file_lock import locked
from testaug.core.jsonl import read_json
from testaug.core.records import Record
from testaug.core.run_folder import RunFolder
from testaug.core.runs import write_text_atomic
from testaug.core.secrets import redact_url

PROJECT_RECORD = RunFolder.LABEL_STUDIO_PROJECTS
# The marker testaug writes into the description of every project it creates.
MARKER = re.compile(r"testaug-project-[0-9a-f]{32}")


class RecordedProject(Record):
    """One project: the server (URL without credentials), its id there, the title it was
    found or created by, and the marker in its description (None for a project made before
    testaug marked its projects)."""

    url: str
    id: int
    title: str
    marker: str | None = None


class ProjectRecord(Record):
    """The projects a review folder was pushed to or pulled from."""

    projects: tuple[RecordedProject, ...] = ()


def record_beside(path: Path) -> Path:
    """The project record of the folder `path` lies in."""
    return path.parent / PROJECT_RECORD


def new_marker() -> str:
    """A marker for a new project, unique to it."""
    return f"testaug-project-{uuid.uuid4().hex}"


def marked_description(description: str, marker: str) -> str:
    """A project description with the marker on a line of its own."""
    return f"{description}\n\ntestaug project key: {marker}"


def marker_of(description: str | None) -> str | None:
    """The testaug marker in a project description; None when there is none."""
    found = MARKER.search(description or "")
    return found.group(0) if found else None


def server_key(url: str) -> str:
    """A server as the record names it: its URL without credentials or a trailing slash."""
    return redact_url(url).rstrip("/")


def read_record(path: Path) -> ProjectRecord:
    """The record file (empty when there is none); an error naming the file and the field
    when it is damaged."""
    if not path.exists():
        return ProjectRecord()
    return read_json(path, ProjectRecord)


def recorded(path: Path, url: str, title: str) -> RecordedProject | None:
    """The project recorded for this server and title; None when there is none."""
    server = server_key(url)
    found = [p for p in read_record(path).projects if p.url == server and p.title == title]
    return found[-1] if found else None


def record_project(path: Path, url: str, project_id: int, title: str, marker: str | None) -> None:
    """Record the project for this server and title (replacing what was recorded for them)."""
    entry = RecordedProject(url=server_key(url), id=project_id, title=title, marker=marker)
    with locked(path):
        kept = [
            p for p in read_record(path).projects if (p.url, p.title) != (entry.url, entry.title)
        ]
        record = ProjectRecord(projects=(*kept, entry))
        write_text_atomic(path, record.model_dump_json(indent=2) + "\n")
