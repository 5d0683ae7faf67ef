"""The one family of errors that testaug raises on purpose."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


def format_path(path: tuple[int | str, ...]) -> str:
    """A field path as written in messages: `capabilities[0].descriptions[2].label`; a key
    with a line break or another unprintable character is quoted (`meta['a\\nb']`), so a
    message stays one line."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not str(part).isprintable():
            out += f"[{str(part)!r}]"
        else:
            out += f".{part}" if out else str(part)
    return out


class TestAugError(Exception):
    """Base of every error testaug raises for a condition a user can fix."""

    __test__ = False


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input: what, and where (file, line, field)."""

    message: str
    file: Path | str | None = None
    line: int | None = None
    field: str | None = None

    def __str__(self) -> str:
        where = ""
        if self.file is not None:
            where = str(self.file)
            if self.line is not None:
                where += f":{self.line}"
            where += ": "
        field = f"{self.field}: " if self.field else ""
        return f"{where}{field}{self.message}"


class InputError(TestAugError):
    """Bad input (a suite, a lexicon, a table, a JSONL file): lists every problem found."""

    def __init__(self, problems: list[Problem] | Problem) -> None:
        self.problems: tuple[Problem, ...] = (
            (problems,) if isinstance(problems, Problem) else tuple(problems)
        )
        if not self.problems:
            raise ValueError("InputError needs at least one problem")
        super().__init__(str(self))

    def __str__(self) -> str:
        first = str(self.problems[0])
        more = len(self.problems) - 1
        return first if not more else f"{first} (and {more} more problem{'s' * (more > 1)})"


class ServiceError(TestAugError):
    """A remote service (an LLM server, Label Studio) failed in a way retrying will not fix."""


class TransientServiceError(ServiceError):
    """A remote service failed in a way worth retrying: timeout, connection, 429, 5xx.

    `retry_after` holds the server's Retry-After in seconds when it sent one.
    """

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
