"""`testaug annotate terminal|merge` run as a user runs them, keys piped into stdin."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from testaug.jsonl import read_jsonl
from testaug.records import Annotation, TestCase
from tests.cli_runner import run_testaug
from tests.tiny_models import write_ranked_run


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """ranked.jsonl with 10 candidates (rank i+1 is "Case i") and the seed cases.jsonl."""
    return write_ranked_run(tmp_path, [f"Case {i} is nice." for i in range(10)])


def annotate(run_dir: Path, keys: str, *args: str) -> subprocess.CompletedProcess:
    return run_testaug(run_dir, "annotate", *args, input=keys, timeout=120)


def people(run_dir: Path) -> list[Annotation]:
    records = read_jsonl(run_dir / "annotations.jsonl", Annotation)
    return [a for a in records if a.origin == "terminal"]


def test_terminal_saves_each_key_press_and_resumes_where_it_stopped(run_dir):
    first = annotate(
        run_dir, "\nn4q", "terminal", "ranked.jsonl", "--top", "0.4", "--annotator", "ann"
    )
    assert first.returncode == 0, first.stderr
    assert "The seat was great." in first.stdout  # the seed example is shown
    assert "Case 0 is nice." in first.stdout
    saved = people(run_dir)
    assert [(a.valid, a.reason) for a in saved] == [(True, None), (False, "malformed")]

    second = annotate(
        run_dir, "s\n", "terminal", "ranked.jsonl", "--top", "0.4", "--annotator", "ann"
    )
    assert second.returncode == 0, second.stderr
    assert "Case 0 is nice." not in second.stdout and "Case 2 is nice." in second.stdout
    assert "1 annotated" in second.stdout and "1 skipped" in second.stdout
    assert len(people(run_dir)) == 3

    ranker = [
        a for a in read_jsonl(run_dir / "annotations.jsonl", Annotation) if a.origin == "ranker"
    ]
    assert len(ranker) == 6


def test_merge_writes_accepted_cases_and_the_suite_from_the_annotations(run_dir):
    annotate(
        run_dir, "\nn1n2" + "1", "terminal", "ranked.jsonl", "--top", "0.3", "--annotator", "ann"
    )
    done = annotate(
        run_dir,
        "",
        "merge",
        "annotations.jsonl",
        "--ranked",
        "ranked.jsonl",
        "--suite",
        "cases.jsonl",
    )
    assert done.returncode == 0, done.stderr
    accepted = {c.text: c for c in read_jsonl(run_dir / "accepted.jsonl", TestCase)}
    assert "Case 0 is nice." in accepted and "Case 1 is nice." not in accepted
    assert accepted["Case 2 is nice."].label == "negative"  # corrected to the first label
    assert len(accepted) == 2 + 7
    assert len(list(read_jsonl(run_dir / "suite.jsonl", TestCase))) == 2 + len(accepted)


def test_push_without_an_api_key_is_a_clear_error(run_dir):
    env_free = annotate(run_dir, "", "push", "ranked.jsonl")
    if os.environ.get("LABEL_STUDIO_API_KEY"):
        pytest.skip("LABEL_STUDIO_API_KEY is set in this environment")
    assert env_free.returncode == 1
    assert "no Label Studio API key" in env_free.stderr
    assert not (run_dir / "annotations.jsonl").exists()


def test_server_on_a_used_data_directory_without_its_key_is_a_clear_error(run_dir):
    data_dir = run_dir / "label-studio"
    data_dir.mkdir()
    (data_dir / "label_studio.sqlite3").write_bytes(b"")
    done = run_testaug(
        run_dir,
        *("annotate", "server", "--data-dir", str(data_dir)),
        without_env=("LABEL_STUDIO_API_KEY", "TESTAUG_LABEL_STUDIO_API_KEY"),
        timeout=60,
    )
    assert done.returncode == 1
    assert "already has users: set LABEL_STUDIO_API_KEY" in done.stderr
