"""`testaug report`: report.md and a self-contained report.html for a run directory;
`testaug report --install-browser` installs the headless browser its page tests use."""

from __future__ import annotations

from pathlib import Path

import typer

from testaug.cli.console import console, err_console, styled
from testaug.cli.options import output_option
from testaug.core.errors import InputError, Problem


def report_command(
    run_dir: Path | None = typer.Argument(None, metavar="RUN_DIR", help="A run directory."),
    output: Path | None = output_option(
        None, "-o", "--output", kind="folder", help="Folder for the report (default: RUN_DIR)."
    ),
    install_browser: bool = typer.Option(
        False,
        "--install-browser",
        help="Install Debian's chromium and chromium-driver (headless page tests of "
        "report.html) and exit; exits 0 with a message where that cannot be done.",
    ),
) -> None:
    """Write the run's report from the files its stages wrote (see docs/how-to/evaluate.md)."""
    if install_browser:
        _install_browser()
        return
    if run_dir is None:
        raise InputError(Problem("give a run directory (or --install-browser)", field="RUN_DIR"))
    from testaug.reports.run_report import write_report

    written = write_report(run_dir, output)
    sections = ", ".join(written.sections)
    console.print(
        styled("[green]wrote[/] {} and {} (sections: {})", written.html, written.markdown, sections)
    )


def _install_browser() -> None:
    """Install the browser, or say loudly on stderr why not; exit 0 either way (the report
    needs no browser; the page tests skip without one, and fail under CI)."""
    from testaug.reports.browser import install_browser

    console.print("installing the headless browser (chromium, chromium-driver) ...")
    outcome = install_browser()
    if outcome.browser is not None:
        console.print(styled("[green]browser:[/] {}", outcome.message))
        return
    err_console.print(
        styled(
            "[bold yellow]warning: the browser is NOT installed:[/] {} (under CI, where CI "
            "is set, its page tests fail rather than skip)",
            outcome.message,
        )
    )
