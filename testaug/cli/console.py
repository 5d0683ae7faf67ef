"""The CLI's two consoles: results on stdout, messages and progress on stderr.

Neither reads rich markup or emoji codes in what it prints: a path, an error, a hint or a
case text is printed as it is (`pip install 'testaug[nlp]'` keeps its `[nlp]`), whether it
is printed whole, in a table, as a status or as a log line. The CLI's own styling is
written with `styled`, whose template alone is markup.

Their tables never cut a word (a topic path, a description, a model id): a table wider than
the console wraps at spaces, its widest columns first, and where even its longest words do
not fit side by side it runs past the width (the terminal wraps the line) instead.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from rich.console import Console, ConsoleRenderable, RenderableType, RenderHook
from rich.logging import RichHandler
from rich.measure import Measurement
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.status import Status
from rich.table import Column, Table
from rich.text import Text

from testaug.core.console_text import styled

__all__ = ["LogLines", "console", "err_console", "progress", "styled"]

UNBOUNDED = 1_000_000  # the width a cell is measured at for its one-line length


class WholeWords(RenderHook):
    """Lays out every table a console prints so that no word in it is cut (`fit_table`)."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        for renderable in renderables:
            if isinstance(renderable, Table):
                fit_table(renderable, self.console)
        return renderables


class PlainConsole(Console):
    """A console that prints text as it is: no markup, no emoji codes, statuses too."""

    def __init__(self, **options: Any) -> None:
        super().__init__(soft_wrap=True, markup=False, emoji=False, **options)
        self.push_render_hook(WholeWords(self))

    def status(self, status: RenderableType, **options: Any) -> Status:  # type: ignore[override]
        """rich's status line, whose text (given or updated) is printed as it is."""
        return PlainStatus(status, console=self, **options)


class PlainStatus(Status):
    """A status whose text is plain: rich's reads a string given to it as markup."""

    def __init__(self, status: RenderableType, **options: Any) -> None:
        super().__init__(_plain(status), **options)

    def update(self, status: RenderableType | None = None, **options: Any) -> None:
        super().update(None if status is None else _plain(status), **options)


def _plain(renderable: RenderableType) -> RenderableType:
    return Text(renderable) if isinstance(renderable, str) else renderable


def cli_console(**options: Any) -> Console:
    """A console (rich's `Console(**options)`, soft-wrapped, printing text as it is) whose
    tables keep words whole."""
    return PlainConsole(**options)


def fit_table(table: Table, console: Console) -> None:
    """Fix the column widths of a table too wide for the console: narrow the widest column
    (by one character at a time) while it is wider than its longest word. Rich's own
    collapse narrows the widest columns past their longest word, and cuts it with "…"."""
    columns = table.columns
    if not columns or table.width is not None:
        return
    ranges = [_measure(table, column, console) for column in columns]
    padding = sum(table._get_padding_width(index) for index in range(len(columns)))
    room = console.width - table._extra_width - padding
    widths = [r.maximum for r in ranges]
    if sum(widths) <= room:
        return
    excess = sum(widths) - room
    while excess > 0:
        narrowable = [i for i, r in enumerate(ranges) if widths[i] > r.minimum]
        if not narrowable:
            break
        widest = max(narrowable, key=lambda i: widths[i])
        widths[widest] -= 1
        excess -= 1
    for column, width in zip(columns, widths, strict=True):
        column.min_width = column.max_width = width


def _measure(table: Table, column: Column, console: Console) -> Measurement:
    """A column's longest word (its whole line, when it does not wrap) and longest line."""
    if column.width is not None:
        return Measurement(column.width, column.width)
    cells: Sequence[RenderableType] = [
        *([column.header] if table.show_header else []),
        *column.cells,
        *([column.footer] if table.show_footer else []),
    ]
    options = console.options.update(width=UNBOUNDED, no_wrap=column.no_wrap)
    measured = [Measurement.get(console, options, cell) for cell in cells]
    low = max((m.minimum for m in measured), default=1)
    high = max((m.maximum for m in measured), default=1)
    if column.no_wrap:
        low = high
    return Measurement(low, high).clamp(column.min_width, column.max_width)


console = cli_console()
err_console = cli_console(stderr=True)


def progress() -> Progress:
    """A progress bar on stderr that stays quiet when stderr is not a terminal (rich's
    would leave an empty line there)."""
    return Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
    )


class LogLines(RichHandler):
    """rich's log handler (never reading markup in a message), which writes a line whole
    where its console is not a terminal (a CI log, a file): rich lays a record out in
    columns as wide as the console, 80 characters there, and would break a long path."""

    def render(self, *, record: logging.LogRecord, traceback: Any, message_renderable: Any) -> Any:
        if self.console.is_terminal or traceback is not None:
            return super().render(
                record=record, traceback=traceback, message_renderable=message_renderable
            )
        return Text.assemble(self.get_level_text(record), " ", message_renderable)
