"""The template engine: parse `{slot}` templates, count, stream and sample their fills.

Syntax (CheckList's, and more): `{slot}` takes a word from lexicon `slot`;
`{slot1}`, `{slot2}` are numbered copies filled independently (and with distinct
words when `distinct` is on); `{a:slot}` / `{A:slot}` add an indefinite article
chosen by sound; `{cap:slot}` capitalizes the word; `{vbz:slot}`, `{vbd:slot}`,
`{vbn:slot}`, `{vbg:slot}` and `{nns:slot}` inflect a base form by its Penn tag; `{{` and `}}` are literal
braces. The same tag twice, in one text or across a pair, gets the same word.

Fills are numbered 0..count-1 by a mixed-radix code, so a seeded sample of n
fills is drawn by decoding n random indices: the product is never built.
"""

from __future__ import annotations

import math
import random
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from testaug.suites.articles import with_article
from testaug.suites.inflection import TAGS as INFLECTIONS
from testaug.suites.inflection import inflect

OPTIONS = ("a", "A", "cap", *INFLECTIONS)
_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_TAG = re.compile(r"^(?:(?P<option>[^:{}]+):)?(?P<tag>[A-Za-z_][A-Za-z0-9_]*)$")
_COPY_NUMBER = re.compile(r"\d+$")


class TemplateSyntaxError(ValueError):
    """A template string that cannot be parsed; the suite loader adds file and line."""


@dataclass(frozen=True)
class Slot:
    """One `{...}` tag: the tag as written, the lexicon it draws from, its option."""

    tag: str
    lexicon: str
    option: str | None = None


Part = str | Slot


@lru_cache(maxsize=4096)
def parse(template: str) -> tuple[Part, ...]:
    """Split a template into literal strings and slots; raise TemplateSyntaxError."""
    parts: list[Part] = []
    literal: list[str] = []
    pos = 0
    for match in _TOKEN.finditer(template):
        literal.append(template[pos : match.start()])
        pos = match.end()
        token = match.group(0)
        if token in ("{{", "}}"):
            literal.append(token[0])
            continue
        if match.group(1) is None:
            raise TemplateSyntaxError(
                f"unbalanced {token!r} at column {match.start() + 1} (write {token * 2} for a literal brace)"
            )
        tag = _TAG.match(match.group(1).strip())
        if not tag:
            raise TemplateSyntaxError(
                f"bad tag {{{match.group(1)}}}: expected {{name}} or {{option:name}}"
            )
        option = tag.group("option")
        if option is not None and option not in OPTIONS:
            raise TemplateSyntaxError(
                f"unknown option {option!r} in {{{match.group(1)}}}: options are {', '.join(OPTIONS)}"
            )
        if literal:
            parts.append("".join(literal))
            literal = []
        name = tag.group("tag")
        parts.append(Slot(tag=name, lexicon=_COPY_NUMBER.sub("", name), option=option))
    literal.append(template[pos:])
    if "".join(literal):
        parts.append("".join(literal))
    return tuple(parts)


def tags(*templates: str | None) -> tuple[str, ...]:
    """The distinct tags of one template or a pair, in order of first appearance."""
    seen: dict[str, None] = {}
    for template in templates:
        if template is not None:
            for part in parse(template):
                if isinstance(part, Slot):
                    seen.setdefault(part.tag)
    return tuple(seen)


def lexicon_of(tag: str) -> str:
    """The lexicon a tag draws from: `name1` draws from `name`."""
    return _COPY_NUMBER.sub("", tag)


def render(template: str, fills: Mapping[str, str]) -> str:
    """Fill a template's slots from `fills` (tag -> word)."""
    out: list[str] = []
    for part in parse(template):
        if isinstance(part, str):
            out.append(part)
            continue
        word = fills[part.tag]
        if part.option == "a":
            word = with_article(word)
        elif part.option == "A":
            word = with_article(word, capital=True)
        elif part.option == "cap":
            word = word[:1].upper() + word[1:]
        elif part.option in INFLECTIONS:
            word = inflect(word, part.option)
        out.append(word)
    return "".join(out)


@dataclass(frozen=True)
class FillSpace:
    """All fills of a set of tags: groups of copies per lexicon, and their count."""

    groups: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]  # (tags, words) per lexicon
    distinct: bool

    @property
    def radices(self) -> tuple[int, ...]:
        """How many ways each lexicon group can be filled."""
        return tuple(
            _group_size(len(words), len(group_tags), self.distinct)
            for group_tags, words in self.groups
        )

    @property
    def count(self) -> int:
        """The number of distinct fills (the size of the product)."""
        return math.prod(self.radices)

    def fill(self, index: int) -> dict[str, str]:
        """The fill numbered `index` (0 <= index < count)."""
        fills: dict[str, str] = {}
        for (group_tags, words), radix in zip(self.groups, self.radices, strict=True):
            index, code = divmod(index, radix)
            fills.update(_decode_group(code, group_tags, words, self.distinct))
        return fills


def fill_space(
    tag_names: Sequence[str], lexicons: Mapping[str, Sequence[str]], distinct: bool = True
) -> FillSpace:
    """The fill space of `tag_names` over `lexicons` (name -> words); KeyError on an unknown lexicon."""
    grouped: dict[str, list[str]] = {}
    for tag in tag_names:
        grouped.setdefault(lexicon_of(tag), []).append(tag)
    groups = tuple((tuple(group), tuple(lexicons[name])) for name, group in grouped.items())
    return FillSpace(groups=groups, distinct=distinct)


def _group_size(n_words: int, n_tags: int, distinct: bool) -> int:
    return math.perm(n_words, n_tags) if distinct else n_words**n_tags


def _decode_group(
    code: int, group_tags: tuple[str, ...], words: tuple[str, ...], distinct: bool
) -> dict[str, str]:
    """Decode one group's code: independent digits, or a k-permutation when distinct."""
    pool = list(words)
    out = {}
    for tag in group_tags:
        code, digit = divmod(code, len(pool))
        out[tag] = pool.pop(digit) if distinct else pool[digit]
    return out


def iter_fills(space: FillSpace) -> Iterator[dict[str, str]]:
    """Every fill, lazily, in index order."""
    for index in range(space.count):
        yield space.fill(index)


def sample_indices(count: int, n: int, rng: random.Random) -> list[int]:
    """n distinct indices below `count` (all of them when n >= count), in draw order."""
    if n >= count:
        return list(range(count))
    if count <= sys.maxsize:
        return rng.sample(range(count), n)
    chosen: dict[int, None] = {}
    while len(chosen) < n:
        chosen.setdefault(rng.randrange(count))
    return list(chosen)


def sample_fills(space: FillSpace, n: int, rng: random.Random) -> Iterator[dict[str, str]]:
    """A seeded sample of n distinct fills, drawn without building the product."""
    for index in sample_indices(space.count, n, rng):
        yield space.fill(index)


def expand(
    texts: Iterable[str | None],
    lexicons: Mapping[str, Sequence[str]],
    *,
    distinct: bool = True,
    n: int | None = None,
    rng: random.Random | None = None,
) -> Iterator[tuple[tuple[str | None, ...], dict[str, str]]]:
    """Fill one template (or a pair) with every fill, or with a sample of n.

    Yields the rendered texts (None stays None) and the fill that produced them.
    """
    texts = tuple(texts)
    space = fill_space(tags(*texts), lexicons, distinct)
    if n is None:
        fills: Iterable[dict[str, str]] = iter_fills(space)
    else:
        if rng is None:
            raise ValueError("sampling needs an explicit random.Random")
        fills = sample_fills(space, n, rng)
    for fill in fills:
        yield tuple(None if t is None else render(t, fill) for t in texts), fill
