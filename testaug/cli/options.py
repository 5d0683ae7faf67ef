"""What the commands share in turning flags into inputs: a config record built from flag
values (`build_config`), one value checked against the choices a type allows (`choice`), and
the old spelling of a renamed option (`renamed_option`).

A value pydantic refuses becomes one line that names the flag, as every bad input does:
`error: --order: expected one of selected, ranked, random, got 'best'` (exit code 1).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from testaug.cli.aliases import notice
from testaug.core.errors import InputError, Problem, validation_message

M = TypeVar("M", bound=BaseModel)
V = TypeVar("V")


def build_config(config: type[M], /, *, flags: Mapping[str, str] | None = None, **values: Any) -> M:
    """`config(**values)`, a record built from a command's flag values; where pydantic
    refuses a value, an InputError with a line per bad value that names its flag.

    A field's flag is `--` and the field's name with dashes (`continue_from` is
    `--continue-from`); `flags` names the others (`{"topics": "--topic"}`; a nested
    field by its dotted path, `"config.epochs"`, or its own name)."""
    try:
        return config(**values)
    except ValidationError as exc:
        raise InputError([flag_problem(error, flags or {}) for error in exc.errors()]) from None


def choice(kind: Any, value: str, flag: str) -> Any:
    """`value` as the type `kind` (a `Literal[...]` of the choices) allows it, or an
    InputError naming `flag` and the choices."""
    try:
        return TypeAdapter(kind).validate_python(value)
    except ValidationError as exc:
        raise InputError([flag_problem(error, {"": flag}) for error in exc.errors()]) from None


def flag_problem(error: Mapping[str, Any], flags: Mapping[str, str]) -> Problem:
    """One pydantic error as a Problem whose field is the flag that gave the value."""
    loc = tuple(str(part) for part in error.get("loc", ()) if isinstance(part, str))
    dotted = ".".join(loc)
    if dotted in flags:
        field: str | None = flags[dotted]
    elif loc and loc[-1] in flags:
        field = flags[loc[-1]]
    elif loc:
        field = "--" + loc[-1].replace("_", "-")
    else:
        field = flags.get("")
    return Problem(validation_message(error), field=field)


def renamed_option(
    value: V, old_value: V | None, *, old: str, new: str, default: V, command: str
) -> V:
    """The value of an option given under its new name, or under its old one (`old`,
    hidden), with a note on stderr saying what to type instead; both names with two
    values is an error."""
    if old_value is None:
        return value
    notice(f"`{old}` is now `{new}` in `testaug {command}`")
    if value != default and value != old_value:
        raise InputError(Problem(f"give {new} only (it is the new name of {old})", field=old))
    return old_value
