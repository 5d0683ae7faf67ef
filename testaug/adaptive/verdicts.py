"""Verdict files: people's verdicts on suggestions, one per line, saved as they are given,
and the accepted suggestions added to a test tree. Both files are changed under their
write lock, so concurrent reviewers lose nothing."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from testaug.adaptive.suggestion import Suggestion, SuggestionVerdict, accepted_tests
from testaug.adaptive.tree import TestTree
from testaug.adaptive.tree_files import read_tree, write_tree
from testaug.core.file_lock import locked
from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.core.runs import remove_stale_temporaries


def read_verdicts(path: Path) -> list[SuggestionVerdict]:
    """The verdicts in a file (none when it does not exist yet); errors name file and line."""
    return list(read_jsonl(path, SuggestionVerdict)) if path.exists() else []


def read_suggestions(path: Path) -> list[Suggestion]:
    """The suggestions of a suggestions file; errors name file and line."""
    return list(read_jsonl(path, Suggestion))


@dataclass(frozen=True)
class VerdictUpdate:
    """Verdicts after a merge, and how many were new or changed an earlier one."""

    verdicts: list[SuggestionVerdict]
    added: int
    changed: int


def merge_verdicts(
    existing: Sequence[SuggestionVerdict], incoming: Iterable[SuggestionVerdict]
) -> VerdictUpdate:
    """One verdict per suggestion and annotator: an incoming one replaces that person's
    earlier verdict in place (and counts as changed when it differs); new ones go last."""
    merged = {(v.suggestion_id, v.annotator): v for v in existing}
    added = changed = 0
    for verdict in incoming:
        key = (verdict.suggestion_id, verdict.annotator)
        before = merged.get(key)
        if before is None:
            added += 1
        elif before != verdict:
            changed += 1
        merged[key] = verdict
    return VerdictUpdate(list(merged.values()), added, changed)


def save_verdicts(path: Path, incoming: Iterable[SuggestionVerdict]) -> VerdictUpdate:
    """Merge verdicts into the file at `path` (see `merge_verdicts`), rewriting it atomically
    while holding its write lock (and removing what killed writes left in its folder)."""
    incoming = list(incoming)
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(path):
        remove_stale_temporaries(path.parent)
        update = merge_verdicts(read_verdicts(path), incoming)
        write_jsonl(path, update.verdicts)
    return update


def judged_by(verdicts: Iterable[SuggestionVerdict], annotator: str) -> set[str]:
    """The suggestions `annotator` has given a verdict on."""
    return {v.suggestion_id for v in verdicts if v.annotator == annotator}


@dataclass(frozen=True)
class TreeAddition:
    """A tree with accepted suggestions added: how many tests were new to it."""

    tree: TestTree
    accepted: int
    added: int


def add_accepted(
    tree: TestTree, suggestions: Sequence[Suggestion], verdicts: Sequence[SuggestionVerdict]
) -> TreeAddition:
    """The tree with the tests the verdicts accept (in their topics, labelled with who accepted
    them); a test already in the tree (same topic and test) is replaced, not repeated.
    Adding is additive: a later rejection does not take out a test accepted before."""
    # A suggestion offered in two rounds is one test.
    accepted = list({t.id: t for t in accepted_tests(list(suggestions), list(verdicts))}.values())
    before = {row.id for row in tree.rows}
    grown = tree.with_rows(accepted)
    added = len({test.id for test in accepted} - before)
    return TreeAddition(grown, len(accepted), added)


def add_accepted_to_file(
    tree_path: Path, suggestions: Sequence[Suggestion], verdicts: Sequence[SuggestionVerdict]
) -> TreeAddition:
    """`add_accepted` on the tree file at `tree_path`, read and rewritten (only when something
    is new) while holding its write lock (and removing what killed writes left in its
    folder)."""
    with locked(tree_path):
        remove_stale_temporaries(tree_path.parent)
        addition = add_accepted(read_tree(tree_path), suggestions, verdicts)
        if addition.added:
            write_tree(tree_path, addition.tree)
    return addition
