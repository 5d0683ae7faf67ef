"""Run the `testaug` command in a folder with its own cache: in process through Typer's
CliRunner (option parsing, exit codes, output), or as a subprocess for the few end-to-end
runs that need a process of their own (the main job, Prefect, kills)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class CliResult:
    """What a run of the command left: its exit code and its two output streams."""

    returncode: int
    stdout: str
    stderr: str


def run_testaug(
    cwd: Path | None,
    *args: str,
    input: str | None = None,
    env: Mapping[str, str] | None = None,
    without_env: Iterable[str] = (),
    timeout: float | None = None,
) -> CliResult:
    """`testaug ARGS` in process, in `cwd`, with TESTAUG_CACHE_DIR=cwd/cache (when `cwd` is
    given), plus `env` and minus the variables named in `without_env`.

    With `timeout`, a command still running after that many seconds fails the test with
    `TimeoutError` (the command runs in a thread: an in-process command cannot be killed,
    so it is left to finish in the background). Without one, the per-test timeout
    (pytest-timeout, set in pyproject.toml) bounds a hang.

    An exception that escapes the command is written to stderr as a traceback with exit
    code 1, as the interpreter does for a subprocess, so "no traceback" checks still bite.
    """
    from typer.testing import CliRunner

    from testaug.cli import LOGGED_PACKAGES, app

    variables: dict[str, str | None] = {name: None for name in without_env}
    if cwd is not None:
        variables["TESTAUG_CACHE_DIR"] = str(cwd / "cache")
    variables.update(env or {})
    loggers = [logging.getLogger(name) for name in LOGGED_PACKAGES]
    saved = [(logger.handlers[:], logger.level, logger.propagate) for logger in loggers]
    before = Path.cwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        result = _invoke(
            lambda: CliRunner().invoke(app, list(args), input=input, env=variables), timeout
        )
        if result is None:
            raise TimeoutError(f"testaug {' '.join(args)} still ran after {timeout} s")
    finally:
        os.chdir(before)
        for logger, (handlers, level, propagate) in zip(loggers, saved, strict=True):
            logger.handlers[:], logger.level, logger.propagate = handlers, level, propagate
    stderr = result.stderr
    code = result.exit_code
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        error = result.exception
        stderr += "".join(traceback.format_exception(type(error), error, error.__traceback__))
        code = 1
    return CliResult(code, result.stdout, stderr)


def _invoke(call: Callable[[], T], timeout: float | None) -> T | None:
    """`call()`, or None when it is still running after `timeout` seconds."""
    if timeout is None:
        return call()
    done: list[T] = []
    worker = threading.Thread(target=lambda: done.append(call()), daemon=True)
    worker.start()
    worker.join(timeout)
    return done[0] if done else None


# How long a command or a server may take before a test calls it hung. Generous on purpose:
# it is a safety net against hangs, not a speed check, and a loaded machine is slow.
HANG_TIMEOUT = 1500.0


def spawn_testaug(
    cwd: Path,
    *args: str,
    input: str | None = None,
    env: Mapping[str, str] | None = None,
    without_env: Iterable[str] = (),
    timeout: float = HANG_TIMEOUT,
) -> subprocess.CompletedProcess[str]:
    """`python -m testaug ARGS` as a subprocess in `cwd`, otherwise as `run_testaug`."""
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
