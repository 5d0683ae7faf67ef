"""The test helper that runs the command in process: its timeout applies."""

from __future__ import annotations

import threading

import pytest
from typer.testing import CliRunner

from tests.cli_runner import HANG_TIMEOUT, run_testaug


def test_a_command_still_running_after_the_timeout_fails_with_timeout_error(tmp_path, monkeypatch):
    release = threading.Event()
    monkeypatch.setattr(CliRunner, "invoke", lambda *args, **kwargs: release.wait(HANG_TIMEOUT))
    try:
        with pytest.raises(TimeoutError, match=r"testaug suite validate still ran after 0\.1 s"):
            run_testaug(tmp_path, "suite", "validate", timeout=0.1)
    finally:
        release.set()  # the blocked command ends in the background


def test_a_command_that_ends_within_the_timeout_gives_its_result(tmp_path):
    done = run_testaug(tmp_path, "--help", timeout=HANG_TIMEOUT)
    assert done.returncode == 0 and "Usage" in done.stdout
    assert run_testaug(tmp_path, "no-such-command", timeout=HANG_TIMEOUT).returncode == 2
