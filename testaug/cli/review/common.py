"""What the review commands share (`testaug review candidates|tests|words`): the Label
Studio connection options, the verdicts file's flag (`--verdicts`, once `--annotations` for
candidates), the person at the terminal, the lines on a push and the warnings of a pull, and
the doors themselves (`kind_door`): each kind of thing reviewed has the same verbs,
`terminal`, `push`, `pull` and `apply`, and an old verb of a kind (`merge`) stays, hidden,
with a note that names the new one (`old_verb`)."""

from __future__ import annotations

import functools
import getpass
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypedDict

import typer
from rich.console import Console

from testaug.cli.aliases import notice
from testaug.cli.console import console, err_console, styled
from testaug.cli.options import output_option, renamed_option

if TYPE_CHECKING:
    from testaug.review.terminal import KeyReader

URL = typer.Option(None, "--url", help="Label Studio URL (default: $LABEL_STUDIO_URL).")
API_KEY = typer.Option(
    None, "--api-key", help="Label Studio token (prefer $LABEL_STUDIO_API_KEY).", show_default=False
)
MAX_PROBLEMS = 10

# The verbs of every kind of review, in the order `--help` lists them.
VERBS = ("terminal", "push", "pull", "apply")


def verdicts_option(default: Any, help: str) -> Any:
    """The --verdicts option: the file people's verdicts are saved to (read by `apply`)."""
    return output_option(default, "--verdicts", help=help)


# `--annotations`, the old spelling of --verdicts in `testaug review candidates`.
OLD_ANNOTATIONS = output_option(None, "--annotations", help="", hidden=True)


def verdicts_given(
    verdicts: Path | None, old_annotations: Path | None, *, command: str
) -> Path | None:
    """The verdicts file given as --verdicts, or as --annotations (its old spelling) with a
    note on stderr."""
    return renamed_option(
        verdicts,
        old_annotations,
        old="--annotations",
        new="--verdicts",
        default=None,
        command=command,
    )


def old_verb(callback: Callable[..., Any], old: str, new: str) -> Callable[..., Any]:
    """`callback` under an old name: it says on stderr that `testaug {old}` is now `testaug
    {new}`, then runs as the new command does (same options, output and exit code)."""

    @functools.wraps(callback)
    def renamed(*args: Any, **kwargs: Any) -> Any:
        notice(f"`testaug {old}` is now `testaug {new}`")
        return callback(*args, **kwargs)

    return renamed


def verbs(*callbacks: Callable[..., Any]) -> dict[str, Callable[..., Any]]:
    """The commands of a kind's verbs by name, the callbacks given in the order of `VERBS`."""
    return dict(zip(VERBS, callbacks, strict=True))


def kind_door(
    help: str,
    short_help: str | None,
    commands: Mapping[str, Callable[..., Any]],
    *,
    hidden: Mapping[str, Callable[..., Any]] | None = None,
) -> typer.Typer:
    """The door of one kind of review: `commands` by name (listed in the order of `VERBS`,
    then the others), and `hidden` ones (old names) that `--help` does not list."""
    group = typer.Typer(help=help, short_help=short_help, no_args_is_help=True)
    ordered = sorted(commands, key=lambda n: VERBS.index(n) if n in VERBS else len(VERBS))
    for name in ordered:
        group.command(name)(commands[name])
    for name, callback in (hidden or {}).items():
        group.command(name, hidden=True)(callback)
    return group


def suggestions_argument(what: str) -> Any:
    """The SUGGESTIONS argument of tests and words: the file of `what` people judge."""
    return typer.Argument(..., metavar="SUGGESTIONS", help=what)


def project_option(default: str) -> Any:
    """The --project option: the Label Studio project's title (`default` says which)."""
    return typer.Option(None, "--project", help=f"Label Studio project (default: {default}).")


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


def judge_in_terminal(annotator: str | None, config_for: Callable[[str], Any]) -> Any:
    """A person judges in the terminal (`annotator`, else the login) through the review
    step of the kind of `config_for(annotator)`'s record; the step's summary, with the
    verdicts file it saved to as `saved_to`."""
    from testaug.steps.review_kinds import review_in_terminal

    reviewer = terminal_reviewer(annotator)
    config = config_for(reviewer["annotator"])
    saved_to = config.verdicts_file("review")
    done = review_in_terminal(config, read_key=reviewer["read_key"], console=reviewer["console"])
    return JudgedInTerminal(done.summary, saved_to)


class JudgedInTerminal(NamedTuple):
    """What a terminal session gave: the step's summary and the verdicts file."""

    summary: Any
    saved_to: Path


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


class PullCounts(Protocol):
    """What a pull from Label Studio read (the pull steps' summaries have these)."""

    @property
    def verdicts(self) -> int: ...
    @property
    def cancelled(self) -> int: ...
    @property
    def unanswered(self) -> int: ...


def print_pulled(
    project: str | None, pulled: PullCounts, fresh: str, saved: str, problems: Sequence[str] = ()
) -> None:
    """One line on a pull: the project, its verdicts (`fresh`: how many are new), those
    skipped or cancelled and those without a verdict, then where they were `saved`; then the answers it
    could not read, as warnings."""
    console.print(
        styled(
            "[green]pulled[/] project {!r}: {:,} verdicts ({}), {:,} skipped or cancelled, {:,} "
            "without a verdict; {}",
            project,
            pulled.verdicts,
            fresh,
            pulled.cancelled,
            pulled.unanswered,
            saved,
        )
    )
    print_problems(problems)


def print_problems(problems: Sequence[str]) -> None:
    """The first few answers a pull could not read, as warnings on stderr."""
    for problem in problems[:MAX_PROBLEMS]:
        err_console.print(styled("[yellow]warning:[/] {}", problem))
