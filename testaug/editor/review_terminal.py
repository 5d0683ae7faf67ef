"""Suggested words reviewed in the terminal, one key per word (CheckList's editor, CL-7).

Words come best-scored first, each in the sentence it was suggested for. With one target
lexicon, Enter or `k` keeps the word in it; with several, a digit 1-9 puts it into that
lexicon (1 also works with one). `d` drops the word, `s` skips it for now and `q` stops.
Every verdict is handed to `save` at once, so a session can stop anywhere and go on later.
Keys come from the terminal annotator's key reader (testaug.review.terminal).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.markup import escape

from testaug.editor.lexicon_verdicts import LexiconVerdict, ReviewWord, one_line
from testaug.review.terminal import ENTER, KeyReader
from testaug.review.terminal_session import SessionWords, Step, run_session, stop_or_skip

WORDS = SessionWords(
    heading="\n[bold]word {position} of {total}[/] ({before} judged before)",
    stopped="Stopped; the words left wait for a verdict.",
    end="\nEnd of the words ({shown} shown, {before} judged before).",
)


@dataclass(frozen=True)
class WordSession:
    """What one session did; `remaining` counts words still without a verdict."""

    judged: int
    kept: int
    dropped: int
    skipped: int
    remaining: int
    quit: bool
    verdicts: tuple[LexiconVerdict, ...] = ()


def legend(lexicons: Sequence[str]) -> str:
    """The keys of a verdict, for the lexicons offered."""
    if len(lexicons) == 1:
        keep = f"[bold]Enter[/]/[bold]k[/] keep in {escape(lexicons[0])}"
    else:
        keep = " · ".join(
            f"[bold]{number}[/] {escape(name)}" for number, name in enumerate(lexicons, start=1)
        )
    return f"{keep} · [bold]d[/] drop · [bold]s[/] skip · [bold]q[/] quit"


def review_words_in_terminal(
    words: Sequence[ReviewWord],
    *,
    lexicons: Sequence[str],
    annotator: str,
    done: Collection[str],
    read_key: KeyReader,
    console: Console,
    save: Callable[[LexiconVerdict], None],
    present: Callable[[str], list[str]] = lambda word: [],
) -> WordSession:
    """Ask for a verdict on every word not in `done`, in the given order, saving each at once.
    `present(word)` names the lexicons that already hold a word (shown beside it)."""
    run = run_session(
        words,
        key=lambda item: item.word,
        done=done,
        show=lambda item: show_word(item, present(item.word), console),
        ask=lambda item: _ask_verdict(item, lexicons, annotator, read_key, console),
        save=save,
        console=console,
        words=WORDS,
    )
    kept = sum(verdict.decision == "keep" for verdict in run.verdicts)
    return WordSession(
        judged=len(run.verdicts),
        kept=kept,
        dropped=len(run.verdicts) - kept,
        skipped=run.skipped,
        remaining=run.remaining,
        quit=run.quit,
        verdicts=tuple(run.verdicts),
    )


def show_word(item: ReviewWord, present: Sequence[str], console: Console) -> None:
    """The screen for one word: the word, its sentence, the masked sentence, score, sources."""
    suggestion = item.suggestion
    where = f"   [dim](already in {escape(', '.join(present))})[/]" if present else ""
    console.print(f"  [bold cyan]{escape(item.word)}[/]{where}", highlight=False)
    console.print(f"  {escape(one_line(item.context))}", highlight=False)
    mask = f" (mask {item.mask + 1})" if len(suggestion.words) > 1 else ""
    sources = ", ".join(suggestion.sources) or "unknown"
    console.print(
        f"  [dim]for {escape(one_line(suggestion.masked))}{mask} · score "
        f"{suggestion.score:.2f} · from {escape(sources)}[/]",
        highlight=False,
    )


def _ask_verdict(
    item: ReviewWord,
    lexicons: Sequence[str],
    annotator: str,
    read_key: KeyReader,
    console: Console,
) -> LexiconVerdict | Step:
    """A verdict, or "skip" / "quit", from the keys read."""
    numbered = {str(number): name for number, name in enumerate(lexicons, start=1)}
    if len(lexicons) == 1:
        numbered |= {ENTER: lexicons[0], "k": lexicons[0]}
    console.print(legend(lexicons), highlight=False)
    while True:
        console.print("Verdict >> ", end="")
        key = read_key()
        if (step := stop_or_skip(key, console)) is not None:
            return step
        if key == "d":
            console.print("[red]dropped[/]")
            return _verdict(item, "drop", None, annotator)
        if key in numbered:
            console.print(f"[green]kept in {escape(numbered[key])}[/]", highlight=False)
            return _verdict(item, "keep", numbered[key], annotator)
        keys = "Enter, k" if len(lexicons) == 1 else f"1-{len(lexicons)}"
        console.print(f"press {keys}, d, s or q")


def _verdict(
    item: ReviewWord, decision: str, lexicon: str | None, annotator: str
) -> LexiconVerdict:
    return LexiconVerdict(
        word=item.word,
        decision=decision,  # type: ignore[arg-type]
        lexicon=lexicon,
        annotator=annotator,
        origin="terminal",
        masked=item.suggestion.masked,
        sources=tuple(item.suggestion.sources),
    )
