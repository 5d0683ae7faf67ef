"""CheckList's perturbations: each turns one text into zero or more perturbed texts.

Every perturbation is a function `(text, rng, *, n, ...) -> list[str]` that
returns at most `n` perturbed texts, none equal to the input, without repeats;
all randomness comes from `rng`. The entity perturbations (`change_names`,
`change_location`, `change_number`) live in `testaug.evaluation.perturbations.entities`.
`PERTURBATIONS` registers them all by name, in the same kind of registry as backends,
models and ranker members: a plugin adds one with `PERTURBATIONS.add(name, Perturbation(...))`
or an entry point in the `testaug.perturbations` group;
`testaug.evaluation.perturbations.cases.perturb_inputs` applies one to either side of a pair.
"""

from __future__ import annotations

import difflib
import random
import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from testaug.core.errors import TestAugError
from testaug.core.registry import Registry
from testaug.evaluation.perturbations.entities import (
    change_location,
    change_location_joint,
    change_names,
    change_names_joint,
    change_number,
    change_number_joint,
)
from testaug.evaluation.perturbations.vocab import NAME as NEUTRAL_WORDS
from testaug.evaluation.perturbations.vocab import change_neutral_words

Which = Literal["both", "first", "second"]
Inputs = tuple[str, str | None]

# Contracted form -> expanded form (lower case; CheckList's table without the ambiguous "ain't").
CONTRACTIONS: dict[str, str] = {
    "aren't": "are not", "can't": "cannot", "could've": "could have", "couldn't": "could not",
    "didn't": "did not", "doesn't": "does not", "don't": "do not", "hadn't": "had not",
    "hasn't": "has not", "haven't": "have not", "he'd": "he would", "he'll": "he will",
    "he's": "he is", "how'd": "how did", "how'll": "how will", "how's": "how is",
    "i'd": "i would", "i'll": "i will", "i'm": "i am", "i've": "i have", "isn't": "is not",
    "it'd": "it would", "it'll": "it will", "it's": "it is", "might've": "might have",
    "mightn't": "might not", "must've": "must have", "mustn't": "must not",
    "needn't": "need not", "shan't": "shall not", "she'd": "she would", "she'll": "she will",
    "she's": "she is", "should've": "should have", "shouldn't": "should not",
    "that'd": "that would", "that's": "that is", "there'd": "there would",
    "there's": "there is", "they'd": "they would", "they'll": "they will",
    "they're": "they are", "they've": "they have", "wasn't": "was not", "we'd": "we would",
    "we'll": "we will", "we're": "we are", "we've": "we have", "weren't": "were not",
    "what're": "what are", "what's": "what is", "when's": "when is", "where'd": "where did",
    "where's": "where is", "where've": "where have", "who'll": "who will", "who's": "who is",
    "who've": "who have", "why's": "why is", "won't": "will not", "would've": "would have",
    "wouldn't": "would not", "you'd": "you would", "you'll": "you will", "you're": "you are",
    "you've": "you have",
}  # fmt: skip
_TRAILING_PUNCTUATION = ".!?,;:…"
_URL_CHARACTERS = string.ascii_letters + string.digits


# -- character and word perturbations -------------------------------------------------


def typos(text: str, rng: random.Random, *, n: int = 1, typos: int = 1) -> list[str]:
    """Up to n texts, each with `typos` swaps of a character and its right neighbour."""
    out: list[str] = []
    for _ in range(n * 3):  # a few extra tries, as swaps can repeat
        chars = list(text)
        for _ in range(typos):
            swappable = [i for i in range(len(chars) - 1) if chars[i] != chars[i + 1]]
            if not swappable:
                break
            i = rng.choice(swappable)
            chars[i], chars[i + 1] = chars[i + 1], chars[i]
        _add(out, "".join(chars), text)
        if len(out) >= n:
            break
    return out


def _table_pattern(keys: Sequence[str]) -> re.Pattern[str]:
    """A case-insensitive whole-word pattern for the keys, longest first, `'` matching `’` too."""
    ordered = sorted(keys, key=len, reverse=True)
    alternatives = (re.escape(key).replace("'", "['’]") for key in ordered)
    return re.compile(r"\b(" + "|".join(alternatives) + r")\b", re.IGNORECASE)


_EXPAND = _table_pattern(list(CONTRACTIONS))
_EXPANDED = {expanded: contracted for contracted, expanded in CONTRACTIONS.items()}
_CONTRACT = _table_pattern(list(_EXPANDED))


def _same_case(replacement: str, found: str) -> str:
    """The replacement with the found text's first-letter case (and "I" kept upper)."""
    if found[:1].isupper() or re.match(r"i\b", replacement):
        replacement = replacement[:1].upper() + replacement[1:]
    return replacement


def expand_contractions(text: str) -> str:
    """The text with every contraction in the table expanded ("don't" -> "do not")."""
    return _EXPAND.sub(
        lambda m: _same_case(CONTRACTIONS[m.group(0).lower().replace("’", "'")], m.group(0)), text
    )


def contract(text: str) -> str:
    """The text with every expanded form in the table contracted ("do not" -> "don't")."""
    return _CONTRACT.sub(lambda m: _same_case(_EXPANDED[m.group(0).lower()], m.group(0)), text)


def contractions(text: str, rng: random.Random, *, n: int = 2) -> list[str]:
    """The text with contractions expanded, and with expanded forms contracted (when they differ)."""
    out: list[str] = []
    for candidate in (expand_contractions(text), contract(text)):
        _add(out, candidate, text)
    return out[:n]


def strip_punctuation(text: str) -> str:
    """The text without trailing punctuation and whitespace."""
    return text.rstrip().rstrip(_TRAILING_PUNCTUATION + " ")


def punctuation(text: str, rng: random.Random, *, n: int = 2) -> list[str]:
    """CheckList's punctuation: the text without final punctuation, and with a single final '.'."""
    stripped = strip_punctuation(text)
    out: list[str] = []
    for candidate in (stripped, stripped + "."):
        if stripped:
            _add(out, candidate, text)
    return out[:n]


def add_phrase(
    text: str,
    rng: random.Random,
    *,
    phrases: Sequence[str],
    n: int = 1,
    position: Literal["end", "start", "either"] = "end",
) -> list[str]:
    """Up to n texts with a distinct phrase from `phrases` appended, prepended, or either."""
    chosen = rng.sample(list(dict.fromkeys(phrases)), min(n, len(set(phrases))))
    out: list[str] = []
    for phrase in chosen:
        where = rng.choice(("end", "start")) if position == "either" else position
        _add(out, _attach(text, phrase, where == "start"), text)
    return out


def _attach(text: str, extra: str, before: bool) -> str:
    """The text with `extra` before or after it, separated by one space."""
    return f"{extra} {text.lstrip()}" if before else f"{text.rstrip()} {extra}"


def random_url_or_handle(rng: random.Random, length: int = 6) -> str:
    """A random link or Twitter handle in CheckList's style: `https://t.co/PWK1jb`, `@pi9QDK`."""
    prefix = "https://t.co/" if rng.random() < 0.5 else "@"
    return prefix + "".join(rng.choice(_URL_CHARACTERS) for _ in range(length))


def add_random_urls_handles(text: str, rng: random.Random, *, n: int = 1) -> list[str]:
    """Up to n texts, each with a random URL or handle put before or after it."""
    out: list[str] = []
    for _ in range(n):
        extra = random_url_or_handle(rng)
        _add(out, _attach(text, extra, before=rng.random() < 0.5), text)
    return out


def _add(out: list[str], candidate: str, original: str) -> None:
    """Append the candidate unless it equals the original or is already there."""
    if candidate != original and candidate not in out:
        out.append(candidate)


# -- the registry ----------------------------------------------------------------------


@dataclass(frozen=True)
class Perturbation:
    """A named perturbation: its one-text function, and for entity ones the joint form."""

    name: str
    function: Callable[..., list[str]]
    joint: Callable[..., list[tuple[str, ...]]] | None = None

    @property
    def needs_doc(self) -> bool:
        """Whether it reads spaCy entities (and so takes `doc=` / `docs=`)."""
        return self.joint is not None


PERTURBATIONS: Registry[Perturbation] = Registry(
    "perturbation", error=TestAugError, entry_points="testaug.perturbations"
)
for _builtin in (
    Perturbation("typos", typos),
    Perturbation("contractions", contractions),
    Perturbation("change_names", change_names, change_names_joint),
    Perturbation("change_location", change_location, change_location_joint),
    Perturbation("change_number", change_number, change_number_joint),
    Perturbation("punctuation", punctuation),
    Perturbation("add_phrase", add_phrase),
    Perturbation("add_random_urls_handles", add_random_urls_handles),
    Perturbation(NEUTRAL_WORDS, change_neutral_words),
):
    PERTURBATIONS.add(_builtin.name, _builtin)


def get_perturbation(name: str | Perturbation) -> Perturbation:
    """The registered perturbation of that name (a Perturbation is returned as it is)."""
    if isinstance(name, Perturbation):
        return name
    if name not in PERTURBATIONS:
        close = difflib.get_close_matches(name, list(PERTURBATIONS), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise TestAugError(
            f"unknown perturbation {name!r}{hint} (known: {', '.join(PERTURBATIONS)})"
        )
    return PERTURBATIONS.get(name)
