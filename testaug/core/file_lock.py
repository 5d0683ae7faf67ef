"""One writer at a time for a shared file: a lock beside it, held while a process reads,
changes and replaces the file, so that two testaug processes never lose each other's work.

The lock is a hidden file `.<name>.lock` next to the file, locked with `flock` where the
system has it (the lock dies with its process) and created exclusively elsewhere. It is
removed when let go. A second writer waits; past the timeout it fails with a `FileBusy`
that names the file. A killed writer leaves its empty lock file behind:
`remove_abandoned_lock` removes one that no process holds.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from testaug.core.errors import InputError, Problem, TestAugError

try:
    import fcntl
except ImportError:  # pragma: no cover - not on this system
    fcntl = None  # type: ignore[assignment]

DEFAULT_TIMEOUT = 120.0
"""How long a writer waits for another one to finish, in seconds: generous, as a write
holds the lock for the moment it takes to read and replace one file."""
_POLL = 0.02
_POLL_MAX = 0.2

_held: dict[tuple[int, str], int] = {}  # (thread, lock file) -> depth, for nested use


class FileBusy(TestAugError):
    """Another process held a file's lock for longer than a writer would wait."""


def lock_path(path: Path | str) -> Path:
    """The lock file of `path`: `.<name>.lock` in the same folder."""
    path = Path(path)
    return path.with_name(f".{path.name}.lock")


@contextmanager
def locked(path: Path | str, *, timeout: float = DEFAULT_TIMEOUT) -> Iterator[Path]:
    """Hold the write lock of `path` for the `with` block (the folder must exist). Waits up
    to `timeout` seconds while another process holds it, then raises FileBusy. The same
    thread may take the lock again inside the block."""
    lock = lock_path(path)
    key = (threading.get_ident(), os.path.realpath(lock))
    if key in _held:
        _held[key] += 1
        try:
            yield lock
        finally:
            _held[key] -= 1
        return
    fd = _acquire(Path(path), lock, timeout)
    _held[key] = 1
    try:
        yield lock
    finally:
        del _held[key]
        _release(lock, fd)


def _busy(path: Path, lock: Path, timeout: float) -> FileBusy:
    note = "" if fcntl is not None else f" (if no testaug process is running, remove {lock})"
    return FileBusy(
        f"{path}: another testaug process is writing this file; waited {timeout:g} s for "
        f"it to finish{note}; try again when it is done"
    )


def _acquire(path: Path, lock: Path, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    pause = _POLL
    while True:
        try:
            fd = _try_lock(lock)
        except OSError as exc:  # no folder, or one this user cannot write to
            reason = exc.strerror or type(exc).__name__
            raise InputError(
                Problem(f"cannot lock it for writing ({reason}: {lock})", path)
            ) from exc
        if fd is not None:
            return fd
        if time.monotonic() >= deadline:
            raise _busy(path, lock, timeout)
        time.sleep(pause)
        pause = min(pause * 2, _POLL_MAX)


def _try_lock(lock: Path) -> int | None:
    """The descriptor of the locked lock file, or None while another process holds it."""
    if fcntl is None:
        try:
            return os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)
        except FileExistsError:
            return None
    fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    # The holder removes the lock file as it lets go: a file locked after that is no lock.
    try:
        mine, there = os.fstat(fd), os.stat(lock)
        current = (mine.st_dev, mine.st_ino) == (there.st_dev, there.st_ino)
    except FileNotFoundError:
        current = False
    if current:
        return fd
    os.close(fd)
    return _try_lock(lock)


def _release(lock: Path, fd: int) -> None:
    try:
        lock.unlink(missing_ok=True)
    finally:
        os.close(fd)


def remove_abandoned_lock(lock: Path) -> bool:
    """Remove a lock file that a killed writer left: empty and (where `flock` tells) held by
    no process. True when removed. Without `flock` nothing tells whether a process holds
    it, so the caller's rule (its age) decides alone."""
    if fcntl is None:
        try:
            if lock.stat().st_size:
                return False
            lock.unlink()
        except OSError:
            return False
        return True
    try:
        fd = os.open(lock, os.O_RDWR)
    except OSError:  # gone already, or not this user's
        return False
    try:
        if os.fstat(fd).st_size:
            return False  # not a lock file of testaug's
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a writer holds it
            return False
        try:
            mine, there = os.fstat(fd), os.stat(lock)
        except FileNotFoundError:
            return False
        if (mine.st_dev, mine.st_ino) != (there.st_dev, there.st_ino):
            return False  # let go and made again since it was opened
        lock.unlink()
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
