"""Test trees on disk as JSONL: one row (a test or a topic marker) a line, in tree order.

A plain file people can diff and share. Reading names the file, the line and the
field of every problem; writing is atomic, so a failed write leaves an earlier
file whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from testaug.adaptive.tree import TestTree, TreeTest
from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_numbered_jsonl, write_jsonl

# The row checks of `TreeTest` name no field; these messages say which one they mean.
_FIELD_OF = (
    (re.compile(r"needs a non-empty input"), "input"),
    (re.compile(r"needs an output"), "output"),
    (re.compile(r"needs `watched`"), "watched"),
)


def read_tree(path: Path | str) -> TestTree:
    """The tree in a JSONL file; InputError naming file, line and field for a bad row, and the
    line of a row that repeats an earlier row's id."""
    path = Path(path)
    try:
        numbered = list(read_numbered_jsonl(path, TreeTest))
    except InputError as exc:
        raise InputError([_with_field(problem) for problem in exc.problems]) from exc
    seen: dict[str, int] = {}
    problems = []
    for line, row in numbered:
        if row.id in seen:
            problems.append(
                Problem(f"repeats the row on line {seen[row.id]} (same id)", path, line, "id")
            )
        seen.setdefault(row.id, line)
    if problems:
        raise InputError(problems)
    return TestTree(rows=tuple(row for _, row in numbered))


def write_tree(path: Path | str, tree: TestTree | Iterable[TreeTest]) -> int:
    """Write a tree as JSONL, atomically; returns the rows written. Refuses (ValueError, nothing
    written) a tree with two rows of one id, which `read_tree` would not read back."""
    rows = list(tree.rows if isinstance(tree, TestTree) else tree)
    ids: set[str] = set()
    for row in rows:
        if row.id in ids:
            raise ValueError(f"two rows have the id {row.id} ({row.topic})")
        ids.add(row.id)
    return write_jsonl(path, rows)


def _with_field(problem: Problem) -> Problem:
    """The problem with its field filled in from the message where the row check named none."""
    if problem.field:
        return problem
    for pattern, field in _FIELD_OF:
        if pattern.search(problem.message):
            return Problem(problem.message, problem.file, problem.line, field)
    return problem
