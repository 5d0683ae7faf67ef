"""The one label check: a label outside its task's labels is an error naming file, line and
field, and listing the task's labels; tasks without known labels are not checked."""

from __future__ import annotations

import pytest

from testaug.core.errors import InputError
from testaug.core.records import TestCase
from testaug.suites.task_labels import check_labels, known_labels


def case(label, task: str = "sentiment") -> TestCase:
    return TestCase(
        task=task,
        capability="Vocabulary",
        description_id="d",
        description="A sentence.",
        text="The seat was great.",
        label=label,
    )


def test_known_labels_are_the_shipped_suites_unless_given():
    assert set(known_labels("sentiment")) == {"negative", "neutral", "positive"}
    assert known_labels("sentiment", ["good", "bad"]) == ("good", "bad")
    assert known_labels("my-own-task") == ()


def test_unknown_label_names_file_line_field_and_the_tasks_labels():
    cases = [case("positive"), case("bogus")]
    with pytest.raises(InputError) as raised:
        check_labels(cases, file="cases.jsonl")
    problem = raised.value.problems[0]
    assert (problem.file, problem.line, problem.field) == ("cases.jsonl", 2, "label")
    assert "'bogus'" in problem.message
    assert "negative, neutral, positive" in problem.message


def test_every_option_of_a_label_set_is_checked():
    check_labels([case(("positive", "neutral"))], file="f")
    with pytest.raises(InputError, match="'bogus'"):
        check_labels([case(("positive", "bogus"))], file="f")


def test_bare_labels_are_of_the_given_task_and_numbered_by_lines():
    with pytest.raises(InputError) as raised:
        check_labels(["bogus"], "sentiment", file="a.jsonl", field="corrected_label", lines=[7])
    assert str(raised.value).startswith("a.jsonl:7: corrected_label: label 'bogus'")


def test_a_task_without_known_labels_is_checked_only_against_given_labels():
    check_labels([case("anything", task="my-own-task")], file="f")
    with pytest.raises(InputError, match="its labels: yes, no"):
        check_labels([case("maybe", task="my-own-task")], known=["yes", "no"], file="f")


def test_given_labels_win_over_the_shipped_suites():
    check_labels([case("good")], known=["good", "bad"], file="f")
    with pytest.raises(InputError):
        check_labels([case("positive")], known=["good", "bad"], file="f")
