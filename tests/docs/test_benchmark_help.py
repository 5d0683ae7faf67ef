"""Every benchmark script named in benchmarks/README.md answers --help: the first thing a
reader of that page types."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).parents[2] / "benchmarks"
NAMED = sorted(set(re.findall(r"`benchmarks/(\w+\.py)`", (BENCHMARKS / "README.md").read_text())))


def test_the_benchmarks_page_names_scripts_that_exist():
    assert len(NAMED) >= 10
    assert all((BENCHMARKS / script).is_file() for script in NAMED)


@pytest.mark.parametrize("script", NAMED)
def test_benchmark_script_prints_its_help(script):
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--help"],
        capture_output=True,
        text=True,
        cwd=BENCHMARKS.parent,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout
