"""Unique dependency paths: the sequences of dependency labels from a parse's root to each token.

"The cat sat." parses as sat (ROOT) <- cat (nsubj) <- The (det), sat <- . (punct),
so its paths are (ROOT,), (ROOT, nsubj), (ROOT, nsubj, det) and (ROOT, punct).
The more distinct paths a set of cases has, the more varied its syntax.
Texts are parsed in batches with `nlp.pipe`, with only the components the
parser needs switched on (tok2vec and parser: the parser listens to tok2vec and
never reads the tagger's tags), and, for many texts, in several processes.

Why not spaCy's own `nlp.pipe(n_process=...)`: it sends every parsed Doc back to
the parent as bytes, and `Doc.to_bytes` / `Doc.from_bytes` each cost about as much
as parsing the text (srsly looks its msgpack encoders up in the package metadata
on every call), so on two cores it is slower than one process. Here each worker,
forked with the pipeline already loaded, parses a chunk of texts with `nlp.pipe`
and sends back only their paths; chunks come back in order, so the paths are
those of one process.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from testaug.core.errors import TestAugError
from testaug.core.spacy_pipeline import DEFAULT_PIPELINE, check_parse_lengths, load_spacy

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Token

# Components the dependency labels come from; every other component is switched off.
PARSE_COMPONENTS = ("tok2vec", "parser")
# Texts per extra process before a second process pays for its start and hand-over.
TEXTS_PER_PROCESS = 1000
Path = tuple[str, ...]

# The pipeline a forked worker parses with, set in the parent just before the fork.
_worker_nlp: Language | None = None
_worker_batch_size = 256


def load_parser(name: str = DEFAULT_PIPELINE) -> Language:
    """The spaCy pipeline without the components parsing does not need, loaded once."""
    return load_spacy(name, exclude=("ner", "lemmatizer", "attribute_ruler"))


def available_cpus() -> int:
    """CPUs this process may run on (its affinity where the platform says, else the count)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def choose_n_process(n_texts: int, cpus: int) -> int:
    """Processes to parse n_texts with: one per TEXTS_PER_PROCESS texts, at most one per CPU.

    Below 2 x TEXTS_PER_PROCESS texts one process is faster: a second one costs its
    start and the hand-over of texts and paths."""
    return max(1, min(cpus, n_texts // TEXTS_PER_PROCESS))


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
    texts: Iterable[str],
    nlp: Language | None = None,
    *,
    batch_size: int = 256,
    n_process: int | None = None,
) -> list[frozenset[Path]]:
    """Parse texts in batches of `batch_size` (only tok2vec and parser on); their paths.

    `n_process` None chooses by `choose_n_process` from the texts and the CPUs; more
    than one forks that many workers (where the platform forks and this process is no
    daemon; else one process parses).
    The paths are the same whatever the number of processes. A text longer than spaCy
    parses (`MAX_PARSE_CHARS`) is an InputError naming it."""
    texts = list(texts)
    check_parse_lengths(texts)
    nlp = nlp if nlp is not None else load_parser()
    if "parser" not in nlp.pipe_names:
        raise TestAugError(f"the spaCy pipeline has no parser (it has {nlp.pipe_names})")
    if n_process is None:
        n_process = choose_n_process(len(texts), available_cpus())
    if n_process < 1:
        raise TestAugError(f"n_process must be at least 1, not {n_process}")
    if n_process == 1 or len(texts) < 2 or not _can_fork():
        return _parse_chunk(texts, nlp, batch_size)
    return _parse_in_processes(texts, nlp, batch_size, n_process)


def _can_fork() -> bool:
    """Whether workers can be forked here: the platform forks, and this process is not a
    daemon (a Dask worker's or a multiprocessing pool's, which may not have children)."""
    forks = "fork" in multiprocessing.get_all_start_methods()
    return forks and not multiprocessing.current_process().daemon


def _parse_chunk(texts: Sequence[str], nlp: Language, batch_size: int) -> list[frozenset[Path]]:
    """Paths of texts parsed in this process, with only the parse components on."""
    unused = [name for name in nlp.pipe_names if name not in PARSE_COMPONENTS]
    with nlp.select_pipes(disable=unused):
        return [doc_paths(doc) for doc in nlp.pipe(texts, batch_size=batch_size)]


def _parse_worker_chunk(texts: list[str]) -> list[frozenset[Path]]:
    """In a forked worker: paths of one chunk, with the pipeline inherited from the parent."""
    assert _worker_nlp is not None  # set by the parent before the fork
    return _parse_chunk(texts, _worker_nlp, _worker_batch_size)


def _chunks(texts: Sequence[str], size: int) -> Iterator[list[str]]:
    """The texts in consecutive chunks of `size`, in order."""
    for start in range(0, len(texts), size):
        yield list(texts[start : start + size])


def _parse_in_processes(
    texts: Sequence[str], nlp: Language, batch_size: int, n_process: int
) -> list[frozenset[Path]]:
    """Paths of texts parsed by n_process forked workers, chunk by chunk, in order."""
    global _worker_nlp, _worker_batch_size
    # Four chunks per worker at least balance the load; a chunk is at least a batch.
    size = max(batch_size, -(-len(texts) // (4 * n_process)))
    _worker_nlp, _worker_batch_size = nlp, batch_size
    try:
        with multiprocessing.get_context("fork").Pool(n_process) as pool:
            found: list[frozenset[Path]] = []
            for paths in pool.imap(_parse_worker_chunk, _chunks(texts, size)):
                found.extend(paths)
            return found
    finally:
        _worker_nlp = None


def paths_per_text(
    texts: Iterable[str | Doc],
    nlp: Language | None = None,
    *,
    batch_size: int = 256,
    n_process: int | None = None,
) -> list[frozenset[Path]]:
    """Each text's distinct dependency paths; Docs are used as they are, strings are parsed."""
    items = list(texts)
    strings = [item for item in items if isinstance(item, str)]
    parsed = iter(
        parse_paths(strings, nlp, batch_size=batch_size, n_process=n_process) if strings else []
    )
    return [next(parsed) if isinstance(item, str) else doc_paths(item) for item in items]


def dependency_paths(
    texts: Iterable[str | Doc],
    nlp: Language | None = None,
    *,
    batch_size: int = 256,
    n_process: int | None = None,
) -> set[Path]:
    """The distinct dependency paths over all the texts (or already parsed Docs)."""
    found: set[Path] = set()
    for paths in paths_per_text(texts, nlp, batch_size=batch_size, n_process=n_process):
        found |= paths
    return found


def count_dependency_paths(
    texts: Iterable[str | Doc],
    nlp: Language | None = None,
    *,
    batch_size: int = 256,
    n_process: int | None = None,
) -> int:
    """How many distinct dependency paths the texts (or Docs) have together."""
    return len(dependency_paths(texts, nlp, batch_size=batch_size, n_process=n_process))
