"""Load a page generator of docs/ (cli_reference.py, python_reference.py) as a module."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def page_generator(name: str) -> ModuleType:
    """docs/<name>.py as a module, freshly executed."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
