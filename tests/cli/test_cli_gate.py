"""The CI gate on the command line: `evaluate models`, `run` and `tree retest` exit 1 with a
table of breaches, 0 when the gate holds, and write JUnit XML when asked."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET

import pytest

from tests.cli.test_cli_tree import THREE, THREE_V2, small_tree
from tests.cli_runner import run_testaug

NEUTRAL = "A neutral statement about two passengers."


@pytest.fixture
def cases(tmp_path, tiny_suite_path):
    path = tmp_path / "cases.jsonl"
    assert run_testaug(tmp_path, "expand", str(tiny_suite_path), "-o", str(path)).returncode == 0
    return path


def evaluate(tmp_path, cases, *args):
    return run_testaug(
        tmp_path, "evaluate", "models", str(cases), "--model", "vader", "--perturb", "0", *args
    )


def test_a_breached_threshold_exits_1_with_a_table_of_breaches(tmp_path, cases):
    result = evaluate(tmp_path, cases, "--max-error", "Vocabulary=5", "--max-error", "*=50")
    assert result.returncode == 1, result.stderr
    assert "gate: 1 breach(es)" in result.stdout
    assert "│ vader │ capability │ Vocabulary │ 11.1% │    5% │ flag   │" in result.stdout


def test_a_gate_that_holds_exits_0_and_still_writes_junit(tmp_path, cases):
    junit = tmp_path / "gate.xml"
    result = evaluate(tmp_path, cases, "--max-error", "*=50", "--junit", str(junit))
    assert result.returncode == 0, result.stderr
    assert "gate passed" in result.stdout
    root = ET.parse(junit).getroot()
    names = [case.get("name") for case in root.iter("testcase")]
    assert NEUTRAL in names and root.get("failures") == "0"


def test_the_suites_gate_applies_and_a_flag_overrides_it(tmp_path, tiny_suite_path, cases):
    folder = tmp_path / "suite"
    shutil.copytree(tiny_suite_path.parent, folder)
    suite = folder / "suite.yaml"
    suite.write_text(suite.read_text() + "gate:\n  max_error:\n    Vocabulary: 5\n")
    assert run_testaug(tmp_path, "suite", "validate", str(suite)).returncode == 0
    held = evaluate(tmp_path, cases, "--suite", str(suite))
    assert held.returncode == 1 and "│ suite  │" in held.stdout
    overridden = evaluate(tmp_path, cases, "--suite", str(suite), "--max-error", "Vocabulary=20")
    assert overridden.returncode == 0, overridden.stdout


def test_a_bad_gate_in_a_suite_fails_validation_at_its_line(tmp_path, tiny_suite_path):
    folder = tmp_path / "suite"
    shutil.copytree(tiny_suite_path.parent, folder)
    suite = folder / "suite.yaml"
    lines = len(suite.read_text().splitlines())
    suite.write_text(suite.read_text() + "gate:\n  max_error:\n    Vocabulary: -3\n")
    result = run_testaug(tmp_path, "suite", "validate", str(suite))
    assert result.returncode == 1
    assert f"suite.yaml:{lines + 3}: gate.max_error.Vocabulary: expected a percent" in result.stderr


def test_a_bad_gate_file_is_refused_with_file_line_and_field_before_evaluating(tmp_path, cases):
    gate = tmp_path / "gate.yaml"
    gate.write_text("max_error:\n  Negation: high\n")
    result = evaluate(tmp_path, cases, "--gate", str(gate), "-o", str(tmp_path / "e.json"))
    assert result.returncode == 1
    assert "gate.yaml:2: max_error.Negation: expected a percent, 0 to 100" in result.stderr
    assert not (tmp_path / "e.json").exists()


def test_run_refuses_a_bad_gate_file_before_the_pipeline_starts(tmp_path):
    gate = tmp_path / "gate.yaml"
    gate.write_text("max_eror:\n  Negation: 10\n")
    result = run_testaug(tmp_path, "run", "--gate", str(gate), "--run-dir", str(tmp_path / "run"))
    assert result.returncode == 1
    assert "gate.yaml:1: max_eror: unknown field 'max_eror'; did you mean 'max_error'?" in (
        result.stderr
    )
    assert not (tmp_path / "run").exists()


def retest(tmp_path, tree, model, out, *args):
    return run_testaug(
        tmp_path, "tree", "retest", str(tree), "--model", model,
        "--labels", "negative,neutral,positive", "-o", str(out), *args,
    )  # fmt: skip


def test_retest_fails_on_newly_failing_topics_when_asked(tmp_path):
    tree = small_tree(tmp_path / "tree.jsonl")
    before = tmp_path / "before.json"
    assert retest(tmp_path, tree, THREE, before).returncode == 0
    junit = tmp_path / "tree.xml"
    failed = retest(
        tmp_path, tree, THREE_V2, tmp_path / "after.json",
        "--previous", str(before), "--fail-on-new-failures", "--junit", str(junit),
    )  # fmt: skip
    assert failed.returncode == 1, failed.stderr
    assert "newly failing" in failed.stdout and "/Clear/Close" in failed.stdout
    failing = {
        case.get("name") for case in ET.parse(junit).getroot().iter("testcase")
        if case.find("failure") is not None
    }  # fmt: skip
    assert failing == {"/", "/Clear", "/Clear/Close"}
    unasked = retest(tmp_path, tree, THREE_V2, tmp_path / "again.json", "--previous", str(before))
    assert unasked.returncode == 0


def test_fail_on_new_failures_needs_a_previous_report(tmp_path):
    tree = small_tree(tmp_path / "tree.jsonl")
    result = retest(tmp_path, tree, THREE, tmp_path / "r.json", "--fail-on-new-failures")
    assert result.returncode == 1 and "--fail-on-new-failures: needs --previous" in result.stderr
