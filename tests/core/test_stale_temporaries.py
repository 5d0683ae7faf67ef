"""Temporary files of the atomic writers and lock files that a killed write left behind are
removed once stale; fresh ones, held locks (a write in progress) and other files stay."""

from __future__ import annotations

import os
import signal
import time

from testaug.core import file_lock
from testaug.core.file_lock import lock_path, locked
from testaug.core.runs import remove_stale_temporaries
from tests.cli_runner import HANG_TIMEOUT
from tests.core.concurrent_processes import CONTEXT

HEX = "0123456789abcdef0123456789abcdef"


def aged(path, hours: float, size: int = 10):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    then = time.time() - hours * 3600
    os.utime(path, (then, then))
    return path


def test_stale_temporaries_are_removed_and_counted_with_their_bytes(tmp_path):
    stale = aged(tmp_path / f".candidates.jsonl.{HEX}.tmp", 2, size=1234)
    assert remove_stale_temporaries(tmp_path) == (1, 1234)
    assert not stale.exists()


def test_a_fresh_temporary_and_files_not_of_the_writers_pattern_stay(tmp_path):
    fresh = aged(tmp_path / f".ranked.jsonl.{HEX}.tmp", 0)
    other = aged(tmp_path / ".notes.tmp", 5)
    named = aged(tmp_path / f"ranked.jsonl.{HEX}.tmp", 5)
    output = aged(tmp_path / "candidates.jsonl", 5)
    assert remove_stale_temporaries(tmp_path) == (0, 0)
    assert all(p.exists() for p in (fresh, other, named, output))


def test_subfolders_are_cleaned_only_when_recursive(tmp_path):
    nested = aged(tmp_path / "ensemble" / "member" / f".model.json.{HEX}.tmp", 3, size=7)
    assert remove_stale_temporaries(tmp_path) == (0, 0)
    assert remove_stale_temporaries(tmp_path, recursive=True) == (1, 7)
    assert not nested.exists()


def test_a_folder_that_does_not_exist_has_nothing_to_remove(tmp_path):
    assert remove_stale_temporaries(tmp_path / "missing") == (0, 0)


def test_a_stale_empty_lock_file_no_one_holds_is_removed(tmp_path):
    lock = aged(tmp_path / ".tree.jsonl.lock", 2, size=0)
    assert remove_stale_temporaries(tmp_path) == (1, 0)
    assert not lock.exists()


def test_a_held_lock_a_fresh_one_and_one_with_content_stay(tmp_path):
    target = tmp_path / "tree.jsonl"
    with locked(target) as held:
        aged(held, 2, size=0)
        fresh = aged(tmp_path / ".verdicts.jsonl.lock", 0, size=0)
        other = aged(tmp_path / ".notes.lock", 5, size=4)  # not a lock file of testaug's
        assert remove_stale_temporaries(tmp_path) == (0, 0)
        assert all(p.exists() for p in (held, fresh, other))
    assert not lock_path(target).exists()  # let go as usual


def test_a_lock_file_a_killed_writer_left_is_removed_once_stale(tmp_path):
    target = tmp_path / "lexicons.yaml"
    child = CONTEXT.Process(target=_hold_and_die, args=(target,))
    child.start()
    child.join(HANG_TIMEOUT)
    left = lock_path(target)
    assert child.exitcode == -signal.SIGKILL and left.exists()
    aged(left, 2, size=0)
    assert remove_stale_temporaries(tmp_path) == (1, 0)
    assert not left.exists()
    with locked(target, timeout=0):  # and the file can be locked again at once
        pass


def _hold_and_die(target):
    with locked(target):
        os.kill(os.getpid(), signal.SIGKILL)


def test_without_flock_a_lock_file_is_judged_by_its_age_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(file_lock, "fcntl", None)
    stale = aged(tmp_path / ".tree.jsonl.lock", 2, size=0)
    fresh = aged(tmp_path / ".verdicts.jsonl.lock", 0, size=0)  # perhaps a writer's
    assert remove_stale_temporaries(tmp_path) == (1, 0)
    assert not stale.exists() and fresh.exists()
