"""Review plans (top k% or a budget to people, the rest to the ranker) and annotation files."""

from __future__ import annotations

import numpy as np
import pytest

from rankers.ensemble import ranked_candidates
from testaug.core.errors import InputError
from testaug.core.records import Annotation
from testaug.review.plans import (
    invalidity_score,
    merge_annotations,
    plan_review,
    read_annotations,
    record_plan,
    review_count,
    save_annotations,
)
from tests.tiny_models import VOUCHED_CURVE, make_calibration, make_candidate


def ranked(n: int):
    candidates = [make_candidate(f"Case {i} is nice.") for i in range(n)]
    return ranked_candidates(candidates, {"m": np.arange(n, 0, -1.0)}, version="v1")


def person(cid: str, valid: bool, who: str = "ann", **fields) -> Annotation:
    return Annotation(candidate_id=cid, valid=valid, annotator=who, origin="label-studio", **fields)


@pytest.mark.parametrize(
    ("n", "top", "budget", "expected"),
    [
        (10, 0.3, None, 3),
        (10, 0.25, None, 3),
        (10, 0.3, 2, 2),
        (10, None, 4, 4),
        (3, 1.0, None, 3),
        (7, 0.0, None, 0),
        (100, 0.07, None, 7),
    ],
)
def test_review_count_rounds_the_top_fraction_up_and_caps_it_by_the_budget(
    n, top, budget, expected
):
    assert review_count(n, top=top, budget=budget) == expected


def test_review_count_needs_a_fraction_or_a_budget_in_range():
    with pytest.raises(InputError, match="top"):
        review_count(5)
    with pytest.raises(InputError, match="between 0 and 1"):
        review_count(5, top=1.5)


def test_without_calibration_the_ranker_accepts_nothing_and_the_rest_stays_pending():
    items = ranked(10)
    plan = plan_review(list(reversed(items)), None, top=0.3)
    assert len(plan.review) == 3
    assert [d.sampled for d in plan.draws] == ["random"] * 3  # no calibration: a random sample
    assert plan.accepted == []
    reviewed = {i.rank for i in plan.review}
    assert [i.rank for i in plan.pending] == [r for r in range(1, 11) if r not in reviewed]
    assert plan.acceptance.message is not None


def calibrated(p_valid: list[float]):
    """ranked(n) with P(valid) p_valid[i] for rank i + 1, in group "m"."""
    return [
        item.model_copy(update={"p_valid": p, "calibration_group": "m"})
        for item, p in zip(ranked(len(p_valid)), p_valid, strict=True)
    ]


P_VALID = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.9, 0.92, 0.95]  # by rank: 8, 9, 10 clear 0.9


def test_plan_splits_accepted_by_the_rule_reviewed_top_of_the_rest_and_pending():
    calibration = make_calibration(m=VOUCHED_CURVE)
    plan = plan_review(calibrated(P_VALID), calibration, top=0.3, target=0.9)
    rank_of = {item.candidate.id: item.rank for item in ranked(10)}
    assert sorted(rank_of[a.candidate_id] for a in plan.accepted) == [8, 9, 10]
    assert [i.rank for i in plan.review] == [1, 2, 3]  # 30% of the 7 not accepted, rounded up
    assert [i.rank for i in plan.pending] == [4, 5, 6, 7]
    assert all(a.acceptance and a.acceptance.threshold == 0.9 for a in plan.accepted)
    budget = plan_review(calibrated(P_VALID), calibration, top=0.3, budget=2)
    assert [i.rank for i in budget.review] == [1, 2] and len(budget.pending) == 5
    strict = plan_review(calibrated(P_VALID), calibration, top=0.3, target=0.97)
    assert strict.accepted == [] and len(strict.review) == 3 and len(strict.pending) == 7


def test_recording_a_plan_withdraws_earlier_ranker_records_of_the_candidates_it_covers(tmp_path):
    path = tmp_path / "annotations.jsonl"
    items = calibrated(P_VALID)
    old = [
        Annotation(
            candidate_id=i.candidate.id, valid=True, annotator="ensemble v1", origin="ranker"
        )
        for i in items
    ]
    save_annotations(path, [*old, person(items[0].candidate.id, False)])
    plan = plan_review(items, make_calibration(m=VOUCHED_CURVE), top=0.3)
    update = record_plan(path, plan)
    assert update.withdrawn == 10
    kept = read_annotations(path)
    ranker = [a for a in kept if a.origin == "ranker"]
    assert sorted(a.candidate_id for a in ranker) == sorted(a.candidate_id for a in plan.accepted)
    assert all(a.acceptance is not None for a in ranker)
    assert [a.candidate_id for a in kept if a.origin == "label-studio"] == [items[0].candidate.id]


def test_a_new_plan_never_has_the_ranker_accept_what_a_person_judged(tmp_path):
    items = calibrated(P_VALID)
    judged = {items[9].candidate.id}
    plan = plan_review(items, make_calibration(m=VOUCHED_CURVE), top=0.3, judged=judged)
    assert items[9].candidate.id not in {a.candidate_id for a in plan.accepted}
    assert len(plan.accepted) == 2 and len(plan.review) + len(plan.pending) == 8


def test_invalidity_score_is_one_for_the_first_and_zero_for_the_last():
    items = ranked(5)
    assert [invalidity_score(i, 5) for i in items] == [1.0, 0.75, 0.5, 0.25, 0.0]


def test_merge_keeps_existing_verdicts_adds_new_ones_and_replaces_edited_ones():
    old = [person("a", True), person("b", False, reason="label")]
    new = [person("a", True), person("b", True), person("c", False, who="other")]
    update = merge_annotations(old, new)
    assert (update.added, update.changed) == (1, 1)
    by_id = {a.candidate_id: a for a in update.annotations}
    assert by_id["b"].valid and set(by_id) == {"a", "b", "c"}
    assert merge_annotations(update.annotations, []).annotations == update.annotations


def test_merge_withdraws_only_the_rankers_acceptance_of_candidates_sent_to_people():
    ranker = Annotation(candidate_id="a", valid=True, annotator="ensemble v1", origin="ranker")
    update = merge_annotations([ranker, person("a", False)], [], withdraw_ranker_for=["a"])
    assert update.withdrawn == 1
    assert [a.origin for a in update.annotations] == ["label-studio"]


def test_annotations_file_round_trips_and_a_missing_file_is_empty(tmp_path):
    path = tmp_path / "annotations.jsonl"
    assert read_annotations(path) == []
    records = [person("b", True), person("a", False, reason="capability")]
    save_annotations(path, records)
    assert sorted(read_annotations(path), key=lambda a: a.candidate_id) == sorted(
        records, key=lambda a: a.candidate_id
    )
