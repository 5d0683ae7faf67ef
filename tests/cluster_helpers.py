"""What the scale-out tests share: background processes on 127.0.0.1 (a Dask scheduler and
its workers, a Prefect server and worker) started in their own session and killed as a
group, waiting for a port or an HTTP health check, a small trained ranker ensemble, and
the digests of a run's outputs."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from testaug.steps.contract import file_sha256

# What a manifest says about the run itself rather than its work: two runs of the same work
# (in folders of the same name) must agree on everything else they wrote, byte for byte.
RUN_IDENTITY = frozenset({"run_id", "created_at", "run_dir", "dask"})


@dataclass
class Background:
    """A process started by a test, with its output in a log file."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def tail(self, chars: int = 3000) -> str:
        """The end of the process's output, for failure messages."""
        return f"--- {self.name} ({self.log}) ---\n{self.log.read_text(errors='replace')[-chars:]}"

    def stop(self, timeout: float = 20) -> None:
        """SIGTERM to the process group, SIGKILL if it is still there after `timeout`."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=timeout)
            except ProcessLookupError:
                pass


def start(
    name: str, args: Sequence[str], env: Mapping[str, str], logs: Path, cwd: Path | None = None
) -> Background:
    """Start `args` in a new session (so that stop() ends its children too), output to
    logs/<name>.log."""
    log = logs / f"{name}.log"
    with open(log, "wb") as sink:
        process = subprocess.Popen(
            list(args),
            env=dict(env),
            cwd=cwd,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return Background(name, process, log)


def wait_until(
    ready: Callable[[], bool], watched: Sequence[Background], timeout: float, what: str
) -> None:
    """Poll `ready` every 0.5 s; fail with the processes' logs if one of them exits or
    `timeout` seconds pass first."""
    deadline = time.monotonic() + timeout
    while not ready():
        for background in watched:
            if background.process.poll() is not None:
                raise RuntimeError(
                    f"{background.name} exited while waiting for {what}\n" + background.tail()
                )
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"no {what} after {timeout:.0f} s\n" + "\n".join(b.tail() for b in watched)
            )
        time.sleep(0.5)


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something accepts TCP connections on host:port."""
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def http_ok(url: str) -> bool:
    """Whether GET url answers 200."""
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


# Files whose records carry the time they were written (a verdict's `created_at`).
TIMESTAMPED = frozenset({"annotations.jsonl"})


def run_outputs(run_dir: Path) -> dict[str, object]:
    """Every file a run wrote, by name relative to the run folder: a manifest as its JSON
    less RUN_IDENTITY, a timestamped file as its records less `created_at`, any other
    file as its SHA-256."""
    return {path.relative_to(run_dir).as_posix(): _output(path) for path in _files(run_dir)}


def _files(run_dir: Path) -> list[Path]:
    return [path for path in sorted(run_dir.rglob("*")) if path.is_file()]


def _output(path: Path) -> object:
    if path.name.endswith("manifest.json"):
        return _without_identity(json.loads(path.read_text(encoding="utf-8")))
    if path.name in TIMESTAMPED:
        lines = path.read_text(encoding="utf-8").splitlines()
        return [{k: v for k, v in json.loads(line).items() if k != "created_at"} for line in lines]
    return file_sha256(path)


def _without_identity(value: object) -> object:
    if isinstance(value, dict):
        return {k: _without_identity(v) for k, v in value.items() if k not in RUN_IDENTITY}
    return value
