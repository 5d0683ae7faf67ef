"""The `testaug` command: argument parsing around the library, rich output, one-line errors."""

from __future__ import annotations

import gc
import logging
from typing import Any

import click
import typer

from testaug import __version__
from testaug.cli.aliases import announce_renamed
from testaug.cli.console import LogLines, err_console, styled
from testaug.cli.groups import Root
from testaug.core.errors import TestAugError
from testaug.core.heavy_imports import quiet_libraries
from testaug.core.secrets import redact_text


class ErrorsAsMessages(Root):
    """The root command group: a TestAugError or I/O error is one line on stderr and exit
    code 1, an interrupt exit code 130, whoever invokes the command (the console script or
    a test's CliRunner). No command's number option takes a number that is not finite."""

    def get_command(self, ctx: click.Context, name: str) -> Any:
        """The command `name`, built when first asked for (see `Root`), its number options
        refusing numbers that are not finite."""
        from testaug.cli.options import refuse_non_finite  # pydantic: not at start-up

        command = super().get_command(ctx, name)
        if command is not None:
            refuse_non_finite(command)
        return command

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except TestAugError as exc:
            message = redact_text(str(exc))  # the last line of defence for credentials
            err_console.print(styled("[bold red]error:[/] {}", message))
            ctx.exit(1)
        except OSError as exc:
            message = redact_text(f"{exc.strerror or exc}: {exc.filename or ''}")
            err_console.print(styled("[bold red]error:[/] {}", message))
            ctx.exit(1)
        except KeyboardInterrupt:
            err_console.print(styled("[yellow]interrupted[/]"))
            ctx.exit(130)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        """The command `args` name; an old name (hidden) says on stderr what to type instead."""
        name, command, rest = super().resolve_command(ctx, args)
        announce_renamed(name, command, rest)
        return name, command, rest


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


# The packages whose loggers the command shows: testaug's own and the rankers it trains.
LOGGED_PACKAGES = ("testaug", "rankers")


def _configure_logging(level: int) -> None:
    """The log lines of `LOGGED_PACKAGES` go to stderr through rich, beside the progress
    bars: one handler, each line once (not passed on to the root logger), never wrapped
    where stderr is not a terminal."""
    handler = LogLines(console=err_console, show_path=False, show_time=False)
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.addFilter(_redact_record)
    for name in LOGGED_PACKAGES:
        package = logging.getLogger(name)
        package.handlers[:] = [handler]
        package.setLevel(level)
        package.propagate = False


def _redact_record(record: logging.LogRecord) -> bool:
    """Blank credentials in a log line before it is printed (warnings quote servers)."""
    record.msg, record.args = redact_text(record.getMessage()), None
    return True


# Python's cyclic garbage collector runs after every 700 new container objects, and
# importing torch and transformers creates millions: a larger first generation spares
# about 15% of the CPU time of a command that loads a model (benchmarks/fill_in.py).
GC_FIRST_GENERATION = 100_000


def main() -> None:
    """Entry point of the `testaug` console script."""
    gc.set_threshold(GC_FIRST_GENERATION, *gc.get_threshold()[1:])
    app()
