"""The category of a few seed words in WordNet, and its other members.

Seeds such as robin, sparrow, crow, owl and pigeon name a category ("bird") that a masked
sentence alone does not. For nouns and verbs the category is the hypernym that most seeds
share, the most specific one among those: its hyponyms (all levels) are the category's
words. Adjectives have no hypernyms in WordNet. They come in clusters of satellites around
a head ("blue", "green" -> "chromatic"), and many relate to a noun ("Canadian" -> Canada,
"generous" -> generosity). So an adjective category is the cluster heads that two or more
seeds belong to, plus the noun category of the seeds' related nouns (countries, traits)
mapped back to the adjectives related to its members.

Members take the seeds' inflection: plural seeds (elephants, horses) give plural members,
past-tense seeds (loved, liked) past-tense ones.

A category too general to help (more than `max_words` members, e.g. "person") is passed
over for the next most shared, more specific one.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from testaug.editor.candidates import FORMS
from testaug.editor.wordnet import wordnet_pos
from testaug.suites.inflection import inflect

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import Lemma, Synset, WordNetCorpusReader

SENSES = 3  # senses per seed looked at: the first are the common ones
MIN_SHARE = 0.5  # a category must hold at least this share of the seeds (and two)
MAX_WORDS = 2500
MIN_DEPTH = {"n": 4, "v": 0}  # nouns: "entity", "object", "whole"... say nothing


class SeedCategory(BaseModel):
    """The WordNet synsets that the seeds share, how many seeds each holds, and the words."""

    synsets: list[str] = Field(description="WordNet synset names, e.g. bird.n.01")
    names: list[str] = Field(
        default_factory=list, description="the category synsets' own lemmas (bird), as in words"
    )
    seeds_covered: int
    words: list[str] = Field(description="member lemmas, most frequent first, seeds left out")


def _senses(wn: WordNetCorpusReader, word: str, letter: str | None) -> list[Synset]:
    key = word.strip().lower().replace(" ", "_")
    synsets = wn.synsets(key, letter)
    if letter == "a":
        synsets = synsets + [s for s in wn.synsets(key, "s") if s not in synsets]
    return synsets[:SENSES]


def _name(lemma: Lemma) -> str:
    return lemma.name().replace("_", " ")


def _ancestors(synset: Synset) -> set[Synset]:
    """The synset and all its hypernyms (instance hypernyms too)."""
    return {synset} | set(synset.closure(lambda s: s.hypernyms() + s.instance_hypernyms()))


def _members(synsets: Iterable[Synset], *, limit: int) -> dict[str, int] | None:
    """Lemma -> summed sense count over the synsets' hyponym trees; None past `limit`."""
    counts: dict[str, int] = {}
    seen: set[Synset] = set()
    stack = list(synsets)
    while stack:
        synset = stack.pop()
        if synset in seen:
            continue
        seen.add(synset)
        for lemma in synset.lemmas():
            counts[_name(lemma)] = counts.get(_name(lemma), 0) + lemma.count()
        if len(counts) > limit:
            return None
        stack.extend(synset.hyponyms() + synset.instance_hyponyms())
    return counts


def _cluster_members(heads: Iterable[Synset]) -> dict[str, int]:
    """Lemma -> sense count over adjective heads and their satellites."""
    counts: dict[str, int] = {}
    for head in heads:
        for synset in [head, *head.similar_tos()]:
            for lemma in synset.lemmas():
                counts[_name(lemma)] = counts.get(_name(lemma), 0) + lemma.count()
    return counts


def _ranked(counts: dict[str, int], seeds: Sequence[str]) -> list[str]:
    skip = {s.strip().lower() for s in seeds}
    return sorted((w for w in counts if w.lower() not in skip), key=lambda w: (-counts[w], w))


def _noun_category(
    senses_per_seed: Sequence[Sequence[Synset]], need: int, *, min_depth: int, limit: int
) -> tuple[Synset, int, dict[str, int]] | None:
    """The most shared, then most specific, hypernym of the seeds' senses whose hyponym tree
    has at most `limit` lemmas: (synset, seeds it holds, member lemma counts)."""
    holders: Counter[Synset] = Counter()
    for senses in senses_per_seed:
        ancestors: set[Synset] = set()
        for synset in senses:
            ancestors |= _ancestors(synset)
        holders.update(ancestors)
    shared = [s for s, n in holders.items() if n >= need and s.min_depth() >= min_depth]
    shared.sort(key=lambda s: (-holders[s], -s.min_depth(), s.name()))
    for synset in shared:
        counts = _members([synset], limit=limit)
        if counts is not None:
            return synset, holders[synset], counts
    return None


def _related_nouns(synset: Synset) -> list[Synset]:
    """The nouns an adjective sense relates to: its attributes, and its lemmas' pertainyms
    and derivations (`Canadian` -> Canada, `generous` -> generosity)."""
    out = list(synset.attributes())
    for lemma in synset.lemmas():
        for other in lemma.pertainyms() + lemma.derivationally_related_forms():
            if other.synset().pos() == "n":
                out.append(other.synset())
    return list(dict.fromkeys(out))


@lru_cache(maxsize=2)
def _adjectives_by_noun(wn: WordNetCorpusReader) -> dict[Synset, list[Lemma]]:
    """Noun synset -> the adjective lemmas related to it (one pass over WordNet's
    adjectives, about 3 s; sense counts are read later, for the few that are used)."""
    index: dict[Synset, list[Lemma]] = {}
    for letter in ("a", "s"):
        for synset in wn.all_synsets(letter):
            nouns = _related_nouns(synset)
            for noun in nouns:
                index.setdefault(noun, []).extend(synset.lemmas())
    return index


def _adjective_category(
    wn: WordNetCorpusReader, seeds: Sequence[str], need: int, *, limit: int
) -> SeedCategory | None:
    senses = [_senses(wn, seed, "a") for seed in seeds]
    heads: Counter[Synset] = Counter()
    for seed_senses in senses:
        heads.update({h for s in seed_senses for h in (s.similar_tos() if s.pos() == "s" else [s])})
    shared_heads = [h for h, n in heads.items() if n >= 2]
    counts = _cluster_members(shared_heads)
    names = [h.name() for h in shared_heads]
    covered = sum(
        any(h in shared_heads for s in seed_senses for h in [s, *s.similar_tos()])
        for seed_senses in senses
    )
    nouns = [[n for s in seed_senses for n in _related_nouns(s)] for seed_senses in senses]
    found = _noun_category(nouns, need, min_depth=MIN_DEPTH["n"], limit=limit)
    if found is not None:
        synset, held, _ = found
        index = _adjectives_by_noun(wn)
        tree = {synset} | set(synset.closure(lambda s: s.hyponyms() + s.instance_hyponyms()))
        for lemma in dict.fromkeys(a for noun in tree for a in index.get(noun, ())):
            counts[_name(lemma)] = counts.get(_name(lemma), 0) + lemma.count()
        names.append(synset.name())
        covered = max(covered, held)
    if not counts:
        return None
    return SeedCategory(synsets=sorted(names), seeds_covered=covered, words=_ranked(counts, seeds))


def _seed_form(wn: WordNetCorpusReader, seeds: Sequence[str], letter: str) -> str | None:
    """The inflection most seeds share (e.g. `nns` for elephants, horses), if most do."""
    votes: Counter[str] = Counter()
    for seed in seeds:
        base = wn.morphy(seed.lower(), letter) or seed.lower()
        for form in FORMS.get(letter, ()):
            if base != seed.lower() and inflect(base, form) == seed.lower():
                votes[form] += 1
                break
    if not votes:
        return None
    form, n = votes.most_common(1)[0]
    return form if n > len(seeds) / 2 else None


def seed_category(
    wn: WordNetCorpusReader,
    seeds: Sequence[str],
    pos: str | None,
    *,
    max_words: int = MAX_WORDS,
) -> SeedCategory | None:
    """The most specific WordNet category that most seeds share, with its words; None when
    fewer than two seeds share one (or every shared one is too general)."""
    letter = wordnet_pos(pos) if pos else "n"
    need = max(2, math.ceil(MIN_SHARE * len(seeds)))
    if len(seeds) < 2:
        return None
    if letter == "a":
        return _adjective_category(wn, seeds, need, limit=max_words)
    if letter not in MIN_DEPTH:
        return None
    senses = [_senses(wn, seed, letter) for seed in seeds]
    found = _noun_category(senses, need, min_depth=MIN_DEPTH[letter], limit=max_words)
    if found is None:
        return None
    synset, held, counts = found
    form = _seed_form(wn, seeds, letter)
    words = _ranked(counts, seeds)
    names = [_name(lemma) for lemma in synset.lemmas()]
    if form is not None:
        skip = {s.strip().lower() for s in seeds}
        inflected = (inflect(w, form) for w in words)
        words = [w for w in dict.fromkeys(inflected) if w.lower() not in skip]
        names = [inflect(name, form) for name in names]
    return SeedCategory(synsets=[synset.name()], names=names, seeds_covered=held, words=words)
