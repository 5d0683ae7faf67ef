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


@pytest.mark.skipif(file_lock.fcntl is None, reason="the re-check guards flock's race only")
def test_a_lock_file_let_go_between_open_and_flock_is_not_taken_while_its_successor_is_held(
    tmp_path, monkeypatch
):
    """The race the re-check after `flock` guards, driven step by step: a writer opens the
    lock file; before it calls flock, the holder lets go (unlinks the file and closes it)
    and a third writer makes a new lock file and holds it. The writer's flock on the old,
    unlinked file succeeds; only the re-check tells it that it holds no lock."""
    target = tmp_path / "tree.jsonl"
    lock = lock_path(target)
    real_flock = file_lock.fcntl.flock
    holder = os.open(lock, os.O_CREAT | os.O_RDWR, 0o666)
    real_flock(holder, file_lock.fcntl.LOCK_EX | file_lock.fcntl.LOCK_NB)
    successor: list[int] = []

    def holder_lets_go_and_a_successor_takes_a_new_lock_first(fd, operation):
        if not successor:
            lock.unlink()
            os.close(holder)
            successor.append(os.open(lock, os.O_CREAT | os.O_RDWR, 0o666))
            real_flock(successor[0], file_lock.fcntl.LOCK_EX | file_lock.fcntl.LOCK_NB)
        return real_flock(fd, operation)

    monkeypatch.setattr(
        file_lock.fcntl, "flock", holder_lets_go_and_a_successor_takes_a_new_lock_first
    )
    with pytest.raises(FileBusy), locked(target, timeout=0):
        pytest.fail("took the lock while the successor holds it")
    assert successor, "the interleaving did not happen"

    lock.unlink()  # the successor lets go: the lock is free at once
    os.close(successor[0])
    with locked(target, timeout=0) as held:
        assert held == lock and lock.exists()
    assert not lock.exists()
