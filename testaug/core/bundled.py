"""The seed suites and prompts shipped with testaug, found in a checkout or an installed wheel."""

from __future__ import annotations

from pathlib import Path

from testaug.core.errors import InputError, Problem

_PACKAGE = Path(__file__).resolve().parent.parent


def bundled_dir(kind: str) -> Path:
    """The folder of shipped `data` or `prompts`: the wheel's copy, else the checkout's."""
    installed = _PACKAGE / "_bundled" / kind
    return installed if installed.is_dir() else _PACKAGE.parent / kind


def bundled_suites() -> list[str]:
    """Names of the shipped suites (the task folders under data/ that hold a suite.yaml)."""
    root = bundled_dir("data")
    return sorted(p.parent.name for p in root.glob("*/suite.yaml"))


def resolve_suite(name_or_path: str | Path) -> Path:
    """A suite file from a path (a file, or a folder with suite.yaml) or a shipped suite's name."""
    path = Path(name_or_path)
    if path.is_dir() and (path / "suite.yaml").is_file():
        return path / "suite.yaml"
    if path.exists():
        return path
    shipped = bundled_dir("data") / str(name_or_path) / "suite.yaml"
    if shipped.is_file():
        return shipped
    names = ", ".join(bundled_suites()) or "none"
    raise InputError(
        Problem(f"no such file, and no shipped suite of that name (shipped: {names})", path)
    )
