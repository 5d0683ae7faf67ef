"""Acceptance with a stated precision: Clopper-Pearson bounds, precision curves, the rule, ECE."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from testaug.review.acceptance import (
    acceptance_rule,
    describe_rule,
    expected_calibration_error,
    no_rule_message,
    precision_curve,
)
from testaug.review.binomial import clopper_pearson_lower


@pytest.mark.parametrize(
    ("successes", "trials", "expected"),
    [(19, 20, 0.7839), (45, 50, 0.8012), (0, 10, 0.0), (10, 10, 0.7411), (930, 1000, 0.9153)],
)
def test_clopper_pearson_lower_bound_matches_the_beta_quantile(successes, trials, expected):
    assert clopper_pearson_lower(successes, trials) == pytest.approx(expected, abs=1e-4)


def test_clopper_pearson_lower_bound_agrees_with_scipy():
    beta = pytest.importorskip("scipy.stats").beta
    for trials in (3, 40, 700):
        for successes in range(1, trials, max(1, trials // 9)):
            expected = beta.ppf(0.05, successes, trials - successes + 1)
            assert clopper_pearson_lower(successes, trials) == pytest.approx(expected, abs=1e-9)


@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_the_lower_bound_lies_below_the_observed_proportion(pair):
    successes, trials = pair
    bound = clopper_pearson_lower(successes, trials)
    assert 0.0 <= bound <= successes / trials
    if successes < trials:
        assert bound <= clopper_pearson_lower(successes + 1, trials)


def test_precision_curve_counts_candidates_at_or_above_each_threshold():
    curve = precision_curve("g", [0.9, 0.9, 0.5, 0.2], [True, False, True, False])
    assert [(p.threshold, p.accepted, p.valid) for p in curve.points] == [
        (0.9, 2, 1),
        (0.5, 3, 2),
        (0.2, 4, 2),
    ]
    assert (curve.n, curve.n_valid) == (4, 2)


def test_the_rule_is_the_lowest_threshold_whose_lower_bound_reaches_the_target():
    p = [0.99] * 60 + [0.92] * 40 + [0.3] * 100
    valid = [True] * 60 + [True] * 36 + [False] * 4 + [True] * 20 + [False] * 80
    rule = acceptance_rule(precision_curve("g", p, valid), target=0.9)
    assert rule is not None
    assert rule.threshold == 0.92
    assert rule.accepted == 100
    assert rule.precision_estimate == pytest.approx(0.96)
    assert rule.precision_lower_bound >= 0.9
    assert "lower bound" in describe_rule(rule)


def test_no_threshold_below_the_target_is_the_rule_however_pure_the_set_above_it():
    p = [0.99] * 60 + [0.8] * 40 + [0.3] * 100
    valid = [True] * 60 + [True] * 36 + [False] * 4 + [True] * 20 + [False] * 80
    rule = acceptance_rule(precision_curve("g", p, valid), target=0.9)
    assert rule is not None
    assert rule.threshold == 0.99  # 96 of 100 at 0.8 bound above 0.9, but 0.8 < 0.9
    assert rule.accepted == 60


def test_no_rule_when_no_threshold_reaches_the_target_with_confidence():
    curve = precision_curve("g", [0.9] * 10 + [0.1] * 10, [True] * 9 + [False] + [False] * 10)
    assert acceptance_rule(curve, target=0.9) is None
    assert "accepts nothing" in no_rule_message(curve, 0.9, 0.95)


def test_a_calibrated_model_has_a_small_expected_calibration_error():
    rng = random.Random(0)
    p = [rng.random() for _ in range(20_000)]
    valid = [rng.random() < value for value in p]
    assert expected_calibration_error(p, valid) < 0.02
    assert expected_calibration_error([0.9] * 10, [False] * 10) == pytest.approx(0.9)


# --- the ranker's acceptances under the rule of each calibration group ---------------


def ranked_items(p_valid, groups=None, version="v1"):
    """Ranked candidates, rank i + 1 with P(valid) p_valid[i] in groups[i] (default "m")."""
    from testaug.core.records import RankedCandidate
    from tests.tiny_models import make_candidate

    groups = groups or ["m"] * len(p_valid)
    return [
        RankedCandidate(
            candidate=make_candidate(f"Case {i} is nice."),
            scores={"m": 1.0 - i / 10},
            borda_points=len(p_valid) - i,
            rank=i + 1,
            ensemble_version=version,
            p_valid=p,
            calibration_group=group,
        )
        for i, (p, group) in enumerate(zip(p_valid, groups, strict=True))
    ]


def test_each_candidate_is_accepted_under_the_threshold_of_its_own_group():
    from testaug.review.acceptance import accept_by_rule
    from tests.tiny_models import VOUCHED_CURVE, make_calibration

    strict = ([0.99] * 300 + [0.5] * 100, [True] * 298 + [False] * 2 + [True] * 50 + [False] * 50)
    calibration = make_calibration(m=VOUCHED_CURVE, rule=strict)
    items = ranked_items([0.95, 0.95, 0.7, 0.99], ["m", "rule", "m", "rule"])
    decision = accept_by_rule(items, calibration, target=0.9)
    assert decision.rules["m"].threshold == 0.9 and decision.rules["rule"].threshold == 0.99
    accepted = {a.candidate_id: a for a in decision.accepted}
    assert set(accepted) == {items[0].candidate.id, items[3].candidate.id}
    assert [item.rank for item in decision.rest] == [2, 3]  # under their group's threshold
    record = accepted[items[0].candidate.id]
    assert (record.valid, record.origin, record.annotator) == (True, "ranker", "ensemble v1")
    assert record.p_valid == 0.95 and record.acceptance == decision.rules["m"]
    assert record.rule.startswith("P(valid) >= 0.900: precision 96.0%")
    assert "this one: P(valid) 0.950, rank 1" in record.rule
    summary = decision.summary()
    assert summary.accepted_by_ranker == 2 and summary.no_rule is None
    assert summary.groups["m"].candidates == 2 and summary.groups["m"].accepted == 1
    assert summary.groups["rule"].rule == decision.rules["rule"]
    assert summary.groups["rule"].rule is not None and summary.groups["rule"].rule.threshold == 0.99


def test_a_group_without_a_rule_accepts_nothing_while_another_group_does(caplog):
    from testaug.review.acceptance import accept_by_rule
    from tests.tiny_models import VOUCHED_CURVE, make_calibration

    weak = ([0.9] * 10 + [0.1] * 10, [True] * 9 + [False] + [False] * 10)
    calibration = make_calibration(m=VOUCHED_CURVE, weak=weak)
    items = ranked_items([0.99, 0.99], ["weak", "m"])
    decision = accept_by_rule(items, calibration, target=0.9)
    assert decision.rules == {"m": decision.rules["m"], "weak": None}
    assert [a.candidate_id for a in decision.accepted] == [items[1].candidate.id]
    assert decision.message is None and not caplog.records


def test_with_no_rule_in_any_group_nothing_is_accepted_and_one_line_says_why(caplog):
    from testaug.review.acceptance import accept_by_rule
    from tests.tiny_models import VOUCHED_CURVE, make_calibration

    items = ranked_items([0.99, 0.9, 0.5])
    decision = accept_by_rule(items, make_calibration(m=VOUCHED_CURVE), target=0.97)
    assert decision.accepted == [] and len(decision.rest) == 3
    assert decision.rules == {"m": None}
    assert len(caplog.records) == 1
    assert caplog.records[0].getMessage() == decision.message
    assert decision.message.startswith("the ranker accepts nothing: no threshold on P(valid)")
    assert "precision 97%" in decision.message and "(m)" in decision.message


@pytest.mark.parametrize(
    ("items", "why"),
    [
        (lambda: [i.model_copy(update={"p_valid": None}) for i in ranked_items([0.99])], "no P"),
        (lambda: ranked_items([0.99], version="other"), "ensemble other"),
    ],
    ids=["older ranked file", "another ensemble"],
)
def test_candidates_the_calibration_does_not_speak_for_are_never_accepted(items, why, caplog):
    from testaug.review.acceptance import accept_by_rule
    from tests.tiny_models import VOUCHED_CURVE, make_calibration

    decision = accept_by_rule(items(), make_calibration(m=VOUCHED_CURVE), target=0.9)
    assert decision.accepted == [] and decision.rules == {}
    assert why in decision.message and len(caplog.records) == 1


def test_without_calibration_evidence_the_missing_file_is_named_once(caplog, tmp_path):
    from testaug.review.acceptance import accept_by_rule

    missing = tmp_path / "ranked.calibration.json"
    decision = accept_by_rule(ranked_items([0.99]), None, source=missing)
    assert decision.accepted == []
    assert [r.getMessage() for r in caplog.records] == [decision.message]
    assert str(missing) in decision.message and "accepts nothing" in decision.message


def test_a_candidate_a_person_judged_is_never_accepted_by_the_ranker():
    from testaug.review.acceptance import accept_by_rule
    from tests.tiny_models import VOUCHED_CURVE, make_calibration

    items = ranked_items([0.99, 0.99])
    decision = accept_by_rule(
        items, make_calibration(m=VOUCHED_CURVE), judged={items[0].candidate.id}
    )
    assert [a.candidate_id for a in decision.accepted] == [items[1].candidate.id]
    assert [i.candidate.id for i in decision.rest] == [items[0].candidate.id]


@pytest.mark.parametrize("target", [0.0, -0.5, 1.01, float("nan")])
def test_a_target_outside_zero_to_one_is_an_input_error_naming_the_field(target):
    from testaug.core.errors import InputError
    from testaug.review.acceptance import check_target

    with pytest.raises(InputError, match=r"--accept-precision: must be a precision in \(0, 1\]"):
        check_target(target, field="--accept-precision")
    assert check_target(1.0) == 1.0
