"""The `testaug` command: argument parsing around the library, rich output, one-line errors."""

from __future__ import annotations

import logging

import click
import typer
from rich.logging import RichHandler
from typer.core import TyperGroup

from testaug import __version__
from testaug.cli.adapt import adapt_command
from testaug.cli.annotate import annotate_app
from testaug.cli.console import err_console
from testaug.cli.diversity import diversity_command
from testaug.cli.editor import editor_app, suggest_command
from testaug.cli.evaluate import evaluate_command
from testaug.cli.expand import expand_command
from testaug.cli.fix import fix_command
from testaug.cli.flows import flows_app
from testaug.cli.generalize import generalize_command
from testaug.cli.generate import generate_command
from testaug.cli.lexicon import lexicon_app
from testaug.cli.patch_eval import patch_eval_command
from testaug.cli.rankers import rank_command, rankers_app
from testaug.cli.report import report_command
from testaug.cli.run import run_command
from testaug.cli.suggestions import suggestions_app
from testaug.cli.suite import suite_app
from testaug.cli.templates import templates_app
from testaug.cli.tree import tree_app
from testaug.core.errors import TestAugError
from testaug.core.heavy_imports import quiet_libraries
from testaug.core.secrets import redact_text


class ErrorsAsMessages(TyperGroup):
    """The root command group: a TestAugError or I/O error is one line on stderr and exit
    code 1, an interrupt exit code 130, whoever invokes the command (the console script or
    a test's CliRunner)."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except TestAugError as exc:
            message = redact_text(str(exc))  # the last line of defence for credentials
            err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
            ctx.exit(1)
        except OSError as exc:
            err_console.print(
                "[bold red]error:[/] "
                + redact_text(f"{exc.strerror or exc}: {exc.filename or ''}"),
                highlight=False,
            )
            ctx.exit(1)
        except KeyboardInterrupt:
            err_console.print("[yellow]interrupted[/]")
            ctx.exit(130)


app = typer.Typer(
    name="testaug",
    cls=ErrorsAsMessages,
    help="Grow capability-based NLP test suites: expand templates, generate, triage, evaluate.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    # click's plain help: it wraps at spaces at any width, where rich's panels cut long
    # option names ("--prompts-per-descrip…") at 80 columns
    rich_markup_mode=None,
)
app.command("run")(run_command)
app.add_typer(suite_app, name="suite")
app.command("expand")(expand_command)
app.command("generate")(generate_command)
app.add_typer(rankers_app, name="rankers")
app.command("rank")(rank_command)
app.add_typer(annotate_app, name="annotate")
app.command("diversity")(diversity_command)
app.command("evaluate")(evaluate_command)
app.command("patch-eval")(patch_eval_command)
app.command("generalize")(generalize_command)
app.command("report")(report_command)
app.add_typer(templates_app, name="templates")
app.add_typer(flows_app, name="flows")
app.add_typer(suggestions_app, name="suggestions")
app.add_typer(lexicon_app, name="lexicon")
app.command("suggest")(suggest_command)
app.add_typer(editor_app, name="editor")
app.add_typer(tree_app, name="tree")
app.command("adapt")(adapt_command)
app.command("fix")(fix_command)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"testaug {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only warnings and errors."),
) -> None:
    """testaug: make NLP test suites bigger, more diverse and cheaper to validate."""
    _configure_logging(logging.WARNING if quiet else logging.INFO)
    quiet_libraries()


def _configure_logging(level: int) -> None:
    """testaug's log lines go to stderr through rich, beside the progress bars."""
    handler = RichHandler(console=err_console, show_path=False, show_time=False)
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.addFilter(_redact_record)
    package = logging.getLogger("testaug")
    package.handlers[:] = [handler]
    package.setLevel(level)
    package.propagate = False


def _redact_record(record: logging.LogRecord) -> bool:
    """Blank credentials in a log line before it is printed (warnings quote servers)."""
    record.msg, record.args = redact_text(record.getMessage()), None
    return True


def main() -> None:
    """Entry point of the `testaug` console script."""
    app()
