"""The shipped seed suites load, cover the capabilities they promise, and yield hundreds of cases each."""

import re

import pytest

from testaug.core.bundled import bundled_suites, resolve_suite
from testaug.core.records import label_options
from testaug.suites.cases import expand_suite, suite_stats
from testaug.suites.load import load_suite

REQUIRED = {
    "sentiment": (
        {"Vocabulary", "Negation", "Temporal", "SRL"},
        ("negative", "neutral", "positive"),
        False,
    ),
    "paraphrase": (
        {"Negation", "SRL", "Temporal", "Vocabulary", "Coreference", "Taxonomy"},
        ("duplicate", "not_duplicate"),
        True,
    ),
    "nli": (set(), ("entailment", "neutral", "contradiction"), True),
}
LONLI = {
    "boolean", "causal", "comparative", "conditional", "coreference", "implicature", "lexical", "negation",
    "numerical", "presupposition", "quantifier", "relational", "spatial", "syntactic", "taxonomic", "temporal", "world",
}  # fmt: skip


def test_one_suite_ships_per_task():
    assert set(bundled_suites()) >= set(REQUIRED)


@pytest.mark.parametrize("task", sorted(REQUIRED))
def test_bundled_suite_meets_its_coverage(task):
    capabilities, labels, pairs = REQUIRED[task]
    suite = load_suite(resolve_suite(task))
    assert suite.task == task and suite.labels == labels
    names = {c.name for c in suite.capabilities}
    assert capabilities <= names
    if task == "nli":
        assert len({n.lower() for n in names} & LONLI) >= 8
    stats = suite_stats(suite)
    assert stats.descriptions >= 12
    assert min(row.cases for row in stats.per_description) >= 200  # hundreds per description
    assert all(
        (t.text_pair is not None) == pairs for d in suite.descriptions() for t in d.templates
    )


@pytest.mark.parametrize("task", sorted(REQUIRED))
def test_bundled_suite_samples_are_filled_and_labelled(task):
    suite = load_suite(resolve_suite(task))
    for case in expand_suite(suite, per_template=3, seed=0):
        for text in (case.text, case.text_pair):
            if text is not None:
                assert "{" not in text and "}" not in text
                assert not re.search(r"\s{2,}", text), text
                assert text[0].isupper(), text
        assert set(label_options(case.label)) <= set(suite.labels)


@pytest.mark.parametrize("task", sorted(REQUIRED))
def test_bundled_suite_has_a_data_card_with_a_license(task):
    card = resolve_suite(task).parent / "README.md"
    assert card.is_file() and "CC BY 4.0" in card.read_text()
