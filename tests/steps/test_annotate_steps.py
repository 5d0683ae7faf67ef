"""The review step on a run's files, as `testaug annotate` and the flows call it: the
Label Studio connection and project, the seed cases beside the ranking, the terminal
session's record, a pull followed by the merge, and the active loop's re-ranking."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest
from pydantic import SecretStr
from rich.console import Console

from testaug.core.errors import InputError
from testaug.core.jsonl import read_jsonl
from testaug.core.records import TestCase
from testaug.core.settings import Settings
from testaug.review.run_files import seed_cases
from testaug.review.terminal import key_reader
from testaug.steps import review
from testaug.steps.rank import RetrainConfig, retrain_ranking
from testaug.steps.review import ReviewConfig
from tests.steps.test_review_steps import P_VALID, TEXTS
from tests.tiny_models import VOUCHED_CURVE, make_calibration, write_ranked_run


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return write_ranked_run(
        tmp_path, TEXTS, p_valid=P_VALID, calibration=make_calibration(m=VOUCHED_CURVE)
    )


def test_without_an_api_key_anywhere_the_error_names_the_api_key_field():
    with pytest.raises(InputError, match="api_key: no Label Studio API key"):
        review.connect_label_studio(settings=Settings(label_studio_api_key=None))


def test_a_key_and_url_given_win_over_the_settings():
    settings = Settings(label_studio_url="http://127.0.0.1:1", label_studio_api_key="s")
    studio = review.connect_label_studio("http://127.0.0.1:2", "given", settings=settings)
    assert studio.url == "http://127.0.0.1:2"
    assert review.connect_label_studio(settings=settings).url == "http://127.0.0.1:1"
    assert review.connect_label_studio(api_key=SecretStr("k"), settings=settings)


def test_the_default_project_is_named_after_the_run_folder(tmp_path):
    config = ReviewConfig(ranked=tmp_path / "run-7" / "ranked.jsonl")
    assert config.project_name() == "testaug run-7"
    assert config.annotations_path() == tmp_path / "run-7" / "annotations.jsonl"


def test_people_review_the_top_30_percent_unless_told_a_share_or_a_budget(tmp_path):
    def top(top, budget):
        return ReviewConfig(ranked=tmp_path / "r.jsonl", top=top, budget=budget).people_top()

    assert top(None, None) == 0.3
    assert top(None, 5) is None and top(0.5, None) == 0.5


def test_without_cases_beside_the_ranking_there_are_no_seeds_and_a_warning(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        assert seed_cases(None, tmp_path / "ranked.jsonl") == {}
    assert "seed examples will not be shown" in caplog.text


def test_the_terminal_step_records_what_the_session_saved_and_what_waits(run_dir):
    done = review.review_in_terminal(
        ReviewConfig(ranked=run_dir / "ranked.jsonl", top=0.3, annotator="ann"),
        read_key=key_reader(io.StringIO("\nn1s")),
        console=Console(file=io.StringIO(), width=100),
    )  # fmt: skip
    summary = done.summary
    assert (summary.mode, summary.annotated, summary.valid, summary.invalid) == (
        "terminal", 2, 1, 1,
    )  # fmt: skip
    assert (summary.skipped, summary.remaining, summary.pending) == (
        1,
        1,
        4,
    )  # skipped: left
    assert summary.acceptance.accepted_by_ranker == 3 and done.records == 2


def push(run_dir: Path, studio) -> str:
    """The top 30% of the ranking pushed into the run's project; the project's name."""
    config = ReviewConfig(ranked=run_dir / "ranked.jsonl", top=0.3)
    review.push_to_label_studio(config, studio=studio)
    return config.project_name()


def test_push_reads_the_seeds_beside_the_ranking_and_names_the_run_project(
    run_dir, studio, fake_client
):
    pushed = review.push_to_label_studio(
        ReviewConfig(ranked=run_dir / "ranked.jsonl", top=0.3), studio=studio
    )
    assert pushed.summary.project == f"testaug {run_dir.name}"
    assert pushed.summary.sent == 3
    shown = [task["data"] for task in fake_client.project_named(pushed.summary.project).tasks]
    assert all("The seat was great." in str(data) for data in shown)  # the seed example


def test_pull_then_merge_adds_what_people_accepted_to_the_suite(run_dir, studio, fake_client):
    project = push(run_dir, studio)
    for task in fake_client.project_named(project).tasks:
        fake_client.answer(project, task["data"]["candidate_id"], user=1, validity="valid")
    config = ReviewConfig(ranked=run_dir / "ranked.jsonl", suite=run_dir / "cases.jsonl")
    merged = review.pull_and_merge(config, studio=studio)
    pulled = merged.summary.pulled
    assert (pulled.project, pulled.verdicts, pulled.added) == (project, 3, 3)
    assert pulled.annotations == 3 + 3 and merged.files["annotations"] == config.annotations_path()
    assert merged.records == 3 + 3  # people's and the ranker's
    assert (merged.summary.suite, merged.summary.added) == (2 + 6, 6)
    suite = list(read_jsonl(run_dir / "suite.jsonl", TestCase))
    assert len(suite) == 8 and (run_dir / "verdicts.jsonl").exists()


def test_pull_without_the_ranking_merges_only_the_candidates_sent(
    run_dir, studio, fake_client, caplog
):
    project = push(run_dir, studio)
    top = fake_client.project_named(project).tasks[0]  # the top of the ranking
    fake_client.answer(project, top["data"]["candidate_id"], user=1, validity="valid")
    (run_dir / "ranked.jsonl").unlink()
    with caplog.at_level(logging.WARNING):
        merged = review.pull_and_merge(
            ReviewConfig(ranked=run_dir / "ranked.jsonl", project=project), studio=studio
        )
    assert "only candidates sent to Label Studio can be merged" in caplog.text
    accepted = list(read_jsonl(merged.path, TestCase))
    assert [case.text for case in accepted] == [TEXTS[0]]
    assert merged.summary.pending == 2  # the other two sent; none of the rest is known


def test_retraining_reranks_what_is_pending_with_the_new_ensemble(tmp_path):
    import numpy as np

    from rankers.ensemble import ranked_candidates
    from testaug.core.jsonl import write_jsonl
    from testaug.core.records import Annotation, RankedCandidate
    from testaug.core.runs import write_yaml
    from tests.rankers.test_active_loop import BAD, GOOD, LEXICAL, PENDING, person
    from tests.tiny_models import make_candidate

    judged = [make_candidate(t) for t in GOOD + BAD]
    everything = judged + [make_candidate(t) for t in PENDING]
    scores = {"old": np.arange(len(everything), 0, -1.0)}
    write_jsonl(tmp_path / "ranked.jsonl", ranked_candidates(everything, scores, version="v0"))
    annotations: list[Annotation] = [person(c, c.text in GOOD) for c in judged]
    write_jsonl(tmp_path / "annotations.jsonl", annotations)
    write_yaml(tmp_path / "lexical.yaml", LEXICAL.model_dump(mode="json"))

    done = retrain_ranking(
        RetrainConfig(
            ranked=tmp_path / "ranked.jsonl",
            annotations=tmp_path / "annotations.jsonl",
            out=tmp_path / "next.jsonl",
            ensemble=str(tmp_path / "lexical.yaml"),
            rankers_out=tmp_path / "rankers",
        )
    )
    reranked = list(read_jsonl(done.path, RankedCandidate))
    assert {item.candidate.text for item in reranked} == set(PENDING) and done.records == 4
    assert (done.summary.from_people, done.summary.from_extra) == (8, 0)
    assert {item.ensemble_version for item in reranked} == {done.summary.ensemble}
    assert (tmp_path / "rankers" / "ensemble.json").exists()
