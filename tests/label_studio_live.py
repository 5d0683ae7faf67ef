"""A real Label Studio server for the tests marked `label_studio` (one per session, see
the `label_studio_server` fixture in tests/conftest.py), and the API key it accepts."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from tests.cli_runner import HANG_TIMEOUT

API_KEY = "0123456789abcdef0123456789abcdef01234567"


def running_label_studio(data_dir: Path) -> Iterator[object]:
    """Start the server installed by `testaug review install-server` on a free port of
    127.0.0.1, yield it once it answers, stop it afterwards."""
    from testaug.core.settings import Settings
    from testaug.review.label_studio_server import (
        LocalServer,
        free_port,
        server_executable,
        server_venv,
    )

    executable = server_executable(server_venv(Settings().cache_dir))
    if not executable.exists():
        message = f"Label Studio is not installed ({executable}): testaug review install-server"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    running = LocalServer(executable, data_dir, api_key=SecretStr(API_KEY), port=free_port())
    running.start()
    try:
        running.wait_ready(timeout=HANG_TIMEOUT)
        yield running
    finally:
        running.stop()
