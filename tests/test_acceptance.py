"""Acceptance with a stated precision: Clopper-Pearson bounds, precision curves, the rule, ECE."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from testaug.acceptance import (
    acceptance_rule,
    clopper_pearson_lower,
    describe_rule,
    expected_calibration_error,
    no_rule_message,
    precision_curve,
)


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
    p = [0.99] * 60 + [0.8] * 40 + [0.3] * 100
    valid = [True] * 60 + [True] * 36 + [False] * 4 + [True] * 20 + [False] * 80
    rule = acceptance_rule(precision_curve("g", p, valid), target=0.9)
    assert rule is not None
    assert rule.threshold == 0.8
    assert rule.accepted == 100
    assert rule.precision_estimate == pytest.approx(0.96)
    assert rule.precision_lower_bound >= 0.9
    assert "lower bound" in describe_rule(rule)


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
