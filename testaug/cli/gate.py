"""The CI gate's options and output, shared by `evaluate models`, `run` and `tree retest`:
thresholds from the suite, a gate file and flags; a table of breaches and exit code 1; JUnit
XML on request."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from testaug.cli.console import console, styled
from testaug.cli.options import output_option
from testaug.evaluation.gate import GateResult
from testaug.suites.gate import GateConfig, merge_gates

GATE_HELP = (
    "A gate file (YAML): highest error rates per capability, description or test type, and "
    "demands on the evidence; a breach exits 1. See the CI gate how-to."
)
MAX_ERROR_HELP = (
    "A highest error rate in percent (repeatable): NAME=10 (a capability), *=20 (every "
    "capability), description:TEXT=5, test_type:INV=15; add @MODEL after the percent for one "
    "model. Wins over --gate, which wins over the suite's gate: section. A capability's or "
    "description's limit applies to each test type's rate unless --pool-test-types."
)
POOL_HELP = (
    "Gate a capability's or description's rate over all its test types (MFT with the INV and "
    "DIR perturbations) instead of each test type's rate (the default; or the gate's "
    "pool_test_types)."
)
MAX_UNVERIFIED_HELP = "Highest share (%) of unverified cases under the headline error rates."
MIN_PRECISION_HELP = (
    "Least precision (0 < p <= 1) the ranker's acceptance rules must have targeted for the "
    "cases it accepted that the headline counts."
)
JUNIT_HELP = "Write the gate's checks as JUnit XML here (one test case per description and model)."


# Module-level options, shared by the commands that take a gate.
GATE_FILE_OPTION: Any = typer.Option(None, "--gate", help=GATE_HELP)
MAX_ERROR_OPTION: Any = typer.Option(
    [], "--max-error", metavar="[KIND:]NAME=PERCENT[@MODEL]", help=MAX_ERROR_HELP
)
MAX_UNVERIFIED_OPTION: Any = typer.Option(None, "--max-unverified", help=MAX_UNVERIFIED_HELP)
MIN_PRECISION_OPTION: Any = typer.Option(None, "--min-precision", help=MIN_PRECISION_HELP)
JUNIT_OPTION: Any = output_option(None, "--junit", help=JUNIT_HELP)
POOL_OPTION: Any = typer.Option(None, "--pool-test-types/--per-test-type", help=POOL_HELP)


def build_gate(
    *,
    suite: str | None = None,
    gate_file: Path | None = None,
    max_error: Sequence[str] = (),
    max_unverified: float | None = None,
    min_precision: float | None = None,
    fail_on_new_failures: bool = False,
    pool_test_types: bool | None = None,
    junit: Path | None = None,
) -> GateConfig | None:
    """The gate the suite's gate: section, the file and the flags set (flags win); None when
    nothing asks for one (no threshold, no demand, no --junit). Bad input is refused here,
    before any work starts."""
    from testaug.core.bundled import resolve_suite
    from testaug.suites.gate import flag_gate
    from testaug.suites.gate_reader import load_gate_file, suite_gate
    from testaug.suites.load import load_suite

    flags = flag_gate(
        max_error,
        max_unverified=max_unverified,
        min_precision=min_precision,
        fail_on_new_failures=fail_on_new_failures,
        pool_test_types=pool_test_types,
    )
    from_file = load_gate_file(gate_file) if gate_file is not None else None
    in_suite = None
    if suite is not None:
        path = resolve_suite(suite)
        if load_suite(path).gate is not None:  # the suite checked whole, its gate's names too
            in_suite = suite_gate(path)
    config = merge_gates(in_suite, from_file, flags)
    if config.empty and junit is None:
        return None
    return config


def enforce_gate(result: GateResult, junit: Path | None, *, out: Console = console) -> None:
    """Write the JUnit XML when asked; say which limits overruled others; print the
    breaches (each with the rate it gated and where its limit was set) and exit 1 when
    there is one."""
    if junit is not None:
        from testaug.evaluation.gate_junit import write_junit

        write_junit(junit, result)
        out.print(styled("[green]wrote[/] {}", junit))
    for winner, lost in result.overrulings():
        out.print(f"gate: {winner} overrules {lost}", highlight=False)
    if result.passed:
        out.print(styled("[green]gate passed[/]: {:,} checks", len(result.checks)))
        return
    table = Table(title=f"gate: {len(result.breaches)} breach(es)", title_justify="left")
    for column in ("model", "check", "name", "test type", "rate", "cases", "limit", "set by"):
        table.add_column(
            column, justify="right" if column in ("rate", "cases", "limit") else "left"
        )
    for breach in result.breaches:
        grouped = breach.kind in ("capability", "description", "test_type")
        table.add_row(
            breach.model,
            breach.kind.replace("_", " "),
            breach.name,
            breach.test_type or "-",
            "-" if breach.rate is None else f"{breach.rate:.1f}%",
            f"{breach.failed}/{breach.n}" if grouped else "-",
            "-" if breach.limit is None else f"{breach.limit:g}%",
            breach.source or breach.origin or "-",
            style="bold red",
        )
    out.print(table)
    for breach in result.breaches:
        out.print(f"  {breach.model}: {breach.message}", highlight=False)
    raise typer.Exit(1)
