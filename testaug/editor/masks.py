"""Masked sentences: `{mask}` slots in a template, as CheckList's editor writes them.

Every `{mask}` is its own slot (two masks get two words); `{a:mask}` / `{A:mask}` put the
right indefinite article before the word, `{cap:mask}` capitalizes it, and the inflection
options (`{vbd:mask}`...) inflect it, as in suite templates. Other `{slot}` tags are
filled with their lexicon's first word: the given (suite) lexicons first, else the built-in
ones (`{first_name}`, `{city}`...), so a suite template or a CheckList call can be masked
as it is.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from testaug.core.errors import TestAugError
from testaug.suites.articles import with_article
from testaug.suites.builtin_lexicons import builtin_lexicons
from testaug.suites.inflection import TAGS as INFLECTIONS
from testaug.suites.inflection import inflect
from testaug.suites.templates import Slot, TemplateSyntaxError, parse

MASK = "mask"


@dataclass(frozen=True)
class MaskedText:
    """A masked sentence split at its masks: `len(literals) == len(options) + 1`."""

    text: str
    literals: tuple[str, ...]
    options: tuple[str | None, ...]  # per mask: a, A, cap, an inflection tag, or None

    @property
    def n_masks(self) -> int:
        """How many masks the sentence has."""
        return len(self.options)

    def form(self, index: int, word: str) -> str:
        """The word as mask `index` shows it: with its article, capital or inflection."""
        option = self.options[index]
        if option == "a":
            return with_article(word)
        if option == "A":
            return with_article(word, capital=True)
        if option == "cap":
            return word[:1].upper() + word[1:]
        if option in INFLECTIONS:
            return inflect(word, option)
        return word

    def after_prefix(self, index: int, word: str) -> str:
        """The word as it follows `prefix(index, ...)`: its form, less the article that the
        prefix already holds for an `{a:mask}`."""
        return word if self.options[index] in ("a", "A") else self.form(index, word)

    def fill(self, words: Sequence[str]) -> str:
        """The sentence with one word per mask in place."""
        if len(words) != self.n_masks:
            raise TestAugError(f"{self.n_masks} masks but {len(words)} words: {list(words)}")
        out = [self.literals[0]]
        for i, word in enumerate(words):
            out += [self.form(i, word), self.literals[i + 1]]
        return "".join(out)

    def prefix(self, index: int, words: Sequence[str]) -> str:
        """The text before mask `index` (earlier masks filled with `words`), including the
        article of an `{a:mask}` as "a" (its sound is not known yet)."""
        out = [self.literals[0]]
        for i in range(index):
            out += [self.form(i, words[i]), self.literals[i + 1]]
        text = "".join(out)
        option = self.options[index]
        if option in ("a", "A"):
            text += ("A" if option == "A" else "a") + " "
        return text


def parse_masked(text: str, lexicons: Mapping[str, Sequence[str]] = {}) -> MaskedText:
    """Split a masked sentence at its masks; other slots take their lexicon's first word."""
    try:
        parts = parse(text)
    except TemplateSyntaxError as exc:
        raise TestAugError(f"bad masked sentence {text!r}: {exc}") from exc
    literals: list[str] = [""]
    options: list[str | None] = []
    for part in parts:
        if isinstance(part, str):
            literals[-1] += part
        elif part.lexicon == MASK:
            options.append(part.option)
            literals.append("")
        else:
            literals[-1] += _other_slot(part, lexicons, text)
    if not options:
        raise TestAugError(f"no {{mask}} in {text!r}: write e.g. 'I really {{mask}} the flight.'")
    return MaskedText(text=text, literals=tuple(literals), options=tuple(options))


def _other_slot(slot: Slot, lexicons: Mapping[str, Sequence[str]], text: str) -> str:
    """A non-mask slot's filler: its lexicon's first word (the suite's lexicon, else the
    built-in one of that name), in the slot's form."""
    builtins = builtin_lexicons()
    words = lexicons.get(slot.lexicon) or (
        builtins[slot.lexicon].words if slot.lexicon in builtins else None
    )
    if not words:
        close = difflib.get_close_matches(slot.lexicon, sorted({*lexicons, *builtins}), n=3)
        hint = f" (did you mean {', '.join(f'{{{c}}}' for c in close)}?)" if close else ""
        raise TestAugError(
            f"unknown slot {{{slot.tag}}} in {text!r}: no lexicon named {slot.lexicon!r}{hint}; "
            f"built-in lexicons: {', '.join(sorted(builtins))}; --suite adds a suite's own "
            "lexicons, and {mask} marks a word to suggest"
        )
    return MaskedText(text="", literals=("", ""), options=(slot.option,)).form(0, words[0])
