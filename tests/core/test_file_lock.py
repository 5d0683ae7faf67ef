"""The write lock of a shared file: writers in several processes take turns and lose no
update; a writer that would wait too long fails naming the file; a lock dies with its
process; nothing is left beside the file."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from testaug.core import file_lock
from testaug.core.errors import InputError
from testaug.core.file_lock import FileBusy, lock_path, locked
from tests.cli_runner import HANG_TIMEOUT
from tests.core.concurrent_processes import CONTEXT, run_together

ROUNDS = 40


def _count_up(path, times):
    """Add one to the number in `path`, `times` times, each a locked read and write."""
    for _ in range(times):
        with locked(path):
            value = int(path.read_text(encoding="utf-8"))
            tmp = path.with_name(f"{path.name}.{os.getpid()}.new")
            tmp.write_text(str(value + 1), encoding="utf-8")
            os.replace(tmp, path)
    return times


def test_writers_in_three_processes_lose_no_update(tmp_path):
    path = tmp_path / "count.txt"
    path.write_text("0", encoding="utf-8")
    run_together(_count_up, [(path, ROUNDS)] * 3)
    assert int(path.read_text(encoding="utf-8")) == 3 * ROUNDS
    assert sorted(p.name for p in tmp_path.iterdir()) == ["count.txt"]


def _hold(path, held, release):
    with locked(path):
        with path.open("a", encoding="utf-8") as out:
            out.write("first\n")
        held.set()
        release.wait(HANG_TIMEOUT)


def test_a_second_writer_fails_naming_the_file_or_waits_its_turn(tmp_path):
    path = tmp_path / "lexicons.yaml"
    path.write_text("", encoding="utf-8")
    held, release = CONTEXT.Event(), CONTEXT.Event()
    holder = CONTEXT.Process(target=_hold, args=(path, held, release))
    holder.start()
    try:
        assert held.wait(HANG_TIMEOUT)
        busy = r"lexicons\.yaml: another testaug process is writing"
        with pytest.raises(FileBusy, match=busy), locked(path, timeout=0):
            pass
        release.set()
        with locked(path, timeout=HANG_TIMEOUT), path.open("a", encoding="utf-8") as out:
            out.write("second\n")
    finally:
        release.set()
        holder.join(HANG_TIMEOUT)
    assert path.read_text(encoding="utf-8") == "first\nsecond\n"


def test_the_lock_of_a_killed_process_is_free_again(tmp_path):
    path = tmp_path / "tree.jsonl"
    held, release = CONTEXT.Event(), CONTEXT.Event()
    holder = CONTEXT.Process(target=_hold, args=(path, held, release))
    holder.start()
    assert held.wait(HANG_TIMEOUT)
    os.kill(holder.pid, signal.SIGKILL)
    holder.join(HANG_TIMEOUT)
    with locked(path, timeout=HANG_TIMEOUT):
        assert lock_path(path).exists()
    assert not lock_path(path).exists()


def test_the_same_thread_may_take_the_lock_again_but_another_thread_waits(tmp_path):
    path = tmp_path / "verdicts.jsonl"
    seen = []
    with locked(path):
        with locked(path, timeout=0):
            pass

        def other():
            try:
                with locked(path, timeout=0):
                    seen.append("got it")
            except FileBusy:
                seen.append("busy")

        worker = threading.Thread(target=other)
        worker.start()
        worker.join(HANG_TIMEOUT)
    assert seen == ["busy"]


def test_a_file_in_a_missing_folder_is_an_input_error_naming_it(tmp_path):
    path = tmp_path / "nowhere" / "tree.jsonl"
    missing = r"nowhere/tree\.jsonl: cannot lock it for writing"
    with pytest.raises(InputError, match=missing), locked(path):
        pass


def test_without_flock_a_lock_file_left_behind_is_named_in_the_error(tmp_path, monkeypatch):
    monkeypatch.setattr(file_lock, "fcntl", None)
    path = tmp_path / "lexicons.yaml"
    with locked(path):
        assert lock_path(path).exists()
    assert not lock_path(path).exists()
    lock_path(path).write_text("", encoding="utf-8")  # as a killed writer leaves it
    with pytest.raises(FileBusy, match=r"remove .*\.lexicons\.yaml\.lock"), locked(path, timeout=0):
        pass


def test_without_flock_writers_in_two_processes_lose_no_update(tmp_path, monkeypatch):
    monkeypatch.setattr(file_lock, "fcntl", None)
    path = tmp_path / "count.txt"
    path.write_text("0", encoding="utf-8")
    run_together(_count_up, [(path, ROUNDS)] * 2)
    assert int(path.read_text(encoding="utf-8")) == 2 * ROUNDS
