"""Where a tree's rows are in the JSONL file it was read from, so that a problem found after
reading (an unknown label, a test a model cannot apply) names the line."""

from __future__ import annotations

from pathlib import Path

from testaug.adaptive.tree import TestTree


def row_lines(tree: TestTree, tree_file: Path | str | None) -> dict[str, int]:
    """The line of each row by id, when the file still holds one row per non-blank line as
    many as the tree has (else empty: the tree did not come from this file as it is)."""
    if tree_file is None:
        return {}
    try:
        with Path(tree_file).open(encoding="utf-8-sig") as handle:
            numbers = [number for number, line in enumerate(handle, start=1) if line.strip()]
    except (OSError, UnicodeDecodeError):
        return {}
    if len(numbers) != len(tree.rows):
        return {}
    return {row.id: number for row, number in zip(tree.rows, numbers, strict=True)}
