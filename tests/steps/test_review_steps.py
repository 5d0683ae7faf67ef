"""The review steps on files: mode auto accepts only what the rule vouches for; Label Studio
and terminal review the top of what the ranker leaves; the rest stays pending; the suite
grows (or not) from what was accepted."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from testaug.core.jsonl import read_jsonl
from testaug.core.records import Annotation, RankedCandidate, TestCase
from testaug.review.label_studio import LabelStudio
from testaug.review.plans import AUTO_NOTE, read_annotations, save_annotations
from testaug.review.run_files import pending_count
from testaug.review.terminal import key_reader
from testaug.review.verdicts import Verdict
from testaug.steps import review
from testaug.steps.contract import StepOutput
from testaug.steps.review import ReviewConfig
from tests.tiny_models import VOUCHED_CURVE, make_calibration, write_ranked_run

TEXTS = [f"Case {i} is nice." for i in range(10)]
P_VALID = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.9, 0.92, 0.95]  # ranks 8, 9, 10 clear 0.9


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """ranked.jsonl (rank i + 1 has P(valid) P_VALID[i]) and ranked.calibration.json with
    the rule P(valid) >= 0.9 at precision 0.9."""
    return write_ranked_run(
        tmp_path, TEXTS, p_valid=P_VALID, calibration=make_calibration(m=VOUCHED_CURVE)
    )


def ranks(run_dir: Path) -> dict[str, int]:
    return {
        item.candidate.id: item.rank
        for item in read_jsonl(run_dir / "ranked.jsonl", RankedCandidate)
    }


def test_auto_mode_accepts_only_what_the_rule_vouches_for_and_rejects_nothing(run_dir):
    paths = run_dir / "ranked.jsonl", run_dir / "annotations.jsonl"
    config = ReviewConfig(ranked=paths[0], accept_precision=0.9)
    done = review.review_automatically(config)

    records = read_annotations(paths[1])
    assert sorted(ranks(run_dir)[a.candidate_id] for a in records) == [8, 9, 10]
    assert all(a.valid and a.origin == "ranker" and AUTO_NOTE in (a.rule or "") for a in records)
    summary = done.summary
    acceptance = summary.acceptance
    assert (summary.mode, acceptance.accepted_by_ranker, summary.pending) == ("auto", 3, 7)
    assert acceptance.accept_precision == 0.9 and acceptance.no_rule is None
    rule = acceptance.groups["m"].rule
    assert rule is not None
    assert rule.threshold == 0.9 and rule.precision_lower_bound >= 0.9
    assert (acceptance.groups["m"].candidates, acceptance.groups["m"].accepted) == (10, 3)
    assert StepOutput.model_validate_json(done.model_dump_json()) == done  # as a flow keeps it

    merged = review.merge_reviewed(config.model_copy(update={"out": run_dir}))
    verdicts = list(read_jsonl(run_dir / "verdicts.jsonl", Verdict))
    assert sum(v.status == "pending" for v in verdicts) == 7
    assert not any(v.status == "rejected" for v in verdicts)
    cases = list(read_jsonl(merged.path, TestCase))
    assert len(cases) == 3 and {c.meta["accepted_by"] for c in cases} == {"ranker"}


def test_auto_mode_replaces_an_older_auto_runs_rejections_and_keeps_peoples_verdicts(run_dir):
    paths = run_dir / "ranked.jsonl", run_dir / "annotations.jsonl"
    ids = list(ranks(run_dir))
    older = [
        Annotation(candidate_id=cid, valid=i >= 3, annotator="ensemble v1", origin="ranker",
                   rule=f"rank {i + 1}: ...; {AUTO_NOTE}")
        for i, cid in enumerate(ids)
    ]  # fmt: skip
    person = Annotation(candidate_id=ids[9], valid=False, annotator="ann", origin="terminal")
    save_annotations(paths[1], [*older, person])

    done = review.review_automatically(ReviewConfig(ranked=paths[0]))

    records = read_annotations(paths[1])
    assert not any(a.origin == "ranker" and not a.valid for a in records)
    ranker = {a.candidate_id for a in records if a.origin == "ranker"}
    assert ranker == {ids[7], ids[8]}  # rank 10 was judged by a person: not the ranker's
    assert person in records and done.summary.acceptance.accepted_by_ranker == 2


@pytest.mark.parametrize("calibrated", [False, True], ids=["no calibration file", "no p_valid"])
def test_auto_mode_on_an_older_ranking_accepts_nothing_and_says_so_once(
    tmp_path, caplog, calibrated
):
    calibration = make_calibration(m=VOUCHED_CURVE) if calibrated else None
    run_dir = write_ranked_run(tmp_path, TEXTS, calibration=calibration)
    done = review.review_automatically(ReviewConfig(ranked=run_dir / "ranked.jsonl"))
    assert read_annotations(run_dir / "annotations.jsonl") == []
    assert (done.summary.acceptance.accepted_by_ranker, done.summary.pending) == (0, 10)
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings == [done.summary.acceptance.no_rule]
    expected = "no P(valid)" if calibrated else "ranked.calibration.json is missing"
    assert expected in warnings[0]


def push(run_dir: Path, studio: LabelStudio, **options: Any):
    config = ReviewConfig(ranked=run_dir / "ranked.jsonl", project="p", top=0.3, **options)
    return review.push_to_label_studio(config, studio=studio)


def test_push_sends_the_top_of_what_the_ranker_leaves_and_never_accepts_a_judged_one(
    run_dir, studio, fake_client
):
    first = push(run_dir, studio)
    rank_of = ranks(run_dir)
    tasks = fake_client.project_named("p").tasks
    assert [rank_of[t["data"]["candidate_id"]] for t in tasks] == [1, 2, 3]
    assert (first.summary.sent, first.summary.pending) == (3, 4)
    assert first.summary.acceptance.accepted_by_ranker == 3

    tenth = next(cid for cid, rank in rank_of.items() if rank == 10)
    person = Annotation(candidate_id=tenth, valid=False, annotator="ann", origin="terminal")
    save_annotations(
        run_dir / "annotations.jsonl", [*read_annotations(run_dir / "annotations.jsonl"), person]
    )
    again = push(run_dir, studio)
    assert (again.summary.imported, again.summary.already_present) == (0, 3)
    ranker = [a for a in read_annotations(run_dir / "annotations.jsonl") if a.origin == "ranker"]
    assert sorted(rank_of[a.candidate_id] for a in ranker) == [8, 9]

    stricter = push(run_dir, studio, accept_precision=0.97)
    assert stricter.summary.acceptance.accepted_by_ranker == 0 and stricter.summary.imported == 0
    assert not [a for a in read_annotations(run_dir / "annotations.jsonl") if a.origin == "ranker"]


def test_waiting_for_label_studio_waits_only_for_the_candidates_sent_there(
    run_dir, studio, fake_client
):
    push(run_dir, studio)
    for task in fake_client.project_named("p").tasks:
        fake_client.answer("p", task["data"]["candidate_id"], user=1, validity="valid")

    def never(seconds: float) -> None:
        raise AssertionError("waited although every task sent has its verdict")

    pulled = review.wait_for_label_studio(
        ReviewConfig(ranked=run_dir / "ranked.jsonl", project="p", wait_seconds=600),
        studio=studio, sleep=never,
    )  # fmt: skip
    assert pulled.summary.pending == 0 and pulled.summary.verdicts == 3
    assert pending_count(run_dir / "annotations.jsonl", run_dir / "ranked.jsonl") == 4


def test_the_terminal_asks_about_the_top_of_what_the_ranker_leaves(run_dir):
    screen = io.StringIO()
    done = review.review_in_terminal(
        ReviewConfig(ranked=run_dir / "ranked.jsonl", top=0.3, annotator="ann"),
        read_key=key_reader(io.StringIO("\n" * 10)),
        console=Console(file=screen, width=100),
    )  # fmt: skip
    assert done.summary.annotated == 3 and done.summary.acceptance.accepted_by_ranker == 3
    assert done.summary.pending == 4  # ranks 4 to 7
    rank_of = ranks(run_dir)
    people = [a for a in read_annotations(run_dir / "annotations.jsonl") if a.origin == "terminal"]
    assert sorted(rank_of[a.candidate_id] for a in people) == [1, 2, 3]


def test_with_nothing_accepted_the_suite_grows_by_nothing_and_nothing_fails(tmp_path):
    from testaug.steps.grow import (
        ExpandInducedConfig,
        ExtendConfig,
        InduceConfig,
        expand_induced,
        extend_suite,
        induce_templates_file,
    )

    run_dir = write_ranked_run(tmp_path, TEXTS, calibration=make_calibration(m=VOUCHED_CURVE))
    annotations, ranked = run_dir / "annotations.jsonl", run_dir / "ranked.jsonl"
    config = ReviewConfig(ranked=ranked, annotations=annotations)
    review.review_automatically(config)
    accepted = review.merge_reviewed(config.model_copy(update={"out": run_dir}))
    assert accepted.records == 0 and accepted.path.read_text() == ""
    cases = run_dir / "cases.jsonl"
    templates = induce_templates_file(
        InduceConfig(
            accepted=accepted.path, cases=cases, out=run_dir / "templates.yaml", allow_empty=True
        )
    )
    expanded = expand_induced(
        ExpandInducedConfig(
            templates=templates,
            out=run_dir / "expanded.jsonl",
            known=(cases, accepted.path),
            per_template=2,
            seed=0,
        )
    )
    suite = extend_suite(
        ExtendConfig(
            suite=cases, new_cases=(accepted.path, expanded.path), out=run_dir / "suite.jsonl"
        )
    )
    assert (templates.records, expanded.records, suite.records) == (0, 0, 2)
