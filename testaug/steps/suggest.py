"""`testaug lexicon suggest`: fill-in suggestions for a masked sentence, from the sources asked for.

Offline (the default), candidates come from WordNet (when installed), the suite's
lexicons and the embedded LM (its likeliest next words, and a continuation of the
best words as a list), ranked by the embedded LM's log-probability of the filled
sentence. With `like` (seed words), the ranking adds a bonus for the candidates' cosine
similarity to the seeds (MiniLM embeddings) and the list continuation starts from the
seeds. With `mlm`, a Hugging Face masked LM fills the masks instead. With
`related_to`, the candidates are that word's WordNet relations, kept when they fit.
The step (`suggest_words`) writes the suggestions to a JSONL file, as `testaug lexicon`
reviews them; `run_suggest` returns them.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator

from testaug.core.bundled import resolve_suite
from testaug.core.errors import TestAugError
from testaug.core.jsonl import write_jsonl
from testaug.core.records import Record
from testaug.editor.candidates import (
    CandidatePool,
    continue_list,
    degree_phrases,
    graded_mask,
    wordnet_words,
)
from testaug.editor.categories import SeedCategory, seed_category
from testaug.editor.fill_in import (
    CATEGORY_WEIGHT,
    LIKE_WEIGHT,
    add_bonus,
    in_context,
    score_fills,
    suggest,
)
from testaug.editor.masks import parse_masked
from testaug.editor.scorer import LMScorer
from testaug.editor.suggestion import WordSuggestion
from testaug.editor.wordnet import (
    POS_TAGS,
    Relation,
    WordNetMissing,
    index_lemmas,
    load_wordnet,
    related_words,
    require_wordnet,
    wordnet_pos,
)
from testaug.steps.contract import StepOutput, StepSummary, step_output
from testaug.suites.inflection import TAGS, inflect
from testaug.suites.load import load_suite

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

logger = logging.getLogger(__name__)

CONTINUATION_SOURCE = "lm:list"
DEGREE_SOURCE = "seeds:degree"
SEEDED_SAMPLES, SEEDED_TOKENS = 6, 48  # list continuation from seeds: samples x tokens

# The public functions that are not steps (see tests/steps/test_step_contract.py).
HELPERS = frozenset({"add_seed_candidates", "run_suggest", "seed_forms", "seed_similarity"})


class SuggestConfig(Record):
    """What to suggest: the masked sentence and where candidates come from; for the step
    (`suggest_words`), the file the suggestions go to (`out`) and the cache folder (WordNet's
    word lists, the embedded LM, word vectors; default: the settings' cache folder)."""

    text: str
    pos: str | None = None
    n: int = Field(default=30, ge=1)
    suite: str | None = None
    mlm: str | None = Field(default=None, description="hf:NAME_OR_PATH of a masked LM")
    related_to: str | None = None
    relation: Relation = "synonyms"
    margin: float = Field(default=4.0, ge=0.0, description="nats below the related word's own fill")
    exclude_lexicons: tuple[str, ...] = ()
    use_wordnet: bool = True
    use_lexicons: bool = True
    continue_list: bool = True
    like: tuple[str, ...] = Field(default=(), description="seed words: suggest words like these")
    like_weight: float = Field(default=LIKE_WEIGHT, ge=0.0, description="nats per unit cosine")
    category_weight: float = Field(
        default=CATEGORY_WEIGHT, ge=0.0, description="nats for a word of the seeds' category"
    )
    out: Path | None = None
    cache_dir: Path | None = None  # default: the settings' cache folder

    @field_validator("pos")
    @classmethod
    def _known_pos(cls, pos: str | None) -> str | None:
        """A part of speech WordNet knows (any case), checked before any work is done."""
        if pos is None or pos.upper() in POS_TAGS:
            return pos.upper() if pos else None
        raise ValueError(f"unknown part of speech {pos!r}: use {', '.join(POS_TAGS)}")


class SuggestResult(Record):
    """The suggestions, how many candidates were ranked, and notes for the user."""

    suggestions: list[WordSuggestion]
    candidates: int = 0
    seconds: float = 0.0
    notes: list[str] = Field(default_factory=list)


class SuggestSummary(StepSummary):
    """How many suggestions were written for the masked sentence, how many candidates were
    ranked and in how long, and notes for the user."""

    kind: Literal["suggest"] = "suggest"
    text: str
    suggestions: int
    candidates: int = 0
    seconds: float = 0.0
    notes: tuple[str, ...] = ()


def suggest_words(config: SuggestConfig, *, scorer: LMScorer | None = None) -> StepOutput:
    """The suggestions for the request (`run_suggest`), best first, written to `config.out`
    (one `WordSuggestion` a line)."""
    if config.out is None:
        raise ValueError("suggest_words needs config.out, the file the suggestions go to")
    out = config.out
    if config.cache_dir is not None:
        cache_dir = config.cache_dir
    else:
        from testaug.core.settings import Settings

        cache_dir = Settings().cache_dir
    result = run_suggest(config, cache_dir=cache_dir, scorer=scorer)
    written = write_jsonl(out, result.suggestions)
    summary = SuggestSummary(
        text=config.text,
        suggestions=written,
        candidates=result.candidates,
        seconds=result.seconds,
        notes=tuple(result.notes),
    )
    return step_output("suggest", out, written, summary=summary)


def _wordnet_words_path(pos: str | None, cache_dir: Path) -> Path:
    return cache_dir / "editor" / f"wordnet-{(pos or 'any').lower()}.json"


def _wordnet_words(wn: WordNetCorpusReader | None, pos: str | None, cache_dir: Path) -> list[str]:
    """WordNet's candidate words of a POS, listed once and kept under the cache (listing
    them reads every synset: seconds); `wn` is needed only the first time."""
    path = _wordnet_words_path(pos, cache_dir)
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    words = wordnet_words(wn or load_wordnet(cache_dir), pos)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(words), encoding="utf-8")
    return words


def _lexicons(suite: str | None) -> dict[str, tuple[str, ...]]:
    return load_suite(resolve_suite(suite)).words() if suite else {}


def seed_similarity(
    words: Sequence[str], seeds: Sequence[str], *, cache_dir: Path | None = None
) -> list[float]:
    """Each word's cosine similarity to the centroid of the seeds (MiniLM embeddings; with
    `cache_dir`, word vectors are kept in `editor/minilm-words.npz` across runs)."""
    import numpy as np

    from rankers.members.embedding import embeddings

    path = cache_dir / "editor" / "minilm-words.npz" if cache_dir else None
    known: dict[str, np.ndarray] = {}
    if path is not None and path.is_file():
        with np.load(path) as data:
            known = dict(zip(data["words"].tolist(), data["vectors"], strict=True))
    missing = [w for w in dict.fromkeys([*seeds, *words]) if w not in known]
    if missing:
        known.update(embeddings("minilm", missing))
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            keys = list(known)
            vectors = np.stack([known[k] for k in keys]).astype(np.float16)
            np.savez(path, words=np.array(keys), vectors=vectors)
    centroid = np.mean([np.asarray(known[s], dtype=np.float64) for s in seeds], axis=0)
    centroid /= np.linalg.norm(centroid) or 1.0
    return [float(np.asarray(known[w], dtype=np.float64) @ centroid) for w in words]


def seed_forms(like: Sequence[str]) -> set[str]:
    """The seeds' inflected forms (sparrow -> sparrows, love -> loved): not new words."""
    return {inflect(seed, tag).lower() for seed in like for tag in TAGS} - {
        seed.lower() for seed in like
    }


def add_seed_candidates(
    pool: CandidatePool,
    like: Sequence[str],
    *,
    pos: str | None,
    wn: WordNetCorpusReader | None,
    category_weight: float = CATEGORY_WEIGHT,
    masked_text: str = "",
) -> tuple[dict[str, float], SeedCategory | None, str | None]:
    """Add the candidates that the seeds imply to the pool: the other members of their
    WordNet category and, for verbs, the seeds graded by degree adverbs ("really love"),
    unless the mask of `masked_text` already follows one ("I really {mask}").
    Returns the boost per implied word (`category_weight` nats), the category and a note
    for the user."""
    if not like:
        return {}, None, None
    boost: dict[str, float] = {}
    if pos and pos.upper() == "VERB" and not graded_mask(masked_text):
        phrases = degree_phrases(like)
        pool.add(phrases, DEGREE_SOURCE)
        boost.update(dict.fromkeys(phrases, category_weight))
    if wn is None:
        return boost, None, None
    category = seed_category(wn, like, pos)
    if category is None:
        return boost, None, "the seeds share no WordNet category"
    pool.add(category.words, "wordnet:" + "+".join(category.synsets))
    note = (
        f"the seeds' WordNet category: {', '.join(category.synsets)} "
        f"({len(category.words)} words; {category.seeds_covered} of {len(like)} seeds in it)"
    )
    # The category's own name ("bird") is not a sibling of the seeds, nor is a compound
    # member ("fish hawk") of a category of one-word seeds, usually a subtype: the boost goes
    # to members shaped like the seeds, and those lose as much.
    one_word = all(" " not in seed for seed in like)
    names = set(category.names)
    for word in category.words:
        unlike = word in names or (one_word and " " in word)
        boost[word] = -category_weight if unlike else category_weight
    return boost, category, note


def run_suggest(
    request: SuggestConfig, *, cache_dir: Path, scorer: LMScorer | None = None
) -> SuggestResult:
    """Suggestions for the request (`scorer`: a loaded one to reuse, else the embedded LM)."""
    lexicons = _lexicons(request.suite)
    masked = parse_masked(request.text, lexicons)
    if request.mlm:
        from testaug.editor.mlm import load_fill_mask, mlm_name, mlm_suggest

        name = mlm_name(request.mlm)
        start = time.perf_counter()
        out = mlm_suggest(masked, load_fill_mask(name), n=request.n, model=name)
        return SuggestResult(suggestions=out, seconds=time.perf_counter() - start)

    notes: list[str] = []
    like = [w.strip() for w in request.like if w.strip()]
    wn: WordNetCorpusReader | None = None
    has_wordnet = False
    if request.use_wordnet or request.related_to:
        # Reading WordNet takes seconds: without relations or seeds to look up, the word
        # list kept in the cache is all that is needed.
        lookups = request.related_to or like
        cached = request.use_wordnet and _wordnet_words_path(request.pos, cache_dir).is_file()
        try:
            require_wordnet(Path(cache_dir))
            wn = load_wordnet(Path(cache_dir)) if lookups or not cached else None
            has_wordnet = True
        except WordNetMissing as exc:
            if request.related_to:
                raise
            notes.append(f"{exc}; suggesting from the suite's lexicons and the LM only")
    scorer = scorer or LMScorer.load(Path(cache_dir))
    start = time.perf_counter()

    if request.related_to:
        assert wn is not None
        words = related_words(wn, request.related_to, request.relation, request.pos)
        if not words:
            notes.append(f"WordNet has no {request.relation} for {request.related_to!r}")
            return SuggestResult(suggestions=[], notes=notes)
        kept, base = in_context(
            masked,
            scorer,
            words,
            reference=request.related_to,
            source=f"relation:{request.relation}:{request.related_to}",
            margin=request.margin,
        )
        notes.append(
            f"{len(kept)} of {len(words)} {request.relation} of {request.related_to!r} fit "
            f"(within {request.margin:g} nats of {masked.fill([request.related_to])!r}, "
            f"{base:.1f})"
        )
        return SuggestResult(
            suggestions=kept[: request.n],
            candidates=len(words),
            seconds=time.perf_counter() - start,
            notes=notes,
        )

    pool = CandidatePool()
    wordnet_list: list[str] = []
    if has_wordnet and request.use_wordnet:
        wordnet_list = _wordnet_words(wn, request.pos, Path(cache_dir))
        pool.add(wordnet_list, "wordnet")
    if request.use_lexicons:
        for name, words in lexicons.items():
            if name not in request.exclude_lexicons:
                pool.add(words, f"lexicon:{name}")
    # With a POS and WordNet, the LM's own next words only vouch for WordNet's words of
    # that POS (its raw next words include "not", "to", "on"...).
    boost, category, note = add_seed_candidates(
        pool,
        like,
        pos=request.pos,
        wn=wn,
        category_weight=request.category_weight,
        masked_text=request.text,
    )
    notes += [note] if note else []
    inflected_seeds = seed_forms(like)
    out = suggest(
        masked,
        scorer,
        pool,
        n=request.n,
        lm_new_words=not (request.pos and wordnet_list),
        like=like,
        exclude=inflected_seeds,
        similarity=partial(seed_similarity, cache_dir=Path(cache_dir)) if like else None,
        like_weight=request.like_weight,
        boost=boost,
    )
    if request.continue_list and masked.n_masks == 1 and out:
        seeds = like or [s.word for s in out[:8]]
        # Seeds ask for a category: a longer list. Where WordNet found the seeds' category,
        # it decides which listed words are members; where not, the listed words count.
        samples, tokens = (SEEDED_SAMPLES, SEEDED_TOKENS) if like else (2, 24)
        more = continue_list(scorer, request.text, seeds, samples=samples, max_tokens=tokens)
        skip = {s.word for s in out} | set(like) | inflected_seeds
        new = [w for w in more if w not in skip and w.lower() not in skip]
        if request.pos and wn is not None:  # keep the words WordNet knows in that POS
            letter = wordnet_pos(request.pos)
            new = [w for w in new if wn.synsets(w.replace(" ", "_"), letter)]
        elif request.pos and wordnet_list:  # the same, from WordNet's index and word list
            known = index_lemmas(Path(cache_dir), request.pos)
            known.update(w.lower() for w in wordnet_list)  # with inflections
            new = [w for w in new if w.lower() in known]
        if new:
            extra = score_fills(
                masked, scorer, [[w] for w in new], [[CONTINUATION_SOURCE]] * len(new)
            )
            if like:
                sims = seed_similarity(new, like, cache_dir=Path(cache_dir))
                list_boost = 0.0 if category is not None else request.category_weight
                bonus = {
                    w: request.like_weight * x + boost.get(w, list_boost)
                    for w, x in zip(new, sims, strict=True)
                }
                extra = add_bonus(extra, bonus)
            seen = {s.filled for s in out}
            out = sorted(out + [s for s in extra if s.filled not in seen], key=lambda s: -s.score)
            out = out[: request.n]
    if not out:
        raise TestAugError(f"no candidates for {request.text!r}")
    return SuggestResult(
        suggestions=out,
        candidates=len(pool),
        seconds=time.perf_counter() - start,
        notes=notes,
    )
