"""`testaug review candidates terminal|apply` run as a user runs them, keys piped into stdin."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from testaug.core.jsonl import read_jsonl
from testaug.core.records import Annotation, TestCase
from tests.cli_runner import HANG_TIMEOUT, CliResult, run_testaug
from tests.tiny_models import VOUCHED_CURVE, make_calibration, write_ranked_run


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """ranked.jsonl with 10 candidates (rank i+1 is "Case i", with P(valid) 0.1 (i + 1) but
    0.95 for the last), its calibration (the rule P(valid) >= 0.9 at precision 0.9) and
    the seed cases.jsonl."""
    p_valid = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.9, 0.92, 0.95]
    return write_ranked_run(
        tmp_path,
        [f"Case {i} is nice." for i in range(10)],
        p_valid=p_valid,
        calibration=make_calibration(m=VOUCHED_CURVE),
    )


def annotate(run_dir: Path, keys: str, *args: str) -> CliResult:
    return run_testaug(run_dir, "review", "candidates", *args, input=keys, timeout=HANG_TIMEOUT)


def people(run_dir: Path) -> list[Annotation]:
    records = read_jsonl(run_dir / "annotations.jsonl", Annotation)
    return [a for a in records if a.origin == "terminal"]


def test_terminal_saves_each_key_press_and_resumes_where_it_stopped(run_dir):
    first = annotate(
        run_dir, "\nn4q", "terminal", "ranked.jsonl", "--top", "0.5", "--annotator", "ann"
    )
    assert first.returncode == 0, first.stderr
    assert "The seat was great." in first.stdout  # the seed example is shown
    assert "Case 0 is nice." in first.stdout
    saved = people(run_dir)
    assert [(a.valid, a.reason) for a in saved] == [(True, None), (False, "malformed")]

    second = annotate(
        run_dir, "s\n", "terminal", "ranked.jsonl", "--top", "0.5", "--annotator", "ann"
    )
    assert second.returncode == 0, second.stderr
    assert "Case 0 is nice." not in second.stdout and "Case 2 is nice." in second.stdout
    assert "1 annotated" in second.stdout and "1 skipped" in second.stdout
    assert len(people(run_dir)) == 3

    ranker = [
        a for a in read_jsonl(run_dir / "annotations.jsonl", Annotation) if a.origin == "ranker"
    ]
    assert len(ranker) == 3  # P(valid) >= 0.9: ranks 8, 9 and 10
    assert "the ranker accepted 3 candidates under its rules for precision 90%" in second.stdout
    assert "3 more wait for people" in second.stdout  # half of the other 7 reviewed


def test_terminal_with_a_precision_no_rule_reaches_accepts_nothing_and_says_why(run_dir):
    done = annotate(
        run_dir, "q", "terminal", "ranked.jsonl", "--top", "0.3", "--accept-precision", "0.97"
    )
    assert done.returncode == 0, done.stderr
    assert "the ranker accepted 0 candidates under its rules for precision 97%" in done.stdout
    assert "no threshold on P(valid) qualified" in done.stdout
    assert "accepts nothing" in done.stderr  # the one log line
    assert not [
        a for a in read_jsonl(run_dir / "annotations.jsonl", Annotation) if a.origin == "ranker"
    ]


@pytest.mark.parametrize("command", ["terminal", "push"])
@pytest.mark.parametrize("value", ["0", "1.5", "-0.2"])
def test_an_accept_precision_outside_zero_to_one_is_a_one_line_error(run_dir, command, value):
    done = annotate(run_dir, "", command, "ranked.jsonl", "--accept-precision", value)
    assert done.returncode == 1
    assert f"--accept-precision: must be a precision in (0, 1], got {float(value)}" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (run_dir / "annotations.jsonl").exists()


def test_apply_writes_accepted_cases_and_the_suite_from_the_verdicts(run_dir):
    annotate(
        run_dir, "\nn1n2" + "1", "terminal", "ranked.jsonl", "--top", "0.3", "--annotator", "ann"
    )
    done = annotate(
        run_dir,
        "",
        "apply",
        "annotations.jsonl",
        "--ranked",
        "ranked.jsonl",
        "--suite-cases",
        "cases.jsonl",
    )
    assert done.returncode == 0, done.stderr
    accepted = {c.text: c for c in read_jsonl(run_dir / "accepted.jsonl", TestCase)}
    assert "Case 0 is nice." in accepted and "Case 1 is nice." not in accepted
    assert accepted["Case 2 is nice."].label == "negative"  # corrected to the first label
    assert len(accepted) == 2 + 3  # and the three the ranker's rule accepted
    assert len(list(read_jsonl(run_dir / "suite.jsonl", TestCase))) == 2 + len(accepted)


def test_the_old_verb_merge_and_the_old_flag_annotations_work_and_say_the_new_names(run_dir):
    keys = "\nn1n2" + "1"
    old = annotate(
        run_dir, keys, "terminal", "ranked.jsonl", "--top", "0.3", "--annotator", "ann",
        "--annotations", "old.jsonl",
    )  # fmt: skip
    assert old.returncode == 0, old.stderr
    assert "`--annotations` is now `--verdicts` in `testaug review candidates terminal`" in (
        old.stderr
    )
    new = annotate(
        run_dir, keys, "terminal", "ranked.jsonl", "--top", "0.3", "--annotator", "ann",
        "--verdicts", "new.jsonl",
    )  # fmt: skip
    assert new.returncode == 0 and "note:" not in new.stderr
    assert old.stdout.replace("old.jsonl", "new.jsonl") == new.stdout
    merged = annotate(run_dir, "", "merge", "old.jsonl", "--ranked", "ranked.jsonl")
    assert merged.returncode == 0, merged.stderr
    note = "note: `testaug review candidates merge` is now `testaug review candidates apply`"
    assert merged.stderr.splitlines()[0] == note
    applied = annotate(run_dir, "", "apply", "new.jsonl", "--ranked", "ranked.jsonl")
    assert applied.returncode == 0 and "note:" not in applied.stderr
    assert applied.stdout == merged.stdout.replace("old.jsonl", "new.jsonl")


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
        *("review", "server", "--data-dir", str(data_dir)),
        without_env=("LABEL_STUDIO_API_KEY", "TESTAUG_LABEL_STUDIO_API_KEY"),
        timeout=HANG_TIMEOUT,
    )
    assert done.returncode == 1
    assert "already has users: set LABEL_STUDIO_API_KEY" in done.stderr
