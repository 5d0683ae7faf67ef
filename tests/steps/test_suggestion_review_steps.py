"""The suggestion review steps on files: verdicts saved, accepted suggestions added to the
tree file with who accepted them, a Label Studio round trip (the fake client) into the tree."""

from __future__ import annotations

import io

from rich.console import Console

from testaug.adaptive.review_label_studio import ACCEPT, ACCEPT_ELSEWHERE
from testaug.adaptive.suggestion import SuggestionVerdict
from testaug.adaptive.tree_files import read_tree, write_tree
from testaug.adaptive.verdicts import merge_verdicts, read_verdicts, save_verdicts
from testaug.core.jsonl import write_jsonl
from testaug.review.terminal import key_reader
from testaug.steps.adapt import AdaptConfig
from testaug.steps.suggestion_review import (
    SuggestionReviewConfig,
    add_verdicts_file,
    pull_into_tree,
    push_suggestions_file,
    review_in_terminal,
)
from tests.adaptive.suggestion_helpers import suggestions, tree
from tests.adaptive.test_suggestion_review_label_studio import PROJECT, answer


def files(tmp_path):
    write_jsonl(tmp_path / "suggestions.jsonl", suggestions())
    write_tree(tmp_path / "tree.jsonl", tree())
    return tmp_path / "suggestions.jsonl", tmp_path / "tree.jsonl", tmp_path / "verdicts.jsonl"


def test_a_terminal_review_saves_verdicts_and_adds_the_accepted_to_the_tree(tmp_path):
    suggestions_path, tree_path, verdicts_path = files(tmp_path)
    config = SuggestionReviewConfig(
        suggestions=suggestions_path, tree=tree_path, verdicts=verdicts_path, annotator="ann"
    )
    done = review_in_terminal(
        config,
        read_key=key_reader(io.StringIO("at1\ni")),
        console=Console(file=io.StringIO()),
    )
    assert done.summary.accepted == 2 and done.summary.tree.added == 2
    assert done.path == tree_path and done.records == len(tree()) + 2
    assert done.files == {"verdicts": verdicts_path}
    grown = read_tree(tree_path)
    assert len(grown) == len(tree()) + 2
    new = [row for row in grown.tests if row.source == "suggestion"]
    assert {(row.topic, row.labeler) for row in new} == {
        ("/Negation", "ann"),
        ("/Negation/Negated positive", "ann"),
    }
    assert all(row.scores for row in new)  # the failure scores come along
    assert len(read_verdicts(verdicts_path)) == 3


def test_adding_the_same_verdicts_twice_leaves_the_tree_file_as_it_was(tmp_path):
    suggestions_path, tree_path, verdicts_path = files(tmp_path)
    save_verdicts(
        verdicts_path,
        [SuggestionVerdict(suggestion_id=suggestions()[0].id, decision="accept", annotator="a")],
    )
    config = SuggestionReviewConfig(
        suggestions=suggestions_path, tree=tree_path, verdicts=verdicts_path
    )
    assert add_verdicts_file(config).summary.tree.added == 1
    before = tree_path.read_bytes()
    again = add_verdicts_file(config).summary.tree
    assert again.added == 0 and again.accepted == 1 and tree_path.read_bytes() == before


def test_a_changed_verdict_replaces_the_persons_earlier_one():
    sid = suggestions()[0].id
    first = SuggestionVerdict(suggestion_id=sid, decision="accept", annotator="ann")
    second = SuggestionVerdict(suggestion_id=sid, decision="reject_invalid", annotator="ann")
    other = SuggestionVerdict(suggestion_id=sid, decision="accept", annotator="bob")
    update = merge_verdicts([first], [second, other])
    assert update.verdicts == [second, other] and (update.added, update.changed) == (1, 1)


def test_push_then_pull_brings_verdicts_into_the_file_and_the_tree(tmp_path, fake_client, studio):
    suggestions_path, tree_path, verdicts_path = files(tmp_path)
    config = SuggestionReviewConfig(
        suggestions=suggestions_path, tree=tree_path, verdicts=verdicts_path, project=PROJECT
    )
    pushed = push_suggestions_file(config, studio=studio)
    assert pushed.summary.imported == 3 and pushed.summary.project == PROJECT
    assert pushed.path == suggestions_path and pushed.records == 3
    items = suggestions()
    answer(fake_client, items[0].id, 1, ACCEPT)
    answer(fake_client, items[1].id, 2, ACCEPT_ELSEWHERE, "/Sarcasm")
    answer(fake_client, items[2].id, 2, "reject: invalid")
    pull = SuggestionReviewConfig(tree=tree_path, verdicts=verdicts_path, project=PROJECT)
    done = pull_into_tree(pull, studio=studio).summary
    assert (done.added, done.tree.accepted, done.tree.added) == (3, 2, 2)
    grown = read_tree(tree_path)
    assert {(r.topic, r.labeler) for r in grown.tests if r.source == "suggestion"} == {
        ("/Negation", "ann@example.org"),
        ("/Sarcasm", "bob@example.org"),
    }
    again = pull_into_tree(pull, studio=studio).summary
    assert (again.added, again.changed, again.tree.added) == (0, 0, 0)


def rounds(tmp_path):
    """A work folder with two rounds of suggestions (the second: one new suggestion) and the
    tree file beside it."""
    from testaug.steps.suggestion_review import round_folder

    work = tmp_path / "adapt"
    items = suggestions()
    write_jsonl(round_folder(work, 1) / "suggestions.jsonl", items[:2])
    write_jsonl(round_folder(work, 2) / "suggestions.jsonl", items[2:])
    write_tree(tmp_path / "tree.jsonl", tree())
    return work, tmp_path / "tree.jsonl", items


def loop(work, tree_path, **fields) -> AdaptConfig:
    """The adapt loop of a work folder and tree (its topic and model are not read here)."""
    return AdaptConfig(tree=tree_path, topic="/Negation", models=("m",), work_dir=work, **fields)


def test_rounds_are_listed_in_number_order_and_verdicts_go_to_the_round_they_judge(tmp_path):
    from testaug.steps.suggestion_review import gather_rounds, round_folder, round_folders

    work, tree_path, items = rounds(tmp_path)
    write_jsonl(round_folder(work, 10) / "suggestions.jsonl", [])
    (work / "round-x").mkdir()
    assert [f.name for f in round_folders(work)] == ["round-001", "round-002", "round-010"]
    incoming = [
        SuggestionVerdict(suggestion_id=items[0].id, decision="accept", annotator="ann"),
        SuggestionVerdict(suggestion_id=items[2].id, decision="accept", annotator="ann"),
        SuggestionVerdict(suggestion_id="not-a-suggestion", decision="accept", annotator="ann"),
    ]
    write_jsonl(tmp_path / "incoming.jsonl", incoming)
    config = loop(work, tree_path, verdicts=tmp_path / "incoming.jsonl")
    done = gather_rounds(config).summary
    assert (done.rounds, done.verdicts, done.new_verdicts, done.added) == (3, 2, 2, 2)
    assert done.latest_verdicts == 0  # round 10 has none yet
    assert [v.suggestion_id for v in read_verdicts(round_folder(work, 2) / "verdicts.jsonl")] == [
        items[2].id
    ]
    again = gather_rounds(config).summary
    assert (again.new_verdicts, again.added, again.accepted) == (0, 0, 2)


def test_pulled_verdicts_are_saved_by_round_and_join_the_tree(tmp_path, fake_client, studio):
    from testaug.adaptive.review_label_studio import push_suggestions
    from testaug.steps.suggestion_review import pull_rounds

    work, tree_path, items = rounds(tmp_path)
    push_suggestions(studio, PROJECT, items)
    answer(fake_client, items[2].id, 1, ACCEPT)
    done = pull_rounds(loop(work, tree_path, project=PROJECT), studio=studio).summary
    assert (done.new_verdicts, done.latest_verdicts, done.added) == (1, 1, 1)
    assert [r.labeler for r in read_tree(tree_path).tests if r.source == "suggestion"] == [
        "ann@example.org"
    ]


def test_pulling_rounds_from_a_project_not_created_yet_finds_no_verdicts(tmp_path, studio):
    from testaug.steps.suggestion_review import pull_rounds

    work, tree_path, _ = rounds(tmp_path)
    done = pull_rounds(loop(work, tree_path, project="never pushed"), studio=studio).summary
    assert (done.rounds, done.verdicts, done.added) == (2, 0, 0)
