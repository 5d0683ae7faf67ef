"""The review kernel: what a review needs from its kind of item, and the one terminal loop.

Candidates (testaug.review.terminal), suggested tests (testaug.adaptive.review_terminal) and
suggested words (testaug.editor.review_terminal) are kinds of item. A kind names each item
by a stable key, shows one item on one screen and asks for its verdict with a `Question`:
the keys a person can press and the verdict each gives. `review_in_terminal` runs the loop
they share: items already judged are passed over, `q` or the end of input stops, `s` skips
an item, and every verdict is handed to `save` the moment it is given, so a session can
stop anywhere and go on later.

A kind reviewed in Label Studio (`LabelStudioKind`: candidates in
testaug.review.label_studio_candidates, tests in testaug.adaptive.review_label_studio, words in
testaug.editor.review_label_studio) also says how its items become tasks of one labeling
interface and how a task's answers become verdicts: `push_items` imports the
items once into a project, `read_tasks` and `read_export` turn an export into verdicts.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

from rich.console import Console
from rich.text import Text

from testaug.review.label_studio_tasks import TaskPush, pull_export, push_tasks, tally_answers

if TYPE_CHECKING:
    from testaug.review.label_studio import LabelStudio

# Returns one key: a single character, "\n" for Enter, "" at end of input.
KeyReader = Callable[[], str]
ENTER = "\n"

Item = TypeVar("Item")
Verdict = TypeVar("Verdict")
ItemIn = TypeVar("ItemIn", contravariant=True)
VerdictOut = TypeVar("VerdictOut", covariant=True)
# What a kind reads from a task before its answers: the item, or what its verdicts need.
Context = TypeVar("Context")

Step = Literal["quit", "skip"]
# What a choice's follow-up returns instead of a verdict: stop, or ask for the verdict again.
FollowUp = Literal["quit", "back"]


# A line a review says: a string is rich markup the kind wrote, with no data in it; a line
# that shows data is Text (`testaug.core.console_text.styled`), printed as it is.
Line = str | Text


@dataclass(frozen=True)
class SessionWords:
    """What a session says, as format strings of rich markup: `heading` takes {position},
    {total} and {before}; `end` takes {shown} and {before}. `highlight` applies to these and
    the legend (None: the console's own setting)."""

    heading: str
    stopped: str
    end: str
    highlight: bool | None = False


@dataclass(frozen=True)
class Choice(Generic[Verdict]):
    """What one key does: `said` is shown (a `Line`, "" shows nothing; `highlight` as
    rich's, None for the console's setting), then `give` reads any follow-up keys and returns
    the verdict, "quit", or "back" to ask again."""

    said: Line
    give: Callable[[KeyReader, Console], Verdict | FollowUp]
    highlight: bool | None = None


def verdict_choice(
    said: Line, verdict: Callable[[], Verdict], *, highlight: bool | None = None
) -> Choice[Verdict]:
    """A key that gives the verdict `verdict()` makes when it is pressed (so a verdict's
    time is the key's), with no follow-up."""
    return Choice(said, lambda read_key, console: verdict(), highlight)


@dataclass(frozen=True)
class Question(Generic[Verdict]):
    """The verdict keys offered for one item (each text a `Line`). `otherwise` is what any
    other key does: a choice of its own, or a hint said before the prompt comes again."""

    legend: Line
    prompt: Line
    choices: Mapping[str, Choice[Verdict]]
    otherwise: Choice[Verdict] | Line


class ReviewKind(Protocol[ItemIn, VerdictOut]):
    """What a review needs from its kind of item."""

    @property
    def words(self) -> SessionWords:
        """What the session says around the items."""
        ...

    def key(self, item: ItemIn) -> str:
        """The item's stable key, as verdict files name judged items."""
        ...

    def show(self, item: ItemIn, console: Console) -> None:
        """The screen for one item."""
        ...

    def question(self, item: ItemIn) -> Question[VerdictOut]:
        """The keys a person can press for this item, and the verdict each gives."""
        ...


@dataclass(frozen=True)
class SessionRun(Generic[Verdict]):
    """The verdicts a session saved, how many items it skipped and how many it queued."""

    verdicts: list[Verdict]
    skipped: int
    queued: int
    quit: bool

    @property
    def remaining(self) -> int:
        """Queued items still without a verdict (skipped or not reached)."""
        return self.queued - len(self.verdicts)


def review_in_terminal(
    items: Sequence[Item],
    kind: ReviewKind[Item, Verdict],
    *,
    done: Collection[str],
    read_key: KeyReader,
    console: Console,
    save: Callable[[Verdict], None],
) -> SessionRun[Verdict]:
    """Show each item whose key is not in `done`, in the given order, ask for its verdict and
    hand each verdict to `save` at once; `s` passes an item, `q` or the end of input stops."""
    words = kind.words
    queue = [item for item in items if kind.key(item) not in done]
    before = len(items) - len(queue)
    verdicts: list[Verdict] = []
    skipped = 0
    for position, item in enumerate(queue, start=1):
        heading = words.heading.format(position=position, total=len(queue), before=before)
        say(console, heading, highlight=words.highlight)
        kind.show(item, console)
        outcome = _ask(kind.question(item), read_key, console, highlight=words.highlight)
        if outcome == "quit":
            say(console, words.stopped)
            return SessionRun(verdicts, skipped, len(queue), quit=True)
        if outcome == "skip":
            skipped += 1
            continue
        save(outcome)  # type: ignore[arg-type]
        verdicts.append(outcome)  # type: ignore[arg-type]
    say(console, words.end.format(shown=len(queue), before=before), highlight=words.highlight)
    return SessionRun(verdicts, skipped, len(queue), quit=False)


def say(console: Console, line: Line, *, highlight: bool | None = None, end: str = "\n") -> None:
    """Print a `Line` of a review: a string as the kind's markup, Text as it is."""
    if isinstance(line, str):
        console.print(line, markup=True, emoji=False, highlight=highlight, end=end)
    else:
        console.print(line, end=end)


def _ask(
    question: Question[Verdict],
    read_key: KeyReader,
    console: Console,
    *,
    highlight: bool | None = False,
) -> Verdict | Step:
    """A verdict, or "skip" / "quit", from the keys read: the legend, then the prompt until a
    key gives an outcome (a choice that goes "back" shows the legend again)."""
    say(console, question.legend, highlight=highlight)
    while True:
        say(console, question.prompt, end="")
        key = read_key()
        if (step := stop_or_skip(key, console)) is not None:
            return step
        choice = question.choices.get(key)
        if choice is None:
            if not isinstance(question.otherwise, Choice):
                say(console, question.otherwise)
                continue
            choice = question.otherwise
        if choice.said:
            say(console, choice.said, highlight=choice.highlight)
        outcome = choice.give(read_key, console)
        if outcome == "back":
            say(console, question.legend, highlight=highlight)
            continue
        return outcome


def stop_or_skip(key: str, console: Console) -> Step | None:
    """ "quit" for `q` or the end of input, "skip" for `s` (each said on the console);
    None for any other key."""
    if key in ("", "q"):
        console.print("quit")
        return "quit"
    if key == "s":
        console.print("skipped")
        return "skip"
    return None


@dataclass(frozen=True)
class Problem:
    """Why a task, or one answer to it, gives no verdict (said after "task <id>: ")."""

    text: str


@dataclass(frozen=True)
class Flawed(Generic[Context]):
    """A task read with a flaw worth saying (the Problem) whose answers still give verdicts
    (the context)."""

    context: Context
    problem: Problem


class LabelStudioKind(Protocol[ItemIn, Context, VerdictOut]):
    """What a review in Label Studio needs from its kind of item."""

    @property
    def task_key(self) -> str:
        """The field of a task's data that names its item: a project holds one task per key."""
        ...

    @property
    def label_config(self) -> str:
        """The labeling interface of a new project."""
        ...

    @property
    def description(self) -> str:
        """A new project's description."""
        ...

    @property
    def instructions(self) -> str:
        """A new project's instructions to annotators (HTML)."""
        ...

    def task(self, item: ItemIn, rank: int) -> dict[str, Any]:
        """The task for an item; `rank` is its place in the push, from 1."""
        ...

    def read_task(self, task: Mapping[str, Any]) -> Context | Flawed[Context] | Problem:
        """What an exported task carries for its verdicts (with a flaw, if it has one), or
        why it cannot give any."""
        ...

    def verdict(
        self, context: Context, answer: Mapping[str, Any], users: Mapping[int, str]
    ) -> VerdictOut | Problem | None:
        """The verdict of one answer; None when it holds none, a Problem when that is worth
        saying (both are counted as unanswered)."""
        ...


def push_items(
    studio: LabelStudio,
    project: str,
    kind: LabelStudioKind[Item, Any, Any],
    items: Sequence[Item],
    *,
    record: Path | None = None,
) -> TaskPush:
    """Import items, in the given order, into a project (created with the kind's interface
    if needed), skipping those it already has: pushing twice imports nothing twice. With a
    `record`, the project is the one it names, and one found or created is recorded there."""
    return push_tasks(
        studio,
        project,
        [kind.task(item, rank) for rank, item in enumerate(items, start=1)],
        key=kind.task_key,
        label_config=kind.label_config,
        description=kind.description,
        instructions=kind.instructions,
        record=record,
    )


@dataclass
class LabelStudioReading(Generic[Context, Verdict]):
    """Verdicts read from an export, what each task carried (by its key), and what could not
    become a verdict."""

    verdicts: list[Verdict] = field(default_factory=list)
    contexts: dict[Any, Context] = field(default_factory=dict)
    cancelled: int = 0
    unanswered: int = 0
    problems: list[str] = field(default_factory=list)


def read_tasks(
    kind: LabelStudioKind[Any, Context, Verdict],
    tasks: Iterable[Mapping[str, Any]],
    users: Mapping[int, str],
) -> LabelStudioReading[Context, Verdict]:
    """Verdicts from the tasks of a Label Studio JSON export. Skipped (cancelled) answers and
    ones without a verdict are counted, not turned into verdicts; tasks the kind cannot read
    and answers it finds a problem with are listed as problems."""
    reading: LabelStudioReading[Context, Verdict] = LabelStudioReading()
    for task in tasks:
        context = kind.read_task(task)
        if isinstance(context, Problem):
            reading.problems.append(f"task {task.get('id')}: {context.text}")
            continue
        if isinstance(context, Flawed):
            reading.problems.append(f"task {task.get('id')}: {context.problem.text}")
            context = context.context
        reading.contexts[(task.get("data") or {}).get(kind.task_key)] = context
        verdict = partial(_verdict, kind, context, users, reading.problems, task.get("id"))
        cancelled, unanswered = tally_answers(task, verdict, reading.verdicts)
        reading.cancelled += cancelled
        reading.unanswered += unanswered
    return reading


def _verdict(
    kind: LabelStudioKind[Any, Context, Verdict],
    context: Context,
    users: Mapping[int, str],
    problems: list[str],
    task_id: Any,
    answer: Mapping[str, Any],
) -> Verdict | None:
    found = kind.verdict(context, answer, users)
    if isinstance(found, Problem):
        problems.append(f"task {task_id}: {found.text}")
        return None
    return found


def read_export(
    studio: LabelStudio,
    project: str,
    kind: LabelStudioKind[Any, Context, Verdict],
    *,
    record: Path | None = None,
) -> LabelStudioReading[Context, Verdict]:
    """Every verdict people gave in a project of this kind so far (with a `record`, in the
    project it names)."""
    return pull_export(studio, project, partial(read_tasks, kind), record=record)
