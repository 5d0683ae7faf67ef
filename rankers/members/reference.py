"""Reference cases for neighbour members: the seed cases of the bundled suites, by task."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from testaug.core.records import TestCase


@lru_cache(maxsize=16)
def _bundled_cases(task: str, per_template: int, seed: int) -> tuple[TestCase, ...]:
    from testaug.core.bundled import bundled_suites, resolve_suite
    from testaug.suites.cases import expand_suite
    from testaug.suites.load import load_suite

    if task not in bundled_suites():
        return ()
    return tuple(
        expand_suite(load_suite(resolve_suite(task)), per_template=per_template, seed=seed)
    )


def bundled_reference(tasks: Iterable[str], per_template: int, seed: int) -> list[TestCase]:
    """The seeded seed cases of the bundled suite of each task (none for other tasks)."""
    return [
        case for task in sorted(set(tasks)) for case in _bundled_cases(task, per_template, seed)
    ]
