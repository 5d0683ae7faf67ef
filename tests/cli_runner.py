"""Run the `testaug` command as a user does: a subprocess in a folder, its own cache."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path


def run_testaug(
    cwd: Path,
    *args: str,
    input: str | None = None,
    env: Mapping[str, str] | None = None,
    without_env: Iterable[str] = (),
    timeout: float = 240,
) -> subprocess.CompletedProcess[str]:
    """`python -m testaug ARGS` in `cwd` with TESTAUG_CACHE_DIR=cwd/cache, plus `env` and
    minus the variables named in `without_env`; output captured as text."""
    drop = set(without_env)
    base = {k: v for k, v in os.environ.items() if k not in drop}
    return subprocess.run(
        [sys.executable, "-m", "testaug", *args],
        input=input,
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**base, "TESTAUG_CACHE_DIR": str(cwd / "cache"), **(env or {})},
        timeout=timeout,
    )
