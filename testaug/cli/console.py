"""The CLI's two consoles: results on stdout, messages and progress on stderr.

Their tables never cut a word (a topic path, a description, a model id): a table wider than
the console wraps at spaces, its widest columns first, and where even its longest words do
not fit side by side it runs past the width (the terminal wraps the line) instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console, ConsoleRenderable, RenderableType, RenderHook
from rich.measure import Measurement
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Column, Table

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


def cli_console(**options: Any) -> Console:
    """A console (rich's `Console(**options)`, soft-wrapped) whose tables keep words whole."""
    console = Console(soft_wrap=True, **options)
    console.push_render_hook(WholeWords(console))
    return console


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
    """A progress bar on stderr that stays quiet when stderr is not a terminal."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    )
