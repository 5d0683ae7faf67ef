"""Each review step records its Label Studio project beside what it reviews (a run folder's
candidates, a round's suggestions, the adapt work folder's rounds, suggested words) and
uses the recorded project afterwards, whatever else shares its title; over the fake server
of tests/review."""

from __future__ import annotations

from pathlib import Path

import pytest

from testaug.adaptive.review_label_studio import ACCEPT
from testaug.adaptive.tree_files import write_tree
from testaug.core.jsonl import write_jsonl
from testaug.editor.review_label_studio import VERDICT, choice_for
from testaug.review.label_studio import LabelStudioError
from testaug.review.project_record import PROJECT_RECORD, read_record
from testaug.steps import review
from testaug.steps.adapt import AdaptConfig
from testaug.steps.lexicon_review import WordsReviewConfig, pull_into_lexicons, push_words_file
from testaug.steps.review import ReviewConfig
from testaug.steps.suggestion_review import (
    SuggestionReviewConfig,
    pull_into_tree,
    pull_rounds,
    push_suggestions_file,
    round_folder,
)
from tests.adaptive.suggestion_helpers import suggestions, tree
from tests.adaptive.test_suggestion_review_label_studio import PROJECT as SUGGESTIONS_PROJECT
from tests.adaptive.test_suggestion_review_label_studio import answer as answer_suggestion
from tests.editor.lexicon_suite import write_suggestions, write_suite
from tests.tiny_models import VOUCHED_CURVE, make_calibration, write_ranked_run

RUN_PROJECT = "tiny run"


def recorded_ids(path: Path) -> list[int]:
    return [entry.id for entry in read_record(path).projects]


def same_title(studio, title: str) -> int:
    """Another review's project of the same title (marked as testaug's), holding nothing:
    without the record, testaug could not tell which is meant."""
    return studio.create_project(title, label_config="<View/>")


@pytest.fixture
def run_config(tmp_path: Path) -> ReviewConfig:
    run = write_ranked_run(
        tmp_path / "run",
        [f"Case {i} is nice." for i in range(10)],
        p_valid=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.9, 0.92, 0.95],
        calibration=make_calibration(m=VOUCHED_CURVE),
    )
    return ReviewConfig(ranked=run / "ranked.jsonl", project=RUN_PROJECT, top=0.3)


def test_candidates_pushed_record_the_project_in_the_run_folder_and_pull_from_it(
    run_config, studio, fake_client
):
    pushed = review.push_to_label_studio(run_config, studio=studio).summary
    record = run_config.ranked.parent / PROJECT_RECORD
    assert recorded_ids(record) == [pushed.project_id]
    other = same_title(studio, RUN_PROJECT)
    again = review.push_to_label_studio(run_config, studio=studio).summary
    assert (again.project_id, again.created, again.already_present) == (pushed.project_id, False, 3)
    first = fake_client.store[pushed.project_id].tasks[0]["data"]["candidate_id"]
    fake_client.answer(RUN_PROJECT, first, 1, validity="valid")  # the first titled: ours
    pulled = review.pull_from_label_studio(run_config, studio=studio).summary
    assert (pulled.verdicts, pulled.added) == (1, 1)
    assert fake_client.store[other].tasks == []


def test_an_old_run_folder_without_a_record_uses_its_project_and_gains_a_record(
    run_config, studio, fake_client
):
    old = fake_client.projects.create(title=RUN_PROJECT, label_config="<View/>").id  # unmarked
    pushed = review.push_to_label_studio(run_config, studio=studio).summary
    assert (pushed.project_id, pushed.created, pushed.imported) == (old, False, 3)
    assert recorded_ids(run_config.ranked.parent / PROJECT_RECORD) == [old]


def test_a_round_of_suggestions_records_its_project_beside_it(tmp_path, studio, fake_client):
    suggestions_path = tmp_path / "suggestions.jsonl"
    write_jsonl(suggestions_path, suggestions())
    write_tree(tmp_path / "tree.jsonl", tree())
    push = SuggestionReviewConfig(suggestions=suggestions_path, project=SUGGESTIONS_PROJECT)
    pushed = push_suggestions_file(push, studio=studio)
    assert recorded_ids(tmp_path / PROJECT_RECORD) == [pushed.summary.project_id]
    same_title(studio, SUGGESTIONS_PROJECT)
    answer_suggestion(fake_client, suggestions()[0].id, 1, ACCEPT)
    pull = SuggestionReviewConfig(
        suggestions=suggestions_path,
        tree=tmp_path / "tree.jsonl",
        verdicts=tmp_path / "verdicts.jsonl",
        project=SUGGESTIONS_PROJECT,
    )
    pulled = pull_into_tree(pull, studio=studio).summary
    assert (pulled.verdicts, pulled.tree.added) == (1, 1)


def test_the_adapt_rounds_share_the_project_recorded_in_the_work_folder(
    tmp_path, studio, fake_client
):
    work, items = tmp_path / "adapt", suggestions()
    write_tree(tmp_path / "tree.jsonl", tree())
    record = work / PROJECT_RECORD
    for number, part in ((1, items[:2]), (2, items[2:])):
        path = round_folder(work, number) / "suggestions.jsonl"
        write_jsonl(path, part)
        push = SuggestionReviewConfig(suggestions=path, project=SUGGESTIONS_PROJECT, record=record)
        push_suggestions_file(push, studio=studio)
    [ours] = recorded_ids(record)
    assert len(fake_client.store[ours].tasks) == 3
    answer_suggestion(fake_client, items[2].id, 1, ACCEPT)
    rounds = AdaptConfig(
        tree=tmp_path / "tree.jsonl",
        topic="/Negation",
        models=("m",),
        work_dir=work,
        project=SUGGESTIONS_PROJECT,
    )
    done = pull_rounds(rounds, studio=studio)
    assert (done.summary.new_verdicts, done.summary.added) == (1, 1)
    del fake_client.store[ours]
    with pytest.raises(LabelStudioError, match=f"project {ours} .* recorded in {record}"):
        pull_rounds(rounds, studio=studio)


def test_suggested_words_record_their_project_beside_the_suggestions(tmp_path, studio, fake_client):
    suite = write_suite(tmp_path / "suite") / "suite.yaml"
    words = write_suggestions(tmp_path / "suggestions.jsonl")
    project = "testaug lexicon suggestions"
    push = WordsReviewConfig(
        suite=suite, suggestions=words, lexicons=("pos_verb",), project=project
    )
    pushed = push_words_file(push, studio=studio)
    ours = pushed.summary.project_id
    assert recorded_ids(tmp_path / PROJECT_RECORD) == [ours]
    same_title(studio, project)
    task = next(t for t in fake_client.store[ours].tasks if t["data"]["word"] == "adore")
    choice = {"from_name": VERDICT, "value": {"choices": [choice_for("pos_verb")]}}
    task["annotations"].append({"id": 1, "completed_by": 1, "result": [choice]})
    verdicts = tmp_path / "suggestions.verdicts.jsonl"
    pull = WordsReviewConfig(suite=suite, verdicts=verdicts, project=project)
    pulled = pull_into_lexicons(pull, studio=studio).summary
    assert (pulled.verdicts, pulled.written.added) == (1, 1)
