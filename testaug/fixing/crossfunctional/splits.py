"""How BeLUGA's cross-functional analysis divides the suite: functionalities,
the seeded T_train / T_val / T_test split, and the partitions U of the leave-out scenarios."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from testaug.core.errors import TestAugError
from testaug.core.records import TestCase
from testaug.evaluation.perturbations.cases import PerturbedCase
from testaug.fixing.crossfunctional.records import (
    CONFIGURATIONS,
    Functionality,
    Item,
    Scenario,
)
from testaug.fixing.patching.protocol import IidExample
from testaug.fixing.splits import _test_count, random_split_ids


def functionality_id(item: Item) -> str:
    """The functionality a test belongs to: a suite case's description id; a perturbation
    test's description id, test type and perturbation (`desc|INV|typos`), so that each
    functionality has one test type as in BeLUGA."""
    if isinstance(item, PerturbedCase):
        return f"{item.description_id}|{item.test_type}|{item.perturbation}"
    return item.description_id


def functionality_name(item: Item) -> str:
    """A functionality's readable name: the description (with the perturbation test's
    type and perturbation)."""
    if isinstance(item, PerturbedCase):
        return f"{item.description} ({item.test_type}: {item.perturbation})"
    return item.description


def held_out_value(item: Item, scenario: Scenario) -> str:
    """The subset a leave-out scenario puts a test in: its functionality, class or type."""
    if scenario == "func":
        return functionality_id(item)
    if scenario == "class":
        return item.capability
    if scenario == "type":
        return item.test_type
    raise TestAugError(f"scenario {scenario!r} leaves nothing out")


def partition(items: Sequence[Item], scenario: Scenario) -> list[str | None]:
    """The subsets U_i a scenario trains without: None for seen and standard (nothing
    left out), else every functionality, class or test type, sorted."""
    if scenario in ("seen", "standard"):
        return [None]
    return sorted({held_out_value(item, scenario) for item in items})


@dataclass(frozen=True)
class SuiteSplit:
    """Test ids of T_train, T_val and T_test."""

    train: frozenset[str]
    val: frozenset[str]
    test: frozenset[str]


def suite_split(
    items: Sequence[Item], *, seed: int, test_fraction: float, val_fraction: float = 0.0
) -> SuiteSplit:
    """T_train, T_val and T_test: each functionality's tests split in the same proportion.

    `test_fraction` of each functionality is held out (suite cases exactly as
    `splits.random_split_ids`, TestAug's and patch-eval's split; perturbation tests the
    same way within their own functionality); `val_fraction` of those held-out tests go
    to T_val (BeLUGA: half, giving 50/25/25), the rest is T_test. T_train does not depend
    on `val_fraction`.
    """
    if not 0 <= val_fraction < 1:
        raise TestAugError(f"val_fraction must be within [0, 1), not {val_fraction}")
    cases = [item for item in items if isinstance(item, TestCase)]
    train, held = random_split_ids(cases, test_fraction=test_fraction, seed=seed)
    by_functionality: dict[str, list[str]] = {}
    for item in items:
        if isinstance(item, PerturbedCase):
            by_functionality.setdefault(functionality_id(item), []).append(item.id)
    for key, ids in sorted(by_functionality.items()):
        rng = random.Random(f"{seed}:{key}")
        ordered = sorted(ids)
        rng.shuffle(ordered)
        count = _test_count(len(ordered), test_fraction, rng)
        held.update(ordered[:count])
        train.update(ordered[count:])
    val: set[str] = set()
    if val_fraction:
        by_functionality = {}
        for item in items:
            if item.id in held:
                by_functionality.setdefault(functionality_id(item), []).append(item.id)
        for key, ids in sorted(by_functionality.items()):
            ordered = sorted(set(ids))
            random.Random(f"{seed}:val:{key}").shuffle(ordered)
            val.update(ordered[: int(len(ordered) * val_fraction)])  # a lone test stays in test
    return SuiteSplit(frozenset(train), frozenset(val), frozenset(held - val))


def functionalities(
    items: Sequence[Item], *, split_seed: int, test_fraction: float, val_fraction: float = 0.0
) -> tuple[Functionality, ...]:
    """Every functionality of the suite, in suite order, with its train, val and test sizes."""
    split = suite_split(
        items, seed=split_seed, test_fraction=test_fraction, val_fraction=val_fraction
    )
    found: dict[str, Functionality] = {}
    counts: dict[str, list[int]] = {}
    for item in items:
        key = functionality_id(item)
        found.setdefault(
            key,
            Functionality(
                id=key,
                description=functionality_name(item),
                capability=item.capability,
                test_type=item.test_type,
                n_train=0,
                n_test=0,
            ),
        )
        count = counts.setdefault(key, [0, 0, 0])
        count[0 if item.id in split.train else 1 if item.id in split.test else 2] += 1
    return tuple(
        f.model_copy(
            update={"n_train": counts[f.id][0], "n_test": counts[f.id][1], "n_val": counts[f.id][2]}
        )
        for f in found.values()
    )


def sample_per_functionality(cases: Sequence[TestCase], n: int, seed: int) -> list[TestCase]:
    """At most n cases of each functionality (description), drawn with the seed, in input order."""
    by_description: dict[str, list[TestCase]] = {}
    for case in cases:
        by_description.setdefault(case.description_id, []).append(case)
    kept: set[str] = set()
    for description, members in sorted(by_description.items()):
        ids = sorted(case.id for case in members)
        random.Random(f"{seed}:{description}").shuffle(ids)
        kept.update(ids[:n])
    return [case for case in cases if case.id in kept]


def iid_halves(
    examples: Sequence[IidExample], seed: int
) -> tuple[list[IidExample], list[IidExample]]:
    """The i.i.d. file split in two seeded halves: D_train and D_test."""
    order = list(range(len(examples)))
    random.Random(f"{seed}:iid").shuffle(order)
    half = len(order) // 2
    return [examples[i] for i in sorted(order[half:])], [examples[i] for i in sorted(order[:half])]


def configuration_name(text: str) -> str:
    """A configuration in BeLUGA's notation (IID->T), written in any case."""
    by_lower = {name.lower(): name for name in CONFIGURATIONS}
    key = text.strip().replace(" ", "").lower()
    if key not in by_lower:
        raise TestAugError(f"unknown configuration {text!r}: one of {', '.join(CONFIGURATIONS)}")
    return by_lower[key]
