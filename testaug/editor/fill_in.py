"""Fill-in suggestions: rank candidate words for the masks of a sentence with a causal LM.

Two stages, so thousands of candidates cost a few forward passes:

1. Shortlist. Mask by mask (a beam over the earlier masks' words), one forward pass
   over the text before the mask gives the next-token distribution; every candidate is
   scored by its first token there (at most `per_token` candidates share one first
   token). The LM's own likeliest next words join the candidates (source `lm`).
2. Score. The shortlisted fills are put in the sentence and scored whole: the
   suggestion's score is the log-probability of the filled sentence.

`in_context` keeps the words (e.g. a word's WordNet synonyms) whose filled sentence is
about as likely as the sentence with a reference word, so only context-appropriate
ones stay (CheckList's synonyms "such that only context-appropriate synonyms get
selected").

With seed words (`like`, e.g. a lexicon's first words) and a `similarity` (cosine of
a word to the seeds, e.g. sentence-encoder embeddings), every candidate gets a bonus of
`like_weight` x its similarity, added to its first-token log-probability for the
shortlist and to the filled sentence's log-probability for the ranking: the LM says
what fits the context, the seeds say which category is meant. The seeds themselves are
left out of the suggestions.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from testaug.core.errors import TestAugError
from testaug.editor.candidates import CandidatePool
from testaug.editor.masks import MaskedText
from testaug.editor.suggestion import WordSuggestion

if TYPE_CHECKING:
    from testaug.editor.scorer import LMScorer

logger = logging.getLogger(__name__)

LM_SOURCE = "lm"
LIKE_WEIGHT = 20.0  # nats per unit of cosine similarity to the seeds
CATEGORY_WEIGHT = 5.0  # nats for a member of the seeds' WordNet category

# (words, seeds) -> each word's similarity to the seeds (cosine, about 0..1)
Similarity = Callable[[Sequence[str], Sequence[str]], list[float]]


@dataclass
class _Partial:
    words: list[str]
    sources: list[str]
    score: float = 0.0
    seen: set[str] = field(default_factory=set)


def _surface(prefix: str, form: str) -> tuple[str, str]:
    """The prefix without its trailing space and the form as the token after it (" word")."""
    if prefix.endswith(" "):
        return prefix.rstrip(" "), " " + form
    return prefix, form


def shortlist(
    masked: MaskedText,
    scorer: LMScorer,
    pool: CandidatePool,
    *,
    size: int,
    beam: int = 8,
    per_token: int = 3,
    lm_words: int = 40,
    lm_new_words: bool = True,
    bonus: Mapping[str, float] | None = None,
) -> list[_Partial]:
    """The `size` likeliest fills by first-token log-probability (plus the word's `bonus`),
    mask by mask (the LM's likeliest words join the candidates, or with `lm_new_words`
    off only mark those there)."""
    partials = [_Partial(words=[], sources=[])]
    for index in range(masked.n_masks):
        prefixes = [masked.prefix(index, p.words) for p in partials]
        cut = [_surface(prefix, "")[0] for prefix in prefixes]
        logprobs = scorer.next_token_logprobs(cut)
        keep = size if index == masked.n_masks - 1 else beam
        extended: list[_Partial] = []
        for partial, prefix, row in zip(partials, prefixes, logprobs, strict=True):
            lm = scorer.top_words(row, lm_words) if lm_words else []
            extra = [w for w in lm if w not in pool.sources] if lm_new_words else []
            words = pool.words() + extra
            forms = [_surface(prefix, masked.after_prefix(index, w))[1] for w in words]
            firsts = scorer.first_tokens(forms)
            scores = row[firsts].tolist()
            if bonus:
                scores = [x + bonus.get(w, 0.0) for x, w in zip(scores, words, strict=True)]
            per_first: dict[int, int] = {}
            ranked = sorted(range(len(words)), key=lambda i: -scores[i])
            own = 0  # this partial's extensions: more than `keep` cannot all stay
            for i in ranked:
                if own >= keep:
                    break
                if per_first.get(firsts[i], 0) >= per_token:
                    continue
                own += 1
                per_first[firsts[i]] = per_first.get(firsts[i], 0) + 1
                sources = list(pool.sources.get(words[i], []))
                if words[i] in lm and LM_SOURCE not in sources:
                    sources.append(LM_SOURCE)
                extended.append(
                    _Partial(
                        words=[*partial.words, words[i]],
                        sources=list(dict.fromkeys(partial.sources + sources)),
                        score=partial.score + scores[i],
                    )
                )
        extended.sort(key=lambda p: -p.score)
        partials = extended[:keep]
    return partials


def suggest(
    masked: MaskedText,
    scorer: LMScorer,
    pool: CandidatePool,
    *,
    n: int = 30,
    shortlist_size: int | None = None,
    beam: int = 8,
    lm_words: int = 40,
    lm_new_words: bool = True,
    like: Sequence[str] = (),
    similarity: Similarity | None = None,
    like_weight: float = LIKE_WEIGHT,
    boost: Mapping[str, float] | None = None,
    exclude: Collection[str] = (),
) -> list[WordSuggestion]:
    """The `n` best fills of the masks, scored by the log-probability of the filled sentence
    (with `like` and `similarity`: plus `like_weight` x the fill's similarity to the seeds;
    plus a word's `boost`, e.g. for members of the seeds' WordNet category). The seeds and
    the words in `exclude` (e.g. the seeds' inflections) are left out."""
    size = shortlist_size or max(3 * n, 60)
    bonus: dict[str, float] = dict(boost or {})
    if like and similarity is not None:
        words = pool.words()
        sims = similarity(words, like)
        for word, x in zip(words, sims, strict=True):
            bonus[word] = bonus.get(word, 0.0) + like_weight * x
    partials = shortlist(
        masked,
        scorer,
        pool,
        size=size + len(like) + len(exclude),
        beam=beam,
        lm_words=lm_words,
        lm_new_words=lm_new_words,
        bonus=bonus,
    )
    seeds = {w.lower() for w in [*like, *exclude]}
    partials = [p for p in partials if " ".join(p.words).lower() not in seeds]
    fills = [p.words for p in partials]
    out = score_fills(masked, scorer, fills, [p.sources for p in partials])
    return (add_bonus(out, bonus) if bonus else out)[:n]


def add_bonus(
    suggestions: Sequence[WordSuggestion], bonus: dict[str, float]
) -> list[WordSuggestion]:
    """The suggestions re-ranked by score plus their fill's bonus (keyed by the words joined
    by spaces)."""
    out = [
        s.model_copy(update={"score": round(s.score + bonus.get(" ".join(s.words), 0.0), 4)})
        for s in suggestions
    ]
    out.sort(key=lambda s: -s.score)
    return out


def score_fills(
    masked: MaskedText,
    scorer: LMScorer,
    fills: Sequence[Sequence[str]],
    sources: Sequence[Sequence[str]],
) -> list[WordSuggestion]:
    """Suggestions for the given fills, best first (one per distinct filled sentence)."""
    filled: dict[str, int] = {}
    for i, words in enumerate(fills):
        filled.setdefault(masked.fill(words), i)
    texts = list(filled)
    scores = scorer.sentence_logprobs(texts)
    out = [
        WordSuggestion(
            words=list(fills[i]),
            score=round(score, 4),
            sources=list(sources[i]),
            masked=masked.text,
            filled=text,
        )
        for (text, i), score in zip(filled.items(), scores, strict=True)
    ]
    out.sort(key=lambda s: -s.score)
    return out


def in_context(
    masked: MaskedText,
    scorer: LMScorer,
    words: Sequence[str],
    *,
    reference: str,
    source: str,
    margin: float = 4.0,
) -> tuple[list[WordSuggestion], float]:
    """The words (one mask) whose filled sentence scores within `margin` nats of the
    sentence filled with `reference`, best first; and the reference's own score."""
    if masked.n_masks != 1:
        raise TestAugError("related words fill one mask: write a single {mask}")
    base = scorer.sentence_logprobs([masked.fill([reference])])[0]
    ranked = score_fills(masked, scorer, [[w] for w in words], [[source]] * len(words))
    return [s for s in ranked if s.score >= base - margin], base
