"""The contract every step keeps: it reads the files it is given, writes its outputs
atomically, and returns a `StepOutput` naming its main file with the file's SHA-256, how
many records it holds, the other files it wrote by role, and a typed summary.

A step's config record declares the fields that name what the step writes as a class
variable, `WRITES` (default: none); its other paths are what it reads, whose content the
flows' cache fingerprints.

A summary is a `StepSummary` subclass that declares its `kind` as a one-value `Literal`;
defining the class records it under that kind, so `StepOutput` reads a summary back from
JSON (Prefect persists a task's result and reads it in a later process) as the class that
wrote it. Flows pass these records between tasks, never the records inside the files, and
a cached step whose file has gone or changed is run again (`is_current`).
"""

from __future__ import annotations

import hashlib
import importlib
import pkgutil
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BeforeValidator, Field, SerializeAsAny

from testaug.core.records import Record

_SUMMARIES: dict[str, type[StepSummary]] = {}


class StepSummary(Record):
    """Base of the steps' summaries: which kind of step wrote it, and the numbers worth
    reporting, by field (optional where a mode of the step leaves them out). A subclass
    declares `kind: Literal["name"] = "name"` and is recorded under that name."""

    kind: str

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        kind = _declared_kind(cls)
        known = _SUMMARIES.get(kind)
        if known is not None and _name(known) != _name(cls):
            raise TypeError(f"step summary kind {kind!r} of {_name(cls)} is {_name(known)}'s")
        _SUMMARIES[kind] = cls  # a module imported again replaces its own classes


def _name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _declared_kind(cls: type[StepSummary]) -> str:
    """The one value of a summary class's `kind: Literal[...]`, which is also its default."""
    field = cls.model_fields["kind"]
    values = get_args(field.annotation) if get_origin(field.annotation) is Literal else ()
    if len(values) != 1 or not isinstance(values[0], str) or field.default != values[0]:
        raise TypeError(
            f"{_name(cls)} must declare its kind as `kind: Literal[NAME] = NAME` (one string)"
        )
    return values[0]


def summary_kinds() -> dict[str, type[StepSummary]]:
    """Every kind of summary of the step modules, with its class (importing them all)."""
    _import_steps()
    return dict(_SUMMARIES)


def summary_class(kind: str) -> type[StepSummary]:
    """The summary class recorded under `kind`; a step module not imported yet is imported
    first. ValueError naming the kind and the known ones when no step has it."""
    if kind not in _SUMMARIES:
        _import_steps()
    if kind not in _SUMMARIES:
        raise ValueError(
            f"unknown step summary kind {kind!r} (known: {', '.join(sorted(_SUMMARIES))})"
        )
    return _SUMMARIES[kind]


def _import_steps() -> None:
    """Import every module of the `testaug.steps` package (its summaries register)."""
    import testaug.steps as package

    for module in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
        importlib.import_module(module.name)


def _as_summary(value: Any) -> Any:
    """A summary as its own class: an instance of a recorded kind as it is, a mapping by
    its `kind`."""
    if isinstance(value, StepSummary):
        if _SUMMARIES.get(value.kind) is not type(value):
            raise ValueError(f"{_name(type(value))} is not the summary of a kind of step")
        return value
    if not isinstance(value, Mapping):
        return value
    kind = value.get("kind")
    if not isinstance(kind, str):
        raise ValueError("a step summary needs its kind (a string)")
    return summary_class(kind).model_validate(dict(value))


class StepOutput(Record):
    """What a step wrote: its main file (with the file's SHA-256), how many records it
    holds, the other files it wrote by role, and its summary. A step that writes no file
    of its own (a push to Label Studio) names the file whose content it sent."""

    step: str
    path: Path
    sha256: str
    records: int = 0
    files: dict[str, Path] = Field(default_factory=dict)
    summary: Annotated[SerializeAsAny[StepSummary], BeforeValidator(_as_summary)]


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def step_output(
    step: str,
    path: Path,
    records: int = 0,
    *,
    files: dict[str, Path] | None = None,
    summary: StepSummary,
) -> StepOutput:
    """The record of a step that wrote `path` (and maybe other files)."""
    return StepOutput(
        step=step,
        path=path,
        sha256=file_sha256(path),
        records=records,
        files=files or {},
        summary=summary,
    )


def written_fields(config: Any) -> tuple[str, ...]:
    """The fields of a step's config record that name files or folders the step writes
    (its class declares them as `WRITES`); its other paths are files the step reads."""
    return tuple(getattr(type(config), "WRITES", ()))


def is_current(output: StepOutput) -> bool:
    """Whether the step's main file is still there with the content it wrote."""
    return output.path.is_file() and file_sha256(output.path) == output.sha256


__all__ = [
    "StepOutput",
    "StepSummary",
    "file_sha256",
    "is_current",
    "step_output",
    "summary_class",
    "summary_kinds",
    "written_fields",
]
