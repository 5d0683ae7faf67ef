"""Skips under CI: with the CI variable set (`.ci/run` sets it), a skipped test is a failure
unless its reason is one of ALLOWED_UNDER_CI, each with why it may skip there. A skip of a
real component (the browser, WordNet, Label Studio, a package or model the set-up installs)
means the install step did not do its work, and must not pass unseen.

A test skipped as it runs (a skip mark, a fixture, `pytest.skip`) is reported failed; a
module skipped as it is collected (`pytest.importorskip` at its top) is listed at the end
and fails the session. tests/conftest.py installs these hooks.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

# A skip reason (a part of it) that may stand under CI, and why.
ALLOWED_UNDER_CI = {
    "needs a pseudo-terminal": "skips on Windows only, which has none; CI runs on Debian",
    "reads peak memory from /proc": "skips without /proc only; CI runs on Linux",
    "the re-check guards flock's race only": "skips without flock only; Debian has it",
    "LABEL_STUDIO_API_KEY is set in this environment": (
        "a key the machine's environment carries, not a missing component: the key-free "
        "error cannot be seen there"
    ),
}
FORBIDDEN = "skipped under CI"
_collection_skips = pytest.StashKey[list[str]]()


def under_ci() -> bool:
    """Whether the CI variable is set to something other than an explicit no."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def skip_reason(report: Any) -> str:
    """The reason a skipped report gives (its longrepr is (path, line, "Skipped: ...")."""
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ")


def allowed(reason: str) -> bool:
    return any(part in reason for part in ALLOWED_UNDER_CI)


def failure_text(reason: str) -> str:
    return (
        f"{FORBIDDEN}: {reason}. Under CI a component the set-up installs must be there: "
        "install it (README's set-up block), or add the reason to ALLOWED_UNDER_CI in "
        "tests/ci_skips.py with why it may skip"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and under_ci() and not hasattr(report, "wasxfail"):
        reason = skip_reason(report)
        if not allowed(reason):
            report.outcome = "failed"
            report.longrepr = failure_text(reason)


def pytest_configure(config: pytest.Config) -> None:
    _CONFIG[:] = [config]


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.skipped and under_ci():
        reason = skip_reason(report)
        if not allowed(reason):
            _skips().append(f"{report.nodeid or 'a module'}: {reason}")


_CONFIG: list[pytest.Config] = []


def _skips() -> list[str]:
    """The modules skipped as they were collected, under CI, for reasons not allowed."""
    return _CONFIG[0].stash.setdefault(_collection_skips, [])


def pytest_terminal_summary(terminalreporter: Any) -> None:
    skipped = _skips()
    if skipped:
        terminalreporter.section(f"{FORBIDDEN} (the session fails)", red=True, bold=True)
        for line in skipped:
            terminalreporter.line(failure_text(line), red=True)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _skips() and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
