"""CheckList's entity perturbations: names, locations and numbers found by spaCy, replaced.

Each reads a spaCy Doc: pass one (`doc=`, e.g. from the batched `parse_texts`) or
let it parse with `nlp` or the default pipeline, loaded lazily. The `*_joint` forms
change several texts (a pair) with one shared replacement, so the same name changes
in both questions.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from testaug.core.errors import TestAugError
from testaug.core.spacy_pipeline import DEFAULT_PIPELINE, load_spacy

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span

_CLOCK_WORDS = {"a.m.", "p.m.", "am", "pm", "o'clock", ":"}


def load_pipeline(name: str = DEFAULT_PIPELINE) -> Language:
    """The spaCy pipeline with its named-entity recognizer, loaded once per process."""
    return load_spacy(name, exclude=("lemmatizer",))


def parse_texts(
    texts: Sequence[str], nlp: Language | None = None, *, batch_size: int = 256
) -> list[Doc]:
    """Parse texts in batches with `nlp` (default: the small English pipeline)."""
    nlp = nlp if nlp is not None else load_pipeline()
    return list(nlp.pipe(texts, batch_size=batch_size))


# A span to replace: (start char, end char, the text a replacement is chosen for).
Span = tuple[int, int, str]


def person_spans(doc: Doc) -> list[Span]:
    """The first name (first token) of each PERSON entity."""
    return [
        (ent[0].idx, ent[0].idx + len(ent[0].text), ent[0].text)
        for ent in doc.ents
        if ent.label_ == "PERSON" and ent[0].is_alpha
    ]


def location_spans(doc: Doc) -> list[Span]:
    """Each GPE (country, city, state) and LOC entity, whole."""
    return [
        (ent.start_char, ent.end_char, ent.text) for ent in doc.ents if ent.label_ in ("GPE", "LOC")
    ]


def number_spans(doc: Doc) -> list[Span]:
    """Whole numbers that are safe to change.

    Skipped: numbers in DATE entities and year-like 4-digit numbers (1000-2099), clock
    times (followed by a.m./p.m./o'clock or next to ':'), numbers with a leading zero,
    and, as in CheckList, '2' and '4' (often "to", "for": "2 you", "4 you").
    """
    spans: list[Span] = []
    for token in doc:
        text = token.text
        if not text.isdigit() or text.startswith("0") or text in ("2", "4"):
            continue
        if token.ent_type_ == "DATE" or (len(text) == 4 and 1000 <= int(text) <= 2099):
            continue
        neighbours = {doc[i].text.lower() for i in (token.i - 1, token.i + 1) if 0 <= i < len(doc)}
        if neighbours & _CLOCK_WORDS:
            continue
        spans.append((token.idx, token.idx + len(text), text))
    return spans


# A replacement chooser: (original, rng, k, texts to avoid) -> up to k distinct replacements.
Chooser = Callable[[str, random.Random, int, set[str]], list[str]]


def _choices_from(pool: Sequence[str]) -> Chooser:
    """Up to k distinct words of the pool that are not in the text already (case-insensitive)."""

    def choose(original: str, rng: random.Random, k: int, avoid: set[str]) -> list[str]:
        options = [w for w in dict.fromkeys(pool) if w.lower() not in avoid]
        return rng.sample(options, min(k, len(options)))

    return choose


def _nearby_numbers(original: str, rng: random.Random, k: int, avoid: set[str]) -> list[str]:
    """Up to k distinct numbers within CheckList's bound: x ± (int(0.2 x) + 1), at least 1."""
    value = int(original)
    change = int(value * 0.2) + 1
    candidates = (str(value + d) for d in range(-min(change, value - 1), change + 1) if d != 0)
    options = [c for c in candidates if c not in avoid]
    return rng.sample(options, min(k, len(options)))


def replace_entities(
    texts: Sequence[str],
    docs: Sequence[Doc],
    find: Callable[[Doc], list[Span]],
    choose: Chooser,
    rng: random.Random,
    n: int,
) -> list[tuple[str, ...]]:
    """Up to n versions of the texts, each replacing one entity everywhere it occurs.

    The same entity text gets the same replacement in every text (a name changed in
    both questions of a pair stays one name); replacements avoid every entity found. Versions go round the distinct
    entities in order of appearance: with two names and n=4, two versions each.
    """
    spans = [find(doc) for doc in docs]
    entities = list(dict.fromkeys(span[2] for found in spans for span in found))
    if not entities or n <= 0:
        return []
    per_entity = -(-n // len(entities))
    avoid = {entity.lower() for entity in entities}
    options = {entity: choose(entity, rng, per_entity, avoid) for entity in entities}
    out: list[tuple[str, ...]] = []
    for round_ in range(per_entity):
        for entity in entities:
            if round_ < len(options[entity]) and len(out) < n:
                new = options[entity][round_]
                version = tuple(
                    _substitute(text, [s for s in found if s[2] == entity], new)
                    for text, found in zip(texts, spans, strict=True)
                )
                if version != tuple(texts) and version not in out:
                    out.append(version)
    return out


def _substitute(text: str, spans: Sequence[Span], new: str) -> str:
    """The text with every span replaced by `new` (from the right, so offsets hold)."""
    for start, end, _ in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _docs_for(texts: Sequence[str], docs: Sequence[Doc] | None, nlp: Language | None) -> list[Doc]:
    """The given Docs (checked against the texts), or the texts parsed in one batch."""
    if docs is None:
        return parse_texts(texts, nlp)
    for text, doc in zip(texts, docs, strict=True):
        if doc.text != text:
            raise TestAugError(f"the Doc given is for {doc.text!r}, not for {text!r}")
    return list(docs)


def change_names_joint(
    texts: Sequence[str],
    rng: random.Random,
    *,
    names: Sequence[str],
    n: int = 10,
    docs: Sequence[Doc] | None = None,
    nlp: Language | None = None,
) -> list[tuple[str, ...]]:
    """`change_names` over several texts at once, one replacement per name in all of them."""
    docs = _docs_for(texts, docs, nlp)
    return replace_entities(texts, docs, person_spans, _choices_from(names), rng, n)


def change_location_joint(
    texts: Sequence[str],
    rng: random.Random,
    *,
    cities: Sequence[str],
    n: int = 10,
    docs: Sequence[Doc] | None = None,
    nlp: Language | None = None,
) -> list[tuple[str, ...]]:
    """`change_location` over several texts at once, one replacement per place in all of them."""
    docs = _docs_for(texts, docs, nlp)
    return replace_entities(texts, docs, location_spans, _choices_from(cities), rng, n)


def change_number_joint(
    texts: Sequence[str],
    rng: random.Random,
    *,
    n: int = 10,
    docs: Sequence[Doc] | None = None,
    nlp: Language | None = None,
) -> list[tuple[str, ...]]:
    """`change_number` over several texts at once, one new value per number in all of them."""
    return replace_entities(
        texts, _docs_for(texts, docs, nlp), number_spans, _nearby_numbers, rng, n
    )


def _single(joint: Callable[..., list[tuple[str, ...]]]) -> Callable[..., list[str]]:
    """The one-text form of a joint entity perturbation: `(text, rng, *, doc=None, ...)`."""

    def perturb(text: str, rng: random.Random, *, doc: Doc | None = None, **options) -> list[str]:
        docs = None if doc is None else [doc]
        return [version[0] for version in joint([text], rng, docs=docs, **options)]

    perturb.__name__ = joint.__name__.removesuffix("_joint")
    perturb.__doc__ = (
        f"Up to n perturbed versions of one text; see `{joint.__name__}` (doc: its parse)."
    )
    return perturb


change_names = _single(change_names_joint)
change_location = _single(change_location_joint)
change_number = _single(change_number_joint)
