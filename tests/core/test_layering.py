"""The layering rule: core <- stages (fixing after adaptive) <- rankers <- steps <- flows <- cli.

A module may import only from its own layer or a lower one, lazy imports inside
functions included. The stages are ordered too, in the order the pipeline runs
them, so a stage reads only the stages before it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Lowest first. testaug's own `__init__` (the version) sits with core.
LAYERS = (
    "testaug.core",
    "testaug.suites",
    "testaug.generation",
    "testaug.review",
    "testaug.editor",
    "testaug.induction",
    "testaug.diversity",
    "testaug.evaluation",
    "testaug.adaptive",
    "testaug.fixing",
    "testaug.reports",
    "testaug.testing",
    "rankers",
    "testaug.steps",
    "flows",
    "testaug.cli",
    "testaug.api",  # the Python door: over the steps and flows, as the CLI
)


def layer_of(module: str) -> int | None:
    """The rank of the layer a dotted module name belongs to (None outside our packages)."""
    if module in ("testaug", "testaug.__init__"):
        return 0
    if module == "testaug.__main__":
        return len(LAYERS) - 1
    for rank, prefix in enumerate(LAYERS):
        if module == prefix or module.startswith(prefix + "."):
            return rank
    if module.split(".")[0] in ("testaug", "rankers", "flows"):
        raise AssertionError(f"{module} is in no layer: add its package to LAYERS")
    return None


def modules() -> list[tuple[str, Path]]:
    found = []
    for package in ("testaug", "rankers", "flows"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found.append((name, path))
    return found


def imported(path: Path, module: str) -> list[tuple[str, int]]:
    """Every module `path` imports (absolute and relative), with the line of the import."""
    out = []
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            out.append((base, node.lineno))
    return out


def test_every_package_module_belongs_to_a_layer():
    for name, _ in modules():
        assert layer_of(name) is not None, name


def test_no_module_imports_from_a_higher_layer():
    violations = []
    for name, path in modules():
        own = layer_of(name)
        for target, line in imported(path, name):
            rank = layer_of(target)
            if rank is not None and own is not None and rank > own:
                violations.append(
                    f"{path.relative_to(ROOT)}:{line}: {name} ({LAYERS[own]}) imports "
                    f"{target} ({LAYERS[rank]})"
                )
    assert not violations, "\n".join(violations)


@pytest.mark.parametrize(
    ("module", "target", "allowed"),
    [
        ("testaug.core.records", "testaug.suites.load", False),
        ("testaug.reports.run_report", "testaug.review.plans", True),
        ("rankers.ensemble", "testaug.steps", False),
        ("testaug.cli.run", "flows.pipeline", True),
    ],
)
def test_the_rule_reads_layers_as_ranks(module, target, allowed):
    assert (layer_of(target) <= layer_of(module)) is allowed
