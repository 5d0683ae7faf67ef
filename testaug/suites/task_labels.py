"""The labels of a task, by one policy: labels given by the user win; otherwise the shipped
suite of the task, with every label the cases themselves carry."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import count
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

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
    lines: Iterable[int | None] | None = None,
    cache: dict[str, tuple[str, ...]] | None = None,
) -> None:
    """Raise InputError (file, line, `field`, the task's labels) for every label outside its
    task's labels: cases and candidates carry their task, bare labels (None: skipped) are of
    `task`. `known` overrides the task's labels; `lines` numbers the items (default 1, 2, ...).
    `cache` keeps each task's labels between calls: a caller checking one item at a time
    passes the same dict (and the same `known`), so each shipped suite is parsed once."""
    given = tuple(known) if known is not None else None
    cache = {} if cache is None else cache
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


class PaperTask(BaseModel):
    """A task name used by a paper or a dataset: the bundled task it is, and the order of its
    numeric labels as that dataset documents them (label 0 first)."""

    name: str
    task: str
    numeric: tuple[str, ...]


# The bundled tasks whose cases are pairs of texts (their suites' templates are pairs).
PAIR_TASKS = frozenset({"paraphrase", "nli"})

_SENTIMENT3 = ("negative", "neutral", "positive")  # CheckList's and TestAug's 0, 1, 2
_SENTIMENT2 = ("negative", "positive")  # GLUE SST-2
_PARAPHRASE = ("not_duplicate", "duplicate")  # GLUE QQP, PAWS, MRPC; CheckList's QQP suite
_NLI = ("entailment", "neutral", "contradiction")  # GLUE MNLI, SNLI, ANLI, XNLI
_PAPER_TASKS: dict[str, tuple[str, tuple[str, ...]]] = {
    "sentiment": ("sentiment", _SENTIMENT3),
    "sa": ("sentiment", _SENTIMENT3),
    "sent": ("sentiment", _SENTIMENT3),
    "sst": ("sentiment", _SENTIMENT3),
    "sst3": ("sentiment", _SENTIMENT3),
    "sst2": ("sentiment", _SENTIMENT2),
    "paraphrase": ("paraphrase", _PARAPHRASE),
    "pd": ("paraphrase", _PARAPHRASE),
    "para": ("paraphrase", _PARAPHRASE),
    "qqp": ("paraphrase", _PARAPHRASE),
    "paws": ("paraphrase", _PARAPHRASE),
    "mrpc": ("paraphrase", _PARAPHRASE),
    "nli": ("nli", _NLI),
    "mnli": ("nli", _NLI),
    "snli": ("nli", _NLI),
    "anli": ("nli", _NLI),
    "xnli": ("nli", _NLI),
    "lonli": ("nli", _NLI),
}


def paper_task(name: str) -> PaperTask | None:
    """The bundled task a paper's or dataset's task name stands for (`qqp`, `SST-2`,
    `glue/mnli`: case, `-`, `_` and a `glue/` prefix do not matter), or None."""
    key = name.strip().lower().rsplit("/", 1)[-1].replace("-", "").replace("_", "")
    found = _PAPER_TASKS.get(key)
    return PaperTask(name=name, task=found[0], numeric=found[1]) if found else None


def bundled_task(name: str) -> str:
    """The bundled task a task name stands for, or the name itself when it is none of them."""
    found = paper_task(name)
    return found.task if found else name


def documented_orders() -> dict[str, tuple[str, ...]]:
    """Each known task name with its numeric labels in order (for help and the README)."""
    return {name: numeric for name, (_, numeric) in _PAPER_TASKS.items()}
