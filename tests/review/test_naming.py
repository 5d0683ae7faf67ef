"""One naming rule for a review's verdicts file and Label Studio project
(testaug/review/naming.py): the names each kind had before, from one table."""

from __future__ import annotations

from pathlib import Path

from testaug.review.naming import REVIEW_KINDS, project_title, verdicts_file
from testaug.review.run_files import ReviewConfig
from testaug.steps.lexicon_review import WordsReviewConfig
from testaug.steps.suggestion_review import SuggestionReviewConfig


def test_each_kind_names_its_verdicts_file_and_project_after_the_source(tmp_path):
    run, rounds = tmp_path / "run-7", tmp_path / "round-002"
    assert verdicts_file("candidates", run / "ranked.jsonl") == run / "annotations.jsonl"
    assert project_title("candidates", run / "ranked.jsonl") == "testaug run-7"
    assert verdicts_file("tests", rounds / "suggestions.jsonl") == rounds / "verdicts.jsonl"
    assert project_title("tests", rounds / "suggestions.jsonl") == "testaug suggestions round-002"
    words = tmp_path / "love.jsonl"
    assert verdicts_file("words", words) == tmp_path / "love.verdicts.jsonl"
    assert project_title("words", words) == "testaug lexicon love"
    assert REVIEW_KINDS == ("candidates", "tests", "words")


def test_the_configs_of_the_three_kinds_use_the_rule(tmp_path):
    ranked, suggested = tmp_path / "run" / "ranked.jsonl", tmp_path / "r" / "suggestions.jsonl"
    candidates = ReviewConfig(ranked=ranked)
    assert candidates.annotations_path() == verdicts_file("candidates", ranked)
    assert candidates.project_name() == project_title("candidates", ranked)
    tests = SuggestionReviewConfig(suggestions=suggested)
    assert tests.verdicts_file("t") == verdicts_file("tests", suggested)
    assert tests.push_target("t") == (
        suggested, project_title("tests", suggested), suggested.parent / "label-studio-projects.json"
    )  # fmt: skip
    words = WordsReviewConfig(suite=Path("suite.yaml"), verdicts=tmp_path / "v.jsonl", project="p")
    assert words.pull_target("t")[2] == tmp_path / "label-studio-projects.json"
