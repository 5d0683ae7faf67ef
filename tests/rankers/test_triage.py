"""Review triage: ACC@k, effort at a target, random and perfect orders, Kendall's tau."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from rankers.evaluation import triage
from rankers.evaluation.triage import (
    TriageReport,
    acc_at_k,
    acc_curve,
    effort_at_target,
    effort_reduction,
    gap_closed,
    kendall_tau,
    oracle_acc_curve,
    oracle_effort_at_target,
    random_acc_curve,
    random_effort_at_target,
    triage_report,
)

# 10 cases, invalid at positions 0, 4 and 9 of the ranking.
TEN = np.zeros(10, dtype=bool)
TEN[[0, 4, 9]] = True

orders = st.lists(st.booleans(), max_size=30)
targets = st.floats(0.0, 1.0)


def reference_tau(a: list[float], b: list[float]) -> float:
    """Kendall's tau-b by counting every pair."""
    n = len(a)
    concordant = discordant = tied_a = tied_b = 0
    for i in range(n):
        for j in range(i + 1, n):
            sign_a = (a[i] > a[j]) - (a[i] < a[j])
            sign_b = (b[i] > b[j]) - (b[i] < b[j])
            tied_a += sign_a == 0
            tied_b += sign_b == 0
            if sign_a * sign_b > 0:
                concordant += 1
            elif sign_a * sign_b < 0:
                discordant += 1
    pairs = n * (n - 1) // 2
    denominator = (pairs - tied_a) * (pairs - tied_b)
    return math.nan if denominator == 0 else (concordant - discordant) / math.sqrt(denominator)


def same_tau(actual: float, expected: float) -> bool:
    if math.isnan(expected):
        return math.isnan(actual)
    return math.isclose(actual, expected, rel_tol=1e-12, abs_tol=1e-12)


# Hand examples.


def test_acc_at_k_of_ten_cases_with_three_invalid():
    # Invalid cases left after the top k: 3 at k = 0, 2 for k = 1..4, 1 for k = 5..9, 0 at 10.
    expected = [0.7] + [0.8] * 4 + [0.9] * 5 + [1.0]
    assert [acc_at_k(TEN, k) for k in range(11)] == pytest.approx(expected)
    assert acc_curve(TEN).tolist() == pytest.approx(expected)


def test_effort_of_ten_cases_with_three_invalid():
    assert effort_at_target(TEN, 0.9) == 0.5
    assert effort_at_target(TEN, 0.8) == 0.1
    assert effort_at_target(TEN, 0.7) == 0.0
    assert effort_at_target(TEN, 1.0) == 1.0
    assert effort_at_target(TEN) == 0.5  # the default target is 0.9


def test_random_and_oracle_effort_of_ten_cases_with_three_invalid():
    # Random: 1 - 0.3 (10 - k) / 10 >= 0.9 from k = 7 (k = 6 gives 0.88).
    assert random_effort_at_target(10, 3, 0.9) == 0.7
    # Perfect: the 3 invalid cases first; 1 - (3 - k) / 10 >= 0.9 from k = 2.
    assert oracle_effort_at_target(10, 3, 0.9) == 0.2
    assert oracle_acc_curve(10, 3).tolist() == pytest.approx([0.7, 0.8, 0.9] + [1.0] * 8)


def test_triage_report_of_ten_cases_with_three_invalid():
    report = triage_report(TEN, target=0.9)
    assert report.n == 10 and report.n_invalid == 3 and report.target == 0.9
    assert report.effort_at_target == 0.5
    assert report.random_effort_at_target == 0.7
    assert report.oracle_effort_at_target == 0.2
    assert report.reduction_vs_random == pytest.approx(1 - 0.5 / 0.7)
    assert report.gap_to_oracle == pytest.approx(0.3)
    assert report.oracle_reduction_vs_random == pytest.approx(1 - 0.2 / 0.7)
    assert report.gap_closed == pytest.approx(0.2 / 0.5)
    assert report.curve == pytest.approx(acc_curve(TEN).tolist())
    assert TriageReport.model_validate_json(report.model_dump_json()) == report


def test_triage_report_is_frozen_and_forbids_unknown_fields():
    report = triage_report(TEN)
    with pytest.raises(ValidationError):
        report.n = 3  # type: ignore[misc]
    with pytest.raises(ValidationError):
        TriageReport(**report.model_dump(), extra=1)


def test_target_met_exactly_counts_despite_rounding():
    # 1 - 9/10 is 0.0999... in floating point; 1 correct case of 10 still meets 0.1.
    nine_of_ten = np.array([False] + [True] * 9)
    assert effort_at_target(nine_of_ten, 0.1) == 0.0
    assert oracle_effort_at_target(10, 9, 0.1) == 0.0


def test_nothing_invalid_or_nothing_at_all_needs_no_review():
    assert effort_at_target(np.zeros(5, dtype=bool), 1.0) == 0.0
    assert random_effort_at_target(5, 0, 1.0) == oracle_effort_at_target(5, 0, 1.0) == 0.0
    assert acc_curve(np.array([], dtype=bool)).tolist() == [1.0]
    assert acc_at_k(np.array([]), 0) == 1.0
    report = triage_report(np.array([], dtype=bool))
    assert report.effort_at_target == 0.0 and report.reduction_vs_random == 0.0


def test_zero_one_integers_are_read_as_booleans():
    assert acc_curve(TEN.astype(int)).tolist() == acc_curve(TEN).tolist()


def test_gap_closed_runs_from_random_order_to_the_oracle():
    assert gap_closed(0.88, 0.88, 0.72) == 0.0
    assert gap_closed(0.72, 0.88, 0.72) == pytest.approx(1.0)
    assert gap_closed(0.80, 0.88, 0.72) == pytest.approx(0.5)
    assert gap_closed(0.95, 0.88, 0.72) < 0  # worse than random


def test_gap_closed_without_a_gap_is_whether_the_oracle_was_matched():
    assert gap_closed(0.0, 0.0, 0.0) == 1.0
    assert gap_closed(0.5, 0.4, 0.4) == 0.0


def test_effort_reduction():
    assert effort_reduction(0.5, 0.8) == pytest.approx(0.375)
    assert effort_reduction(0.8, 0.8) == 0.0
    assert effort_reduction(0.3, 0.0) == 0.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: acc_at_k(TEN, 11), "k must be between 0 and 10"),
        (lambda: acc_at_k(TEN, -1), "k must be between 0 and 10"),
        (lambda: acc_curve(np.array([0, 2, 1])), "booleans"),
        (lambda: acc_curve(np.array(["a"])), "booleans"),
        (lambda: acc_curve(np.zeros((2, 2), dtype=bool)), "one-dimensional"),
        (lambda: effort_at_target(TEN, 1.5), "target must be between 0 and 1"),
        (lambda: random_effort_at_target(5, 6, 0.9), "n_invalid <= n"),
        (lambda: oracle_effort_at_target(5, -1, 0.9), "n_invalid <= n"),
        (lambda: kendall_tau(np.zeros(3), np.zeros(4)), "one length"),
        (lambda: kendall_tau(np.array([1.0, np.nan]), np.zeros(2)), "NaN"),
    ],
)
def test_bad_inputs_raise_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# Properties of the curve and the effort.


@given(orders)
def test_curve_equals_acc_at_k_at_every_k(order):
    invalid = np.array(order, dtype=bool)
    curve = acc_curve(invalid)
    assert curve.shape == (len(order) + 1,)
    for k in range(len(order) + 1):
        assert curve[k] == pytest.approx(acc_at_k(invalid, k), abs=1e-12)
    assert curve[-1] == 1.0
    assert np.all(np.diff(curve) >= 0)


@given(orders, targets)
def test_effort_is_the_smallest_k_reaching_the_target(order, target):
    invalid = np.array(order, dtype=bool)
    n = len(order)
    k = round(effort_at_target(invalid, target) * n)
    assert acc_at_k(invalid, k) >= target - 1e-12
    if k > 0:
        assert acc_at_k(invalid, k - 1) < target - 1e-12


@given(st.integers(0, 40).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))), targets)
def test_a_perfect_order_has_the_oracle_effort(counts, target):
    n, n_invalid = counts
    perfect = np.arange(n) < n_invalid
    assert effort_at_target(perfect, target) == oracle_effort_at_target(n, n_invalid, target)
    report = triage_report(perfect, target)
    assert report.gap_to_oracle == 0.0
    assert report.gap_closed == pytest.approx(1.0)


@given(orders, targets)
def test_no_order_beats_the_oracle_and_the_oracle_beats_random(order, target):
    invalid = np.array(order, dtype=bool)
    n, n_invalid = len(order), int(invalid.sum())
    oracle = oracle_effort_at_target(n, n_invalid, target)
    assert oracle <= effort_at_target(invalid, target)
    assert oracle <= random_effort_at_target(n, n_invalid, target)
    report = triage_report(invalid, target)
    assert report.reduction_vs_random <= report.oracle_reduction_vs_random + 1e-12
    assert report.gap_closed <= 1.0 + 1e-12


@pytest.mark.parametrize(("n", "n_invalid"), [(1, 1), (5, 2), (7, 3), (8, 8)])
def test_random_curve_is_the_exact_average_over_all_placements(n, n_invalid):
    curves = []
    for positions in itertools.combinations(range(n), n_invalid):
        invalid = np.zeros(n, dtype=bool)
        invalid[list(positions)] = True
        curves.append(acc_curve(invalid))
    assert np.allclose(np.mean(curves, axis=0), random_acc_curve(n, n_invalid), atol=1e-12)


def test_random_closed_form_matches_a_monte_carlo_average():
    rng = np.random.default_rng(0)
    n, n_invalid, draws = 40, 8, 2000
    base = np.arange(n) < n_invalid
    curves = np.array([acc_curve(rng.permutation(base)) for _ in range(draws)])
    assert np.allclose(curves.mean(axis=0), random_acc_curve(n, n_invalid), atol=0.01)
    # The effort read off the averaged curve is the closed form's, give or take a case.
    averaged = curves.mean(axis=0)
    k_monte_carlo = int(np.argmax(averaged >= 0.9))
    assert abs(k_monte_carlo / n - random_effort_at_target(n, n_invalid, 0.9)) <= 1 / n


# Kendall's tau.


@given(
    st.integers(0, 25).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, 4), min_size=n, max_size=n),
            st.lists(st.integers(0, 4), min_size=n, max_size=n),
        )
    )
)
def test_kendall_tau_equals_the_pair_count_reference_with_ties(pair):
    a, b = pair
    assert same_tau(kendall_tau(np.array(a), np.array(b)), reference_tau(a, b))


@given(
    st.integers(2, 25).flatmap(
        lambda n: st.lists(
            st.floats(-1e6, 1e6, allow_nan=False), min_size=n, max_size=n, unique=True
        )
    )
)
def test_kendall_tau_of_identical_scores_is_one_and_of_reversed_scores_minus_one(scores):
    values = np.array(scores)
    assert kendall_tau(values, values) == 1.0
    assert kendall_tau(values, -values) == -1.0


def test_kendall_tau_in_small_blocks_equals_the_reference(monkeypatch):
    monkeypatch.setattr(triage, "_PAIR_BLOCK", 7)
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 6, 60), rng.integers(0, 6, 60)
    assert same_tau(kendall_tau(a, b), reference_tau(a.tolist(), b.tolist()))


def test_kendall_tau_equals_scipys_tau_b():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(2)
    a, b = rng.integers(0, 10, 200), rng.normal(size=200).round(1)
    assert kendall_tau(a, b) == pytest.approx(stats.kendalltau(a, b).statistic, abs=1e-12)


def test_kendall_tau_is_nan_when_undefined():
    assert math.isnan(kendall_tau(np.array([1.0]), np.array([2.0])))
    assert math.isnan(kendall_tau(np.ones(4), np.arange(4)))
    assert math.isnan(kendall_tau(np.array([]), np.array([])))


def test_kendall_tau_handles_infinite_scores():
    a = np.array([-np.inf, 0.0, np.inf])
    assert kendall_tau(a, np.array([1, 2, 3])) == 1.0
