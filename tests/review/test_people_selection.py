"""Which candidates people label first: a random calibration sample of a generator without
its own precision curve, then the ones the ranker is least sure of, spread over the
descriptions; the top of the ranking once a generator has its own curve."""

from __future__ import annotations

from collections import Counter

import numpy as np

from rankers.active import labelled_from_verdicts
from rankers.ensemble import ranked_candidates
from testaug.core.records import Annotation
from testaug.review.acceptance import accept_by_rule
from testaug.review.run_files import review_plan
from testaug.review.selection import (
    Draw,
    draws_beside,
    draws_of,
    order_for_people,
    read_draws,
    record_draws,
)
from testaug.review.verdicts import decide
from tests.tiny_models import VOUCHED_CURVE, make_calibration, make_candidate


def ranked(n: int, *, descriptions: int = 3, group: str = "g", p_valid=None):
    candidates = [
        make_candidate(f"Case {i} is nice.", description=f"D{i % descriptions} sentences.")
        for i in range(n)
    ]
    items = ranked_candidates(candidates, {"m": np.arange(n, 0, -1.0)}, version="v1")
    p = p_valid if p_valid is not None else np.linspace(0.05, 0.95, n)
    return [
        item.model_copy(update={"calibration_group": group, "p_valid": float(p[item.rank - 1])})
        for item in items
    ]


def test_a_new_generator_gets_a_random_sample_first_then_the_least_sure_ones():
    items = ranked(40)
    chosen = order_for_people(items, 20, calibration=None, drawn={}, calibration_size=8)
    kinds = [sampled for _, sampled in chosen]
    assert kinds == ["random"] * 8 + ["uncertain"] * 12
    uncertain = [item for item, sampled in chosen if sampled == "uncertain"]
    closeness = [abs(item.p_valid - 0.5) for item in uncertain[:3]]
    assert max(closeness) < 0.1  # the first ones sit at P(valid) near 1/2
    spread = Counter(item.candidate.description_id for item in uncertain[:3])
    assert len(spread) == 3  # one of each description in turn


def test_the_random_sample_is_seeded_and_not_the_top_of_the_ranking():
    items = ranked(60)
    first = order_for_people(items, 10, calibration=None, drawn={}, calibration_size=10)
    again = order_for_people(items, 10, calibration=None, drawn={}, calibration_size=10)
    assert [i.candidate.id for i, _ in first] == [i.candidate.id for i, _ in again]
    assert sorted(i.rank for i, _ in first) != list(range(1, 11))


def test_earlier_random_draws_count_towards_the_calibration_sample():
    items = ranked(40)
    drawn = {f"old{i}": Draw(candidate_id=f"old{i}", group="m", sampled="random") for i in range(6)}
    chosen = order_for_people(items, 10, calibration=None, drawn=drawn, calibration_size=8)
    assert [s for _, s in chosen].count("random") == 2


def test_a_generator_with_many_labels_of_its_own_is_reviewed_from_the_top():
    items = ranked(20, group="m")
    calibration = make_calibration(m=VOUCHED_CURVE)  # 200 random labels of m
    chosen = order_for_people(items, 5, calibration=calibration, drawn={})
    assert [(i.rank, s) for i, s in chosen] == [(r, "ranked") for r in range(1, 6)]
    fewer = order_for_people(items, 5, calibration=calibration, drawn={}, uncertain_until=201)
    assert {s for _, s in fewer} == {"random"}  # below the bar: its calibration sample first


def test_a_plan_records_each_draw_once_and_labels_know_how_they_were_drawn(tmp_path):
    from testaug.core.jsonl import write_jsonl

    items = ranked(30)
    ranked_path, annotations = tmp_path / "ranked.jsonl", tmp_path / "annotations.jsonl"
    write_jsonl(ranked_path, items)
    plan = review_plan(items, annotations, tmp_path / "none.json", top=0.5)
    draws = read_draws(draws_beside(annotations))
    assert len(draws) == 15 and {d.sampled for d in draws.values()} == {"random"}
    assert record_draws(draws_beside(annotations), plan.draws) == 0  # first draw wins
    first = plan.review[0].candidate
    people = [
        Annotation(candidate_id=first.id, valid=True, annotator="a", origin="terminal"),
        Annotation(candidate_id=items[-1].candidate.id, valid=False, annotator="a",
                   origin="terminal"),
    ]  # fmt: skip
    candidates = {item.candidate.id: item.candidate for item in items}
    labelled = labelled_from_verdicts(candidates, decide(people, candidates), draws)
    sampled = {item.candidate.id: item.sampled for item in labelled}
    assert sampled[first.id] == "random"
    if items[-1].candidate.id not in draws:
        assert sampled[items[-1].candidate.id] == "ranked"  # no draw: from a ranking


def test_a_generator_without_its_own_labels_is_not_accepted_unless_the_pooled_rule_is_asked():
    calibration = make_calibration(m=VOUCHED_CURVE)
    items = ranked(10, group="any generator", p_valid=[0.99] * 10)
    strict = accept_by_rule(items, calibration, target=0.9)
    assert strict.accepted == [] and "no calibration labels of its own" in strict.message
    pooled = accept_by_rule(items, calibration, target=0.9, pooled=True)
    assert len(pooled.accepted) == 10


def test_a_new_generator_is_drawn_for_under_its_own_name_not_the_pooled_group():
    items = ranked(12, group="any generator")  # P(valid) read from the pooled map
    chosen = order_for_people(items, 4, calibration=None, drawn={}, calibration_size=4)
    assert {draw.group for draw in draws_of(chosen)} == {"m"}  # make_candidate's model
