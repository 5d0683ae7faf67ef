"""Sparse features of a candidate for the lexical ranker.

Two sets:
- `surface`: the candidate's words, word pairs and character trigrams, the
  description words it reuses, and its length.
- `conditioned` (surface plus): which cue classes (negation, contrast, cause,
  time, comparison, numbers) the candidate holds, crossed with the content words
  of its description; for pairs, which side holds each cue, the word overlap of
  the two sides and the words only one side has; each word crossed with the
  description; the task and proposed label.

Most invalid candidates drop the phenomenon their description asks for (the
negation, the "because" clause) or put it on the wrong side of a pair, which
the surface n-grams alone cannot see.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from typing import Literal

from rankers.members.inputs import document_text, query_text
from testaug.core.records import Candidate

FeatureSet = Literal["surface", "conditioned"]

_WORD = re.compile(r"[a-z0-9']+|[^\sa-z0-9]")

CUE_WORDS: dict[str, frozenset[str]] = {
    "negation": frozenset(
        [
            "not",
            "n't",
            "no",
            "never",
            "nobody",
            "nothing",
            "none",
            "neither",
            "nor",
            "without",
            "cannot",
        ]
    ),
    "contrast": frozenset(["but", "although", "though", "however", "yet", "despite", "while"]),
    "cause": frozenset(["because", "since", "so", "therefore", "thus", "due"]),
    "time": frozenset(
        [
            "before",
            "after",
            "used",
            "now",
            "then",
            "yesterday",
            "today",
            "tomorrow",
            "will",
            "was",
            "were",
            "later",
            "earlier",
            "until",
            "ago",
            "first",
            "last",
        ]
    ),
    "comparison": frozenset(["than", "more", "less", "most", "least", "better", "worse", "same"]),
    "number": frozenset(
        [
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "twenty",
            "hundred",
            "half",
            "twice",
        ]
    ),
}

_STOPWORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "to",
        "and",
        "or",
        "is",
        "it",
        "so",
        "that",
        "this",
        "with",
        "in",
        "on",
        "for",
        "as",
        "be",
        "are",
        "its",
        "by",
        "from",
    ]
)
_PAIR_SIDES = {
    (True, True): "both",
    (True, False): "first",
    (False, True): "second",
    (False, False): "neither",
}


def words_of(text: str) -> list[str]:
    """Lower-cased words and punctuation marks of `text`."""
    return _WORD.findall(text.lower())


def cues_of(words: list[str]) -> set[str]:
    """The cue classes that `words` hold."""
    found = {cue for cue, vocabulary in CUE_WORDS.items() if not vocabulary.isdisjoint(words)}
    if any(word.endswith("n't") for word in words):
        found.add("negation")
    if any(word.isdigit() for word in words):
        found.add("number")
    return found


def description_keys(candidate: Candidate) -> set[str]:
    """Content words of the description, cut to six letters (a crude stem)."""
    return {
        word[:6]
        for word in words_of(candidate.description)
        if word.isalpha() and word not in _STOPWORDS
    }


def surface_features(candidate: Candidate) -> Counter[str]:
    """The candidate's n-grams, the description words it reuses, and its length."""
    text = document_text(candidate).lower()
    words = words_of(text)
    grams: Counter[str] = Counter(f"w:{w}" for w in words)
    grams.update(f"b:{a}_{b}" for a, b in itertools.pairwise(words))
    padded = f" {text} "
    grams.update(f"c:{padded[i : i + 3]}" for i in range(len(padded) - 2))
    description = set(words_of(query_text(candidate)))
    grams.update(f"q:{w}" for w in set(words) & description)
    grams[f"len:{min(len(words) // 4, 8)}"] += 1
    return grams


def _cue_states(candidate: Candidate) -> dict[str, str]:
    """Each cue class's state: present or absent, or for pairs, which side holds it."""
    if candidate.text_pair is None:
        found = cues_of(words_of(candidate.text))
        return {cue: "yes" if cue in found else "no" for cue in CUE_WORDS}
    first = cues_of(words_of(candidate.text))
    second = cues_of(words_of(candidate.text_pair))
    return {cue: _PAIR_SIDES[(cue in first, cue in second)] for cue in CUE_WORDS}


def conditioned_features(candidate: Candidate) -> Counter[str]:
    """Surface features plus features that tie the candidate to its description and label."""
    grams = surface_features(candidate)
    keys = description_keys(candidate)
    for cue, state in _cue_states(candidate).items():
        grams[f"cue:{cue}:{state}"] += 1
        grams.update(f"x:{key}:{cue}:{state}" for key in keys)
    if candidate.text_pair is not None:
        first = set(words_of(candidate.text))
        second = set(words_of(candidate.text_pair))
        overlap = len(first & second) / max(len(first | second), 1)
        grams[f"overlap:{int(overlap * 5)}"] += 1
        grams.update(f"only1:{w}" for w in first - second)
        grams.update(f"only2:{w}" for w in second - first)
    grams.update(
        f"d:{candidate.description_id}:{w}" for w in set(words_of(document_text(candidate)))
    )
    grams[f"label:{candidate.task}:{candidate.label}"] += 1
    return grams


def features(candidate: Candidate, feature_set: FeatureSet) -> Counter[str]:
    """The sparse features of `candidate` in the named set."""
    if feature_set == "surface":
        return surface_features(candidate)
    return conditioned_features(candidate)
