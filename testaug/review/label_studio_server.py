"""A local Label Studio server for one user: installed in its own virtual environment
(it pins packages that clash with testaug's), bound to loopback, data in a given folder."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from pydantic import SecretStr

from testaug.core.errors import TestAugError

logger = logging.getLogger(__name__)

LABEL_STUDIO_VERSION = "1.23.2"
HOST = "127.0.0.1"


class ServerError(TestAugError):
    """The local Label Studio server could not be installed or started."""


def server_venv(cache_dir: Path) -> Path:
    """Where testaug installs Label Studio: its own venv under the cache directory."""
    return cache_dir / "label-studio" / "venv"


def server_executable(venv: Path) -> Path:
    """The `label-studio` command inside a venv."""
    return venv / ("Scripts" if os.name == "nt" else "bin") / "label-studio"


def install_server(
    venv: Path, *, version: str = LABEL_STUDIO_VERSION, python: str = sys.executable
) -> Path:
    """Create the venv and pip-install Label Studio into it (skipped when already there)."""
    executable = server_executable(venv)
    if executable.exists():
        return executable
    logger.info("installing label-studio==%s into %s (about 2 minutes)", version, venv)
    pip = venv / ("Scripts" if os.name == "nt" else "bin") / "pip"
    for step in (
        [python, "-m", "venv", str(venv)],
        [str(pip), "install", "-q", f"label-studio=={version}"],
    ):
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
            raise ServerError(f"`{' '.join(step)}` failed:\n" + "\n".join(tail))
    return executable


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def has_database(data_dir: Path) -> bool:
    """Whether a data directory already holds a Label Studio database (and its users)."""
    return (data_dir / "label_studio.sqlite3").exists()


class LocalServer:
    """One Label Studio process on 127.0.0.1 with its data in `data_dir`.

    On a fresh data directory the server creates the user `username` with the API key
    `api_key`; on a used one the key must be the one it was created with.
    """

    def __init__(
        self,
        executable: Path,
        data_dir: Path,
        *,
        api_key: SecretStr,
        username: str = "admin@localhost.localdomain",
        password: SecretStr | None = None,
        port: int = 8080,
    ) -> None:
        self.executable = executable
        self.data_dir = data_dir
        self.port = port
        self.username = username
        self._api_key = api_key
        self._password = password or api_key
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def log_path(self) -> Path:
        """The server's own output (it never holds the API key)."""
        return self.data_dir / "server.log"

    def start(self) -> None:
        """Start the server process; returns at once (see `wait_ready`)."""
        if not self.executable.exists():
            raise ServerError(
                f"Label Studio is not installed at {self.executable}; "
                "run `testaug review install-server`"
            )
        self.data_dir.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "LABEL_STUDIO_BASE_DATA_DIR": str(self.data_dir),
            "LATEST_VERSION_CHECK": "false",
            "LABEL_STUDIO_USERNAME": self.username,
            "LABEL_STUDIO_PASSWORD": self._password.get_secret_value(),
            "LABEL_STUDIO_USER_TOKEN": self._api_key.get_secret_value(),
            "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true",
            "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true",
        }
        command = [str(self.executable), "start", "--no-browser", "--internal-host", HOST]
        command += ["--port", str(self.port)]
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(
                command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )

    def wait_ready(
        self, timeout: float = 180.0, tick: Callable[[float], None] | None = None
    ) -> None:
        """Wait until the server answers its health check, or raise with its last log lines."""
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            if self._process is not None and self._process.poll() is not None:
                raise ServerError(
                    f"Label Studio exited with code {self._process.returncode}:\n{self._log_tail()}"
                )
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if tick is not None:
                tick(time.monotonic() - started)
            time.sleep(1.0)
        raise ServerError(
            f"Label Studio did not answer within {timeout:.0f} s:\n{self._log_tail()}"
        )

    def stop(self, timeout: float = 20.0) -> None:
        """Stop the server process (and the workers it started)."""
        if self._process is None or self._process.poll() is not None:
            return
        os.killpg(self._process.pid, 15)
        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self._process.pid, 9)
            self._process.wait(timeout)

    def wait(self) -> int:
        """Block until the server exits; its exit code."""
        return 0 if self._process is None else self._process.wait()

    def _log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no server log)"
