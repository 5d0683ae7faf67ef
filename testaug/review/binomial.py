"""The one-sided Clopper-Pearson lower bound of a binomial proportion, without SciPy: the
precision an acceptance rule can vouch for from its labelled candidates."""

from __future__ import annotations

import math

DEFAULT_CONFIDENCE = 0.95


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, eps = 1e-300, 3e-16
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            break
    return h


def regularized_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularized incomplete beta function, for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def clopper_pearson_lower(
    successes: int, trials: int, confidence: float = DEFAULT_CONFIDENCE
) -> float:
    """The one-sided Clopper-Pearson lower confidence bound of a binomial proportion.

    The p at which seeing `successes` or more of `trials` has probability 1 - confidence,
    that is the (1 - confidence) quantile of Beta(successes, trials - successes + 1).

    >>> round(clopper_pearson_lower(19, 20), 4)
    0.7839
    >>> clopper_pearson_lower(0, 10)
    0.0
    """
    if not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes} of {trials}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if successes == 0:
        return 0.0
    alpha = 1.0 - confidence
    if successes == trials:
        return alpha ** (1.0 / trials)
    a, b = float(successes), float(trials - successes + 1)
    low, high = 0.0, successes / trials
    for _ in range(100):  # bisection: I_p(a, b) increases with p
        middle = (low + high) / 2.0
        if regularized_beta(a, b, middle) < alpha:
            low = middle
        else:
            high = middle
        if high - low < 1e-12:
            break
    return low
