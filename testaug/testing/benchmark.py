"""What the benchmarks under benchmarks/ share: their PASS/FAIL lines and exit code."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console


def print_checks(console: Console, checks: Sequence[tuple[str, bool | None, str]]) -> int:
    """Print one PASS or FAIL line per (target, passed, measured) check; 0 if all passed.

    `passed` None prints N/A: the target could not be measured (nothing to measure it
    on). It is not a pass, so it counts as a miss in the exit code.
    """
    labels = {True: "[green]PASS", False: "[red]FAIL", None: "[yellow]N/A"}
    for text, passed, value in checks:
        console.print(f"{labels[passed]}[/] {text}: {value}", highlight=False)
    return 0 if all(passed is True for _, passed, _ in checks) else 1
