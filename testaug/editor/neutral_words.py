"""Neutral words and their in-context alternatives (CheckList's Vocab+POS INV test).

CheckList replaces neutral words such as "that" or "the" with other words that fit the
context. Here each neutral word has a small fixed set of alternatives
(`NEUTRAL_ALTERNATIVES`); the fill-in scorer decides in which contexts an alternative
fits: the sentence with it must be at most `margin` nats less likely than the original.

Decisions are keyed by the context (previous word, the word, next word, lower case).
`score_contexts` builds the table once over a set of texts; the table shipped with
testaug (`neutral_contexts.json`, built from the bundled suites by
`python -m testaug.editor.neutral_words`) lets the default battery change neutral words
without loading an LM. Contexts the table lacks fall back to the (word, next word) key,
where an alternative counts only if it fitted every context seen with that key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from testaug.editor.scorer import LMScorer

# A fixed small candidate set per neutral word (lower case).
NEUTRAL_ALTERNATIVES: dict[str, tuple[str, ...]] = {
    "the": ("this", "that", "our"),
    "this": ("the", "that"),
    "that": ("this", "the"),
    "these": ("those", "the"),
    "those": ("these", "the"),
    "a": ("one",),
    "very": ("really", "quite"),
    "really": ("truly",),
    "just": ("simply",),
    "it": ("this", "that"),
}
DEFAULT_MARGIN = 3.0
TABLE_PATH = Path(__file__).with_name("neutral_contexts.json")
_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?")

Key = tuple[str, str, str]


class Occurrence(BaseModel):
    """A neutral word in a text: where it is and its context key."""

    start: int
    end: int
    word: str
    previous: str
    following: str

    @property
    def key(self) -> str:
        """The context key: "previous|word|next" in lower case."""
        return f"{self.previous}|{self.word.lower()}|{self.following}"

    @property
    def short_key(self) -> str:
        """The fallback key: "word|next"."""
        return f"{self.word.lower()}|{self.following}"


class NeutralTable(BaseModel):
    """Which alternatives fit which contexts, as the fill-in scorer judged them."""

    margin: float = DEFAULT_MARGIN
    model: str = ""
    contexts: dict[str, list[str]] = Field(default_factory=dict)
    fallback: dict[str, list[str]] = Field(default_factory=dict)

    def alternatives(self, occurrence: Occurrence) -> list[str]:
        """The alternatives that fit this occurrence's context (none for unseen contexts)."""
        found = self.contexts.get(occurrence.key)
        return (
            list(found) if found is not None else list(self.fallback.get(occurrence.short_key, []))
        )


def occurrences(text: str, words: Iterable[str] = NEUTRAL_ALTERNATIVES) -> list[Occurrence]:
    """The neutral words of a text with their neighbouring words."""
    wanted = {w.lower() for w in words}
    found = list(_WORD.finditer(text))
    out = []
    for i, match in enumerate(found):
        if match.group(0).lower() in wanted:
            out.append(
                Occurrence(
                    start=match.start(),
                    end=match.end(),
                    word=match.group(0),
                    previous=found[i - 1].group(0).lower() if i else "",
                    following=found[i + 1].group(0).lower() if i + 1 < len(found) else "",
                )
            )
    return out


def same_case(replacement: str, found: str) -> str:
    """The replacement with the found word's capitalization."""
    if found[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement


def replace(text: str, occurrence: Occurrence, alternative: str) -> str:
    """The text with the occurrence replaced by the alternative (same capitalization)."""
    return (
        text[: occurrence.start] + same_case(alternative, occurrence.word) + text[occurrence.end :]
    )


def fitting(
    scorer: LMScorer,
    texts: Sequence[str],
    *,
    alternatives: Mapping[str, Sequence[str]] = NEUTRAL_ALTERNATIVES,
    margin: float = DEFAULT_MARGIN,
) -> list[list[tuple[Occurrence, list[str]]]]:
    """Per text, each neutral word with the alternatives that fit it in context (scored live)."""
    jobs: list[tuple[int, Occurrence, str]] = []
    sentences: list[str] = list(texts)
    for t, text in enumerate(texts):
        for occurrence in occurrences(text, alternatives):
            for alternative in alternatives[occurrence.word.lower()]:
                jobs.append((t, occurrence, alternative))
                sentences.append(replace(text, occurrence, alternative))
    scores = scorer.sentence_logprobs(sentences) if jobs else []
    out: list[dict[str, tuple[Occurrence, list[str]]]] = [{} for _ in texts]
    for (t, occurrence, alternative), score in zip(jobs, scores[len(texts) :], strict=True):
        entry = out[t].setdefault(f"{occurrence.start}", (occurrence, []))
        if score >= scores[t] - margin:
            entry[1].append(alternative)
    return [list(d.values()) for d in out]


def score_contexts(
    scorer: LMScorer,
    texts: Sequence[str],
    *,
    alternatives: Mapping[str, Sequence[str]] = NEUTRAL_ALTERNATIVES,
    margin: float = DEFAULT_MARGIN,
    model: str = "",
) -> NeutralTable:
    """The table of fitting alternatives over `texts`: per context, those that fitted every
    time the context was seen; per (word, next word), those that fitted all its contexts."""
    contexts: dict[str, set[str]] = {}
    fallback: dict[str, set[str]] = {}
    for per_text in fitting(scorer, texts, alternatives=alternatives, margin=margin):
        for occurrence, fit in per_text:
            for table, key in ((contexts, occurrence.key), (fallback, occurrence.short_key)):
                table[key] = table[key] & set(fit) if key in table else set(fit)
    order = {w: list(alts) for w, alts in alternatives.items()}

    def ordered(table: dict[str, set[str]]) -> dict[str, list[str]]:
        return {
            key: [a for a in order[key.split("|")[-2]] if a in fit]
            for key, fit in sorted(table.items())
        }

    return NeutralTable(
        margin=margin, model=model, contexts=ordered(contexts), fallback=ordered(fallback)
    )


@lru_cache(maxsize=1)
def shipped_table() -> NeutralTable:
    """The table shipped with testaug (empty when the file is missing)."""
    if not TABLE_PATH.is_file():
        return NeutralTable()
    return NeutralTable.model_validate_json(TABLE_PATH.read_text(encoding="utf-8"))


def _build_shipped(per_template: int = 6) -> None:  # pragma: no cover - run by hand
    """Score the bundled suites' cases and write the shipped table."""
    from testaug.core.bundled import bundled_suites, resolve_suite
    from testaug.core.settings import Settings
    from testaug.editor.scorer import LMScorer
    from testaug.suites.cases import expand_suite
    from testaug.suites.load import load_suite

    texts: dict[str, None] = {}
    for name in bundled_suites():
        for case in expand_suite(load_suite(resolve_suite(name)), per_template=per_template):
            for text in (case.text, case.text_pair):
                if text and occurrences(text):
                    texts.setdefault(text)
    scorer = LMScorer.load(Settings().cache_dir, threads=1)
    table = score_contexts(
        scorer, list(texts), model=str(scorer.backend.model if scorer.backend else "")
    )
    TABLE_PATH.write_text(json.dumps(table.model_dump(), indent=0, sort_keys=True) + "\n")
    print(f"{len(texts)} texts, {len(table.contexts)} contexts -> {TABLE_PATH}")


if __name__ == "__main__":  # pragma: no cover
    _build_shipped()
