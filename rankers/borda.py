"""Borda count: combine the rankings of several rankers into one (as in TestAug).

Compatible with the Borda count of pyrankagg (Dwork et al., 2001): each ranker
ranks the N items 1..N, an item at rank r gets N - r points, points are summed
over rankers and the highest total comes first.

Ranks and ties:

- `ranks_from_scores` ranks one ranker's scores, highest first by default. Equal
  scores are ranked in item order (a stable sort): of two items with the same
  score, the one with the smaller index gets the better rank.
- `borda_order` orders items by total points, highest first; equal totals keep
  item order (smaller index first).

pyrankagg does the same for full lists: it sorts with Python's stable `sorted`,
and its items are listed in input order. Nothing here is random, so the same
input always gives the same output.

Partial lists: a ranker may rank only m < N items (the others are None or NaN);
its ranked items carry ranks 1..m. By default (`unranked="tied_last"`) the
unranked items are tied just below its last ranked item, at rank m + 1, so they
get N - m - 1 points, and its ranked items N - r. This is pyrankagg's truncated
Borda count (`PartialListRankAggregator.supplement_experts`, then the Borda count
of the full lists), and it orders items like "ranked items m + 1 - r points,
unranked items 0" does, since the two differ by a constant per ranker. With
`unranked="zero"` the unranked items get 0 points and the ranked ones N - r
instead; this favours items that a ranker left out less than pyrankagg does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

Unranked = Literal["tied_last", "zero"]
RankingLike = np.ndarray | Sequence[int | float | None]


@dataclass(frozen=True, eq=False)
class BordaResult:
    """The aggregate of several rankings: points, order and 1-based rank of each item.

    `points[i]` is item i's total; `order` lists item indices best first;
    `rank[i]` is item i's 1-based position in `order`. The arrays are read-only.
    """

    points: np.ndarray
    order: np.ndarray
    rank: np.ndarray


def _readonly(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def _descending_order(values: np.ndarray) -> np.ndarray:
    """Indices by value, highest first; equal values in ascending index order."""
    # A stable ascending sort of the reversed values, read backwards. No negation,
    # so unsigned and boolean values work too.
    n = values.shape[0]
    return (n - 1) - np.argsort(values[::-1], kind="stable")[::-1]


def _positions(order: np.ndarray) -> np.ndarray:
    """The 1-based position of each item in `order` (the inverse permutation, plus one)."""
    positions = np.empty(order.shape[0], dtype=np.int64)
    positions[order] = np.arange(1, order.shape[0] + 1)
    return positions


def ranks_from_scores(scores: np.ndarray, *, descending: bool = True) -> np.ndarray:
    """1-based ranks of one ranker's scores; the highest score is rank 1 when descending.

    Equal scores are ranked in item order (stable). NaN scores raise ValueError.
    """
    values = np.asarray(scores)
    if values.ndim != 1:
        raise ValueError(f"scores must be one-dimensional, got shape {values.shape}")
    if values.dtype.kind not in "biuf":
        raise ValueError(f"scores must be numbers, got dtype {values.dtype}")
    if values.dtype.kind == "f" and np.isnan(values).any():
        raise ValueError("scores contain NaN; give a partial ranking to borda_points instead")
    order = _descending_order(values) if descending else np.argsort(values, kind="stable")
    return _positions(order)


def _rank_value(value: object, name: str) -> float:
    """One entry of a ranking as a float, NaN when the item is unranked."""
    if value is None:
        return math.nan
    if isinstance(value, bool | np.bool_) or not isinstance(
        value, int | float | np.integer | np.floating
    ):
        raise ValueError(f"ranker {name}: ranks must be whole numbers or None, got {value!r}")
    return float(value)


def _ranks_of(ranking: RankingLike, n_items: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    """A ranking's ranks (NaN where unranked) and its mask of ranked items."""
    if isinstance(ranking, np.ndarray) and ranking.ndim != 1:
        raise ValueError(f"ranker {name}: ranking must be one-dimensional, got {ranking.shape}")
    if isinstance(ranking, np.ndarray) and ranking.dtype.kind in "iuf":
        values = ranking.astype(np.float64)
    else:
        values = np.array([_rank_value(v, name) for v in ranking], dtype=np.float64)
    if values.shape[0] != n_items:
        raise ValueError(f"ranker {name}: ranking has {values.shape[0]} items, expected {n_items}")
    ranked = ~np.isnan(values)
    given = values[ranked]
    if not (np.isfinite(given).all() and (given == np.round(given)).all()):
        raise ValueError(f"ranker {name}: ranks must be whole numbers or None")
    if not np.array_equal(np.sort(given), np.arange(1, given.shape[0] + 1)):
        raise ValueError(
            f"ranker {name}: its ranked items must carry ranks 1..{given.shape[0]}, each once"
        )
    return values, ranked


def borda_points(
    rankings: Sequence[RankingLike],
    n_items: int,
    *,
    unranked: Unranked = "tied_last",
    names: Sequence[str] | None = None,
) -> np.ndarray:
    """Total Borda points per item: rank r gives N - r; unranked items as `unranked` says.

    `rankings[j][i]` is ranker j's 1-based rank of item i, or None / NaN if it did
    not rank it. `names` labels the rankers in error messages.
    """
    if n_items < 0:
        raise ValueError(f"n_items must be at least 0, got {n_items}")
    if unranked not in ("tied_last", "zero"):
        raise ValueError(f"unranked must be 'tied_last' or 'zero', got {unranked!r}")
    if names is not None and len(names) != len(rankings):
        raise ValueError(f"{len(names)} names for {len(rankings)} rankings")
    points = np.zeros(n_items, dtype=np.int64)
    for j, ranking in enumerate(rankings):
        name = repr(names[j]) if names is not None else str(j)
        values, ranked = _ranks_of(ranking, n_items, name)
        points[ranked] += n_items - values[ranked].astype(np.int64)
        if unranked == "tied_last":
            points[~ranked] += n_items - int(ranked.sum()) - 1
    return points


def borda_order(points: np.ndarray) -> np.ndarray:
    """Item indices by points, highest first; equal points in ascending item order."""
    values = np.asarray(points)
    if values.ndim != 1:
        raise ValueError(f"points must be one-dimensional, got shape {values.shape}")
    if values.dtype.kind not in "biuf" or (values.dtype.kind == "f" and np.isnan(values).any()):
        raise ValueError("points must be numbers, without NaN")
    return _descending_order(values)


def aggregate(
    score_lists: Mapping[str, np.ndarray], weights: Mapping[str, float] | None = None
) -> BordaResult:
    """Borda aggregate of rankers' invalidity scores (higher = more likely invalid).

    Each ranker's scores are ranked highest first, the ranks are combined by Borda
    count (each ranker's points times its weight, when `weights` are given), and the
    result puts the likely-invalid items first.
    """
    if not score_lists:
        raise ValueError("no rankers to aggregate")
    names = list(score_lists)
    rankings: list[np.ndarray] = []
    n_items: int | None = None
    for name, scores in score_lists.items():
        values = np.asarray(scores)
        if values.ndim != 1:
            raise ValueError(f"ranker {name!r}: scores must be one-dimensional, got {values.shape}")
        if n_items is None:
            n_items = values.shape[0]
        elif values.shape[0] != n_items:
            raise ValueError(
                f"ranker {name!r}: {values.shape[0]} scores, expected {n_items} "
                f"like ranker {names[0]!r}"
            )
        try:
            rankings.append(ranks_from_scores(values))
        except ValueError as error:
            raise ValueError(f"ranker {name!r}: {error}") from None
    assert n_items is not None
    if weights is None:
        points = borda_points(rankings, n_items, names=names)
    else:
        points = np.zeros(n_items, dtype=np.float64)
        for name, ranking in zip(names, rankings, strict=True):
            points += weights.get(name, 1.0) * borda_points([ranking], n_items, names=[name])
    order = borda_order(points)
    return BordaResult(_readonly(points), _readonly(order), _readonly(_positions(order)))
