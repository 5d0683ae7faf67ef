"""Unique dependency paths with the real small English pipeline: labels from root to token."""

from __future__ import annotations

import multiprocessing

import pytest

from testaug.core.errors import TestAugError
from testaug.diversity.dependency_paths import (
    PARSE_COMPONENTS,
    TEXTS_PER_PROCESS,
    choose_n_process,
    count_dependency_paths,
    dependency_paths,
    doc_paths,
    load_parser,
    paths_per_text,
)
from tests.cli_runner import HANG_TIMEOUT

spacy = pytest.importorskip("spacy")

SENTENCES = [
    "The cat sat.",
    "I love this airline.",
    "The flight was not good, but the crew was great.",
    "Never have I seen such a terrible service!",
    "She said the pilot had been very kind to us.",
    "Is the food good?",
    "I used to hate it, now I love it.",
    "Wow.",
]


@pytest.fixture(scope="module")
def nlp():
    return load_parser()


def test_the_cat_sat_has_the_hand_checked_paths(nlp) -> None:
    # sat is the root; cat (nsubj) and . (punct) hang off it; The (det) hangs off cat.
    assert dependency_paths(["The cat sat."], nlp) == {
        ("ROOT",),
        ("ROOT", "nsubj"),
        ("ROOT", "nsubj", "det"),
        ("ROOT", "punct"),
    }
    assert count_dependency_paths(["The cat sat."], nlp) == 4


def test_batched_parsing_equals_one_call_per_sentence(nlp) -> None:
    batched = paths_per_text(SENTENCES * 3, nlp, batch_size=5)
    one_by_one = [paths_per_text([text], nlp, batch_size=1)[0] for text in SENTENCES * 3]
    assert batched == one_by_one
    assert dependency_paths(SENTENCES, nlp, batch_size=3) == set().union(*one_by_one)


def test_parsed_docs_are_used_as_they_are(nlp) -> None:
    docs = [nlp(text) for text in SENTENCES[:3]]
    mixed = [docs[0], SENTENCES[1], docs[2]]
    assert paths_per_text(mixed, nlp) == paths_per_text(SENTENCES[:3], nlp)


def test_repeated_sentences_add_no_paths(nlp) -> None:
    assert count_dependency_paths(SENTENCES[:2] * 5, nlp) == count_dependency_paths(
        SENTENCES[:2], nlp
    )


def test_parsing_leaves_the_pipeline_as_it_was(nlp) -> None:
    before = (list(nlp.pipe_names), list(nlp.disabled))
    dependency_paths(SENTENCES, nlp)
    assert (list(nlp.pipe_names), list(nlp.disabled)) == before


def test_a_pipeline_without_a_parser_is_an_error() -> None:
    with pytest.raises(TestAugError, match="no parser"):
        dependency_paths(["The cat sat."], spacy.blank("en"))


def test_no_texts_have_no_paths(nlp) -> None:
    assert dependency_paths([], nlp) == set()


def test_two_processes_give_the_paths_of_one(nlp) -> None:
    texts = SENTENCES * 6
    one = paths_per_text(texts, nlp, batch_size=4, n_process=1)
    assert paths_per_text(texts, nlp, batch_size=4, n_process=2) == one
    assert dependency_paths(texts, nlp, batch_size=4, n_process=2) == set().union(*one)


def _paths_in_a_daemon(queue, texts, nlp) -> None:
    queue.put(paths_per_text(texts, nlp, batch_size=4, n_process=2))


def test_a_daemon_process_which_may_not_fork_parses_in_one_process(nlp) -> None:
    # Dask workers and multiprocessing pools run daemons, which may not start children.
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    daemon = context.Process(target=_paths_in_a_daemon, args=(queue, SENTENCES, nlp), daemon=True)
    daemon.start()
    found = queue.get(timeout=HANG_TIMEOUT)
    daemon.join(timeout=HANG_TIMEOUT)
    assert found == paths_per_text(SENTENCES, nlp, n_process=1)


def test_the_tagger_is_not_needed_for_the_paths(nlp) -> None:
    with_tagger = [doc_paths(doc) for doc in nlp.pipe(SENTENCES)]
    assert "tagger" in nlp.pipe_names and "tagger" not in PARSE_COMPONENTS
    assert paths_per_text(SENTENCES, nlp, n_process=1) == with_tagger


@pytest.mark.parametrize(
    ("n_texts", "cpus", "expected"),
    [
        (0, 2, 1),
        (TEXTS_PER_PROCESS * 2 - 1, 2, 1),
        (TEXTS_PER_PROCESS * 2, 2, 2),
        (TEXTS_PER_PROCESS * 100, 2, 2),
        (TEXTS_PER_PROCESS * 3, 16, 3),
        (TEXTS_PER_PROCESS * 100, 1, 1),
    ],
)
def test_one_process_per_thousand_texts_at_most_one_per_cpu(
    n_texts: int, cpus: int, expected: int
) -> None:
    assert choose_n_process(n_texts, cpus) == expected


def test_zero_processes_is_an_error(nlp) -> None:
    with pytest.raises(TestAugError, match="n_process"):
        paths_per_text(SENTENCES, nlp, n_process=0)
