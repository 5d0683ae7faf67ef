"""Suite expansion: fills reproduce the text, samples are seeded, counts match the expansion."""

from testaug.suites.cases import case_stats, expand_suite, suite_stats
from testaug.suites.load import load_suite
from testaug.suites.templates import render


def test_every_case_keeps_the_fills_that_reproduce_its_text(tiny_suite_path):
    suite = load_suite(tiny_suite_path)
    cases = list(expand_suite(suite))
    assert len(cases) == suite_stats(suite).cases == 180
    for case in cases:
        assert render(case.template, case.fills) == case.text
        assert case.source == "template" and case.task == "sentiment"


def test_sampling_is_seeded_and_independent_per_template(tiny_suite_path):
    suite = load_suite(tiny_suite_path)
    first = [c.id for c in expand_suite(suite, per_template=5, seed=7)]
    assert first == [c.id for c in expand_suite(suite, per_template=5, seed=7)]
    assert first != [c.id for c in expand_suite(suite, per_template=5, seed=8)]
    assert len(first) == 4 * 5
    # A template's sample does not depend on the templates before it.
    trimmed = suite.model_copy(update={"capabilities": suite.capabilities[1:]})
    assert [c.id for c in expand_suite(trimmed, per_template=5, seed=7)] == first[10:]


def test_cases_carry_description_label_and_template_override(tiny_suite_path):
    cases = list(expand_suite(load_suite(tiny_suite_path), per_template=2, seed=0))
    vocabulary = [c for c in cases if c.capability == "Vocabulary"]
    assert {c.label for c in vocabulary} == {("neutral", "positive"), "neutral"}
    assert len({c.description_id for c in vocabulary}) == 1


def test_case_stats_of_an_expansion_match_the_suite_stats(tiny_suite_path):
    suite = load_suite(tiny_suite_path)
    from_suite = suite_stats(suite)
    from_cases = case_stats(expand_suite(suite))
    assert from_cases.model_dump() == from_suite.model_dump()


def test_a_text_produced_by_two_templates_is_yielded_once(write_suite):
    path = write_suite(
        """
        task: sentiment
        labels: [neutral]
        lexicons: [lexicons.yaml]
        capabilities:
          - name: Vocabulary
            descriptions:
              - description: A neutral sentence.
                label: neutral
                templates: ["It is {x}.", "It is {y}."]
        """,
        lexicons="x: [red, blue]\ny: [blue, green]\n",
    )
    suite = load_suite(path)
    texts = [c.text for c in expand_suite(suite)]
    assert texts == ["It is red.", "It is blue.", "It is green."]
    assert suite_stats(suite).cases == 4  # the full products, before deduplication
