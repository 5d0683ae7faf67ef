"""The documentation site builds with `mkdocs build --strict`: every page in the nav, every
link and anchor resolving, the included benchmarks page found, offline."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_runner import HANG_TIMEOUT

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("mkdocs", reason="mkdocs is in the dev extra")
pytest.importorskip("material", reason="mkdocs-material is in the dev extra")


def test_the_site_builds_strictly(tmp_path: Path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=HANG_TIMEOUT,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").is_file()
    assert "Targets at a glance" in (tmp_path / "site" / "benchmarks" / "index.html").read_text(
        encoding="utf-8"
    )
