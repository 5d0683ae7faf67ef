"""Trees built from suites: topics from capabilities and descriptions, comparisons from
perturbation cases."""

from __future__ import annotations

from testaug.adaptive.from_suite import case_topic, tree_from_cases, tree_from_suite
from testaug.core.records import TestCase
from testaug.evaluation.expectations import Expectation
from testaug.evaluation.perturbations.cases import perturb_cases
from testaug.suites.cases import expand_suite
from testaug.suites.load import load_suite


def case(text: str, label, capability="Cap/ability", description="desc") -> TestCase:
    return TestCase(
        task="sentiment",
        capability=capability,
        description_id="d",
        description=description,
        text=text,
        label=label,
    )


def test_suite_cases_become_should_be_tests_under_capability_and_description(tiny_suite_path):
    suite = load_suite(tiny_suite_path)
    tree = tree_from_suite(suite, per_template=2)
    assert tree.topics() == [
        "/Negation",
        "/Negation/A negative sentence with a negated positive verb.",
        "/Vocabulary",
        "/Vocabulary/A neutral statement about two passengers.",
    ]
    cases = list(expand_suite(suite, per_template=2))
    assert [t.input for t in tree.tests] == [c.text for c in cases]
    negation = tree.tests_in("/Negation")
    assert {(t.comparator, t.output) for t in negation} == {("should be", "negative")}
    vocabulary = {t.output for t in tree.tests_in("/Vocabulary")}
    assert vocabulary == {"neutral|positive", "neutral"}
    assert all(t.source == "suite" for t in tree.tests)


def test_a_slash_in_a_name_does_not_split_the_topic():
    assert case_topic("Cap/ability", " a  / b ") == "/Cap-ability/a - b"


def test_the_default_battery_adds_a_topic_per_perturbation(tiny_suite_path):
    tree = tree_from_suite(load_suite(tiny_suite_path), per_template=2, per_test=2)
    perturbation_topics = [t for t in tree.topics() if t.startswith(("/INV", "/DIR"))]
    assert "/INV/typos" in perturbation_topics and "/DIR/add_phrase" in perturbation_topics
    comparators = {t.comparator for t in tree.tests_in("/DIR")}
    assert comparators == {"should be no less than", "should be no more than"}


def test_descriptions_without_cases_are_declared_topics():
    tree = tree_from_cases([case("good", "positive")], topics=["/Cap-ability/desc", "/Empty/one"])
    assert [(row.kind, row.topic) for row in tree.rows] == [
        ("test", "/Cap-ability/desc"),
        ("topic", "/Empty/one"),
    ]


def test_perturbation_cases_become_the_matching_comparisons():
    originals = [case("I love the crew .", "positive"), case("The seat was bad .", "negative")]
    perturbed = perturb_cases(
        originals[:1], "add_phrase", expectation=Expectation.monotonic("positive", "down"),
        phrases=["You are awful."],
    )  # fmt: skip
    perturbed += perturb_cases(
        originals, "typos", expectation=Expectation.inv(tolerance=0.2), seed=1
    )
    perturbed += perturb_cases(
        originals[1:], "add_phrase", expectation=Expectation.to_target("negative"),
        phrases=["I hate you."],
    )  # fmt: skip
    tree = tree_from_cases(originals + originals, perturbed)
    assert len(tree.tests) == 2 + len(perturbed)
    dir_down, inv, _, target = tree.tests[2:]
    assert (dir_down.comparator, dir_down.watched, dir_down.output) == (
        "should be no more than",
        "positive",
        "I love the crew .",
    )
    assert dir_down.topic == "/DIR/add_phrase"
    assert (inv.comparator, inv.tolerance, inv.output) == (
        "should be the same as for",
        0.2,
        "I love the crew .",
    )
    assert inv.topic == "/INV/typos"
    assert (target.comparator, target.output) == ("should be", "negative")
