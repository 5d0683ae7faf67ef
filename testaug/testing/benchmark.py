"""What the benchmarks under benchmarks/ share: their PASS/FAIL lines and exit code."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console


def print_checks(console: Console, checks: Sequence[tuple[str, bool, str]]) -> int:
    """Print one PASS or FAIL line per (target, passed, measured) check; 0 if all passed."""
    for text, passed, value in checks:
        console.print(f"{'[green]PASS' if passed else '[red]FAIL'}[/] {text}: {value}")
    return 0 if all(passed for _, passed, _ in checks) else 1
