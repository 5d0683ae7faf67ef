"""The door of the Python API: arguments checked before any work, and the errors of the
steps below told in the API's own terms.

Bad input is an `InputError` whose problems name the argument (`perturb`, `models[1]`,
`cases[3].label`), as the CLI's name the flag: pydantic's errors become one line each,
without their web links, and a problem in a file the API wrote from an argument (cases
given in memory, written to a temporary file) names that argument, never the file.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from pydantic import BaseModel, ValidationError

from testaug.core.errors import InputError, Problem, format_path, validation_message
from testaug.core.records import Suite, TestCase

P = ParamSpec("P")
R = TypeVar("R")
M = TypeVar("M", bound=BaseModel)


def api_function(
    *, paths: Sequence[str] = (), fields: Mapping[str, str] | None = None
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A public function of the API: the arguments named in `paths` must be file paths
    (a str or a Path, not empty; None where that is the default), and a pydantic error
    raised inside becomes an InputError naming the argument: a record's field by its own
    name (the API's arguments bear their records' names), or as `fields` renames it."""
    renamed = dict(fields or {})

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        signature = inspect.signature(function)

        @functools.wraps(function)
        def checked(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                given = signature.bind(*args, **kwargs).arguments
            except TypeError:  # a call Python itself refuses, as it words it
                return function(*args, **kwargs)
            for name in paths:
                if name in given:
                    optional = signature.parameters[name].default is None
                    check_path(given[name], name, optional=optional)
            try:
                return function(*args, **kwargs)
            except ValidationError as exc:
                raise InputError(validation_problems(exc, renamed)) from None

        return checked

    return decorate


def step_config(
    record: type[M],
    config: Any,
    fields: Mapping[str, Any],
    *,
    defaults: Mapping[str, Any] | None = None,
) -> M:
    """The config record of the step an API function fronts, built in one place: `config`
    (a `record`, or None) with the `fields` given as keyword arguments over it, validated
    into the record (`defaults` fill what neither gives). An InputError names `config`
    when it is no `record`, and each bad field as the caller wrote it (`batch_size`,
    `selection.pooled_rule`; a field the record lacks as an unknown option)."""
    if config is not None and not isinstance(config, record):
        article = "an" if record.__name__[:1].lower() in "aeiou" else "a"
        message = (
            f"expected {article} {record.__name__} (or its fields as keyword arguments), "
            f"got {kind_of(config)}"
        )
        raise InputError(Problem(message, field="config"))
    given = {**(defaults or {}), **(dict(config) if config is not None else {}), **fields}
    try:
        return record.model_validate(given)
    except ValidationError as exc:
        raise InputError(validation_problems(exc, {})) from None


def validation_problems(exc: ValidationError, renamed: Mapping[str, str]) -> list[Problem]:
    """One problem per pydantic error, its field the argument that gave the value."""
    problems = []
    for error in exc.errors():
        loc = tuple(error.get("loc", ()))
        if loc and str(loc[0]) in renamed:
            loc = (renamed[str(loc[0])], *loc[1:])
        message = "unknown option" if error["type"] == "extra_forbidden" else None
        problems.append(
            Problem(message or validation_message(error), field=format_path(loc) or None)
        )
    return problems


def check_path(value: Any, name: str, *, optional: bool = False) -> None:
    """An InputError naming `name` unless `value` is a file path (None when `optional`)."""
    if value is None and optional:
        return
    if not isinstance(value, str | os.PathLike):
        raise InputError(
            Problem(f"expected a path (a str or a Path), got {kind_of(value)}", field=name)
        )
    if not str(value).strip():
        raise InputError(Problem("an empty path names no file", field=name))


def check_count(value: Any, name: str, *, least: int = 1, none: str | None = None) -> None:
    """An InputError naming `name` unless `value` is a whole number of at least `least` (or
    None, where `none` says what None means)."""
    if value is None and none is not None:
        return
    if isinstance(value, int) and not isinstance(value, bool) and value >= least:
        return
    allowed = f", or None for {none}" if none is not None else ""
    message = f"expected a whole number of at least {least}{allowed}, got {value!r}"
    raise InputError(Problem(message, field=name))


def check_suite(value: Any, name: str = "suite") -> None:
    """An InputError naming `name` unless `value` is a `Suite` or names one (a file, a
    folder or a shipped name)."""
    if isinstance(value, Suite):
        return
    if not isinstance(value, str | os.PathLike):
        message = (
            f"expected a Suite, a suite file or folder, or a shipped name, got {kind_of(value)}"
        )
        raise InputError(Problem(message, field=name))
    check_path(value, name)


def case_records(cases: Any, name: str = "cases") -> list[TestCase]:
    """The test cases given in memory, as a list; an InputError naming each item that is
    no `TestCase` (`cases[2]`)."""
    if isinstance(cases, TestCase) or not isinstance(cases, Iterable):
        raise InputError(
            Problem(
                "expected test cases (TestCase records), a JSONL file of them or a suite, "
                f"got {kind_of(cases)}",
                field=name,
            )
        )
    listed = list(cases)
    problems = [
        Problem(f"expected a TestCase, got {kind_of(item)}", field=f"{name}[{index}]")
        for index, item in enumerate(listed)
        if not isinstance(item, TestCase)
    ]
    if problems:
        raise InputError(problems)
    return listed


@contextmanager
def written_from(file: Path, name: str) -> Iterator[None]:
    """Problems raised in the block about `file`, which the API wrote from the argument
    `name` one item a line, named as that argument's items (`cases[3].label`)."""
    try:
        yield
    except InputError as exc:
        if not any(_same_file(problem.file, file) for problem in exc.problems):
            raise
        raise InputError([_renamed(problem, file, name) for problem in exc.problems]) from None


def _same_file(given: Path | str | None, file: Path) -> bool:
    return given is not None and Path(given).absolute() == file.absolute()


def _renamed(problem: Problem, file: Path, name: str) -> Problem:
    if not _same_file(problem.file, file):
        return problem
    field = name if problem.line is None else f"{name}[{problem.line - 1}]"
    if problem.field:
        field += problem.field if problem.field.startswith("[") else f".{problem.field}"
    message = problem.message.replace(str(file), name)
    return Problem(message, field=field)


def model_specs(models: Any, stack: ExitStack, name: str = "models") -> tuple[str, ...]:
    """The spec of each model under test given (a spec string, or an object lent a spec
    for as long as `stack` is open), each checked before any work: an InputError naming
    `name` (`models[1]` in a list) for a spec that names no model or lacks what it needs
    (an API key), an object that is no model, or no model at all."""
    from testaug.evaluation.models import ModelError, check_spec
    from testaug.evaluation.models.python_object import registered

    single = isinstance(models, str) or not isinstance(models, Sequence)
    given = [models] if single else list(models)
    if not given:
        raise InputError(Problem("no model under test given", field=name))
    specs, problems = [], []
    for index, model in enumerate(given):
        try:
            if isinstance(model, str):
                check_spec(model)
                specs.append(model)
            else:
                specs.append(stack.enter_context(registered(model)))
        except ModelError as exc:
            problems.append(Problem(str(exc), field=name if single else f"{name}[{index}]"))
    if problems:
        raise InputError(problems)
    return tuple(specs)


def model_spec(model: Any, stack: ExitStack, name: str = "model") -> str:
    """The spec of the one model under test given, checked as `model_specs` checks each."""
    if isinstance(model, Sequence) and not isinstance(model, str):
        message = f"expected one model (a spec string or an object), got {kind_of(model)}"
        raise InputError(Problem(message, field=name))
    (spec,) = model_specs(model, stack, name)
    return spec


def kind_of(value: Any) -> str:
    """How a message names a value's type: `None`, or `an int`."""
    if value is None:
        return "None"
    kind = type(value).__name__
    return f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind}"
