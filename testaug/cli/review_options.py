"""What the review commands share (`testaug review candidates|tests|words`): the Label Studio connection options, the person at the terminal, and the
lines on a push and the warnings of a pull."""

from __future__ import annotations

import getpass
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

import typer
from rich.console import Console

from testaug.cli.console import console, err_console, styled

if TYPE_CHECKING:
    from testaug.review.terminal import KeyReader

URL = typer.Option(None, "--url", help="Label Studio URL (default: $LABEL_STUDIO_URL).")
API_KEY = typer.Option(
    None, "--api-key", help="Label Studio token (prefer $LABEL_STUDIO_API_KEY).", show_default=False
)
MAX_PROBLEMS = 10


def annotator_option(where: str) -> Any:
    """The --annotator option: the reviewer's name in `where` (the login by default)."""
    return typer.Option(None, help=f"Your name in {where} (default: login).")


class TerminalReviewer(TypedDict):
    """Who reviews in the terminal, how keys are read and where the screens go."""

    annotator: str
    read_key: KeyReader
    console: Console


def terminal_reviewer(annotator: str | None) -> TerminalReviewer:
    """The person at this terminal (`annotator`, else the login), keys from stdin, and the
    results console."""
    import sys

    from testaug.review.terminal import key_reader

    return TerminalReviewer(
        annotator=annotator or getpass.getuser(),
        read_key=key_reader(sys.stdin),
        console=console,
    )


class PushCounts(Protocol):
    """What a push to Label Studio did (testaug.review.label_studio_tasks.TaskPush and the
    annotate step's summary both have these)."""

    @property
    def project_id(self) -> int | None: ...
    @property
    def created(self) -> bool | None: ...
    @property
    def imported(self) -> int | None: ...
    @property
    def already_present(self) -> int | None: ...


def print_pushed(what: str, project: str | None, pushed: PushCounts, more: str = "") -> None:
    """One line on a push: `what` went to the project (created or reused), how many tasks
    were imported and how many were there already, then `more`."""
    state = "created" if pushed.created else "reused"
    console.print(
        styled(
            "[green]pushed[/] {} to project {!r} ({}, id {}): {:,} imported, {:,} already there{}",
            what,
            project,
            state,
            pushed.project_id,
            pushed.imported,
            pushed.already_present,
            more,
        )
    )


def print_problems(problems: Sequence[str]) -> None:
    """The first few answers a pull could not read, as warnings on stderr."""
    for problem in problems[:MAX_PROBLEMS]:
        err_console.print(styled("[yellow]warning:[/] {}", problem))
