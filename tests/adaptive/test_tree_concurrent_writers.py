"""Several processes on one test tree or one verdicts file at once: reviewers accepting
into one tree keep every accepted test, a reader never trips over a writer, and verdicts
saved together are all kept."""

from __future__ import annotations

from testaug.adaptive.suggestion import SuggestionVerdict
from testaug.adaptive.tree import TestTree, TreeTest
from testaug.adaptive.tree_files import read_tree, write_tree
from testaug.adaptive.verdicts import read_verdicts, save_verdicts
from testaug.steps.suggestion_review import add_to_tree
from tests.adaptive.suggestion_helpers import suggestion, tree
from tests.cli_runner import HANG_TIMEOUT
from tests.core.concurrent_processes import CONTEXT, run_together

ACCEPTS = 10


def _mine(annotator):
    return [suggestion(f"{annotator} does not like test {i}.", 0.5) for i in range(ACCEPTS)]


def _accept_one_by_one(tree_path, annotator):
    added = 0
    for item in _mine(annotator):
        verdict = SuggestionVerdict(suggestion_id=item.id, decision="accept", annotator=annotator)
        added += add_to_tree(tree_path, [item], [verdict]).added
    return added


def test_two_reviewers_accepting_into_one_tree_keep_every_accepted_test(tmp_path):
    tree_path = tmp_path / "tree.jsonl"
    write_tree(tree_path, tree())
    added = run_together(_accept_one_by_one, [(tree_path, "ann"), (tree_path, "bob")])
    assert added == [ACCEPTS, ACCEPTS]
    grown = read_tree(tree_path)
    inputs = {row.input for row in grown.rows}
    assert {item.test.input for who in ("ann", "bob") for item in _mine(who)} <= inputs
    assert len(grown) == len(tree()) + 2 * ACCEPTS


def _grow(tree_path, done):
    rows = []
    try:
        for i in range(60):
            rows.append(TreeTest(topic="/Grown", input=f"test {i}", output="positive"))
            write_tree(tree_path, TestTree(rows=tuple(rows)))
    finally:
        done.set()


def _read_until(tree_path, done):
    sizes = set()
    while not done.is_set():
        sizes.add(len(read_tree(tree_path)))
    sizes.add(len(read_tree(tree_path)))
    return sorted(sizes)


def test_reading_a_tree_while_another_process_rewrites_it_never_fails(tmp_path):
    tree_path = tmp_path / "tree.jsonl"
    write_tree(tree_path, [])
    done = CONTEXT.Event()
    writer = CONTEXT.Process(target=_grow, args=(tree_path, done))
    writer.start()
    try:
        sizes = run_together(_read_until, [(tree_path, done)])[0]
    finally:
        writer.join(HANG_TIMEOUT)
    assert writer.exitcode == 0
    assert sizes[-1] == 60


def _save_one_by_one(path, annotator):
    for item in _mine("shared"):
        verdict = SuggestionVerdict(
            suggestion_id=item.id, decision="reject_invalid", annotator=annotator
        )
        save_verdicts(path, [verdict])


def test_two_reviewers_saving_verdicts_to_one_file_keep_every_verdict(tmp_path):
    path = tmp_path / "verdicts.jsonl"
    run_together(_save_one_by_one, [(path, "ann"), (path, "bob")])
    saved = {(v.suggestion_id, v.annotator) for v in read_verdicts(path)}
    ids = [item.id for item in _mine("shared")]
    assert saved == {(i, who) for i in ids for who in ("ann", "bob")}
