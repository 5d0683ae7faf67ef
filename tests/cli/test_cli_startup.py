"""What `testaug` imports before it does anything: `--version` and `--help` import no
command module and no heavy library, and a command imports its own door's modules, not
every door's. Counted in a fresh interpreter (imports, not seconds: a timed test would
fail on a busy machine; `benchmarks/startup.py` measures the CPU time)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# What the root needs to parse its options and print its help or version.
ROOT_MODULES = {
    "testaug",
    "testaug.cli",
    "testaug.cli.aliases",
    "testaug.cli.console",
    "testaug.cli.groups",
    "testaug.cli.lazy_commands",
    "testaug.core",
    "testaug.core.console_text",
    "testaug.core.errors",
    "testaug.core.heavy_imports",
    "testaug.core.secrets",
}
# Libraries a command may need, never the start-up.
HEAVY = ("numpy", "pydantic", "pydantic_settings", "yaml", "torch", "transformers", "pandas")
# Modules loaded by `testaug --version` (240 here; 687 when every command was imported).
MODULE_BUDGET = 350

PROBE = """
import json, sys
sys.argv = ["testaug", *json.loads(sys.argv[1])]
try:
    from testaug.cli import main
    main()
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def modules_after(*args: str) -> set[str]:
    """The modules a fresh interpreter holds after `testaug ARGS`."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize("args", [("--version",), ("--help",)], ids=" ".join)
def test_the_root_imports_no_command_and_no_heavy_library(args):
    modules = modules_after(*args)
    own = {name for name in modules if name.split(".")[0] == "testaug"}
    assert own == ROOT_MODULES
    assert not [name for name in modules if name.split(".")[0] in HEAVY]
    assert len(modules) <= MODULE_BUDGET


def test_a_command_imports_its_own_door_alone():
    modules = modules_after("lexicon", "install-wordnet", "--help")
    assert "testaug.cli.editor" in modules
    others = ("run", "evaluate", "generate", "tree", "rankers", "annotate", "flows", "suite")
    assert not [name for name in others if f"testaug.cli.{name}" in modules]
    assert "torch" not in modules and "transformers" not in modules
