"""Significance tests (issue 19): randomization, binomial, bootstrap and Benjamini–Hochberg."""

from __future__ import annotations

import numpy as np
import pytest

from testaug.core.errors import TestAugError
from testaug.fixing import significance
from testaug.fixing.significance import (
    benjamini_hochberg,
    binomial_test_two_sided,
    bootstrap_difference,
    g_statistic,
    randomization_test,
    randomization_test_g,
    randomization_test_statistic,
)


def _hits(rate: float, n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).random(n) < rate


def test_randomization_identical_systems_give_p_one() -> None:
    hits = _hits(0.7, 200, 0)
    assert randomization_test(hits, hits) == 1.0


def test_randomization_same_rate_is_not_significant() -> None:
    # Same hits, shuffled order: equal pass rates, many differing examples.
    a = _hits(0.6, 300, 1)
    b = np.random.default_rng(2).permutation(a)
    assert randomization_test(a, b, trials=2_000) > 0.5


def test_randomization_clearly_better_system_is_significant() -> None:
    better, worse = _hits(0.9, 300, 3), _hits(0.5, 300, 4)
    p = randomization_test(better, worse, trials=2_000)
    assert p == pytest.approx(1 / 2_001)


def test_randomization_is_seeded_and_symmetric() -> None:
    a, b = _hits(0.62, 150, 5), _hits(0.55, 150, 6)
    p = randomization_test(a, b, trials=3_000, seed=42)
    assert p == randomization_test(a, b, trials=3_000, seed=42)
    assert 0.0 < p < 1.0
    assert randomization_test(b, a, trials=3_000, seed=42) == p


def test_randomization_statistic_of_the_mean_agrees_with_the_vectorized_test() -> None:
    a, b = _hits(0.62, 120, 7), _hits(0.5, 120, 8)
    fast = randomization_test(a, b, trials=2_000)
    slow = randomization_test_statistic([a], [b], lambda h: float(np.mean(h)), trials=2_000)
    assert slow == pytest.approx(fast, abs=0.03)


def test_randomization_of_g_over_suite_and_iid_hits() -> None:
    suite_a, iid_a = _hits(0.9, 80, 9), _hits(0.85, 80, 10)
    suite_b, iid_b = _hits(0.4, 80, 11), _hits(0.85, 80, 12)
    p = randomization_test_statistic(
        [suite_a, iid_a], [suite_b, iid_b], g_statistic, trials=500, seed=42
    )
    assert p < 0.01
    same = randomization_test_statistic([suite_a, iid_a], [suite_a, iid_a], g_statistic)
    assert same == 1.0


def test_g_statistic_is_the_harmonic_mean_of_the_two_scores() -> None:
    assert g_statistic(np.array([1, 1, 0, 0]), np.array([1, 1, 1, 1])) == pytest.approx(2 / 3)
    assert g_statistic(np.array([0, 0]), np.array([0])) == 0.0


def test_randomization_rejects_unpaired_hits() -> None:
    with pytest.raises(TestAugError):
        randomization_test([1, 0, 1], [1, 0])


@pytest.mark.parametrize(
    ("successes", "n", "p", "expected"),
    [
        (3, 10, 0.5, 0.34375),  # 2 * P(X <= 3) = 2 * 176/1024
        (10, 10, 0.5, 2 / 1024),
        (5, 10, 0.5, 1.0),
        (682, 925, 0.75, 0.38249),  # scipy.stats.binomtest's two-sided value
    ],
)
def test_binomial_two_sided_known_values(successes: int, n: int, p: float, expected: float) -> None:
    assert binomial_test_two_sided(successes, n, p) == pytest.approx(expected, abs=1e-4)
    assert significance._binomial_exact(successes, n, p) == pytest.approx(expected, abs=1e-4)


def test_binomial_rejects_impossible_counts() -> None:
    with pytest.raises(TestAugError):
        binomial_test_two_sided(11, 10, 0.5)


def test_bootstrap_no_change_gives_p_one_and_a_clear_fix_a_small_p() -> None:
    fails = _hits(0.4, 50, 13)
    assert bootstrap_difference(fails, fails) == 1.0
    before = np.ones(40, dtype=bool)
    after = np.zeros(40, dtype=bool)
    after[:4] = True
    assert bootstrap_difference(before, after) == 0.0


def test_bootstrap_is_seeded() -> None:
    before, after = _hits(0.5, 30, 14), _hits(0.4, 30, 15)
    p = bootstrap_difference(before, after, seed=42)
    assert p == bootstrap_difference(before, after, seed=42)
    assert 0.0 < p <= 1.0


def test_benjamini_hochberg_textbook_example() -> None:
    # Benjamini & Hochberg (1995), section 4: 15 p-values, q = 0.05 rejects the 4 smallest.
    p = [0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240,
         0.4262, 0.5719, 0.6528, 0.7590, 1.0000]  # fmt: skip
    rejected = benjamini_hochberg(p, alpha=0.05)
    assert rejected == [True] * 4 + [False] * 11
    shuffled = [p[i] for i in (14, 3, 0, 9, 2, 1)]
    assert benjamini_hochberg(shuffled, alpha=0.05) == [False, True, True, False, True, True]
    assert benjamini_hochberg([]) == []


def test_benjamini_hochberg_step_up_keeps_smaller_p_values_below_a_passing_one() -> None:
    # 0.04 fails its own bound (0.05 * 1/2) but the largest passing rank (2) carries it.
    assert benjamini_hochberg([0.04, 0.045], alpha=0.05) == [True, True]


def test_vectorized_g_test_agrees_with_the_loop_over_trials() -> None:
    suite_a, suite_b = _hits(0.80, 120, 1), _hits(0.65, 120, 2)
    iid_a, iid_b = _hits(0.85, 80, 3), _hits(0.85, 80, 4)
    fast = randomization_test_g(suite_a, suite_b, iid_a, iid_b, trials=4000)
    slow = randomization_test_statistic(
        [suite_a, iid_a], [suite_b, iid_b], g_statistic, trials=4000
    )
    assert fast == pytest.approx(slow, abs=0.03)


def test_g_test_of_identical_systems_is_one_and_of_a_clear_gap_is_small() -> None:
    suite, iid = _hits(0.6, 100, 5), _hits(0.9, 50, 6)
    assert randomization_test_g(suite, suite, iid, iid) == 1.0
    better = np.ones(100, dtype=bool)
    assert randomization_test_g(better, suite, iid, iid, trials=2000) < 0.01


def test_g_test_weights_the_tests_as_the_mean_of_functionality_pass_rates() -> None:
    # One large functionality the systems agree on and one small one where A is right and B
    # wrong: with equal weight per functionality the small one decides G.
    a = np.array([1] * 200 + [1] * 6, dtype=float)
    b = np.array([1] * 200 + [0] * 6, dtype=float)
    iid = np.ones(20)
    weights = np.array([1 / (2 * 200)] * 200 + [1 / (2 * 6)] * 6)
    assert randomization_test_g(a, b, iid, iid, weights=weights, trials=2000) < 0.05
    with pytest.raises(TestAugError, match="weights"):
        randomization_test_g(a, b, iid, iid, weights=weights[:10])
