"""Tree work from files to files, shared by `testaug tree` and the retest flow: the task's
labels, scoring a tree file on model specs, and re-testing it on one spec; and the checks
these and `testaug tree adapt` make before any work (the model specs, a topic the tree has).
A tree's labels are resolved to the models' (`label_map.resolve_labels`) before scoring."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from difflib import SequenceMatcher
from pathlib import Path

from testaug.adaptive.adatest_layout import copy_layout
from testaug.adaptive.label_map import map_labels, resolve_labels
from testaug.adaptive.retest import (
    DEFAULT_THRESHOLD,
    TreeReport,
    read_tree_report,
    retest_tree,
    write_tree_report,
)
from testaug.adaptive.scores import TestApplyError, score_tree
from testaug.adaptive.tree import ROOT, TestTree, normalize_topic
from testaug.adaptive.tree_files import read_tree, write_tree
from testaug.adaptive.tree_lines import row_lines
from testaug.core.bundled import bundled_suites
from testaug.core.errors import InputError, Problem
from testaug.evaluation.models import ModelUnderTest, check_model_specs, load_model
from testaug.suites.task_labels import bundled_labels_and_lexicons

# Topics suggested for a mistyped one, and how close (0 to 1) each must be.
TOPIC_SUGGESTIONS = 5
TOPIC_CUTOFF = 0.6


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
    """The models the specs name, predicting over the task's labels (the specs are checked
    first, before any of them loads)."""
    check_model_specs(specs)
    task_labels = tree_task_labels(task, labels)
    return [load_model(spec, task_labels=task_labels) for spec in specs]


def close_topics(topic: str, topics: Sequence[str]) -> list[str]:
    """The tree's topics nearest `topic`, best first, whole paths or their last parts
    compared case-insensitively (a topic whose last part is the one given comes first)."""
    wanted = normalize_topic(topic).casefold()
    leaf = wanted.rpartition("/")[2]

    def closeness(candidate: str) -> float:
        folded = candidate.casefold()
        whole = SequenceMatcher(None, wanted, folded).ratio()
        last = SequenceMatcher(None, leaf, folded.rpartition("/")[2]).ratio() if leaf else 0.0
        return max(whole, last)

    scored = sorted(((closeness(t), t) for t in topics), key=lambda pair: -pair[0])
    return [t for score, t in scored if score >= TOPIC_CUTOFF][:TOPIC_SUGGESTIONS]


def check_topic(
    tree: TestTree,
    topic: str,
    *,
    tree_file: Path | str,
    field: str = "topic",
    new_topic: str | None = None,
) -> str:
    """The topic normalized, when the tree has it (the root always); else an InputError
    naming `field` and the tree file, with the nearest topics ("did you mean") and, where
    `new_topic` names the flag that allows a new topic, that flag."""
    normalized = normalize_topic(topic)
    topics = tree.topics()
    if normalized == ROOT or normalized in topics:
        return normalized
    near = close_topics(normalized, topics)
    hint = f"; did you mean {' or '.join(near)}?" if near else f" (it has {len(topics)} topics)"
    allow = f"; pass {new_topic} to start a new topic there" if new_topic else ""
    raise InputError(
        Problem(f"no topic {normalized} in the tree{hint}{allow}", file=tree_file, field=field)
    )


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
    label_map: Mapping[str, str] | None = None,
) -> TestTree:
    """Score every test of a tree file on each model spec, its labels mapped by `label_map`
    (and resolved by default); the scored tree is written to `out`."""
    check_model_specs(specs)
    tree = read_tree_with_tests(tree_path)
    models = load_models(specs, task=task, labels=labels)
    tree = map_labels(tree, label_map or {})
    lines = row_lines(tree, tree_path)
    for model in models:
        tree = resolve_labels(tree, model.labels, tree_file=tree_path)
    with _located(tree, lines, tree_path):
        scored = score_tree(tree, models, batch_size=batch_size)
    write_tree(out, scored)
    copy_layout(tree_path, out)  # an AdaTest tree's scored copy exports as its file did
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
    label_map: Mapping[str, str] | None = None,
) -> TreeReport:
    """Apply a tree file to the model `spec`, its labels mapped by `label_map` (and resolved
    by default), compared with the `previous` report when given: the report is written to
    `out` (and the tree with the model's scores to `scored_tree`)."""
    check_model_specs([spec])
    tree = read_tree_with_tests(tree_path)
    lines = row_lines(tree, tree_path)
    earlier = read_tree_report(previous) if previous is not None else None
    (model,) = load_models([spec], task=task, labels=labels)
    tree = resolve_labels(tree, model.labels, mapping=label_map, tree_file=tree_path)
    with _located(tree, lines, tree_path):
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
        copy_layout(tree_path, scored_tree)
    return report


@contextmanager
def _located(tree: TestTree, lines: Mapping[str, int], tree_path: Path | str) -> Iterator[None]:
    """A test that cannot be applied, as an InputError naming the tree file and its line
    (`lines`: the line of each row as read, by id; rows keep their order when mapped)."""
    try:
        yield
    except TestApplyError as exc:
        by_position = list(lines.values())
        position = next((i for i, row in enumerate(tree.rows) if row.id == exc.test_id), None)
        line = by_position[position] if position is not None and by_position else None
        raise InputError(Problem(str(exc), file=tree_path, line=line)) from exc
