"""A package's face: its public names, each imported from the module that holds it on
first use, so that `import rankers.borda` stays light (torch loads with the members and
learners that need it, never with a package's `__init__`)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def face(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: `names` maps each public name to the module
    of the package that defines it."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{names[name]}"), name)

    return __getattr__
