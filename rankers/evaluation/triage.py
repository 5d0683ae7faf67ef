"""Review triage: how much of a ranking people must review to reach a target accuracy.

A ranker puts the likely-invalid candidates first (as in TestAug). People review the
top k of the ranking, so its invalid cases are found and corrected; the rest is
accepted as valid, so each invalid case below rank k stays an error. ACC@k is the
accuracy that results (TestAug Eq. 2), and the effort at a target is the smallest
fraction k/N of reviewed cases whose ACC@k reaches the target.

Rankings come in as `invalid_in_order`: a boolean array whose entry i says whether
the case at position i (rank i + 1) is invalid. An empty ranking has ACC@0 = 1.

Accuracies are compared with the target with a tolerance of 1e-12, so that a
target such as 0.7 is met by 7 correct cases of 10 despite rounding.
"""

from __future__ import annotations

import math

import numpy as np

from testaug.core.triage import TriageReport

_TOLERANCE = 1e-12
# Rows of the pair matrix compared at once in `kendall_tau`, so memory stays near
# _PAIR_BLOCK entries whatever N is.
_PAIR_BLOCK = 1 << 22


def _invalid_mask(invalid_in_order: np.ndarray) -> np.ndarray:
    """The ranking as a one-dimensional boolean array; ValueError if it is not one."""
    values = np.asarray(invalid_in_order)
    if values.ndim != 1:
        raise ValueError(f"invalid_in_order must be one-dimensional, got shape {values.shape}")
    if values.dtype.kind == "b":
        return values
    if values.shape[0] == 0:
        return values.astype(bool)
    if values.dtype.kind not in "iuf" or not np.isin(values, (0, 1)).all():
        raise ValueError("invalid_in_order must hold booleans (or 0 and 1)")
    return values.astype(bool)


def _check_target(target: float) -> None:
    if not 0.0 <= target <= 1.0:
        raise ValueError(f"target must be between 0 and 1, got {target}")


def _check_counts(n: int, n_invalid: int) -> None:
    if n < 0 or not 0 <= n_invalid <= n:
        raise ValueError(f"need 0 <= n_invalid <= n, got n={n}, n_invalid={n_invalid}")


def _effort(curve: np.ndarray, target: float) -> float:
    """k/N for the smallest k whose accuracy on a (non-decreasing) curve reaches target."""
    _check_target(target)
    n = curve.shape[0] - 1
    if n == 0:
        return 0.0
    k = int(np.argmax(curve >= target - _TOLERANCE))  # curve[n] == 1, so some k reaches it
    return k / n


def acc_at_k(invalid_in_order: np.ndarray, k: int) -> float:
    """ACC@k: 1 - (invalid cases after the top k) / N, TestAug Eq. 2.

    The extraction of Eq. 2 reads the indicator as `1(ŷ_i = l)` with l the majority
    (valid) label, but the prose says that only the minority (invalid) cases after
    rank k are wrong, which is what is counted here.
    """
    invalid = _invalid_mask(invalid_in_order)
    n = invalid.shape[0]
    if not 0 <= k <= n:
        raise ValueError(f"k must be between 0 and {n}, got {k}")
    if n == 0:
        return 1.0
    return 1.0 - int(invalid[k:].sum()) / n


def acc_curve(invalid_in_order: np.ndarray) -> np.ndarray:
    """ACC@k for k = 0..N, as an array of length N + 1 (O(N))."""
    invalid = _invalid_mask(invalid_in_order)
    n = invalid.shape[0]
    if n == 0:
        return np.ones(1)
    found = np.concatenate(([0], np.cumsum(invalid, dtype=np.int64)))
    return 1.0 - (found[-1] - found) / n


def effort_at_target(invalid_in_order: np.ndarray, target: float = 0.9) -> float:
    """The smallest k/N whose ACC@k reaches target (0.0 when ACC@0 already does)."""
    return _effort(acc_curve(invalid_in_order), target)


def random_acc_curve(n: int, n_invalid: int) -> np.ndarray:
    """Expected ACC@k for k = 0..N under a random order: 1 - (n_invalid / N)(N - k) / N."""
    _check_counts(n, n_invalid)
    if n == 0:
        return np.ones(1)
    k = np.arange(n + 1)
    return 1.0 - (n_invalid / n) * (n - k) / n


def oracle_acc_curve(n: int, n_invalid: int) -> np.ndarray:
    """ACC@k for k = 0..N under the perfect order, all invalid cases first."""
    _check_counts(n, n_invalid)
    return acc_curve(np.arange(n) < n_invalid)


def random_effort_at_target(n: int, n_invalid: int, target: float = 0.9) -> float:
    """The smallest k/N whose expected ACC@k under a random order reaches target."""
    return _effort(random_acc_curve(n, n_invalid), target)


def oracle_effort_at_target(n: int, n_invalid: int, target: float = 0.9) -> float:
    """The smallest k/N whose ACC@k under the perfect order reaches target."""
    return _effort(oracle_acc_curve(n, n_invalid), target)


def effort_reduction(effort: float, reference_effort: float) -> float:
    """1 - effort / reference_effort: the share of the reference's effort saved (0 if it is 0)."""
    if reference_effort == 0:
        return 0.0
    return 1.0 - effort / reference_effort


def gap_closed(effort: float, random_effort: float, oracle_effort: float) -> float:
    """The share of the random-to-oracle effort gap that a ranking closes.

    The oracle's own reduction is a ceiling that falls as invalid cases become the
    majority, so this is the fair figure when comparing sets. 1 when there is no gap
    and the ranking matches the oracle, 0 when there is none and it does not.
    """
    gap = random_effort - oracle_effort
    if gap <= 0:
        return 1.0 if effort <= oracle_effort else 0.0
    return (random_effort - effort) / gap


def _tied_pairs(values: np.ndarray) -> int:
    """The number of pairs of items with equal values."""
    _, counts = np.unique(values, return_counts=True)
    return int((counts * (counts - 1) // 2).sum())


def _signs(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """sign(values[i] - values[j]) for i in rows and every j, as int8 (no overflow, no NaN)."""
    left, right = values[rows, None], values[None, :]
    return (left > right).astype(np.int8) - (left < right).astype(np.int8)


def kendall_tau(a_scores: np.ndarray, b_scores: np.ndarray) -> float:
    """Kendall's tau-b between two rankers' scores over the same items.

    (concordant - discordant) / sqrt((P - ties in a) (P - ties in b)), P = N(N - 1) / 2.
    NaN when N < 2 or either ranker gives every item the same score. O(N^2) time,
    in blocks of rows so memory stays bounded.
    """
    a, b = np.asarray(a_scores), np.asarray(b_scores)
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"scores must be one-dimensional of one length, got {a.shape}, {b.shape}")
    for values in (a, b):
        if values.dtype.kind not in "biuf":
            raise ValueError(f"scores must be numbers, got dtype {values.dtype}")
        if values.dtype.kind == "f" and np.isnan(values).any():
            raise ValueError("scores contain NaN")
    n = a.shape[0]
    pairs = n * (n - 1) // 2
    denominator = (pairs - _tied_pairs(a)) * (pairs - _tied_pairs(b))
    if n < 2 or denominator == 0:
        return math.nan
    block = max(1, _PAIR_BLOCK // n)
    net = 0  # concordant minus discordant pairs
    for start in range(0, n - 1, block):
        stop = min(start + block, n - 1)
        rows = np.arange(start, stop)
        later = np.arange(n)[None, :] > rows[:, None]  # each pair once
        agreement = _signs(a, rows) * _signs(b, rows)
        net += int(agreement[later].sum(dtype=np.int64))
    tau = net / math.sqrt(denominator)
    return min(1.0, max(-1.0, tau))


def triage_report(invalid_in_order: np.ndarray, target: float = 0.9) -> TriageReport:
    """The triage report of a ranking (invalid cases hopefully first) at a target accuracy."""
    invalid = _invalid_mask(invalid_in_order)
    n, n_invalid = invalid.shape[0], int(invalid.sum())
    curve = acc_curve(invalid)
    effort = _effort(curve, target)
    random_effort = random_effort_at_target(n, n_invalid, target)
    oracle_effort = oracle_effort_at_target(n, n_invalid, target)
    return TriageReport(
        n=n,
        n_invalid=n_invalid,
        target=target,
        effort_at_target=effort,
        random_effort_at_target=random_effort,
        oracle_effort_at_target=oracle_effort,
        reduction_vs_random=effort_reduction(effort, random_effort),
        oracle_reduction_vs_random=effort_reduction(oracle_effort, random_effort),
        gap_closed=gap_closed(effort, random_effort, oracle_effort),
        gap_to_oracle=effort - oracle_effort,
        curve=curve.tolist(),
    )
