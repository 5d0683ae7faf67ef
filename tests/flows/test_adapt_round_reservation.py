"""Round numbers of the adapt flow, reserved before a round is suggested: two runs at once
on one work folder get two numbers, and a round left without suggestions is taken again."""

from __future__ import annotations

from testaug.steps.suggestion_review import (
    SUGGESTIONS_FILE,
    reserved_round,
    round_folder,
    round_folders,
)
from tests.cli_runner import HANG_TIMEOUT
from tests.core.concurrent_processes import CONTEXT, run_together


def _suggest_holding(work_dir, both_in):
    """Reserve a round, wait until the other run holds one too, then write its suggestions."""
    with reserved_round(work_dir) as number:
        both_in.wait(HANG_TIMEOUT)
        (round_folder(work_dir, number) / SUGGESTIONS_FILE).write_text("", encoding="utf-8")
    return number


def test_two_runs_at_once_reserve_two_different_rounds(tmp_path):
    work_dir = tmp_path / "tree.adapt"
    both_in = CONTEXT.Barrier(2)
    numbers = run_together(_suggest_holding, [(work_dir, both_in)] * 2)
    assert sorted(numbers) == [1, 2]
    assert [folder.name for folder in round_folders(work_dir)] == ["round-001", "round-002"]


def test_the_next_round_follows_the_last_one_with_suggestions(tmp_path):
    for number in (1, 2):
        folder = round_folder(tmp_path, number)
        folder.mkdir()
        (folder / SUGGESTIONS_FILE).write_text("", encoding="utf-8")
    with reserved_round(tmp_path) as number:
        assert number == 3
        assert round_folder(tmp_path, 3).is_dir()


def test_a_round_left_without_suggestions_by_a_stopped_run_is_taken_again(tmp_path):
    round_folder(tmp_path, 1).mkdir()
    with reserved_round(tmp_path) as number:
        assert number == 1
    assert sorted(p.name for p in round_folder(tmp_path, 1).iterdir()) == []
