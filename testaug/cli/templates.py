"""`testaug templates induce`: new templates from accepted generated cases (the group
`testaug templates` is put together in testaug/cli/groups.py)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from testaug.cli.console import console, err_console, styled
from testaug.cli.options import build_config, output_option

templates_app = typer.Typer(help="Templates from generated cases.", no_args_is_help=True)


@templates_app.command("induce")
def induce_command(
    accepted_path: Path = typer.Argument(
        ..., metavar="ACCEPTED", help="Accepted generated cases (JSONL), e.g. accepted.jsonl."
    ),
    output: Path = output_option(
        ..., "-o", "--output", help="Where to write the templates (YAML)."
    ),
    cases: Path | None = typer.Option(
        None, "--cases", help="The seed cases with their fills (default: cases.jsonl beside it)."
    ),
    suite: str | None = typer.Option(
        None, "--suite", help="The suite whose lexicons fill the slots (default: the task's)."
    ),
) -> None:
    """Turn reused slot words of the seed cases back into slots: one template per case.
    Writes the templates as a suite (source `expansion`) that `testaug templates expand` takes."""
    from testaug.core.run_folder import RunFolder
    from testaug.steps.grow import InduceConfig, induce_templates_file

    cases = cases or RunFolder.of(accepted_path).cases
    config = build_config(
        InduceConfig,
        flags={"accepted": "ACCEPTED", "out": "--output"},
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
