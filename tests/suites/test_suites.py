"""The suite loader: a valid suite loads; every kind of bad input names file, line and field."""

from pathlib import Path

import pytest

from testaug.core.errors import InputError, Problem
from testaug.suites.load import load_suite

LEXICONS = """
pos_verb: [like, love, enjoy]
air_noun: [flight, seat, crew]
name: [Ann, Bob, Cy]
"""

SUITE = """
task: sentiment
labels: [negative, neutral, positive]
lexicons: [lexicons.yaml]
capabilities:
  - name: Negation
    descriptions:
      - description: A negated positive verb.
        label: negative
        templates:
          - "I don't {pos_verb} the {air_noun}."
"""


def problems_of(path: Path) -> list[Problem]:
    with pytest.raises(InputError) as caught:
        load_suite(path)
    return list(caught.value.problems)


def only_problem(path: Path) -> Problem:
    problems = problems_of(path)
    assert len(problems) == 1, [str(p) for p in problems]
    return problems[0]


def test_the_tiny_suite_loads_with_resolved_ids_and_labels(tiny_suite_path):
    suite = load_suite(tiny_suite_path)
    assert suite.name == "tiny-sentiment"
    assert [c.name for c in suite.capabilities] == ["Negation", "Vocabulary"]
    vocabulary = suite.capabilities[1].descriptions[0]
    assert vocabulary.label == ("neutral", "positive")
    assert vocabulary.templates[1].label == "neutral"  # per-template override
    assert len({t.id for d in suite.descriptions() for t in d.templates}) == 4


def test_a_valid_suite_written_here_loads(write_suite):
    suite = load_suite(write_suite(SUITE, lexicons=LEXICONS))
    assert suite.capabilities[0].descriptions[0].templates[0].text_pair is None


def test_unknown_slot_is_reported_at_its_template_with_a_suggestion(write_suite):
    path = write_suite(SUITE.replace("{air_noun}", "{air_nuon}"), lexicons=LEXICONS)
    problem = only_problem(path)
    assert (problem.file, problem.line) == (path, 10)
    assert problem.field == "capabilities[0].descriptions[0].templates[0]"
    assert "unknown slot {air_nuon}" in problem.message and "{air_noun}" in problem.message


def test_missing_lexicon_file_is_reported_at_the_lexicons_entry(write_suite):
    path = write_suite(
        SUITE.replace("[lexicons.yaml]", "[lexicons.yaml, more.yaml]"), lexicons=LEXICONS
    )
    problem = only_problem(path)
    assert (problem.line, problem.field) == (3, "lexicons[1]")
    assert "lexicon file not found: more.yaml" in problem.message


def test_empty_lexicon_is_reported_in_the_lexicon_file(write_suite):
    path = write_suite(SUITE, lexicons=LEXICONS + "empty: []\n")
    problem = only_problem(path)
    assert (problem.file, problem.line, problem.field) == (
        path.parent / "lexicons.yaml",
        4,
        "empty",
    )
    assert "is empty" in problem.message


def test_label_outside_the_task_labels_is_reported(write_suite):
    path = write_suite(
        SUITE.replace("label: negative", "label: [negative, mixed]"), lexicons=LEXICONS
    )
    problem = only_problem(path)
    assert (problem.line, problem.field) == (8, "capabilities[0].descriptions[0].label")
    assert "'mixed' is not in the task's labels" in problem.message


def test_per_template_label_is_checked_too(write_suite):
    suite = SUITE.replace(
        '- "I don\'t {pos_verb} the {air_noun}."',
        '- text: "I don\'t {pos_verb} the {air_noun}."\n            label: angry',
    )
    problem = only_problem(write_suite(suite, lexicons=LEXICONS))
    assert problem.field == "capabilities[0].descriptions[0].templates[0].label"
    assert problem.line == 11


def test_duplicate_capability_names_are_reported_with_the_first_line(write_suite):
    duplicated = SUITE + SUITE[SUITE.index("  - name: Negation") :].replace(
        "A negated", "Another negated"
    )
    problem = only_problem(write_suite(duplicated, lexicons=LEXICONS))
    assert (problem.line, problem.field) == (11, "capabilities[1].name")
    assert "duplicate capability name 'Negation' (first at line 5)" in problem.message


def test_duplicate_descriptions_are_reported(write_suite):
    suite = SUITE + SUITE[SUITE.index("  - name: Negation") :].replace(
        "name: Negation", "name: Other"
    )
    problem = only_problem(write_suite(suite, lexicons=LEXICONS))
    assert (problem.line, problem.field) == (13, "capabilities[1].descriptions[0].description")
    assert "duplicate description (first at line 7)" in problem.message


def test_duplicate_lexicon_names_across_files_are_reported(write_suite):
    suite = SUITE.replace("[lexicons.yaml]", "[lexicons.yaml, more.yaml]")
    path = write_suite(suite, lexicons=LEXICONS, more="name: [Dee]\n")
    problem = only_problem(path)
    assert (problem.file, problem.line, problem.field) == (path.parent / "more.yaml", 1, "name")
    assert "also defined at lexicons.yaml:3" in problem.message


def test_duplicate_template_and_duplicate_lexicon_entry_are_reported(write_suite):
    suite = SUITE + '          - "I don\'t {pos_verb} the {air_noun}."\n'
    path = write_suite(suite, lexicons=LEXICONS.replace("[Ann, Bob, Cy]", "[Ann, Bob, Ann]"))
    messages = sorted(str(p) for p in problems_of(path))
    assert any("lexicons.yaml:3: name[2]: 'Ann' is listed twice" in m for m in messages)
    assert any(
        "suite.yaml:11: capabilities[0].descriptions[0].templates[1]: duplicate template" in m
        for m in messages
    )


def test_unknown_field_is_reported_with_a_suggestion(write_suite):
    problem = only_problem(
        write_suite(
            SUITE.replace("label: negative", "label: negative\n        lable: x"), lexicons=LEXICONS
        )
    )
    assert (problem.line, problem.field) == (9, "capabilities[0].descriptions[0].lable")
    assert "did you mean 'label'" in problem.message


def test_yaml_syntax_error_names_the_line(write_suite):
    problem = only_problem(
        write_suite(SUITE.replace("task: sentiment", "task: [sentiment"), lexicons=LEXICONS)
    )
    assert problem.line is not None and "invalid YAML" in problem.message


def test_lexicon_names_ending_in_a_digit_and_unquoted_numbers_are_reported(write_suite):
    path = write_suite(SUITE, lexicons=LEXICONS + "hour2: [one]\nhour: [8, '9']\n")
    messages = [str(p) for p in problems_of(path)]
    assert any(":4: hour2: lexicon names must not end in a digit" in m for m in messages)
    assert any(":5: hour[0]: expected a string, got 8 (quote it)" in m for m in messages)


def test_mixing_single_and_pair_templates_is_reported(write_suite):
    suite = SUITE + '          - ["Do I {pos_verb} it?", "Do I?"]\n'
    problem = only_problem(write_suite(suite, lexicons=LEXICONS))
    assert problem.line == 11 and "templates are single inputs" in problem.message


def test_more_distinct_copies_than_words_is_reported(write_suite):
    suite = SUITE.replace("the {air_noun}.", "{name}, {name1}, {name2} and {name3}.")
    problem = only_problem(write_suite(suite, lexicons=LEXICONS))
    assert "no fill" in problem.message


def test_every_problem_is_reported_at_once(write_suite):
    suite = SUITE.replace("label: negative", "label: bad").replace("{air_noun}", "{nope}")
    path = write_suite(
        suite.replace("[lexicons.yaml]", "[lexicons.yaml, gone.yaml]"), lexicons=LEXICONS
    )
    assert len(problems_of(path)) == 3


def test_missing_suite_file_is_an_input_error(tmp_path):
    problem = only_problem(tmp_path / "nope.yaml")
    assert problem.file == tmp_path / "nope.yaml" and "not found" in problem.message


def test_a_key_written_twice_is_reported_not_silently_overwritten(write_suite):
    problem = only_problem(
        write_suite(
            SUITE.replace("label: negative", "label: negative\n        label: positive"),
            lexicons=LEXICONS,
        )
    )
    assert (problem.line, problem.field) == (9, "capabilities[0].descriptions[0].label")
    assert "duplicate key 'label'" in problem.message
