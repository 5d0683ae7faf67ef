"""Temporary files of the atomic writers that a killed write left behind are removed once
stale; fresh ones (a write in progress) and other files stay."""

from __future__ import annotations

import os
import time

from testaug.core.runs import remove_stale_temporaries

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
