"""An output must not name a file the command reads: writing it would replace that input
(`--junit cases.jsonl`, `retest(out=tree.jsonl)`), nor a file another output of the same
command goes to. Paths are compared as the files they name: `a.jsonl`, `./a.jsonl` and
`d/../a.jsonl` are one file, and so are two links to it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from testaug.core.errors import InputError, Problem

Named = Mapping[str, Path | str | None]


def same_file(first: Path, second: Path) -> bool:
    """Whether two paths name one file (resolved, or one file on disk through links)."""
    try:
        if first.resolve() == second.resolve():
            return True
        return first.exists() and second.exists() and os.path.samefile(first, second)
    except (OSError, RuntimeError, ValueError):  # a link loop, an odd name: not comparable
        return False


def refuse_overwriting_inputs(outputs: Named, inputs: Named) -> None:
    """An InputError naming each output (keyed by the flag or argument that gave it) that
    is one of the inputs, or that an earlier output names too; None values are not given."""
    given_inputs = [(name, Path(path)) for name, path in inputs.items() if path]
    seen: list[tuple[str, Path]] = []
    problems = []
    for name, value in outputs.items():
        if not value:
            continue
        path = Path(value)
        clash = next(((n, p) for n, p in given_inputs if same_file(path, p)), None)
        if clash is not None:
            problems.append(
                Problem(
                    f"is {clash[0]} ({clash[1]}), an input: writing there would replace "
                    "it; name another file",
                    path,
                    field=name,
                )
            )
        elif (twin := next((n for n, p in seen if same_file(path, p)), None)) is not None:
            problems.append(Problem(f"is also {twin}: name another file", path, field=name))
        seen.append((name, path))
    if problems:
        raise InputError(problems)


def existing(path: Path | str | None) -> Path | None:
    """`path` when it names a file or folder, else None (a shipped suite's name, say)."""
    return Path(path) if path and Path(path).exists() else None
