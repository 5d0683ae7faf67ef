"""Verdicts from annotations: majority of people over the ranker, disputes, kappa, merging."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from testaug.core.records import Annotation, TestCase
from testaug.review.verdicts import (
    accepted_cases,
    cohen_kappa,
    decide,
    merge_into_suite,
    pairwise_agreement,
    status_counts,
)
from tests.tiny_models import make_candidate

A, B, C, D = (make_candidate(f"Case {name} is nice.") for name in "abcd")
CANDIDATES = {c.id: c for c in (A, B, C, D)}


def vote(candidate, valid: bool, who: str, **fields) -> Annotation:
    return Annotation(
        candidate_id=candidate.id, valid=valid, annotator=who, origin="label-studio", **fields
    )


def ranker(candidate) -> Annotation:
    return Annotation(
        candidate_id=candidate.id, valid=True, annotator="ensemble v", origin="ranker"
    )


def test_people_decide_by_majority_and_outrank_the_ranker():
    verdicts = decide(
        [ranker(A), vote(A, False, "x"), vote(A, False, "y"), vote(A, True, "z"), ranker(B)],
        CANDIDATES,
    )
    assert verdicts[A.id].status == "rejected" and verdicts[A.id].decided_by == "people"
    assert verdicts[A.id].disagreement
    assert verdicts[B.id].status == "accepted" and verdicts[B.id].decided_by == "ranker"
    assert verdicts[C.id].status == "pending"


def test_a_tie_is_disputed_and_unanimity_is_no_disagreement():
    verdicts = decide([vote(A, True, "x"), vote(A, False, "y"), vote(B, True, "x")], CANDIDATES)
    assert verdicts[A.id].status == "disputed" and verdicts[A.id].label is None
    assert verdicts[B.id].status == "accepted" and not verdicts[B.id].disagreement


def test_a_corrected_label_is_a_vote_for_keeping_the_case_with_that_label():
    records = [
        vote(A, False, "x", reason="label", corrected_label="negative"),
        vote(A, True, "y", corrected_label="negative"),
        vote(B, False, "x", reason="capability", corrected_label="negative"),
    ]
    verdicts = decide(records, CANDIDATES)
    assert verdicts[A.id].status == "accepted" and verdicts[A.id].label == "negative"
    assert verdicts[B.id].status == "rejected"
    cases = {case.id: case for case in accepted_cases(CANDIDATES.values(), verdicts)}
    assert cases[A.id].label == "negative" and cases[A.id].meta["proposed_label"] == "positive"
    assert cases[A.id].source == "llm" and cases[A.id].meta["accepted_by"] == "people"


def test_status_counts_cover_every_status():
    verdicts = decide([ranker(A), vote(B, True, "x"), vote(C, False, "x")], CANDIDATES)
    assert status_counts(verdicts) == {
        "accepted by people": 1,
        "accepted by ranker": 1,
        "rejected by people": 1,
        "rejected by ranker": 0,
        "disputed": 0,
        "pending": 1,
    }


def test_cohen_kappa_matches_a_worked_example():
    # 50 items: both yes 20, a yes b no 5, a no b yes 10, both no 15 -> kappa 0.4.
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert abs(cohen_kappa(a, b) - 0.4) < 1e-12
    assert cohen_kappa(["y", "n"], ["y", "n"]) == 1.0
    assert cohen_kappa(["y", "y"], ["y", "y"]) is None
    assert cohen_kappa([], []) is None


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=40))
def test_cohen_kappa_is_symmetric_and_equals_the_definition(pairs):
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    n = len(pairs)
    observed = sum(x == y for x, y in pairs) / n
    chance = sum((a.count(c) / n) * (b.count(c) / n) for c in (True, False))
    expected = None if chance == 1 else (observed - chance) / (1 - chance)
    for got in (cohen_kappa(a, b), cohen_kappa(b, a)):
        assert (got is None) == (expected is None)
        if expected is not None:
            assert abs(got - expected) < 1e-9


def test_pairwise_agreement_covers_each_pair_of_people_on_their_common_candidates():
    records = [
        vote(c, valid, who)
        for c, valid, who in [
            (A, True, "x"),
            (B, False, "x"),
            (C, True, "x"),
            (A, True, "y"),
            (B, False, "y"),
            (C, False, "y"),
            (D, True, "z"),
        ]
    ] + [ranker(D)]
    rows = pairwise_agreement(records)
    assert [(r.annotator_a, r.annotator_b, r.overlap) for r in rows] == [
        ("label-studio:x", "label-studio:y", 3)
    ]
    assert abs(rows[0].kappa - 0.4) < 1e-12


def test_merging_into_the_suite_skips_cases_already_there():
    suite = [TestCase.model_validate({**A.model_dump(include=set(TestCase.model_fields))})]
    verdicts = decide([ranker(c) for c in CANDIDATES.values()], CANDIDATES)
    merged, added = merge_into_suite(suite, accepted_cases(CANDIDATES.values(), verdicts))
    assert added == 3 and len(merged) == 4 and merged[0] is suite[0]
    assert len({case.id for case in merged}) == 4


def test_decisions_do_not_depend_on_the_order_of_annotations():
    records = [vote(A, True, "x"), vote(A, False, "y"), vote(A, False, "z"), ranker(B)]
    results = {
        tuple(sorted((k, v.status, v.label) for k, v in decide(list(p), CANDIDATES).items()))
        for p in itertools.permutations(records)
    }
    assert len(results) == 1


def test_an_older_auto_runs_ranker_rejections_still_read_as_rejected_by_the_ranker():
    from testaug.review.plans import AUTO_NOTE

    candidates = [make_candidate(f"case number {i}") for i in range(3)]
    records = [
        Annotation(
            candidate_id=c.id,
            valid=i > 0,
            annotator="ensemble v1",
            origin="ranker",
            rule=f"rank {i + 1}: in the top 1 of 3 most likely invalid; {AUTO_NOTE}",
        )
        for i, c in enumerate(candidates)
    ]
    verdicts = decide(records, {c.id: c for c in candidates})
    assert [verdicts[c.id].status for c in candidates] == ["rejected", "accepted", "accepted"]
    assert {v.decided_by for v in verdicts.values()} == {"ranker"}
    cases = accepted_cases(candidates, verdicts)
    assert len(cases) == 2 and {case.meta["accepted_by"] for case in cases} == {"ranker"}
