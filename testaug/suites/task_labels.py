"""The labels of a task, by one policy: labels given by the user win; otherwise the shipped
suite of the task, with every label the cases themselves carry."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import count
from pathlib import Path
from typing import Any, TypeVar

from testaug.core.bundled import bundled_suites, resolve_suite
from testaug.core.errors import InputError, Problem
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


CaseT = TypeVar("CaseT")


def checked(cases: Iterable[CaseT], file: Path | str) -> list[CaseT]:
    """The cases (read from `file`) as a list, once each label is one of its task's labels."""
    listed = list(cases)
    check_labels(listed, file=file)
    return listed


def known_labels(task: str, given: Iterable[str] | None = None) -> tuple[str, ...]:
    """The labels a case of `task` may carry: those given, else the shipped suite's; none
    (nothing to check) for a task without a shipped suite when none are given."""
    labels = tuple(label for label in given or () if label)
    return labels or tuple(bundled_labels_and_lexicons(task)[0])


def check_labels(
    labelled: Iterable[Any],
    task: str | None = None,
    known: Iterable[str] | None = None,
    *,
    file: Path | str | None,
    field: str = "label",
    lines: Iterable[int] | None = None,
) -> None:
    """Raise InputError (file, line, `field`, the task's labels) for every label outside its
    task's labels: cases and candidates carry their task, bare labels (None: skipped) are of
    `task`.     `known` overrides the task's labels; `lines` numbers the items (default 1, 2, ...)."""
    given = tuple(known) if known is not None else None
    cache: dict[str, tuple[str, ...]] = {}
    problems = []
    numbers = iter(lines) if lines is not None else count(1)
    for item, line in zip(labelled, numbers, strict=False):
        bare = item is None or isinstance(item, str | tuple)
        item_task, label = (task, item) if bare else (item.task, item.label)
        if label is None or item_task is None:
            continue
        if item_task not in cache:
            cache[item_task] = known_labels(item_task, given)
        allowed = cache[item_task]
        unknown = [option for option in label_options(label) if option not in allowed]
        if allowed and unknown:
            message = (
                f"label {unknown[0]!r} is not a label of task {item_task!r} "
                f"(its labels: {', '.join(allowed)})"
            )
            problems.append(Problem(message, file, line, field))
    if problems:
        raise InputError(problems)
