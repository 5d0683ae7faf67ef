"""Unique dependency paths: the sequences of dependency labels from a parse's root to each token.

"The cat sat." parses as sat (ROOT) <- cat (nsubj) <- The (det), sat <- . (punct),
so its paths are (ROOT,), (ROOT, nsubj), (ROOT, nsubj, det) and (ROOT, punct).
The more distinct paths a set of cases has, the more varied its syntax.
Texts are parsed in batches with `nlp.pipe`, with only the components the
parser needs switched on.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from testaug.core.errors import TestAugError
from testaug.core.spacy_pipeline import DEFAULT_PIPELINE, check_parse_lengths, load_spacy

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Token

# Components the dependency labels come from; every other component is switched off.
PARSE_COMPONENTS = ("tok2vec", "tagger", "parser")
Path = tuple[str, ...]


def load_parser(name: str = DEFAULT_PIPELINE) -> Language:
    """The spaCy pipeline without the components parsing does not need, loaded once."""
    return load_spacy(name, exclude=("ner", "lemmatizer", "attribute_ruler"))


def token_path(token: Token) -> Path:
    """Dependency labels from the root of the token's sentence down to the token."""
    labels = [token.dep_]
    while token.head.i != token.i:
        token = token.head
        labels.append(token.dep_)
    return tuple(reversed(labels))


def doc_paths(doc: Doc) -> frozenset[Path]:
    """The distinct root-to-token label paths of a parsed doc."""
    return frozenset(token_path(token) for token in doc)


def parse_paths(
    texts: Iterable[str], nlp: Language | None = None, *, batch_size: int = 256
) -> list[frozenset[Path]]:
    """Parse texts in batches of `batch_size` (only tok2vec, tagger and parser on); their paths.
    A text longer than spaCy parses (`MAX_PARSE_CHARS`) is an InputError naming it."""
    texts = list(texts)
    check_parse_lengths(texts)
    nlp = nlp if nlp is not None else load_parser()
    if "parser" not in nlp.pipe_names:
        raise TestAugError(f"the spaCy pipeline has no parser (it has {nlp.pipe_names})")
    unused = [name for name in nlp.pipe_names if name not in PARSE_COMPONENTS]
    with nlp.select_pipes(disable=unused):
        return [doc_paths(doc) for doc in nlp.pipe(texts, batch_size=batch_size)]


def paths_per_text(
    texts: Iterable[str | Doc], nlp: Language | None = None, *, batch_size: int = 256
) -> list[frozenset[Path]]:
    """Each text's distinct dependency paths; Docs are used as they are, strings are parsed."""
    items = list(texts)
    strings = [item for item in items if isinstance(item, str)]
    parsed = iter(parse_paths(strings, nlp, batch_size=batch_size) if strings else [])
    return [next(parsed) if isinstance(item, str) else doc_paths(item) for item in items]


def dependency_paths(
    texts: Iterable[str | Doc], nlp: Language | None = None, *, batch_size: int = 256
) -> set[Path]:
    """The distinct dependency paths over all the texts (or already parsed Docs)."""
    found: set[Path] = set()
    for paths in paths_per_text(texts, nlp, batch_size=batch_size):
        found |= paths
    return found


def count_dependency_paths(
    texts: Iterable[str | Doc], nlp: Language | None = None, *, batch_size: int = 256
) -> int:
    """How many distinct dependency paths the texts (or Docs) have together."""
    return len(dependency_paths(texts, nlp, batch_size=batch_size))
