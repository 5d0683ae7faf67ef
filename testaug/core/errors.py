"""The one family of errors that testaug raises on purpose."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


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


def close_names(word: str, choices: Iterable[str], *, n: int = 3, cutoff: float = 0.6) -> list[str]:
    """The choices closest to `word`, best first, compared case-insensitively (a choice that
    differs only in case comes first); each as the choice is written."""
    by_folded: dict[str, str] = {}
    for choice in choices:
        by_folded.setdefault(choice.casefold(), choice)
    folded = word.casefold()
    found = difflib.get_close_matches(folded, list(by_folded), n=n, cutoff=cutoff)
    if folded in by_folded and folded not in found[:1]:
        found = [folded, *(f for f in found if f != folded)][:n]
    return [by_folded[f] for f in found]


def did_you_mean(suggestions: Iterable[str]) -> str:
    """The end of a message that suggests names, `; did you mean 'a' or 'b'?`, or "" when
    there is nothing to suggest."""
    shown = [repr(s) for s in suggestions]
    if not shown:
        return ""
    listed = shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"
    return f"; did you mean {listed}?"


def validation_message(error: Mapping[str, Any]) -> str:
    """What is wrong with a value, from one of pydantic's errors (`exc.errors()`), in the
    words every bad-input line uses: `expected one of a, b, got 'c'`; no web link."""
    given = error.get("input")
    got = f", got {given!r}" if isinstance(given, str | int | float) else ""
    if error["type"] in ("literal_error", "enum"):
        allowed = str(error["ctx"]["expected"]).replace(" or ", ", ").replace("'", "")
        return f"expected one of {allowed}{got}"
    message = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "value_error":
        return message
    return message[:1].lower() + message[1:] + got


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
