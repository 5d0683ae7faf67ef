"""What the commands share in turning flags into inputs: a config record built from flag
values (`build_config`), one value checked against the choices a type allows (`choice`), the
old spelling of a renamed option (`old_spelling`, read with `renamed_option`; one name, one
meaning: `--seed-cases`, `--suite-cases`), and the checks every command's options get as the
command line is read, before any work: where a command writes (`output_option`) and numbers
that are not finite (`refuse_non_finite`).

A value pydantic refuses becomes one line that names the flag, as every bad input does:
`error: --order: expected one of selected, ranked, random, got 'best'` (exit code 1).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any, Literal, TypeVar

import typer
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


def old_spelling(name: str) -> Any:
    """A hidden option under `name`, the old spelling of a renamed option (None unless
    given); `renamed_option` reads it beside the new one, with a note on stderr."""
    return typer.Option(None, name, hidden=True, help="", show_default=False)


# The old spellings of options renamed so that each name has one meaning: `--cases` (now
# --seed-cases, or --test-cases in `tree fix`), `--suite` where it named a suite's cases
# (now --suite-cases) and `--model` where it named a starting checkpoint (now --start-model).
OLD_CASES = old_spelling("--cases")
OLD_SUITE = old_spelling("--suite")
OLD_MODEL = old_spelling("--model")


def required(value: V | None, flag: str, what: str) -> V:
    """`value`, a required option given under its new name or its old one; an InputError
    naming `flag` and saying it is `what` when neither was given."""
    if value is None:
        raise InputError(Problem(f"missing: give {what}", field=flag))
    return value


def seed_cases_option(default: str, use: str = "") -> Any:
    """The --seed-cases option (once `--cases`): the suite cases (JSONL) the candidates were
    generated from; `use` says what the command reads of them, `default` which are read when
    it is not given."""
    help = (
        f"The seed cases: the suite cases (JSONL) the candidates grew from{use} "
        f"(default: {default})."
    )
    return typer.Option(None, "--seed-cases", help=help)


def seed_cases_given(cases: Path | None, old_cases: Path | None, *, command: str) -> Path | None:
    """The seed cases given as --seed-cases, or as --cases (their old spelling) with a note
    on stderr."""
    return renamed_option(
        cases, old_cases, old="--cases", new="--seed-cases", default=None, command=command
    )


def suite_cases_given(cases: Path | None, old_suite: Path | None, *, command: str) -> Path | None:
    """A suite's cases (JSONL) given as --suite-cases, or as --suite (their old spelling,
    which names a suite's definition elsewhere) with a note on stderr."""
    return renamed_option(
        cases, old_suite, old="--suite", new="--suite-cases", default=None, command=command
    )


OutputKind = Literal["file", "folder", "file or folder"]


def output_option(
    default: Any, *names: str, help: str, kind: OutputKind = "file", hidden: bool = False
) -> Any:
    """A Typer option naming where a command writes, a file unless `kind` says otherwise:
    its value is checked as the command line is read (`output_path`), before any work
    (`hidden`: an old spelling, left out of `--help`)."""
    flag = max(names, key=len)
    check = partial(output_path, flag=flag, kind=kind)
    return typer.Option(default, *names, help=help, parser=check, metavar="<path>", hidden=hidden)


def output_path(value: str | Path, *, flag: str, kind: OutputKind = "file") -> Path:
    """`value` as the path a command writes to, or an InputError naming `flag`: an empty
    value, a folder where a file goes (`.`, `/`, `..`, `out/`, an existing folder), a file
    where a folder goes, and a path through a file are refused."""
    text = str(value)
    path = Path(text)
    if not text.strip():
        raise InputError(Problem(f"expected a {kind} path, got {text!r}", field=flag))
    folder_named = path.name in ("", "..")  # `.`, `/`, `..`: no name to write under
    if kind == "file" and (folder_named or text.endswith(("/", "/.")) or path.is_dir()):
        raise InputError(Problem(f"expected a file, got the folder {text!r}", field=flag))
    if kind == "file or folder" and folder_named:
        raise InputError(Problem(f"expected a file or folder name, got {text!r}", field=flag))
    if kind == "folder" and path.exists() and not path.is_dir():
        raise InputError(Problem(f"expected a folder, got the file {text!r}", field=flag))
    for above in path.parents:  # the nearest existing folder above must be one
        if above.exists() or above.is_symlink():
            if not above.is_dir():
                message = f"{str(above)!r} is a file, not a folder (in {text!r})"
                raise InputError(Problem(message, field=flag))
            break
    return path


def refuse_non_finite(command: Any) -> None:
    """Make every number option and argument (a float) of `command` and of its subcommands
    refuse a value that is not finite (`inf`, `nan`, `1e999`) with an InputError naming the
    option, as the command line is read, before its range is checked and before any work:
    Typer reads such values as numbers, and a range (`min=0`) lets `inf` through. A
    command already made so is left as it is."""
    for param in getattr(command, "params", ()):
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None or descriptor.annotation is not float:
            continue
        if not isinstance(param.process_value, partial):
            param.process_value = partial(_finite_first, param, param.process_value)
    for sub in getattr(command, "commands", {}).values():
        refuse_non_finite(sub)


def _finite_first(param: Any, process: Callable[[Any, Any], Any], ctx: Any, value: Any) -> Any:
    """`process(ctx, value)` (the parameter's own reading) once each of `value`'s numbers,
    as typed or as given by default, is finite."""
    for item in value if isinstance(value, list | tuple) else [value]:
        try:
            number = float(item)
        except (TypeError, ValueError):
            continue  # not a number at all: the parameter's own reading says so
        if not math.isfinite(number):
            message = f"expected a finite number, got {item!r}"
            raise InputError(Problem(message, field=max(param.opts, key=len)))
    return process(ctx, value)
