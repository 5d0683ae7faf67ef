"""95% intervals of error rates: Wilson's score interval against values computed another way,
and prediction-powered inference (PPI) for rates that rest on cases of unknown validity."""

from __future__ import annotations

import math

import numpy as np
import pytest

from testaug.evaluation.intervals import Generated, ppi_error_rate, wilson

Z95 = 1.959963984540054


def score_bound(failures: int, n: int, upper: bool) -> float:
    """The p at which the score test |p_hat - p| / sqrt(p (1 - p) / n) = z, found by
    bisection (the definition of Wilson's interval, not its closed form)."""
    p_hat = failures / n
    low, high = (p_hat, 1.0) if upper else (0.0, p_hat)
    if (upper and failures == n) or (not upper and failures == 0):
        return p_hat
    for _ in range(200):
        middle = (low + high) / 2
        inside = abs(p_hat - middle) <= Z95 * math.sqrt(middle * (1 - middle) / n)
        if upper:
            low, high = (middle, high) if inside else (low, middle)
        else:
            low, high = (low, middle) if inside else (middle, high)
    return (low + high) / 2


@pytest.mark.parametrize(("failures", "n"), [(2, 6), (8, 64), (81, 263), (15, 148), (1, 29)])
def test_wilson_matches_the_score_test_inverted_by_bisection(failures, n):
    interval = wilson(failures, n)
    assert interval.low == pytest.approx(score_bound(failures, n, upper=False), abs=1e-9)
    assert interval.high == pytest.approx(score_bound(failures, n, upper=True), abs=1e-9)
    assert interval.n == n and interval.method == "wilson"


def test_wilson_matches_published_values():
    # Newcombe (1998), Statistics in Medicine 17, table I: 81/263 and 15/148
    assert (round(wilson(81, 263).low, 4), round(wilson(81, 263).high, 4)) == (0.2553, 0.3662)
    assert (round(wilson(15, 148).low, 4), round(wilson(15, 148).high, 4)) == (0.0624, 0.1605)


def test_wilson_at_the_edges_reaches_zero_or_one_and_closed_form_of_zero_failures():
    none = wilson(0, 20)
    assert none.low == 0.0 and none.high == pytest.approx(Z95**2 / (20 + Z95**2))
    every = wilson(20, 20)
    assert every.high == 1.0 and every.low == pytest.approx(20 / (20 + Z95**2))


def test_wilson_with_no_case_is_the_whole_unit_interval():
    empty = wilson(0, 0)
    assert (empty.low, empty.high, empty.n) == (0.0, 1.0, 0)


def test_wilson_refuses_more_failures_than_cases():
    with pytest.raises(ValueError, match="failures"):
        wilson(3, 2)


def population(rng: np.random.Generator, n: int, valid_share: float = 0.7):
    """Cases with validity V, model failure F (0.15 on valid cases, 0.6 on invalid ones)
    and a noisy, biased ranker P(valid) p; the truth is the error rate on valid cases."""
    valid = rng.random(n) < valid_share
    failed = np.where(valid, rng.random(n) < 0.15, rng.random(n) < 0.6)
    p_valid = np.clip(0.55 + 0.35 * valid + rng.normal(0, 0.1, n), 0.0, 1.0)
    return valid, failed, p_valid


def generated(failed, p_valid, labelled_failed, labelled_p_valid, labelled_valid) -> Generated:
    return Generated(
        failed=list(failed),
        p_valid=list(p_valid),
        labelled_failed=list(labelled_failed),
        labelled_p_valid=list(labelled_p_valid),
        labelled_valid=list(labelled_valid),
    )


def test_ppi_with_perfect_predictions_is_the_classical_ratio_and_narrower_than_labels_alone():
    rng = np.random.default_rng(7)
    valid, failed, _ = population(rng, 2000)
    l_valid, l_failed, _ = population(rng, 100)
    group = generated(failed, valid, l_failed, l_valid, l_valid)
    ppi = ppi_error_rate([], [group])
    classical = failed[valid].mean()
    assert ppi.estimate == pytest.approx(classical)
    labels_only = wilson(int(l_failed[l_valid].sum()), int(l_valid.sum()))
    assert ppi.high - ppi.low <= labels_only.high - labels_only.low
    assert ppi.method == "ppi" and ppi.labelled == 100 and ppi.n == 2000


def test_ppi_removes_the_bias_of_the_rankers_predictions():
    rng = np.random.default_rng(11)
    valid, failed, _ = population(rng, 20_000)
    l_valid, l_failed, _ = population(rng, 1000)
    optimistic = np.full(len(valid), 0.97)  # the ranker calls nearly everything valid
    truth = failed[valid].mean()
    naive = float(np.sum(failed * optimistic) / np.sum(optimistic))  # predictions alone
    assert abs(naive - truth) > 0.1
    ppi = ppi_error_rate([], [generated(failed, optimistic, l_failed, [0.97] * 1000, l_valid)])
    assert ppi.estimate == pytest.approx(truth, abs=0.03)
    assert ppi.low <= truth <= ppi.high


def test_ppi_interval_covers_the_truth_in_about_95_percent_of_repetitions():
    rng = np.random.default_rng(2023)
    truth = 0.15  # the error rate on valid cases, by construction
    covered = 0
    repetitions = 500
    for _ in range(repetitions):
        _, failed, p_valid = population(rng, 600)
        l_valid, l_failed, l_p = population(rng, 80)
        verified = rng.random(200) < truth  # verified cases: valid, failing at the truth
        interval = ppi_error_rate(
            list(verified), [generated(failed, p_valid, l_failed, l_p, l_valid)]
        )
        covered += interval.low <= truth <= interval.high
    assert covered / repetitions >= 0.9


def test_ppi_counts_verified_cases_as_valid_with_their_failures():
    verified = [True] * 10 + [False] * 30
    perfect = generated([True, False], [1.0, 1.0], [True, False], [1.0, 1.0], [True, True])
    interval = ppi_error_rate(verified, [perfect])
    assert interval.estimate == pytest.approx(11 / 42)
    assert interval.n == 42


def test_a_labelled_case_the_model_never_ran_on_takes_the_generators_failure_rate():
    # 4 unverified cases, half failing; people rejected one case the model never saw
    group = Generated(
        failed=[True, True, False, False],
        p_valid=[0.8] * 4,
        labelled_failed=[None, False],
        labelled_p_valid=[0.8, 0.8],
        labelled_valid=[False, True],
    )
    interval = ppi_error_rate([], [group])
    # E[F V]: mean(F p) - share * mean(F p - F V) = 0.4 - mean(0.5 * 0.8, 0) = 0.2
    # E[V]: mean(p) - mean(p - V) = 0.8 - mean(0.8, -0.2) = 0.5
    assert interval.estimate == pytest.approx(0.2 / 0.5)


def test_ppi_needs_two_people_labels_per_generator():
    with pytest.raises(ValueError, match="at least 2 people's labels"):
        ppi_error_rate([], [Generated(failed=[True], p_valid=[0.9])])
