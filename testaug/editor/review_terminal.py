"""Suggested words reviewed in the terminal, one key per word (CheckList's editor).

Words come best-scored first, each in the sentence it was suggested for. With one target
lexicon, Enter or `k` keeps the word in it; with several, a digit 1-9 puts it into that
lexicon (1 also works with one). `d` drops the word, `s` skips it for now and `q` stops.
Every verdict is handed to `save` at once, so a session can stop anywhere and go on later.
The loop is the review kernel's (testaug.review.kernel).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import partial

from rich.console import Console
from rich.text import Text

from testaug.core.console_text import styled
from testaug.editor.lexicon_verdicts import LexiconVerdict, ReviewWord, one_line
from testaug.review.kernel import (
    ENTER,
    KeyReader,
    Question,
    SessionWords,
    review_in_terminal,
    verdict_choice,
)

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


def legend(lexicons: Sequence[str]) -> Text:
    """The keys of a verdict, for the lexicons offered."""
    if len(lexicons) == 1:
        keep = styled("[bold]Enter[/]/[bold]k[/] keep in {}", lexicons[0])
    else:
        keep = Text(" · ").join(
            styled("[bold]{}[/] {}", number, name) for number, name in enumerate(lexicons, start=1)
        )
    return keep + styled(" · [bold]d[/] drop · [bold]s[/] skip · [bold]q[/] quit")


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
    kind = WordKind(lexicons=lexicons, annotator=annotator, present=present)
    run = review_in_terminal(words, kind, done=done, read_key=read_key, console=console, save=save)
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


@dataclass(frozen=True)
class WordKind:
    """Suggested words as a kind of review item: a lexicon's key keeps a word, `d` drops it."""

    lexicons: Sequence[str]
    annotator: str
    present: Callable[[str], list[str]]
    words: SessionWords = WORDS

    def key(self, item: ReviewWord) -> str:
        return item.word

    def show(self, item: ReviewWord, console: Console) -> None:
        show_word(item, self.present(item.word), console)

    def question(self, item: ReviewWord) -> Question[LexiconVerdict]:
        lexicons = self.lexicons
        numbered = {str(number): name for number, name in enumerate(lexicons, start=1)}
        if len(lexicons) == 1:
            numbered |= {ENTER: lexicons[0], "k": lexicons[0]}
        choices = {
            "d": verdict_choice("[red]dropped[/]", partial(self._verdict, item, "drop", None))
        }
        for key, name in numbered.items():
            choices[key] = verdict_choice(
                styled("[green]kept in {}[/]", name),
                partial(self._verdict, item, "keep", name),
                highlight=False,
            )
        keys = "Enter, k" if len(lexicons) == 1 else f"1-{len(lexicons)}"
        return Question(
            legend=legend(lexicons),
            prompt="Verdict >> ",
            choices=choices,
            otherwise=f"press {keys}, d, s or q",
        )

    def _verdict(self, item: ReviewWord, decision: str, lexicon: str | None) -> LexiconVerdict:
        return LexiconVerdict(
            word=item.word,
            decision=decision,  # type: ignore[arg-type]
            lexicon=lexicon,
            annotator=self.annotator,
            origin="terminal",
            masked=item.suggestion.masked,
            sources=tuple(item.suggestion.sources),
        )


def show_word(item: ReviewWord, present: Sequence[str], console: Console) -> None:
    """The screen for one word: the word, its sentence, the masked sentence, score, sources."""
    suggestion = item.suggestion
    line = styled("  [bold cyan]{}[/]", item.word)
    if present:
        line += styled("   [dim](already in {})[/]", ", ".join(present))
    console.print(line)
    console.print(Text("  " + one_line(item.context)))
    mask = f" (mask {item.mask + 1})" if len(suggestion.words) > 1 else ""
    sources = ", ".join(suggestion.sources) or "unknown"
    console.print(
        styled(
            "  [dim]for {}{} · score {:.2f} · from {}[/]",
            one_line(suggestion.masked),
            mask,
            suggestion.score,
            sources,
        )
    )
