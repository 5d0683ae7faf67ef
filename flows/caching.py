"""How the flows' tasks cache: on their config record, the content of the files it names
as read (not those it declares its step writes), and the code version, with results
persisted so a new process resumes where one stopped."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prefect.cache_policies import INPUTS, TASK_SOURCE, CachePolicy
from prefect.utilities.hashing import hash_objects
from pydantic import BaseModel

from testaug import __version__
from testaug.steps.contract import StepOutput, file_sha256, written_fields

_PACKAGES = ("testaug", "rankers", "flows")


@functools.cache
def code_version() -> str:
    """testaug's version and a hash of the source of its packages: any code change is a
    new version, so no task reuses a result that older code computed."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(__version__.encode())
    for package in _PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    return f"{__version__}+{digest.hexdigest()[:12]}"


def fingerprint(path: Path) -> str:
    """A file's SHA-256; for a folder, its files' names, sizes and modification times."""
    if path.is_file():
        return file_sha256(path)
    if path.is_dir():
        entries = [
            (p.relative_to(path).as_posix(), p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(path.rglob("*"))
            if p.is_file()
        ]
        return hash_objects(entries, raise_on_failure=True) or ""
    return "missing"


def input_files(config: BaseModel, writes: tuple[str, ...] | None = None) -> list[tuple[str, Path]]:
    """The paths a step's config record names as what the step reads, each with its field
    (`known[1]`, `evaluation.labels`): every Path field, in records and lists nested in
    it, except the fields the record declares it writes (`WRITES`, or `writes` given) and
    the step outputs it carries (they carry their own hash)."""
    skipped = written_fields(config) if writes is None else writes
    found = []
    for name, value in config:
        if name not in skipped:
            found.extend(_paths(value, name))
    return found


def _paths(value: Any, name: str) -> Iterator[tuple[str, Path]]:
    if isinstance(value, Path):
        yield name, value
    elif isinstance(value, StepOutput):
        return
    elif isinstance(value, BaseModel):
        for field, path in input_files(value):
            yield f"{name}.{field}", path
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _paths(item, f"{name}[{index}]")


@dataclass
class InputFiles(CachePolicy):
    """A key from the content of every file or folder a task's config record names as what
    its step reads (see `input_files`): `writes`, when given, names the record's fields
    the step writes in place of those its class declares."""

    writes: tuple[str, ...] | None = None

    def compute_key(
        self,
        task_ctx: Any,
        inputs: dict[str, Any] | None,
        flow_parameters: dict[str, Any] | None,
        **kwargs: Any,
    ) -> str | None:
        files = [
            (f"{name}.{field}", str(path), fingerprint(path))
            for name, value in sorted((inputs or {}).items())
            for field, path in _paths_of(value, self.writes)
        ]
        return hash_objects(files, raise_on_failure=True)


def _paths_of(value: Any, writes: tuple[str, ...] | None) -> list[tuple[str, Path]]:
    if isinstance(value, BaseModel) and not isinstance(value, StepOutput):
        return input_files(value, writes)
    return list(_paths(value, ""))


@dataclass
class CodeVersion(CachePolicy):
    """A key from testaug's code version (see `code_version`)."""

    def compute_key(
        self,
        task_ctx: Any,
        inputs: dict[str, Any] | None,
        flow_parameters: dict[str, Any] | None,
        **kwargs: Any,
    ) -> str | None:
        return code_version()


def step_cache(writes: tuple[str, ...] | None = None) -> CachePolicy:
    """The steps' cache policy: inputs, task source, the content of the files the config
    record names as read (`writes`: the fields written, in place of the record's own
    declaration), code version."""
    return INPUTS + TASK_SOURCE + InputFiles(writes=writes) + CodeVersion()
