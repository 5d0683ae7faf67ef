"""Suite splits: merging with membership, seeded stratified splits, BeLUGA's leave-one-out."""

from __future__ import annotations

from collections import Counter

import pytest

from testaug.core.errors import TestAugError
from testaug.core.records import TestCase
from testaug.fixing.splits import (
    held_out_key,
    held_out_values,
    in_suite,
    iter_leave_one_out,
    merge_suites,
    split_cases,
    splits_for,
)


def make_case(
    text: str, capability: str = "Vocabulary", description: str = "d1", test_type: str = "MFT"
) -> TestCase:
    return TestCase(
        task="sentiment",
        capability=capability,
        description_id=description,
        description=f"description {description}",
        text=text,
        label="positive",
        test_type=test_type,
    )


def suite() -> list[TestCase]:
    """Four descriptions of 10, 7, 4 and 2 cases over two capabilities and two test types."""
    sizes = {("d1", "Vocabulary", "MFT"): 10, ("d2", "Vocabulary", "INV"): 7}
    sizes |= {("d3", "Negation", "MFT"): 4, ("d4", "Negation", "DIR"): 2}
    return [
        make_case(f"{description} case {i}", capability, description, test_type)
        for (description, capability, test_type), n in sizes.items()
        for i in range(n)
    ]


def by_id(cases: list[TestCase]) -> dict[str, TestCase]:
    return {case.id: case for case in cases}


def test_merge_deduplicates_and_remembers_membership():
    a = [make_case("only a"), make_case("shared"), make_case("shared")]
    b = [make_case("shared"), make_case("only b")]
    merged = merge_suites(a, b)
    assert [case.text for case in merged] == ["only a", "shared", "only b"]
    membership = {case.text: (in_suite(case, "A"), in_suite(case, "B")) for case in merged}
    assert membership == {
        "only a": (True, False),
        "shared": (True, True),
        "only b": (False, True),
    }


def test_random_split_is_stratified_by_description():
    cases = suite()
    split = split_cases(cases, seed=1)
    cases_by_id = by_id(cases)
    test_counts = Counter(cases_by_id[i].description_id for i in split.test_ids)
    train_counts = Counter(cases_by_id[i].description_id for i in split.train_ids)
    # Half of each description (rounded half up), and every description on both sides.
    assert test_counts == {"d1": 5, "d2": 4, "d3": 2, "d4": 1}
    assert train_counts == {"d1": 5, "d2": 3, "d3": 2, "d4": 1}
    assert not set(split.train_ids) & set(split.test_ids)
    assert len(split.train_ids) + len(split.test_ids) == len(cases)


def test_test_fraction_applies_to_every_description():
    split = split_cases(suite(), seed=3, test_fraction=0.25)
    counts = Counter(by_id(suite())[i].description_id for i in split.test_ids)
    assert counts == {"d1": 3, "d2": 2, "d3": 1, "d4": 1}


def test_split_is_seeded_and_independent_of_input_order():
    cases = suite()
    first = split_cases(cases, seed=7)
    again = split_cases(list(reversed(cases)), seed=7)
    assert set(first.test_ids) == set(again.test_ids)
    others = {frozenset(split_cases(cases, seed=seed).test_ids) for seed in range(8)}
    assert len(others) > 1


@pytest.mark.parametrize("strategy", ["func", "class", "type"])
def test_leave_one_out_holds_out_exactly_one_value(strategy):
    cases = suite()
    cases_by_id = by_id(cases)
    splits = list(iter_leave_one_out(cases, strategy, seed=5))
    assert [split.held_out for split in splits] == held_out_values(cases, strategy)
    for split in splits:
        test_values = {held_out_key(cases_by_id[i], strategy) for i in split.test_ids}
        train_values = {held_out_key(cases_by_id[i], strategy) for i in split.train_ids}
        assert test_values == {split.held_out}
        assert split.held_out not in train_values
        assert split.strategy == strategy and split.seed == 5


@pytest.mark.parametrize("strategy", ["func", "class", "type"])
def test_leave_one_out_tests_together_are_the_random_test_split(strategy):
    cases = suite()
    seen = split_cases(cases, seed=5)
    held_out = list(iter_leave_one_out(cases, strategy, seed=5))
    together = [i for split in held_out for i in split.test_ids]
    assert sorted(together) == sorted(seen.test_ids)
    for split in held_out:
        assert set(split.train_ids) <= set(seen.train_ids)


def test_leave_one_out_skips_a_value_with_no_test_case():
    cases = [make_case(f"d1 {i}") for i in range(4)] + [make_case("lone", description="d9")]
    for seed in range(20):
        split = split_cases(cases, seed=seed)
        if "d9" not in {by_id(cases)[i].description_id for i in split.test_ids}:
            break
    held_out = [split.held_out for split in iter_leave_one_out(cases, "func", seed=seed)]
    assert held_out == ["d1"]


def test_leave_one_out_needs_a_held_out_value_that_exists():
    with pytest.raises(TestAugError, match="needs the held_out"):
        split_cases(suite(), seed=1, strategy="class")
    with pytest.raises(TestAugError, match="no case has"):
        split_cases(suite(), seed=1, strategy="class", held_out="Temporal")
    with pytest.raises(TestAugError, match="holds nothing out"):
        split_cases(suite(), seed=1, held_out="Negation")


def test_splits_for_gives_one_random_split_or_one_per_value():
    cases = suite()
    assert len(splits_for(cases, "random", seed=1)) == 1
    assert len(splits_for(cases, "class", seed=1)) == 2
    assert len(splits_for(cases, "type", seed=1)) == 3
