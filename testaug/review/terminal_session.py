"""The loop every terminal review shares: one item at a time, each verdict saved at once.

Items already judged (named in `done`) are passed over, so a session can stop anywhere and
go on later. The review of candidates (testaug.review.terminal), of suggested tests
(testaug.adaptive.review_terminal) and of suggested words (testaug.editor.review_terminal)
bring their own screen and verdict keys; `q` or the end of input stops each of them and
`s` skips an item.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from rich.console import Console

Item = TypeVar("Item")
Verdict = TypeVar("Verdict")

Step = Literal["quit", "skip"]


@dataclass(frozen=True)
class SessionWords:
    """What a session says, as format strings: `heading` takes {position}, {total} and
    {before}; `end` takes {shown} and {before}."""

    heading: str
    stopped: str
    end: str
    highlight: bool | None = False  # None: the console's own setting


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


def run_session(
    items: Sequence[Item],
    *,
    key: Callable[[Item], str],
    done: Collection[str],
    show: Callable[[Item], None],
    ask: Callable[[Item], Verdict | Step],
    save: Callable[[Verdict], None],
    console: Console,
    words: SessionWords,
) -> SessionRun[Verdict]:
    """Show each item whose `key` is not in `done`, in the given order, and hand each verdict
    `ask` returns to `save` at once; "skip" passes an item, "quit" stops the session."""
    queue = [item for item in items if key(item) not in done]
    before = len(items) - len(queue)
    verdicts: list[Verdict] = []
    skipped = 0
    for position, item in enumerate(queue, start=1):
        heading = words.heading.format(position=position, total=len(queue), before=before)
        console.print(heading, highlight=words.highlight)
        show(item)
        outcome = ask(item)
        if outcome == "quit":
            console.print(words.stopped)
            return SessionRun(verdicts, skipped, len(queue), quit=True)
        if outcome == "skip":
            skipped += 1
            continue
        save(outcome)  # type: ignore[arg-type]
        verdicts.append(outcome)  # type: ignore[arg-type]
    console.print(words.end.format(shown=len(queue), before=before), highlight=words.highlight)
    return SessionRun(verdicts, skipped, len(queue), quit=False)


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
