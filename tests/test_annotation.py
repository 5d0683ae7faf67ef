"""Review plans (top k% or a budget to people, the rest to the ranker) and annotation files."""

from __future__ import annotations

import numpy as np
import pytest

from rankers.ensemble import ranked_candidates
from testaug.annotation import (
    invalidity_score,
    merge_annotations,
    plan_review,
    read_annotations,
    review_count,
    save_annotations,
)
from testaug.errors import InputError
from testaug.records import Annotation
from tests.tiny_models import make_candidate


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


def test_plan_sends_the_top_to_people_and_the_ranker_accepts_the_rest_with_its_rule():
    items = ranked(10)
    plan = plan_review(list(reversed(items)), top=0.3)
    assert [i.rank for i in plan.review] == [1, 2, 3]
    assert len(plan.accepted) == 7
    first = plan.accepted[0]
    assert first.origin == "ranker" and first.valid and first.annotator == "ensemble v1"
    assert first.rule == "rank 4: ranked below the 3 of 10 candidates sent for review (top 30%)"


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
