"""Train/test splits of a suite: TestAug's seeded random split and BeLUGA's leave-one-out splits.

`random` splits every description (functionality) in the same proportion, so both
sides see every functionality (BeLUGA's "seen" evaluation, TestAug's patching
split). `func`, `class` and `type` are BeLUGA's generalization splits: the random
split is made first, then the held-out description, capability or test type is
removed from train and is all that test keeps (train = T_train \\ U, test =
T_test ∩ U), so the test sets of all held-out values together are the random
split's test set and every functionality gets exactly one unseen score.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Sequence
from typing import Literal

from testaug.core.errors import TestAugError
from testaug.core.records import Record, TestCase

Strategy = Literal["random", "func", "class", "type"]
LEAVE_ONE_OUT: tuple[Strategy, ...] = ("func", "class", "type")
# The meta key under which merge_suites records the suites a case belongs to.
SUITES_KEY = "suites"


class Split(Record):
    """Case ids on each side of a split, and how it was made."""

    train_ids: tuple[str, ...]
    test_ids: tuple[str, ...]
    strategy: Strategy
    held_out: str | None = None
    seed: int
    test_fraction: float


def dedupe(cases: Iterable[TestCase]) -> list[TestCase]:
    """Cases without repeated ids; the first of each id is kept, in input order."""
    seen: dict[str, TestCase] = {}
    for case in cases:
        seen.setdefault(case.id, case)
    return list(seen.values())


def merge_suites(
    a: Iterable[TestCase], b: Iterable[TestCase], *, names: tuple[str, str] = ("A", "B")
) -> list[TestCase]:
    """T = T_A ∪ T_B, deduplicated by id; each case's `meta["suites"]` lists the suites holding it.

    A case in both suites keeps A's copy (the label of B's copy is used when training on B).
    """
    membership: dict[str, list[str]] = {}
    merged: dict[str, TestCase] = {}
    for name, cases in zip(names, (a, b), strict=True):
        for case in cases:
            merged.setdefault(case.id, case)
            suites = membership.setdefault(case.id, [])
            if name not in suites:
                suites.append(name)
    return [
        case.model_copy(update={"meta": {**case.meta, SUITES_KEY: membership[case.id]}})
        for case in merged.values()
    ]


def in_suite(case: TestCase, name: str) -> bool:
    """Whether a merged case belongs to the named suite."""
    return name in case.meta.get(SUITES_KEY, ())


def held_out_key(case: TestCase, strategy: Strategy) -> str:
    """The value a leave-one-out strategy groups by: description id, capability or test type."""
    if strategy == "func":
        return case.description_id
    if strategy == "class":
        return case.capability
    if strategy == "type":
        return case.test_type
    raise TestAugError(f"strategy {strategy!r} holds nothing out (use func, class or type)")


def _test_count(n: int, test_fraction: float, rng: random.Random) -> int:
    """How many of a description's n cases go to test.

    Rounded half up; a description of two or more cases keeps at least one case on
    each side (when 0 < fraction < 1), and a lone case goes to test with probability
    `test_fraction`.
    """
    if n == 1:
        return int(rng.random() < test_fraction)
    count = int(n * test_fraction + 0.5)
    if 0 < test_fraction < 1:
        count = min(max(count, 1), n - 1)
    return count


def random_split_ids(
    cases: Sequence[TestCase], *, test_fraction: float, seed: int
) -> tuple[set[str], set[str]]:
    """Train and test ids of a seeded split stratified by description.

    Each description is shuffled by its own generator (seeded by the seed and its id)
    after sorting its cases by id, so a description's split depends neither on the
    input order nor on the other descriptions.
    """
    if not 0 <= test_fraction <= 1:
        raise TestAugError(f"test_fraction must be within [0, 1], not {test_fraction}")
    by_description: dict[str, list[str]] = {}
    for case in dedupe(cases):
        by_description.setdefault(case.description_id, []).append(case.id)
    train: set[str] = set()
    test: set[str] = set()
    for description, ids in sorted(by_description.items()):
        rng = random.Random(f"{seed}:{description}")
        ordered = sorted(ids)
        rng.shuffle(ordered)
        count = _test_count(len(ordered), test_fraction, rng)
        test.update(ordered[:count])
        train.update(ordered[count:])
    return train, test


def split_cases(
    cases: Sequence[TestCase],
    *,
    test_fraction: float = 0.5,
    seed: int,
    strategy: Strategy = "random",
    held_out: str | None = None,
) -> Split:
    """One split of the cases; leave-one-out strategies need the `held_out` value.

    Ids come out in the order of `cases`.
    """
    train, test = random_split_ids(cases, test_fraction=test_fraction, seed=seed)
    unique = dedupe(cases)
    if strategy == "random":
        if held_out is not None:
            raise TestAugError("a random split holds nothing out; leave held_out unset")
    else:
        if held_out is None:
            raise TestAugError(f"strategy {strategy!r} needs the held_out value")
        values = {held_out_key(case, strategy) for case in unique}
        if held_out not in values:
            raise TestAugError(f"no case has {strategy} value {held_out!r}")
        out = {case.id for case in unique if held_out_key(case, strategy) == held_out}
        train, test = train - out, test & out
    return Split(
        train_ids=tuple(case.id for case in unique if case.id in train),
        test_ids=tuple(case.id for case in unique if case.id in test),
        strategy=strategy,
        held_out=held_out,
        seed=seed,
        test_fraction=test_fraction,
    )


def held_out_values(cases: Iterable[TestCase], strategy: Strategy) -> list[str]:
    """Every value a leave-one-out strategy can hold out, sorted."""
    return sorted({held_out_key(case, strategy) for case in cases})


def iter_leave_one_out(
    cases: Sequence[TestCase], strategy: Strategy, *, seed: int, test_fraction: float = 0.5
) -> Iterator[Split]:
    """The split of every held-out value, in sorted order; values with an empty test side
    (a lone case that fell in train) are skipped."""
    for value in held_out_values(cases, strategy):
        split = split_cases(
            cases, test_fraction=test_fraction, seed=seed, strategy=strategy, held_out=value
        )
        if split.test_ids:
            yield split


def splits_for(
    cases: Sequence[TestCase], strategy: Strategy, *, seed: int, test_fraction: float = 0.5
) -> list[Split]:
    """The one random split, or every leave-one-out split, of a strategy."""
    if strategy == "random":
        return [split_cases(cases, test_fraction=test_fraction, seed=seed)]
    return list(iter_leave_one_out(cases, strategy, seed=seed, test_fraction=test_fraction))
