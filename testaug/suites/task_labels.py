"""The labels of a task, by one policy: labels given by the user win; otherwise the shipped
suite of the task, with every label the cases themselves carry."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from testaug.core.bundled import bundled_suites, resolve_suite
from testaug.core.records import TestCase, label_options
from testaug.suites.load import load_suite


def bundled_labels_and_lexicons(task: str) -> tuple[list[str], dict[str, Any]]:
    """The labels and lexicon words of the shipped suite of `task` (none for other tasks)."""
    if task not in bundled_suites():
        return [], {}
    suite = load_suite(resolve_suite(task))
    return list(suite.labels), suite.words()


def labels_of(labelled: Iterable[str | tuple[str, ...]]) -> set[str]:
    """Every label option the given labels name (a label may allow several)."""
    return {option for label in labelled for option in label_options(label)}


def task_labels(tasks: Iterable[str], labelled: Iterable[str | tuple[str, ...]]) -> list[str]:
    """The labels of the tasks' shipped suites and every label the given cases carry, sorted."""
    labels = labels_of(labelled)
    for task in set(tasks):
        labels |= set(bundled_labels_and_lexicons(task)[0])
    return sorted(labels)


def task_labels_and_lexicons(
    cases: list[TestCase], labels: str | None = None
) -> tuple[list[str], dict[str, Any]]:
    """The task labels (given comma-separated, or the shipped suite's, or the cases') and the
    shipped suite's lexicons (the perturbations draw words from them)."""
    suite_labels, lexicons = bundled_labels_and_lexicons(cases[0].task)
    if labels:
        return [name.strip() for name in labels.split(",") if name.strip()], lexicons
    if suite_labels:
        return suite_labels, lexicons
    return sorted(labels_of(case.label for case in cases)), lexicons
