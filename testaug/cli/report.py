"""`testaug report`: report.md and a self-contained report.html for a run directory."""

from __future__ import annotations

from pathlib import Path

import typer

from testaug.cli.console import console


def report_command(
    run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="A run directory."),
    output: Path | None = typer.Option(
        None, "-o", "--output", help="Folder for the report (default: RUN_DIR)."
    ),
) -> None:
    """Write the run's report from the files its stages wrote (see README, "Reports")."""
    from testaug.reports.run_report import write_report

    written = write_report(run_dir, output)
    console.print(
        f"[green]wrote[/] {written.html} and {written.markdown} "
        f"(sections: {', '.join(written.sections)})",
        highlight=False,
    )
