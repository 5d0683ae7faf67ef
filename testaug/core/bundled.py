"""The seed suites and prompts shipped with testaug, found in a checkout or an installed wheel."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from testaug.core.errors import InputError, Problem
from testaug.core.records import TestCase, label_options

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


def task_labels_and_lexicons(
    cases: Sequence[TestCase], labels: str | None = None
) -> tuple[list[str], dict[str, Any]]:
    """The task labels (given comma-separated, or the bundled suite's, or the cases') and the
    bundled suite's lexicons (the perturbations draw words from them)."""
    from testaug.suites.load import load_suite

    task = cases[0].task
    lexicons: dict[str, Any] = {}
    suite_labels: list[str] = []
    if task in bundled_suites():
        suite = load_suite(resolve_suite(task))
        suite_labels, lexicons = list(suite.labels), suite.words()
    if labels:
        return [name.strip() for name in labels.split(",") if name.strip()], lexicons
    if suite_labels:
        return suite_labels, lexicons
    return sorted({option for case in cases for option in label_options(case.label)}), lexicons
