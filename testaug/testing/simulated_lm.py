"""A simulated LM that continues a list of tests with valid cases near its last items.

For benchmarks of the adaptive testing loop (issue 18) where a real LM's invalid text
must not decide the comparison. `SimulatedLM(suite)` is a reply script for
`ScriptedOpenAIServer`: given a prompt in AdaTest's notation (`testaug.adaptive.prompting`,
whose quotes, separator, stop sequence and comparator reader it uses, so a change there
reaches it) and a sample index, it reads the prompt's items, finds the template
and slot fills behind the last one or two, and answers with one case from the same
description's template product (every case its templates expand to) that is near them:
one slot refilled with another word of its lexicon, or, less often, a sibling template
keeping the fills they share. The reply is the next list item in the prompt's notation.

It never sees failure scores or topics, only the prompt text, and it is deterministic
per (prompt, sample index, seed). Single-text suites only (templates without a pair).
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from testaug.adaptive.prompting import QUOTE, SEPARATOR, STOP, clean, read_comparator
from testaug.core.records import Description, Suite, Template, label_options
from testaug.suites.articles import with_article
from testaug.suites.inflection import inflect
from testaug.suites.templates import Slot, fill_space, lexicon_of, parse, render, tags

SWITCH_TEMPLATE = 0.25  # how often a reply moves to a sibling template rather than a new word
LAST_WEIGHTS = (2.0, 1.0)  # how strongly the last and the second-to-last item steer a reply
RETRIES = 20  # tries for a case the prompt does not hold already


def _form(word: str, option: str | None) -> str:
    """A lexicon word as a slot with `option` writes it (the rule of `templates.render`)."""
    if option == "a":
        return with_article(word)
    if option == "A":
        return with_article(word, capital=True)
    if option == "cap":
        return word[:1].upper() + word[1:]
    if option is not None:
        return inflect(word, option)
    return word


@dataclass
class TemplateIndex:
    """One template: a regex that reads its slot fills back from a text."""

    template: Template
    words: dict[str, tuple[str, ...]]
    description: Description
    _slots: list[Slot] = field(default_factory=list, init=False)
    _forms: list[dict[str, list[str]]] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        if self.template.text_pair is not None:
            raise ValueError("the simulated LM reads single-text templates only")
        pattern = []
        for part in parse(self.template.text):
            if isinstance(part, str):
                pattern.append(re.escape(part))
                continue
            forms: dict[str, list[str]] = {}
            for word in self.words[part.lexicon]:
                forms.setdefault(_form(word, part.option), []).append(word)
            self._slots.append(part)
            self._forms.append(forms)
            options = sorted(forms, key=len, reverse=True)
            pattern.append(f"({'|'.join(re.escape(o) for o in options)})")
        self._regex = re.compile("".join(pattern))

    @cached_property
    def tags(self) -> tuple[str, ...]:
        return tags(self.template.text)

    @cached_property
    def count(self) -> int:
        """The size of the template's product."""
        space = fill_space(self.tags, self.words, self.template.distinct_copies)
        return space.count

    def locate(self, text: str) -> dict[str, str] | None:
        """The fills that render `text` from this template, or None when none does."""
        match = self._regex.fullmatch(text)
        if match is None:
            return None
        choices: dict[str, set[str]] = {}
        for slot, forms, written in zip(self._slots, self._forms, match.groups(), strict=True):
            words = set(forms[written])
            choices[slot.tag] = choices.get(slot.tag, words) & words
        fills: dict[str, str] = {}
        for tag in self.tags:
            if not choices[tag]:
                return None
            fills[tag] = sorted(choices[tag])[0]
        return fills if self.holds(fills, text) else None

    def holds(self, fills: dict[str, str], text: str) -> bool:
        """True when `fills` is in the product (distinct copies distinct) and renders `text`."""
        if self.template.distinct_copies:
            by_lexicon: dict[str, list[str]] = {}
            for tag, word in fills.items():
                by_lexicon.setdefault(lexicon_of(tag), []).append(word)
            if any(len(set(ws)) != len(ws) for ws in by_lexicon.values()):
                return False
        return render(self.template.text, fills) == text

    def random_fills(self, rng: random.Random) -> dict[str, str]:
        """A uniformly drawn fill of the product."""
        space = fill_space(self.tags, self.words, self.template.distinct_copies)
        return space.fill(rng.randrange(space.count))

    def refill(self, fills: dict[str, str], keep: dict[str, str], rng: random.Random) -> None:
        """Fill the tags `fills` lacks at random, keeping copies of a lexicon distinct."""
        for tag in self.tags:
            if tag in fills:
                continue
            if tag in keep:
                fills[tag] = keep[tag]
                continue
            taken = {w for t, w in fills.items() if lexicon_of(t) == lexicon_of(tag)}
            pool = [w for w in self.words[lexicon_of(tag)] if w not in taken]
            fills[tag] = rng.choice(pool)


@dataclass(frozen=True)
class Located:
    """A text read back as a template's fill."""

    index: TemplateIndex
    fills: dict[str, str]


class TemplateProducts:
    """Every description's template product, read without being built."""

    def __init__(self, suite: Suite) -> None:
        self.suite = suite
        words = suite.words()
        self.templates = [
            TemplateIndex(template, words, description)
            for description in suite.descriptions()
            for template in description.templates
        ]
        self._by_description: dict[str, list[TemplateIndex]] = {}
        for index in self.templates:
            self._by_description.setdefault(index.description.id, []).append(index)

    def descriptions(self) -> list[Description]:
        """The suite's descriptions, in order."""
        return self.suite.descriptions()

    def locate(self, text: str, description_id: str | None = None) -> Located | None:
        """The first template (of one description, or any) whose product holds `text`."""
        pool = self.templates if description_id is None else self._by_description[description_id]
        for index in pool:
            fills = index.locate(text.strip())
            if fills is not None:
                return Located(index, fills)
        return None

    def contains(self, text: str, description_id: str, label: str | None = None) -> bool:
        """True when `text` is in the description's product (with `label` among the
        expected labels of the template that makes it, when given)."""
        return any(
            index.locate(text.strip()) is not None
            and (label is None or label in label_options(index.template.label))
            for index in self._by_description[description_id]
        )

    def sample(self, rng: random.Random, description_id: str | None = None) -> Located:
        """A case drawn uniformly from a description's product (or the whole suite's)."""
        pool = self.templates if description_id is None else self._by_description[description_id]
        index = rng.choices(pool, weights=[i.count for i in pool])[0]
        return Located(index, index.random_fills(rng))

    def neighbour(self, near: Located, rng: random.Random) -> Located:
        """A case of the same description one step from `near`: one slot refilled, or a
        sibling template keeping the fills they share."""
        siblings = [
            i for i in self._by_description[near.index.description.id] if i is not near.index
        ]
        slots = near.index.tags
        if siblings and (not slots or rng.random() < SWITCH_TEMPLATE):
            index = rng.choice(siblings)
            fills: dict[str, str] = {}
            index.refill(fills, near.fills, rng)
            return Located(index, fills)
        changed = rng.choice(slots)
        fills = {tag: word for tag, word in near.fills.items() if tag != changed}
        taken = {w for t, w in fills.items() if lexicon_of(t) == lexicon_of(changed)}
        pool = [
            w
            for w in near.index.words[lexicon_of(changed)]
            if w != near.fills[changed] and w not in taken
        ]
        fills[changed] = rng.choice(pool) if pool else near.fills[changed]
        return Located(near.index, fills)


def render_located(located: Located) -> str:
    """The text of a located fill."""
    return render(located.index.template.text, located.fills)


def reply_rng(prompt: str, index: int, seed: int) -> random.Random:
    """The generator for one sample: seeded by (prompt, sample index, seed) alone."""
    digest = hashlib.sha256(f"{seed}\x00{index}\x00{prompt}".encode()).hexdigest()
    return random.Random(digest)


class SimulatedLM:
    """A reply script: `SimulatedLM(suite)(prompt, index)` continues the prompt's list with a
    valid case near its last items, in the prompt's notation (see the module docstring)."""

    def __init__(self, suite: Suite, *, seed: int = 0) -> None:
        self.products = TemplateProducts(suite)
        self.seed = seed

    def choose(self, items: Sequence[str], rng: random.Random) -> Located:
        """The case to answer with: near the last one or two items the suite's templates make,
        else a random case of the description most items come from (or of the suite)."""
        located = [self.products.locate(text) for text in items]
        known = [loc for loc in located if loc is not None]
        tail = [
            (loc, weight)
            for loc, weight in zip(reversed(located), LAST_WEIGHTS, strict=False)
            if loc is not None
        ]
        seen = {text.strip() for text in items}
        if tail:
            for _ in range(RETRIES):
                near = rng.choices([loc for loc, _ in tail], weights=[w for _, w in tail])[0]
                out = self.products.neighbour(near, rng)
                if render_located(out) not in seen:
                    return out
        description = None
        if known:
            ids = [loc.index.description.id for loc in known]
            description = max(set(ids), key=ids.count)
        out = self.products.sample(rng, description)
        for _ in range(RETRIES):
            if render_located(out) not in seen:
                break
            out = self.products.sample(rng, description)
        return out

    def reply(self, prompt: str, index: int) -> str:
        """The continuation of `prompt` for sample `index`: one item in its notation."""
        items = prompt_items(prompt)
        located = self.choose([item[0] for item in items], reply_rng(prompt, index, self.seed))
        label = "|".join(label_options(located.index.template.label))
        return continuation(items, render_located(located), label)

    __call__ = reply


def prompt_items(prompt: str) -> list[list[str]]:
    """The fields of each complete line of a prompt in AdaTest's notation
    (`testaug.adaptive.prompting`), in prompt order; the open last line is left out."""
    lines = prompt.split(STOP)[:-1]
    items = []
    for line in lines:
        line = line.strip("\n")
        if line.startswith(QUOTE):
            line = line[len(QUOTE) :]
        items.append(line.split(SEPARATOR))
    return items


def continuation(items: Sequence[Sequence[str]], text: str, label: str) -> str:
    """One new line with the fields the prompt's lines show: the input, then "should be"
    where they show a comparator and `label` where they show an output; then `STOP`."""
    fields = [clean(text)]
    shown = list(items[-1][1:]) if items else []
    for value in shown:
        fields.append("should be" if read_comparator(value) is not None else label)
    return SEPARATOR.join(fields) + STOP
