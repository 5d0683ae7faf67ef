"""Borda count: hand-computed examples, a plain reference, and properties of the aggregate."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankers.borda import (
    BordaResult,
    aggregate,
    borda_order,
    borda_points,
    ranks_from_scores,
)

# A plain reference, written as pyrankagg's Borda count reads: ranks 1..N, N - r points
# per ranker, unranked items of a partial list tied at rank m + 1 (its truncated count),
# totals sorted highest first with Python's stable sort, items in index order.


def reference_ranks(scores: list[float]) -> list[int]:
    order = sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)
    ranks = [0] * len(scores)
    for position, item in enumerate(order, start=1):
        ranks[item] = position
    return ranks


def reference_points(rankings: list[list[int | None]], n: int, unranked: str) -> list[int]:
    points = [0] * n
    for ranking in rankings:
        m = sum(1 for rank in ranking if rank is not None)
        for item in range(n):
            rank = ranking[item]
            if rank is not None:
                points[item] += n - rank
            elif unranked == "tied_last":
                points[item] += n - (m + 1)
    return points


def reference_order(points: list[int]) -> list[int]:
    return sorted(range(len(points)), key=lambda i: points[i], reverse=True)


@st.composite
def ranking_sets(draw: st.DrawFn, partial: bool = True) -> tuple[int, list[list[int | None]]]:
    """N items and 1..5 rankings of them; a partial ranking ranks some items, others None."""
    n = draw(st.integers(0, 8))
    rankings = []
    for _ in range(draw(st.integers(1, 5))):
        ranked_first = draw(st.permutations(range(n)))
        m = draw(st.integers(0, n)) if partial else n
        ranking: list[int | None] = [None] * n
        for rank, item in enumerate(ranked_first[:m], start=1):
            ranking[item] = rank
        rankings.append(ranking)
    return n, rankings


tied_scores = st.lists(st.integers(0, 3).map(float), min_size=0, max_size=10)
unranked_policies = st.sampled_from(["tied_last", "zero"])


# Examples computed by hand.


def test_scores_are_ranked_highest_first_and_equal_scores_in_item_order():
    scores = np.array([0.5, 0.9, 0.5, 0.1])
    assert ranks_from_scores(scores).tolist() == [2, 1, 3, 4]
    assert ranks_from_scores(scores, descending=False).tolist() == [2, 4, 3, 1]


def test_unsigned_and_boolean_scores_are_ranked_without_overflow():
    assert ranks_from_scores(np.array([0, 7, 255], dtype=np.uint8)).tolist() == [3, 2, 1]
    assert ranks_from_scores(np.array([False, True, True])).tolist() == [3, 1, 2]


def test_three_full_rankings_sum_their_points_and_a_tie_goes_to_the_smaller_index():
    rankings = [np.array([1, 2, 3, 4]), np.array([2, 1, 3, 4]), np.array([4, 3, 1, 2])]
    # Points N - r: [3, 2, 1, 0] + [2, 3, 1, 0] + [0, 1, 3, 2]
    points = borda_points(rankings, 4)
    assert points.tolist() == [5, 6, 5, 2]
    assert borda_order(points).tolist() == [1, 0, 2, 3]


def test_partial_list_ties_unranked_items_at_rank_m_plus_one_like_pyrankagg():
    full = [1, 2, 3, 4]
    partial = [None, None, None, 1]  # m = 1: item 3 gets 4 - 1 = 3, the others 4 - 2 = 2
    points = borda_points([full, partial], 4)
    assert points.tolist() == [5, 4, 3, 3]
    assert borda_order(points).tolist() == [0, 1, 2, 3]
    # pyrankagg's PartialListRankAggregator: mean rank with unranked at m + 1 = 2
    # gives 1.5, 2.0, 2.5, 2.5: the same order.


def test_partial_list_with_unranked_at_zero_points():
    points = borda_points([[1, 2, 3, 4], [None, None, None, 1]], 4, unranked="zero")
    assert points.tolist() == [3, 2, 1, 3]
    assert borda_order(points).tolist() == [0, 3, 1, 2]


def test_nan_and_none_both_mark_unranked_items():
    with_none = borda_points([[2, None, 1]], 3)
    with_nan = borda_points([np.array([2.0, np.nan, 1.0])], 3)
    assert with_none.tolist() == with_nan.tolist() == [1, 0, 2]


def test_aggregate_of_three_rankers_invalidity_scores():
    result = aggregate(
        {
            "bert": np.array([0.9, 0.1, 0.5]),  # ranks 1, 3, 2: points 2, 0, 1
            "electra": np.array([0.2, 0.8, 0.7]),  # ranks 3, 1, 2: points 0, 2, 1
            "muppet": np.array([0.6, 0.3, 0.9]),  # ranks 2, 3, 1: points 1, 0, 2
        }
    )
    assert isinstance(result, BordaResult)
    assert result.points.tolist() == [3, 2, 4]
    assert result.order.tolist() == [2, 0, 1]
    assert result.rank.tolist() == [2, 3, 1]


def test_aggregate_result_is_read_only():
    result = aggregate({"a": np.array([0.1, 0.2])})
    with pytest.raises(ValueError):
        result.points[0] = 7
    with pytest.raises(AttributeError):
        result.order = np.array([0, 1])  # type: ignore[misc]


def test_empty_rankings_give_empty_results():
    assert borda_points([[], []], 0).tolist() == []
    result = aggregate({"a": np.array([])})
    assert result.points.tolist() == result.order.tolist() == result.rank.tolist() == []


# Validation.


def test_aggregate_names_the_ranker_whose_scores_have_the_wrong_length():
    with pytest.raises(ValueError, match=r"'electra'.*2 scores, expected 3"):
        aggregate({"bert": np.zeros(3), "electra": np.zeros(2)})


def test_aggregate_names_the_ranker_with_nan_or_two_dimensional_scores():
    with pytest.raises(ValueError, match=r"'muppet'.*NaN"):
        aggregate({"bert": np.zeros(2), "muppet": np.array([0.1, np.nan])})
    with pytest.raises(ValueError, match=r"'bert'.*one-dimensional"):
        aggregate({"bert": np.zeros((2, 2))})


def test_aggregate_needs_a_ranker():
    with pytest.raises(ValueError, match="no rankers"):
        aggregate({})


@pytest.mark.parametrize(
    ("ranking", "message"),
    [
        ([1, 2], "2 items, expected 3"),
        ([1, 1, 2], "ranks 1..3, each once"),
        ([0, 1, 2], "ranks 1..3, each once"),
        ([1, 3, None], "ranks 1..2, each once"),
        ([1, 2.5, 3], "whole numbers"),
        ([1, True, 3], "whole numbers"),
        (["1", 2, 3], "whole numbers"),
        (np.array([1.0, np.inf, 2.0]), "whole numbers"),
    ],
)
def test_malformed_rankings_are_rejected_naming_the_ranker(ranking, message):
    with pytest.raises(ValueError, match=f"ranker 'electra': .*{message}"):
        borda_points([[1, 2, 3], ranking], 3, names=["bert", "electra"])
    with pytest.raises(ValueError, match=f"ranker 1: .*{message}"):
        borda_points([[1, 2, 3], ranking], 3)


def test_two_dimensional_inputs_are_rejected():
    with pytest.raises(ValueError, match="one-dimensional"):
        ranks_from_scores(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="one-dimensional"):
        borda_order(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="ranker 0: ranking must be one-dimensional"):
        borda_points([np.ones((1, 1))], 1)


# Properties.


@given(ranking_sets(), unranked_policies)
def test_points_and_order_equal_the_plain_reference(case, unranked):
    n, rankings = case
    points = borda_points(rankings, n, unranked=unranked)
    expected = reference_points(rankings, n, unranked)
    assert points.tolist() == expected
    assert borda_order(points).tolist() == reference_order(expected)


@given(ranking_sets())
def test_tied_last_orders_like_pyrankaggs_mean_rank_of_supplemented_lists(case):
    n, rankings = case
    mean_rank = []
    for item in range(n):
        ranks = []
        for ranking in rankings:
            m = sum(1 for rank in ranking if rank is not None)
            ranks.append(ranking[item] if ranking[item] is not None else m + 1)
        mean_rank.append(sum(ranks) / len(ranks))
    expected = sorted(range(n), key=lambda i: mean_rank[i])
    assert borda_order(borda_points(rankings, n)).tolist() == expected


@given(ranking_sets())
def test_numpy_rankings_with_nan_equal_lists_with_none(case):
    n, rankings = case
    arrays = [np.array([np.nan if r is None else r for r in ranking]) for ranking in rankings]
    assert borda_points(arrays, n).tolist() == borda_points(rankings, n).tolist()


@given(ranking_sets(), st.randoms(use_true_random=False), unranked_policies)
def test_the_order_of_rankers_does_not_matter(case, rnd, unranked):
    n, rankings = case
    shuffled = list(rankings)
    rnd.shuffle(shuffled)
    assert (
        borda_points(shuffled, n, unranked=unranked).tolist()
        == borda_points(rankings, n, unranked=unranked).tolist()
    )


@given(st.lists(tied_scores, min_size=1, max_size=4).filter(lambda s: len(set(map(len, s))) == 1))
def test_aggregate_does_not_depend_on_the_order_of_rankers(score_lists):
    forward = aggregate({f"r{j}": np.array(s) for j, s in enumerate(score_lists)})
    backward = aggregate({f"r{j}": np.array(s) for j, s in reversed(list(enumerate(score_lists)))})
    assert forward.points.tolist() == backward.points.tolist()
    assert forward.order.tolist() == backward.order.tolist()


@given(st.integers(0, 8).flatmap(lambda n: st.permutations(range(n))), st.integers(1, 5))
def test_a_unanimous_order_is_kept(ranked_first, n_rankers):
    n = len(ranked_first)
    ranking = [0] * n
    for rank, item in enumerate(ranked_first, start=1):
        ranking[item] = rank
    points = borda_points([ranking] * n_rankers, n)
    assert borda_order(points).tolist() == list(ranked_first)
    scores = {f"r{j}": -np.array(ranking, dtype=float) for j in range(n_rankers)}
    assert aggregate(scores).order.tolist() == list(ranked_first)


@given(ranking_sets(partial=False))
def test_a_single_full_rankers_borda_order_is_its_own_ranking(case):
    n, rankings = case
    ranking = rankings[0]
    own_order = sorted(range(n), key=lambda i: ranking[i])
    assert borda_order(borda_points([ranking], n)).tolist() == own_order


@given(ranking_sets(), unranked_policies)
def test_a_single_partial_ranker_puts_its_ranked_items_first_then_the_rest_in_item_order(
    case, unranked
):
    n, rankings = case
    ranking = rankings[0]
    ranked = sorted((r, i) for i, r in enumerate(ranking) if r is not None)
    unranked_items = [i for i, r in enumerate(ranking) if r is None]
    expected = [i for _, i in ranked] + unranked_items
    assert borda_order(borda_points([ranking], n, unranked=unranked)).tolist() == expected


@given(tied_scores)
def test_a_single_rankers_aggregate_follows_its_scores(scores):
    result = aggregate({"only": np.array(scores)})
    ranks = reference_ranks(scores)
    assert result.rank.tolist() == ranks
    assert ranks_from_scores(np.array(scores)).tolist() == ranks


@given(st.lists(tied_scores, min_size=1, max_size=4).filter(lambda s: len(set(map(len, s))) == 1))
def test_aggregate_equals_the_reference_on_tied_scores(score_lists):
    n = len(score_lists[0])
    expected_points = reference_points([reference_ranks(s) for s in score_lists], n, "tied_last")
    expected_order = reference_order(expected_points)
    result = aggregate({f"r{j}": np.array(s) for j, s in enumerate(score_lists)})
    assert result.points.tolist() == expected_points
    assert result.order.tolist() == expected_order
    assert [expected_order.index(i) + 1 for i in range(n)] == result.rank.tolist()


@given(st.lists(st.integers(0, 4), max_size=12))
def test_ties_are_deterministic_and_keep_item_order(points_list):
    points = np.array(points_list, dtype=np.int64)
    order = borda_order(points)
    assert order.tolist() == borda_order(points.copy()).tolist()
    ordered = points[order]
    assert all(ordered[:-1] >= ordered[1:])
    for a, b in itertools.pairwise(order):
        if points[a] == points[b]:
            assert a < b


@given(st.lists(st.integers(0, 4), min_size=1, max_size=12), st.randoms(use_true_random=False))
def test_relabelling_items_with_equal_points_keeps_index_order(points_list, rnd):
    # Swap the points among items at random: whichever items end up tied, they
    # come out in ascending index order, and the sequence of totals is the same.
    points = np.array(points_list)
    shuffled = points.copy()
    rnd.shuffle(shuffled)
    order, shuffled_order = borda_order(points), borda_order(shuffled)
    assert points[order].tolist() == shuffled[shuffled_order].tolist()
    for value in set(points_list):
        assert [i for i in shuffled_order if shuffled[i] == value] == sorted(
            np.flatnonzero(shuffled == value).tolist()
        )


def test_large_totals_stay_exact():
    n = 100_000
    ranking = np.arange(1, n + 1)
    points = borda_points([ranking, ranking, ranking], n)
    assert points.dtype == np.int64
    assert points[0] == 3 * (n - 1) and points[-1] == 0
