"""Significance tests for the analyses that report mean ± std (issue 19).

BeLUGA: i.i.d. scores against the IID baseline by a two-tailed binomial test; G
scores (and pass rates) by paired randomization testing (Yeh, 2000) with 10,000 trials,
seed 42: per-example hits are swapped between the two systems where they differ, and
p = (count(|Δ*| ≥ |Δ|) + 1) / (trials + 1). AdaTest (AT-E3): a topic's failure rate
before and after a fix is compared over 5,000 bootstrap re-samples of its tests, and the
topics are read with Benjamini–Hochberg FDR < 0.05. Everything is numpy and seeded.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from testaug.core.errors import TestAugError

TRIALS = 10_000  # BeLUGA's randomization trials
BOOTSTRAP_SAMPLES = 5_000  # AT-E3
SEED = 42
ALPHA = 0.05
_CHUNK = 1_000_000  # booleans per block of trials in the vectorized mean test

Hits = Sequence[bool] | Sequence[int] | np.ndarray
Statistic = Callable[..., float]


def _paired(hits_a: Hits, hits_b: Hits) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(hits_a, dtype=float)
    b = np.asarray(hits_b, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise TestAugError(
            f"paired hits must be two vectors of one length (got {a.shape} and {b.shape})"
        )
    return a, b


def _p_value(extreme: int, trials: int) -> float:
    return (extreme + 1) / (trials + 1)


def randomization_test(
    hits_a: Hits, hits_b: Hits, *, trials: int = TRIALS, seed: int = SEED
) -> float:
    """Two-sided p-value that systems A and B have the same pass rate (mean of their
    per-example hits), by paired randomization."""
    a, b = _paired(hits_a, hits_b)
    if a.size == 0:
        return 1.0
    observed = abs(a.mean() - b.mean())
    differ = np.flatnonzero(a != b)
    if differ.size == 0:
        return 1.0
    # Swapping a pair where a == b changes nothing: only the differing pairs move Δ*.
    gap = (a[differ] - b[differ]) / a.size
    rng = np.random.default_rng(seed)
    extreme = 0
    step = max(1, _CHUNK // differ.size)
    for start in range(0, trials, step):
        count = min(step, trials - start)
        swap = rng.random((count, differ.size)) < 0.5
        delta = np.where(swap, -gap, gap).sum(axis=1)
        extreme += int(np.count_nonzero(np.abs(delta) >= observed - 1e-12))
    return _p_value(extreme, trials)


def randomization_test_statistic(
    system_a: Sequence[Hits],
    system_b: Sequence[Hits],
    statistic: Statistic,
    *,
    trials: int = TRIALS,
    seed: int = SEED,
) -> float:
    """Two-sided p-value that `statistic` is the same for A and B, by paired randomization.

    Each system is a group of per-example hit vectors (e.g. suite hits and i.i.d. hits, for
    G); `statistic(*group)` scores one system. Every trial swaps each example whose hits
    differ between A and B with probability 1/2, in every vector of the group."""
    if len(system_a) != len(system_b) or not system_a:
        raise TestAugError("both systems need the same number of hit vectors (at least one)")
    pairs = [_paired(a, b) for a, b in zip(system_a, system_b, strict=True)]
    observed = abs(statistic(*(a for a, _ in pairs)) - statistic(*(b for _, b in pairs)))
    differ = [np.flatnonzero(a != b) for a, b in pairs]
    if not any(d.size for d in differ):
        return 1.0
    rng = np.random.default_rng(seed)
    extreme = 0
    for _ in range(trials):
        left, right = [], []
        for (a, b), where in zip(pairs, differ, strict=True):
            swap = where[rng.random(where.size) < 0.5]
            x, y = a.copy(), b.copy()
            x[swap], y[swap] = b[swap], a[swap]
            left.append(x)
            right.append(y)
        delta = abs(statistic(*left) - statistic(*right))
        extreme += delta >= observed - 1e-12
    return _p_value(int(extreme), trials)


def g_statistic(suite_hits: np.ndarray, iid_hits: np.ndarray) -> float:
    """G = 2·s_T·s_iid / (s_T + s_iid) from per-example suite and i.i.d. hits (0 for none)."""
    s_t = float(np.mean(suite_hits)) if len(suite_hits) else 0.0
    s_iid = float(np.mean(iid_hits)) if len(iid_hits) else 0.0
    return 2 * s_t * s_iid / (s_t + s_iid) if s_t + s_iid else 0.0


def _binomial_pmf(k: int, n: int, p: float) -> float:
    if p == 0.0:
        return 1.0 if k == 0 else 0.0
    if p == 1.0:
        return 1.0 if k == n else 0.0
    log = (
        math.lgamma(n + 1)
        - math.lgamma(k + 1)
        - math.lgamma(n - k + 1)
        + k * math.log(p)
        + (n - k) * math.log1p(-p)
    )
    return math.exp(log)


def _binomial_exact(successes: int, n: int, p: float) -> float:
    # Sum the probabilities of every outcome no likelier than the observed one (as scipy).
    observed = _binomial_pmf(successes, n, p)
    bound = observed * (1 + 1e-7)
    total = sum(q for q in (_binomial_pmf(k, n, p) for k in range(n + 1)) if q <= bound)
    return min(1.0, total)


def binomial_test_two_sided(successes: int, n: int, p: float) -> float:
    """Two-sided exact binomial p-value of `successes` out of `n` against rate `p` (the
    i.i.d. accuracy against the IID baseline's). scipy's when installed, else the same sum."""
    if n < 0 or not 0 <= successes <= n:
        raise TestAugError(f"binomial test: need 0 <= successes <= n (got {successes} of {n})")
    if not 0.0 <= p <= 1.0:
        raise TestAugError(f"binomial test: p must be in [0, 1] (got {p})")
    if n == 0:
        return 1.0
    try:
        from scipy.stats import binomtest
    except ImportError:
        return _binomial_exact(successes, n, p)
    return float(binomtest(successes, n, p, alternative="two-sided").pvalue)


def bootstrap_difference(
    fails_before: Hits,
    fails_after: Hits,
    *,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = SEED,
) -> float:
    """Two-sided p-value that a topic's failure rate did not change (AT-E3): its tests'
    outcomes before and after (paired by test) are re-sampled with replacement `samples`
    times; p = 2·min(share of Δ* ≤ 0, share of Δ* ≥ 0), at most 1."""
    before, after = _paired(fails_before, fails_after)
    if before.size == 0:
        return 1.0
    rng = np.random.default_rng(seed)
    gaps = after - before
    index = rng.integers(0, gaps.size, size=(samples, gaps.size))
    delta = gaps[index].mean(axis=1)
    low = np.count_nonzero(delta <= 1e-12) / samples
    high = np.count_nonzero(delta >= -1e-12) / samples
    return float(min(1.0, 2 * min(low, high)))


def benjamini_hochberg(p_values: Sequence[float], alpha: float = ALPHA) -> list[bool]:
    """Which hypotheses are rejected at false discovery rate `alpha` (Benjamini–Hochberg),
    in the order given."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")
    below = p[order] <= alpha * np.arange(1, m + 1) / m
    rejected = np.zeros(m, dtype=bool)
    if below.any():
        last = int(np.flatnonzero(below)[-1])
        rejected[order[: last + 1]] = True
    return rejected.tolist()


def randomization_test_g(
    suite_a: Hits,
    suite_b: Hits,
    iid_a: Hits,
    iid_b: Hits,
    *,
    weights: Hits | None = None,
    trials: int = TRIALS,
    seed: int = SEED,
) -> float:
    """Two-sided p-value that systems A and B have the same G (Eq. 8), by paired
    randomization, vectorized.

    s_T is the `weights`-weighted sum of the per-test hits (BeLUGA's mean of functionality
    pass rates: each test weighs 1 / (its functionality's size x the number of
    functionalities); default the plain mean), s_iid the mean of the i.i.d. hits. Hits may
    be shares in [0, 1] (averaged over seeds or models). Each trial swaps every test and
    every i.i.d. example whose hits differ between A and B with probability 1/2."""
    a, b = _paired(suite_a, suite_b)
    ia, ib = _paired(iid_a, iid_b)
    w = np.full(a.size, 1 / a.size) if weights is None and a.size else np.asarray(weights, float)
    if w.shape != a.shape:
        raise TestAugError(f"weights need one value per test (got {w.shape} for {a.shape})")
    v = np.full(ia.size, 1 / ia.size) if ia.size else np.zeros(0)

    def g(s_t: np.ndarray, s_iid: np.ndarray) -> np.ndarray:
        total = s_t + s_iid
        return np.where(total > 0, 2 * s_t * s_iid / np.where(total > 0, total, 1), 0.0)

    base = (float(w @ a), float(w @ b), float(v @ ia), float(v @ ib))
    observed = abs(
        float(g(np.array(base[0]), np.array(base[2])) - g(np.array(base[1]), np.array(base[3])))
    )
    ds, di = np.flatnonzero(a != b), np.flatnonzero(ia != ib)
    if ds.size + di.size == 0:
        return 1.0
    # Swapping test i moves s_T(A) by w_i (b_i - a_i) and s_T(B) by the opposite.
    move_t, move_i = w[ds] * (b[ds] - a[ds]), v[di] * (ib[di] - ia[di])
    rng = np.random.default_rng(seed)
    extreme = 0
    step = max(1, _CHUNK // (ds.size + di.size))
    for start in range(0, trials, step):
        count = min(step, trials - start)
        swap = rng.random((count, ds.size + di.size)) < 0.5
        shift_t = swap[:, : ds.size] @ move_t
        shift_i = swap[:, ds.size :] @ move_i
        delta = g(base[0] + shift_t, base[2] + shift_i) - g(base[1] - shift_t, base[3] - shift_i)
        extreme += int(np.count_nonzero(np.abs(delta) >= observed - 1e-12))
    return _p_value(extreme, trials)
