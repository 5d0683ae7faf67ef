"""Label maps: a tree's output labels renamed to the labels a model predicts.

AdaTest's trees name labels as their authors' models did: its hotel tree says
`neg` and `pos`, others `POSITIVE`. A label map (`--label-map neg=negative,pos=positive`)
renames them where a tree is read. The labels a map touches are those of label tests
("should be" / "should not be"; each part of "a|b"), the watched label of DIR tests and
the output of tests without a verdict yet; INV outputs are inputs and stay as they are.

Before a tree is applied to a model, every label it tests must be one of the model's
labels. A label that is not, and is not mapped, is resolved by default when it is the
model's label in another case (`POSITIVE`) or one of AdaTest's short labels (`neg`,
`neu`, `pos`); any other is an error naming the test and the flag that maps it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from testaug.adaptive.tree import TestTree, TreeTest
from testaug.adaptive.tree_lines import row_lines
from testaug.core.errors import InputError, Problem
from testaug.evaluation.expectations import is_binary_sentiment

DEFAULT_SHORT_LABELS = {"neg": "negative", "neu": "neutral", "pos": "positive"}
FLAG = "--label-map"


def parse_label_map(text: str | None, *, field: str = FLAG) -> dict[str, str]:
    """`from=to` pairs, comma-separated, as a mapping ({} for none); InputError naming
    `field` for a pair without both sides or a label mapped twice."""
    mapping: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        source, equals, target = (side.strip() for side in part.partition("="))
        if not equals or not source or not target:
            raise InputError(
                Problem(
                    f"expected FROM=TO pairs such as neg=negative; got {part.strip()!r}",
                    field=field,
                )
            )
        if source in mapping:
            raise InputError(Problem(f"the label {source!r} is mapped twice", field=field))
        mapping[source] = target
    return mapping


def map_labels(tree: TestTree, mapping: Mapping[str, str]) -> TestTree:
    """The tree with its labels renamed by `mapping` (see the module). A row keeps its id
    when it was given one (AdaTest's); an id made from the row's content is made anew."""
    if not mapping:
        return tree
    return TestTree(rows=tuple(_mapped(row, mapping) for row in tree.rows))


def resolve_labels(
    tree: TestTree,
    labels: Sequence[str],
    *,
    mapping: Mapping[str, str] | None = None,
    tree_file: Path | str | None = None,
) -> TestTree:
    """The tree with `mapping` applied and every other label a test names that `labels` lack
    resolved by default (see the module); InputError naming the first test of each label
    that stays unknown (and its line, when `tree_file` is the file the tree was read from),
    with the `--label-map` that would map it."""
    lines = row_lines(tree, tree_file)
    line_of_row = [lines.get(row.id) for row in tree.rows]  # rows keep their order when mapped
    tree = map_labels(tree, mapping or {})
    known = set(labels) | ({"neutral"} if is_binary_sentiment(labels) else set())
    by_fold = {label.casefold(): label for label in labels}
    defaults: dict[str, str] = {}
    problems = []
    for position, test in enumerate(tree.rows):
        if test.kind != "test":
            continue
        for label in tested_labels(test):
            if label in known or label in defaults:
                continue
            target = by_fold.get(label.casefold()) or DEFAULT_SHORT_LABELS.get(label.casefold())
            if target is not None and target in known:
                defaults[label] = target
                continue
            defaults[label] = label  # reported once, on its first test
            listed = ", ".join(labels)
            problems.append(
                Problem(
                    f"test {test.id} in {test.topic}: label {label!r} is not one of the "
                    f"model's labels ({listed}); map it with {FLAG} {label}=LABEL",
                    file=tree_file,
                    line=line_of_row[position],
                    field="watched" if label == test.watched else "output",
                )
            )
    if problems:
        raise InputError(problems)
    return map_labels(tree, {k: v for k, v in defaults.items() if k != v})


def tested_labels(test: TreeTest) -> tuple[str, ...]:
    """The labels a test checks: a label test's expected labels, a DIR test's watched label."""
    if test.comparator in ("should be", "should not be"):
        return test.expected_labels
    return (test.watched,) if test.watched else ()


def _mapped(row: TreeTest, mapping: Mapping[str, str]) -> TreeTest:
    """One row with its labels renamed."""
    update: dict[str, object] = {}
    if row.kind == "unlabelled" or (
        row.kind == "test" and row.comparator in ("should be", "should not be")
    ):
        parts = [part.strip() for part in row.output.split("|")]
        renamed = "|".join(mapping.get(part, part) for part in parts)
        if renamed != row.output and any(part in mapping for part in parts):
            update["output"] = renamed
    if row.watched is not None and row.watched in mapping:
        update["watched"] = mapping[row.watched]
    if not update:
        return row
    fields = row.model_dump(exclude={"id"})
    made_id = TreeTest(**fields).id == row.id
    return TreeTest(**{**fields, **update, "id": "" if made_id else row.id})
