"""The CLI's two consoles: results on stdout, messages and progress on stderr."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

console = Console(soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)


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
