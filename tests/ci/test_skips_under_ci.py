"""Under CI (`.ci/run` sets CI=true), a skipped test fails unless tests/ci_skips.py lists its
reason with why it may skip; a developer's run without CI skips and says so (`-ra`). Each
case runs pytest on a small test folder whose conftest installs the same hooks."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.ci_skips import ALLOWED_UNDER_CI
from tests.cli_runner import HANG_TIMEOUT

ROOT = Path(__file__).resolve().parents[2]

TESTS = """
import pytest

needs_the_browser = pytest.mark.skipif(True, reason="chromium is not installed")

@needs_the_browser
def test_the_page_renders():
    pass

@pytest.mark.skipif(True, reason="needs a pseudo-terminal")
def test_a_tty():
    pass

def test_plain():
    pass
"""
MISSING_PACKAGE = """
import pytest

pytest.importorskip("no_such_package_for_ci_skips")

def test_never_collected():
    pass
"""


def run_pytest(folder: Path, files: dict[str, str], ci: str | None) -> subprocess.CompletedProcess:
    folder.mkdir()
    (folder / "conftest.py").write_text(
        "from tests.ci_skips import (pytest_collectreport, pytest_configure,\n"
        "    pytest_runtest_makereport, pytest_sessionfinish, pytest_terminal_summary)\n"
    )
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text))
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = str(ROOT)
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-ra", "-p", "no:cacheprovider", str(folder)],
        capture_output=True,
        text=True,
        cwd=folder,
        env=env,
        timeout=HANG_TIMEOUT,
    )


FILES = {"test_page.py": TESTS, "test_pkg.py": MISSING_PACKAGE}


def test_under_ci_a_skipped_component_fails_and_a_listed_reason_still_skips(tmp_path):
    done = run_pytest(tmp_path / "t", FILES, ci="true")
    assert done.returncode == 1, done.stdout
    # the browser test fails as it is set up; the pseudo-terminal one may skip
    assert "1 passed, 2 skipped, 1 error" in done.stdout  # the module: listed below
    assert "skipped under CI: chromium is not installed" in done.stdout
    assert "SKIPPED [1] test_page.py" in done.stdout and "needs a pseudo-terminal" in done.stdout
    # a module skipped as it is collected fails the session, listed at the end
    assert "skipped under CI (the session fails)" in done.stdout
    assert "test_pkg.py: could not import 'no_such_package_for_ci_skips'" in done.stdout


def test_without_ci_the_same_tests_skip_and_the_summary_names_each(tmp_path):
    done = run_pytest(tmp_path / "t", FILES, ci=None)
    assert done.returncode == 0, done.stdout
    assert "1 passed, 3 skipped" in done.stdout
    assert "chromium is not installed" in done.stdout  # the -ra summary
    assert "could not import 'no_such_package_for_ci_skips'" in done.stdout


@pytest.mark.parametrize(
    ("value", "ci"), [("true", True), ("1", True), ("", False), ("false", False), ("0", False)]
)
def test_ci_counts_as_set_unless_empty_or_an_explicit_no(monkeypatch, value, ci):
    from tests.ci_skips import under_ci

    monkeypatch.setenv("CI", value)
    assert under_ci() is ci


def test_every_listed_exception_says_why():
    assert all(len(why.split()) >= 5 for why in ALLOWED_UNDER_CI.values())


def test_the_ci_script_sets_ci_before_it_runs_the_tests():
    script = (ROOT / ".ci" / "run").read_text()
    assert script.index("export CI=true") < script.index('bash -c "$tests"')


@pytest.mark.parametrize("reason", ["chromium is not installed", "Debian's wordnet-base"])
def test_a_component_reason_is_not_allowed(reason):
    from tests.ci_skips import allowed

    assert not allowed(reason)
