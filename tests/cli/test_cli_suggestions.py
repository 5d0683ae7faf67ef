"""`testaug suggestions review|push|pull` as a user runs them: keys piped into stdin for the
terminal; Label Studio through the fake client of tests/review."""

from __future__ import annotations

import pytest

from testaug.adaptive.review_label_studio import ACCEPT
from testaug.adaptive.tree_files import read_tree, write_tree
from testaug.adaptive.verdicts import read_verdicts
from testaug.core.jsonl import write_jsonl
from tests.adaptive.suggestion_helpers import suggestions, tree
from tests.adaptive.test_suggestion_review_label_studio import answer
from tests.cli_runner import run_testaug
from tests.review.fake_label_studio import FakeLabelStudioClient, connect


@pytest.fixture
def round_dir(tmp_path):
    folder = tmp_path / "round-1"
    write_jsonl(folder / "suggestions.jsonl", suggestions())
    write_tree(tmp_path / "tree.jsonl", tree())
    return folder


def test_review_in_the_terminal_saves_verdicts_adds_to_the_tree_and_resumes(round_dir):
    tree_path = round_dir.parent / "tree.jsonl"
    args = ("suggestions", "review", "suggestions.jsonl", "--tree", str(tree_path))
    first = run_testaug(round_dir, *args, "--annotator", "ann", input="a")
    assert first.returncode == 0, first.stderr
    assert "1 judged (1 accepted" in first.stdout and "1 new tests" in first.stdout
    second = run_testaug(round_dir, *args, "--annotator", "ann", input="io")
    assert second.returncode == 0, second.stderr
    assert "1 judged before" in second.stdout and "2 judged" in second.stdout
    assert len(read_verdicts(round_dir / "verdicts.jsonl")) == 3
    added = [row for row in read_tree(tree_path).tests if row.source == "suggestion"]
    assert [(row.input, row.labeler) for row in added] == [("It is not great at all.", "ann")]


def test_a_missing_tree_is_one_line_naming_it(round_dir):
    done = run_testaug(
        round_dir, "suggestions", "review", "suggestions.jsonl", "--tree", "nope.jsonl", input="a"
    )
    assert done.returncode == 1 and "nope.jsonl" in done.stderr
    assert "Traceback" not in done.stderr


def test_push_and_pull_through_label_studio(round_dir, monkeypatch):
    client = FakeLabelStudioClient()
    monkeypatch.setattr(
        "testaug.steps.review.connect_label_studio", lambda url, api_key: connect(client)
    )
    tree_path = round_dir.parent / "tree.jsonl"
    pushed = run_testaug(round_dir, "suggestions", "push", "suggestions.jsonl")
    assert pushed.returncode == 0, pushed.stderr
    assert "project 'testaug suggestions round-1' (created" in pushed.stdout
    assert "3 imported" in pushed.stdout
    again = run_testaug(round_dir, "suggestions", "push", "suggestions.jsonl")
    assert "0 imported, 3 already there" in again.stdout

    answer(client, suggestions()[0].id, 1, ACCEPT)
    pulled = run_testaug(
        round_dir,
        "suggestions",
        "pull",
        "suggestions.jsonl",
        "--tree",
        str(tree_path),
    )
    assert pulled.returncode == 0, pulled.stderr
    assert "1 verdicts (1 new" in pulled.stdout and "1 new tests" in pulled.stdout
    added = [row for row in read_tree(tree_path).tests if row.source == "suggestion"]
    assert [row.labeler for row in added] == ["ann@example.org"]


def test_apply_adds_what_a_verdicts_file_accepts_to_the_tree(round_dir):
    tree_path = round_dir.parent / "tree.jsonl"
    judged = run_testaug(
        round_dir, "review", "tests", "terminal", "suggestions.jsonl", "--tree", str(tree_path),
        "--annotator", "ann", input="a",
    )  # fmt: skip
    assert judged.returncode == 0, judged.stderr
    fresh = round_dir.parent / "fresh-tree.jsonl"
    write_tree(fresh, tree())
    args = ("suggestions.jsonl", "--tree", str(fresh))  # the verdicts beside them by default
    applied = run_testaug(round_dir, "review", "tests", "apply", *args)
    assert applied.returncode == 0, applied.stderr
    assert f"tree {fresh}: 1 accepted suggestions, 1 new tests" in applied.stdout
    assert read_tree(fresh).tests == read_tree(tree_path).tests
    again = run_testaug(
        round_dir, "review", "tests", "apply", *args, "--verdicts", "verdicts.jsonl"
    )
    assert "1 accepted suggestions, 0 new tests" in again.stdout
