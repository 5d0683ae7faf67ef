"""How the flows' tasks cache: on their inputs, the content of the files they read, and
the code version, with results persisted so a new process resumes where one stopped."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prefect.cache_policies import INPUTS, TASK_SOURCE, CachePolicy
from prefect.utilities.hashing import hash_objects

from testaug import __version__
from testaug.steps.contract import StepOutput, file_sha256

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


def _input_paths(value: Any) -> Iterator[Path]:
    """Paths among a task's inputs (a StepOutput carries its own hash, so it is skipped)."""
    if isinstance(value, Path):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            if not isinstance(item, StepOutput):
                yield from _input_paths(item)


@dataclass
class InputFiles(CachePolicy):
    """A key from the content of every file or folder passed to the task as a Path, except
    the parameters named in `outputs` (what the task writes)."""

    outputs: tuple[str, ...] = ("out",)

    def compute_key(
        self,
        task_ctx: Any,
        inputs: dict[str, Any] | None,
        flow_parameters: dict[str, Any] | None,
        **kwargs: Any,
    ) -> str | None:
        files = [
            (name, str(path), fingerprint(path))
            for name, value in sorted((inputs or {}).items())
            if name not in self.outputs
            for path in _input_paths(value)
        ]
        return hash_objects(files, raise_on_failure=True)


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


def step_cache(outputs: tuple[str, ...] = ("out",)) -> CachePolicy:
    """The steps' cache policy: inputs, task source, input files' content, code version."""
    return INPUTS + TASK_SOURCE + InputFiles(outputs=outputs) + CodeVersion()
