"""Run functions in several real processes at once, for the tests of concurrent writers:
all start together (a barrier), and a failure in any of them fails the test with its
traceback."""

from __future__ import annotations

import multiprocessing
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from tests.cli_runner import HANG_TIMEOUT

# Forked processes share what the test set up (imports, paths) and start quickly.
CONTEXT = multiprocessing.get_context("fork")


def _run(target: Callable[..., Any], start: Any, index: int, args: tuple, results: Any) -> None:
    try:
        start.wait(HANG_TIMEOUT)
        results.put((index, True, target(*args)))
    except BaseException:
        results.put((index, False, traceback.format_exc()))


def run_together(target: Callable[..., Any], jobs: Sequence[tuple]) -> list[Any]:
    """`target(*job)` in one process per job, released together; what each returned, in
    job order."""
    start = CONTEXT.Barrier(len(jobs))
    results = CONTEXT.Queue()
    processes = [
        CONTEXT.Process(target=_run, args=(target, start, index, tuple(job), results))
        for index, job in enumerate(jobs)
    ]
    for process in processes:
        process.start()
    found: dict[int, Any] = {}
    failures = []
    try:
        for _ in processes:
            index, ok, value = results.get(timeout=HANG_TIMEOUT)
            if ok:
                found[index] = value
            else:
                failures.append(f"process {index} failed:\n{value}")
    finally:
        for process in processes:
            process.join(HANG_TIMEOUT)
            if process.is_alive():
                process.kill()
    assert not failures, "\n".join(failures)
    return [found[index] for index in range(len(jobs))]
