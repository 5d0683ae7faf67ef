"""A terminal annotation loop (TestAug, Figure 4): label generated cases one key at a time.

Each candidate is shown with the guidelines, its test-case description, the proposed
label, up to three seed cases and the generated sentence (pair). Enter or `y` marks it
valid; `n` or any other unlisted key marks it invalid and asks for the reason (and, when
the label is wrong, the corrected label). Every verdict is handed to `save` at once.
The loop is the review kernel's (testaug.review.kernel); this module adds the candidates'
kind of item and the key reader every terminal review uses.
"""

from __future__ import annotations

import codecs
import os
import select
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TextIO

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from testaug.core.console_text import styled
from testaug.core.records import (
    Annotation,
    InvalidReason,
    Label,
    RankedCandidate,
    TestCase,
    label_options,
)
from testaug.review.kernel import (
    ENTER,
    Choice,
    FollowUp,
    KeyReader,
    Question,
    SessionWords,
    review_in_terminal,
    verdict_choice,
)
from testaug.review.plans import GUIDELINES, INVALID_REASONS

CTRL_C = "\x03"
CTRL_D = "\x04"
ESCAPE = "\x1b"
MAX_EXAMPLES = 3
LEGEND = (
    "[bold]Enter[/]/[bold]y[/] valid · [bold]n[/] or any other key NOT valid · "
    "[bold]s[/] skip · [bold]q[/] quit"
)
# Keys that choose a corrected label: digits first, then letters (never q, which quits).
LABEL_KEYS = "123456789abcdefghijklmnoprstuvwxyz"
REASON_KEYS: dict[str, InvalidReason] = {
    str(i): reason for i, reason in enumerate(INVALID_REASONS, start=1)
}

WORDS = SessionWords(
    heading="\n[bold]case {position} of {total}[/] ({before} done before)",
    stopped="Stopped; the cases left stay pending.",
    end="\nEnd of the queue ({shown} cases shown).",
    highlight=None,
)


def key_reader(stream: TextIO) -> KeyReader:
    """Keys from `stream`: a tty is read key by key in raw mode, anything else char by char.

    On a tty the terminal settings are restored after each key, Enter ("\\r") reads as
    "\\n", Ctrl-C raises KeyboardInterrupt and Ctrl-D reads as end of input. Other streams
    (pipes, files, io.StringIO in tests) give one character per key and "" at the end.
    """
    if stream.isatty():
        return _tty_reader(stream.fileno())
    return lambda: stream.read(1)


def _tty_reader(fd: int) -> KeyReader:
    """A key reader on terminal `fd` that switches to raw mode only while it waits."""
    import termios
    import tty

    def read_key() -> str:
        saved = termios.tcgetattr(fd)
        try:
            tty.setraw(fd, termios.TCSADRAIN)
            key = _read_char(fd)
            if key == ESCAPE:
                _skip_escape_sequence(fd)  # an arrow key is one key, not three
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        if key == CTRL_C:
            raise KeyboardInterrupt
        return {"\r": ENTER, CTRL_D: ""}.get(key, key)

    return read_key


def _read_char(fd: int) -> str:
    """One (UTF-8) character from `fd`; "" when the terminal is closed."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while True:
        byte = os.read(fd, 1)
        if not byte:
            return decoder.decode(b"", final=True)
        char = decoder.decode(byte)
        if char:
            return char


def _skip_escape_sequence(fd: int) -> None:
    """Consume the rest of an escape sequence (arrow, function or Alt key) after ESC."""
    introducer = _waiting_byte(fd)
    if introducer == b"O":
        _waiting_byte(fd)
    elif introducer == b"[":
        while (byte := _waiting_byte(fd)) and not b"@" <= byte <= b"~":
            pass


def _waiting_byte(fd: int) -> bytes:
    """The next byte when it comes at once, as within an escape sequence; else b""."""
    return os.read(fd, 1) if select.select([fd], [], [], 0.02)[0] else b""


@dataclass(frozen=True)
class TerminalSession:
    """What one session did; `remaining` counts the queue's cases still without a verdict."""

    annotated: int
    valid: int
    invalid: int
    skipped: int
    remaining: int
    quit: bool


def annotate_in_terminal(
    queue: Sequence[RankedCandidate],
    *,
    seeds: Mapping[str, TestCase],
    labels: Sequence[str],
    annotator: str,
    done: Collection[str],
    read_key: KeyReader,
    console: Console,
    save: Callable[[Annotation], None],
) -> TerminalSession:
    """Ask for a verdict on each queued candidate not in `done`, saving each one at once.

    `queue` is shown in the given order; `seeds` holds the seed cases that candidates
    point to. `q` or the end of input stops the session; `s` leaves a case pending.
    """
    kind = CandidateKind(seeds=seeds, labels=labels, annotator=annotator)
    run = review_in_terminal(queue, kind, done=done, read_key=read_key, console=console, save=save)
    valid = sum(verdict.valid for verdict in run.verdicts)
    return TerminalSession(
        annotated=len(run.verdicts),
        valid=valid,
        invalid=len(run.verdicts) - valid,
        skipped=run.skipped,
        remaining=run.remaining,
        quit=run.quit,
    )


@dataclass(frozen=True)
class CandidateKind:
    """Ranked candidates as a kind of review item: Enter or `y` valid, any other key not."""

    seeds: Mapping[str, TestCase]
    labels: Sequence[str]
    annotator: str
    words: SessionWords = WORDS

    def key(self, item: RankedCandidate) -> str:
        return item.candidate.id

    def show(self, item: RankedCandidate, console: Console) -> None:
        _show_candidate(item, self.seeds, console)

    def question(self, item: RankedCandidate) -> Question[Annotation]:
        candidate_id = item.candidate.id
        valid = partial(
            Annotation,
            candidate_id=candidate_id,
            valid=True,
            annotator=self.annotator,
            origin="terminal",
        )
        said_valid = "[green]valid[/]"
        return Question(
            legend=LEGEND,
            prompt="Enter - the sentence is valid, Others - the sentence is NOT valid >> Label: ",
            choices={
                ENTER: verdict_choice(said_valid, valid),
                "y": verdict_choice(said_valid, valid),
            },
            otherwise=Choice(
                "[red]NOT valid[/]",
                lambda read_key, console: self._invalid(candidate_id, read_key, console),
            ),
        )

    def _invalid(
        self, candidate_id: str, read_key: KeyReader, console: Console
    ) -> Annotation | FollowUp:
        """The follow-up of an invalid verdict: the reason and, for a wrong label, the label."""
        try:
            reason = _ask_reason(read_key, console)
            corrected = _ask_label(self.labels, read_key, console) if reason == "label" else None
        except _QuitRequested:
            console.print("quit")
            return "quit"
        return Annotation(
            candidate_id=candidate_id,
            valid=False,
            reason=reason,
            corrected_label=corrected,
            annotator=self.annotator,
            origin="terminal",
        )


def _show_candidate(item: RankedCandidate, seeds: Mapping[str, TestCase], console: Console) -> None:
    """The screen for one candidate: guidelines, description, label, examples, sentence(s)."""
    candidate = item.candidate
    console.print(Panel(Text(GUIDELINES), title="Guidelines", expand=False))
    console.print(
        styled("[bold]rank[/] {}   [bold]capability[/] {}", item.rank, candidate.capability)
    )
    console.print(styled("[bold]Test-case description:[/] {}", candidate.description))
    console.print(styled("[bold]Proposed label:[/] {}", format_label(candidate.label)))
    console.print(styled("[bold]Examples:[/]"))
    for seed_id in candidate.seed_case_ids[:MAX_EXAMPLES]:
        seed = seeds.get(seed_id)
        if seed is None:
            console.print(styled("  - (seed case {} not available)", seed_id))
        else:
            _show_texts(seed.text, seed.text_pair, console, bullet="  - ")
    if not candidate.seed_case_ids:
        console.print(Text("  - (no seed cases)"))
    console.print(styled("[bold]Generated:[/]"))
    _show_texts(candidate.text, candidate.text_pair, console, bullet="  ")


def _show_texts(text: str, pair: str | None, console: Console, *, bullet: str) -> None:
    """A sentence, or a pair as "1:" and "2:" lines."""
    if pair is None:
        console.print(Text(bullet + text))
        return
    indent = " " * len(bullet)
    console.print(Text(f"{bullet}1: {text}"))
    console.print(Text(f"{indent}2: {pair}"))


def format_label(label: Label) -> str:
    """An expected label in words: one label, or acceptable labels joined by "or"."""
    return " or ".join(label_options(label))


def _ask_reason(read_key: KeyReader, console: Console) -> InvalidReason:
    """The reason a case is invalid: keys 1-4, Enter for capability (q quits)."""
    for key, reason in REASON_KEYS.items():
        console.print(styled("  [bold]{}[/] {}: {}", key, reason, INVALID_REASONS[reason]))
    while True:
        console.print("Why is it NOT valid? (Enter = capability) >> ", end="")
        key = _sub_prompt_key(read_key)
        reason = "capability" if key == ENTER else REASON_KEYS.get(key)
        if reason is not None:
            console.print(reason)
            return reason
        console.print(f"press 1-{len(REASON_KEYS)}, Enter, or q to quit")


def _ask_label(labels: Sequence[str], read_key: KeyReader, console: Console) -> str | None:
    """The corrected label by its key; Enter for no correction (None), q quits."""
    keys = dict(zip(LABEL_KEYS, labels, strict=False))
    for key, label in keys.items():
        console.print(styled("  [bold]{}[/] {}", key, label))
    while True:
        console.print("Correct label? (Enter = no correction) >> ", end="")
        key = _sub_prompt_key(read_key)
        if key == ENTER:
            console.print("no correction")
            return None
        if key in keys:
            console.print(Text(keys[key]))
            return keys[key]
        console.print(f"press a label's key ({', '.join(keys)}), Enter, or q to quit")


class _QuitRequested(Exception):
    """`q` or the end of input at a follow-up prompt: stop without saving this case."""


def _sub_prompt_key(read_key: KeyReader) -> str:
    """A key at a follow-up prompt; `q` or the end of input stops the session."""
    key = read_key()
    if key in ("", "q"):
        raise _QuitRequested
    return key
