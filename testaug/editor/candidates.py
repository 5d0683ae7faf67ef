"""Candidate words for a mask and where each came from: WordNet, lexicons, the LM.

A `CandidatePool` keeps words in the order they were added (the first source's own
order, e.g. WordNet's most frequent lemmas first) with every source that proposed them.
The fill-in scorer then ranks them in context.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from testaug.editor.wordnet import lemmas, wordnet_pos
from testaug.suites.inflection import inflect

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    from testaug.editor.scorer import LMScorer

logger = logging.getLogger(__name__)

# Inflected forms added to WordNet's base forms, per WordNet POS letter.
FORMS = {"v": ("vbd", "vbz", "vbg", "vbn"), "n": ("nns",)}
# Degree adverbs that grade a verb ("really love", "absolutely hate"): verb lexicons of
# sentiment suites list such phrases beside the single verbs.
DEGREE_ADVERBS = ("really", "absolutely", "truly", "totally", "genuinely", "simply", "deeply")
_WORD = re.compile(r"^[A-Za-z][A-Za-z' -]*[A-Za-z]$|^[A-Za-z]$")


class CandidatePool:
    """Words with their sources, in first-added order."""

    def __init__(self) -> None:
        self.sources: dict[str, list[str]] = {}

    def add(self, words: Iterable[str], source: str) -> int:
        """Add words from one source; returns how many were new."""
        new = 0
        for raw in words:
            word = raw.strip()
            if not word:
                continue
            known = self.sources.setdefault(word, [])
            new += not known
            if source not in known:
                known.append(source)
        return new

    def words(self) -> list[str]:
        """Every candidate word, in first-added order."""
        return list(self.sources)

    def __len__(self) -> int:
        return len(self.sources)


def wordnet_words(wn: WordNetCorpusReader, pos: str | None, *, min_count: int = 1) -> list[str]:
    """WordNet's frequent lemmas of the POS with their inflected forms (verbs: past, 3rd
    person, gerund, participle; nouns: plural), most frequent lemma first."""
    letters = [wordnet_pos(pos)] if pos else ["n", "v", "a", "r"]
    out: dict[str, None] = {}
    for letter in letters:
        tag = {"n": "NOUN", "v": "VERB", "a": "ADJ", "r": "ADV"}[letter]
        for lemma in lemmas(wn, tag, min_count=min_count):
            if not _WORD.match(lemma):
                continue
            out.setdefault(lemma)
            for form in FORMS.get(letter, ()):
                out.setdefault(inflect(lemma, form))
    return list(out)


def graded_mask(masked_text: str) -> bool:
    """Whether a degree adverb already stands right before the first mask ("I really {mask}")."""
    before = re.split(r"\{[^{}]*mask\}", masked_text, maxsplit=1)[0].split()
    return bool(before) and before[-1].lower() in DEGREE_ADVERBS


def degree_phrases(verbs: Iterable[str]) -> list[str]:
    """Each verb graded by each degree adverb ("really love"), adverb by adverb."""
    words = [v.strip() for v in dict.fromkeys(verbs) if v.strip() and " " not in v.strip()]
    return [f"{adverb} {verb}" for adverb in DEGREE_ADVERBS for verb in words]


def lexicon_words(
    lexicons: Mapping[str, Sequence[str]], exclude: Iterable[str] = ()
) -> dict[str, list[str]]:
    """Each lexicon's words by lexicon name, leaving out the lexicons named in `exclude`."""
    skip = set(exclude)
    return {name: list(words) for name, words in lexicons.items() if name not in skip}


def continuation_prompt(masked_text: str, seeds: Sequence[str]) -> str:
    """A list for the LM to continue: words that fit the blank, the seeds first."""
    blank = re.sub(r"\{[^{}]*mask\}", "___", masked_text)
    return f'Words that fit the blank in "{blank}":\n' + "".join(f"- {w}\n" for w in seeds) + "-"


def continue_list(
    scorer: LMScorer,
    masked_text: str,
    seeds: Sequence[str],
    *,
    samples: int = 2,
    max_tokens: int = 24,
) -> list[str]:
    """More words like `seeds` for the mask: the embedded LM continues the list (sampled,
    seeded by the prompt, so the same seeds give the same words)."""
    from testaug.generation.backends.base import CompletionRequest

    if scorer.backend is None or not seeds:
        return []
    request = CompletionRequest(
        prompt=continuation_prompt(masked_text, seeds),
        n=samples,
        max_tokens=max_tokens,
        temperature=0.8,
        stop=("\n\n",),
    )
    result = scorer.backend.complete(request)
    out: dict[str, None] = {}
    for completion in result.completions:
        for line in completion.text.split("\n"):
            word = line.strip().lstrip("-").strip().strip(".,;")
            if word and _WORD.match(word) and len(word.split()) <= 2 and word not in seeds:
                out.setdefault(word)
    logger.debug("list continuation: %d words from %d seeds", len(out), len(seeds))
    return list(out)
