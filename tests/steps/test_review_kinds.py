"""Every kind of review behind the same four verbs (testaug.steps.review_kinds): each kind is
registered with a step for `terminal`, `push`, `pull` and `apply`, a config goes to the kind
its class belongs to, and suggested tests and suggested words run all four verbs through the
generic steps, each returning its kind's own summary (over the fake server of tests/review)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from testaug.adaptive.tree_files import write_tree
from testaug.core.jsonl import write_jsonl
from testaug.review.naming import REVIEW_KINDS
from testaug.review.run_files import ReviewConfig
from testaug.review.terminal import key_reader
from testaug.steps import review, review_kinds
from testaug.steps.lexicon_review import WordsReviewConfig
from testaug.steps.suggestion_review import SuggestionReviewConfig
from tests.adaptive.suggestion_helpers import suggestions, tree
from tests.editor.lexicon_suite import write_suggestions, write_suite


def test_every_kind_is_registered_with_a_step_for_each_verb():
    kinds = review_kinds.kinds()
    assert tuple(kinds) == REVIEW_KINDS
    for name, kind in kinds.items():
        assert kind.kind == name
        for verb in review_kinds.VERBS:
            assert callable(getattr(kind, verb)), f"{name} has no {verb}"


def test_candidates_go_to_the_review_steps_of_their_own():
    kind = review_kinds.kind_of(ReviewConfig(ranked=Path("ranked.jsonl")))
    assert kind.kind == "candidates"
    steps = (kind.terminal, kind.push, kind.pull, kind.apply)
    assert steps == (
        review.review_in_terminal,
        review.push_to_label_studio,
        review.pull_and_merge,
        review.merge_reviewed,
    )
    with pytest.raises(TypeError, match="no kind of review takes a str"):
        review_kinds.kind_of("ranked.jsonl")


def tree_review(tmp_path: Path) -> tuple[SuggestionReviewConfig, str]:
    write_jsonl(tmp_path / "suggestions.jsonl", suggestions())
    write_tree(tmp_path / "tree.jsonl", tree())
    config = SuggestionReviewConfig(
        suggestions=tmp_path / "suggestions.jsonl", tree=tmp_path / "tree.jsonl"
    )
    return config, "a"  # accept into the focus topic


def words_review(tmp_path: Path) -> tuple[WordsReviewConfig, str]:
    suite = write_suite(tmp_path / "suite") / "suite.yaml"
    words = write_suggestions(tmp_path / "suggestions.jsonl")
    return WordsReviewConfig(suite=suite, suggestions=words, lexicons=("pos_verb",)), "k"


OUTPUTS = {
    "tests": ("suggestion-review", "suggestion-push", "suggestion-pull", "suggestion-add"),
    "words": ("lexicon-review", "lexicon-push", "lexicon-pull", "lexicon-apply"),
}


@pytest.mark.parametrize("name", ["tests", "words"])
def test_the_four_verbs_run_each_kind_through_the_generic_steps(name, tmp_path, studio):
    config, keep = {"tests": tree_review, "words": words_review}[name](tmp_path)
    assert review_kinds.kind_of(config).kind == name
    reviewer = config.model_copy(update={"annotator": "ann"})
    judged = review_kinds.review_in_terminal(
        reviewer, read_key=key_reader(io.StringIO(keep)), console=Console(file=io.StringIO())
    )
    pushed = review_kinds.push_for_review(config, studio=studio)
    pulled = review_kinds.pull_verdicts(config, studio=studio)
    applied = review_kinds.apply_verdicts(config)
    outputs = (judged, pushed, pulled, applied)
    assert tuple(output.summary.kind for output in outputs) == OUTPUTS[name]
    assert judged.summary.judged == 1 and pulled.summary.verdicts == 0
    assert pushed.summary.imported == pushed.records > 0
    assert pushed.path == config.suggestions
    verdicts = config.verdicts_file("test")
    assert verdicts.exists() and judged.files.get("verdicts", verdicts) == verdicts
