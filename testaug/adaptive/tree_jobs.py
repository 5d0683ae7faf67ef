"""Tree work from files to files, shared by `testaug tree` and the retest flow: the task's
labels, scoring a tree file on model specs, and re-testing it on one spec."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from testaug.adaptive.retest import (
    DEFAULT_THRESHOLD,
    TreeReport,
    read_tree_report,
    retest_tree,
    write_tree_report,
)
from testaug.adaptive.scores import score_tree
from testaug.adaptive.tree import TestTree
from testaug.adaptive.tree_files import read_tree, write_tree
from testaug.core.bundled import bundled_suites
from testaug.core.errors import InputError, Problem
from testaug.evaluation.models import ModelUnderTest, load_model
from testaug.suites.task_labels import bundled_labels_and_lexicons


def tree_task_labels(task: str | None = None, labels: str | None = None) -> list[str]:
    """The labels models predict over: `labels` (comma-separated) when given, else those of
    the shipped suite of `task`; InputError naming the option otherwise."""
    if labels:
        given = [name.strip() for name in labels.split(",") if name.strip()]
        if given:
            return given
    if task:
        found, _ = bundled_labels_and_lexicons(task)
        if found:
            return found
        shipped = ", ".join(bundled_suites())
        raise InputError(
            Problem(f"no shipped suite for task {task!r} (shipped: {shipped})", field="--task")
        )
    raise InputError(
        Problem(
            "a tree does not say its task: give --task (a shipped suite's task) or --labels "
            "(comma-separated)",
            field="--labels",
        )
    )


def load_models(
    specs: Sequence[str], *, task: str | None = None, labels: str | None = None
) -> list[ModelUnderTest]:
    """The models the specs name, predicting over the task's labels."""
    task_labels = tree_task_labels(task, labels)
    return [load_model(spec, task_labels=task_labels) for spec in specs]


def read_tree_with_tests(path: Path | str) -> TestTree:
    """The tree in a file; InputError when it has no test (markers only, or empty)."""
    tree = read_tree(path)
    if not tree.tests:
        raise InputError(Problem("the tree has no tests", file=path))
    return tree


def score_file(
    tree_path: Path | str,
    specs: Sequence[str],
    out: Path | str,
    *,
    task: str | None = None,
    labels: str | None = None,
    batch_size: int = 32,
) -> TestTree:
    """Score every test of a tree file on each model spec; the scored tree is written to `out`."""
    tree = read_tree_with_tests(tree_path)
    scored = score_tree(tree, load_models(specs, task=task, labels=labels), batch_size=batch_size)
    write_tree(out, scored)
    return scored


def retest_file(
    tree_path: Path | str,
    spec: str,
    out: Path | str,
    *,
    previous: Path | str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    task: str | None = None,
    labels: str | None = None,
    scored_tree: Path | str | None = None,
    when: datetime | None = None,
    batch_size: int = 32,
) -> TreeReport:
    """Apply a tree file to the model `spec`, compared with the `previous` report when given:
    the report is written to `out` (and the tree with the model's scores to `scored_tree`)."""
    tree = read_tree_with_tests(tree_path)
    earlier = read_tree_report(previous) if previous is not None else None
    (model,) = load_models([spec], task=task, labels=labels)
    scored, report = retest_tree(
        tree,
        model,
        tree_file=tree_path,
        previous=earlier,
        threshold=threshold,
        when=when,
        batch_size=batch_size,
    )
    write_tree_report(out, report)
    if scored_tree is not None:
        write_tree(scored_tree, scored)
    return report
