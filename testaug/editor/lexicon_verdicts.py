"""People's verdicts on suggested words: which lexicon a word joins, or none (dropped).

Suggestions (testaug.editor.suggestion) become one review item per distinct word: a
suggestion for several masks gives one word per mask, and a word suggested in several
sentences is reviewed once, in the context of its best-scored sentence. Verdicts are kept
one per word and annotator in a JSONL file, saved as they are given; when people disagree,
the latest verdict on a word counts. A word is stored stripped of surrounding white space,
and an empty one, or one with a line break or control character, is refused; the file is
changed under its write lock.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator

from testaug.core.errors import InputError, Problem
from testaug.core.file_lock import locked
from testaug.core.jsonl import read_numbered_jsonl, write_jsonl
from testaug.core.records import Record
from testaug.core.runs import remove_stale_temporaries
from testaug.editor.suggestion import WordSuggestion
from testaug.suites.lexicons import LEXICON_NAME

WordDecision = Literal["keep", "drop"]
MAX_LEXICONS = 9  # one digit key each in the terminal
NOT_IN_A_WORD = ("Cc", "Cs", "Zl", "Zp")  # control characters, surrogates, line breaks


class LexiconVerdict(Record):
    """One person's verdict on a suggested word: kept into a lexicon, or dropped."""

    word: str
    decision: WordDecision
    lexicon: str | None = None  # set exactly when the word is kept
    annotator: str
    origin: Literal["terminal", "label-studio", "file"] = "terminal"
    masked: str = ""  # the masked sentence the word was suggested for
    sources: tuple[str, ...] = ()  # where the suggestion came from (wordnet, lm, ...)
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))

    @field_validator("word")
    @classmethod
    def _a_word(cls, word: str) -> str:
        word = word.strip()
        if not word:
            raise ValueError("no word: empty or only white space")
        reason = word_problem(word)
        if reason:
            raise ValueError(reason)
        return word

    @model_validator(mode="after")
    def _lexicon_when_kept(self) -> LexiconVerdict:
        if (self.decision == "keep") != (self.lexicon is not None):
            raise ValueError("a kept word names its lexicon; a dropped word names none")
        return self


@dataclass(frozen=True)
class ReviewWord:
    """A word to review, in the context of the suggestion that scored it best."""

    word: str
    mask: int  # which mask of the sentence the word fills (0 for the first)
    suggestion: WordSuggestion

    @property
    def context(self) -> str:
        """The sentence with every mask filled by this suggestion."""
        return self.suggestion.filled


def review_words(suggestions: Iterable[WordSuggestion]) -> list[ReviewWord]:
    """One item per distinct word, best score first (ties keep file order); a suggestion for
    several masks offers each of its words."""
    best: dict[str, ReviewWord] = {}
    for suggestion in suggestions:
        for mask, word in enumerate(suggestion.words):
            word = word.strip()
            if not word:
                continue
            known = best.get(word)
            if known is None or suggestion.score > known.suggestion.score:
                best[word] = ReviewWord(word, mask, suggestion)
    return sorted(best.values(), key=lambda item: -item.suggestion.score)


def word_problem(word: str) -> str | None:
    """Why `word` cannot go into a lexicon (a lexicon word is one line of text a YAML file
    can hold: no line break, control character, surrogate, U+FFFE or U+FFFF), or None when
    it can."""
    bad = next(
        (c for c in word if c in "\ufffe\uffff" or unicodedata.category(c) in NOT_IN_A_WORD), None
    )
    if bad is None:
        return None
    return f"{word!r} holds {bad!r}: a lexicon word is one line of text a YAML file can hold"


def read_word_suggestions(path: Path) -> list[WordSuggestion]:
    """The suggestions of a file written by `testaug lexicon suggest -o`; errors name file,
    line and field (a word no lexicon can hold among them)."""
    suggestions, problems = [], []
    for line, suggestion in read_numbered_jsonl(path, WordSuggestion):
        suggestions.append(suggestion)
        for index, word in enumerate(suggestion.words):
            reason = word_problem(word.strip())
            if reason:
                problems.append(Problem(reason, path, line, f"words[{index}]"))
    if problems:
        raise InputError(problems)
    return suggestions


def lexicon_name_problem(name: str) -> str | None:
    """Why `name` cannot name a lexicon, or None when it can."""
    if LEXICON_NAME.match(name) and not name[-1].isdigit():
        return None
    return (
        f"{name!r} is not a lexicon name: letters, digits and _, starting with a "
        "letter or _ and not ending in a digit"
    )


def check_lexicon_names(
    names: Sequence[str], *, most: int | None = MAX_LEXICONS, field: str = "--into"
) -> list[str]:
    """The lexicons words may go into, checked: valid names, no repeats, at least one and at
    most `most` (one digit key each in the terminal); problems name `field`."""
    problems = []
    if not names:
        problems.append(Problem("name at least one lexicon to put words into (--into NAME)"))
    if most is not None and len(names) > most:
        problems.append(Problem(f"at most {most} lexicons at once, got {len(names)}"))
    for name in names:
        reason = lexicon_name_problem(name)
        if reason:
            problems.append(Problem(reason, field=field))
    if len(set(names)) != len(names):
        problems.append(Problem("a lexicon is named twice", field=field))
    if problems:
        raise InputError(problems)
    return list(names)


def read_verdicts(path: Path) -> list[LexiconVerdict]:
    """The verdicts in a file (none when it does not exist yet); errors name file and line."""
    return [verdict for _, verdict in read_numbered_verdicts(path)]


def read_numbered_verdicts(path: Path) -> list[tuple[int, LexiconVerdict]]:
    """(line, verdict) for each verdict in a file (none when it does not exist yet)."""
    return list(read_numbered_jsonl(path, LexiconVerdict)) if path.exists() else []


def check_kept_lexicons(path: Path, numbered: Sequence[tuple[int, LexiconVerdict]]) -> None:
    """Refuse verdicts (read from `path`) that keep a word in a lexicon no lexicon can be
    named, the latest verdict per word counting: InputError naming file, line and field."""
    lines = {verdict: line for line, verdict in numbered}
    problems = []
    for verdict in kept(verdict for _, verdict in numbered):
        reason = lexicon_name_problem(verdict.lexicon or "")
        if reason:
            problems.append(Problem(reason, path, lines.get(verdict), "lexicon"))
    if problems:
        raise InputError(problems)


@dataclass(frozen=True)
class VerdictUpdate:
    """Verdicts after a merge, and the incoming ones that were new or changed an earlier one."""

    verdicts: list[LexiconVerdict]
    fresh: list[LexiconVerdict]


def _same(a: LexiconVerdict, b: LexiconVerdict) -> bool:
    return (a.decision, a.lexicon) == (b.decision, b.lexicon)


def save_verdicts(path: Path, incoming: Iterable[LexiconVerdict]) -> VerdictUpdate:
    """Merge verdicts into the file at `path`, one per word and annotator (an incoming one
    replaces that person's earlier verdict), rewriting it atomically while holding its
    write lock (and removing what killed writes left in its folder)."""
    incoming = list(incoming)
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(path):
        remove_stale_temporaries(path.parent)
        merged = {(v.word, v.annotator): v for v in read_verdicts(path)}
        fresh = []
        for verdict in incoming:
            key = (verdict.word, verdict.annotator)
            before = merged.get(key)
            if before is None or not _same(before, verdict):
                fresh.append(verdict)
                merged[key] = verdict
        if fresh:
            write_jsonl(path, merged.values())
    return VerdictUpdate(list(merged.values()), fresh)


def judged_by(verdicts: Iterable[LexiconVerdict], annotator: str) -> set[str]:
    """The words `annotator` has given a verdict on."""
    return {v.word for v in verdicts if v.annotator == annotator}


def latest_verdicts(verdicts: Iterable[LexiconVerdict]) -> list[LexiconVerdict]:
    """The verdict that counts for each word: the latest one given (by anybody)."""
    latest: dict[str, LexiconVerdict] = {}
    for verdict in verdicts:
        known = latest.get(verdict.word)
        if known is None or verdict.created_at >= known.created_at:
            latest[verdict.word] = verdict
    return list(latest.values())


def kept(verdicts: Iterable[LexiconVerdict]) -> list[LexiconVerdict]:
    """The verdicts that keep a word, the latest verdict per word counting."""
    return [v for v in latest_verdicts(verdicts) if v.decision == "keep"]


_SPACES = re.compile(r"\s+")


def one_line(text: str) -> str:
    """Text on one line (for comments and screens): runs of white space become one space."""
    return _SPACES.sub(" ", text).strip()
