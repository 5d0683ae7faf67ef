"""`testaug templates induce`: new templates from accepted generated cases (the group
`testaug templates` is put together in testaug/cli/groups.py)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from testaug.cli.console import console, err_console, styled
from testaug.cli.options import (
    OLD_CASES,
    build_config,
    output_option,
    seed_cases_given,
    seed_cases_option,
)

# The seed cases, whose fills show which words of an accepted case were slot words.
SEED_CASES = seed_cases_option("cases.jsonl beside ACCEPTED", ", with their fills")

templates_app = typer.Typer(help="Templates from generated cases.", no_args_is_help=True)


@templates_app.command("induce")
def induce_command(
    accepted_path: Path = typer.Argument(
        ..., metavar="ACCEPTED", help="Accepted generated cases (JSONL), e.g. accepted.jsonl."
    ),
    output: Path = output_option(
        ..., "-o", "--output", help="Where to write the templates (YAML)."
    ),
    cases: Path | None = SEED_CASES,
    suite: str | None = typer.Option(
        None,
        "--suite",
        help="A suite (file, folder or shipped name) whose lexicons fill the slots "
        "(default: the task's).",
    ),
    old_cases: Path | None = OLD_CASES,
) -> None:
    """Turn reused slot words of the seed cases back into slots: one template per case.
    Writes the templates as a suite (source `expansion`) that `testaug templates expand` takes."""
    from testaug.core.run_folder import RunFolder
    from testaug.steps.grow import InduceConfig, induce_templates_file

    cases = seed_cases_given(cases, old_cases, command="templates induce")
    cases = cases or RunFolder.of(accepted_path).cases
    config = build_config(
        InduceConfig,
        flags={"accepted": "ACCEPTED", "out": "--output", "cases": "--seed-cases"},
        accepted=accepted_path,
        cases=cases,
        out=output,
        suite=suite,
    )
    with err_console.status("parsing the accepted cases and their seeds with spaCy"):
        induced = induce_templates_file(config)

    table = Table(title_justify="left")
    table.add_column("capability")
    table.add_column("templates", justify="right")
    for capability, count in induced.summary.per_capability.items():
        table.add_row(capability, f"{count:,}")
    console.print(table)
    skipped = induced.summary.skipped
    reasons = ", ".join(f"{n} {reason}" for reason, n in skipped.items()) or "none"
    console.print(
        styled(
            "[green]induced[/] {:,} templates from {:,} cases into {} (lexicons: {}; "
            "provenance: {}); they fill {:,} cases; skipped: {}",
            induced.records,
            induced.summary.from_cases,
            output,
            induced.files["lexicons"].name,
            induced.files["induced"].name,
            induced.summary.fills,
            reasons,
        )
    )
