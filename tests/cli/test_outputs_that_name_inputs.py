"""An output that names one of the command's inputs (`--junit cases.jsonl`, `tree retest -o
TREE`, `testaug.retest(out=TREE)`) is refused before any work, naming both, and the input
stays as it was; a relative spelling or a link to the input is the input."""

from __future__ import annotations

import pytest

import testaug
from testaug.core.errors import InputError
from testaug.core.jsonl import write_jsonl
from testaug.core.overwrites import refuse_overwriting_inputs
from testaug.core.records import TestCase
from tests.cli.test_cli_tree import THREE, small_tree
from tests.cli_runner import run_testaug

LABELS = ("--labels", "negative,neutral,positive")


def cases_file(path):
    case = TestCase(
        task="sentiment",
        capability="Vocabulary",
        description_id="voc",
        description="A positive sentence.",
        text="The food was great.",
        label="positive",
        source="template",
    )
    write_jsonl(path, [case])
    return path


def refused_once(result, flag: str, input_name: str) -> None:
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()[-1:]
    assert line.startswith("error: ") and flag in line and input_name in line, result.stderr
    assert "Traceback" not in result.stderr


def test_evaluate_refuses_a_junit_file_that_is_its_cases_file(tmp_path):
    cases = cases_file(tmp_path / "cases.jsonl")
    before = cases.read_bytes()
    result = run_testaug(
        tmp_path, "evaluate", "models", "cases.jsonl", "--model", "vader", "--perturb", "0",
        "--junit", "./cases.jsonl",
    )  # fmt: skip
    refused_once(result, "--junit", "CASES")
    assert cases.read_bytes() == before


def test_evaluate_refuses_an_output_that_is_a_link_to_its_cases_file(tmp_path):
    cases = cases_file(tmp_path / "cases.jsonl")
    before = cases.read_bytes()
    (tmp_path / "out.json").symlink_to(cases)
    result = run_testaug(
        tmp_path, "evaluate", "models", "cases.jsonl", "--model", "vader", "-o", "out.json",
    )  # fmt: skip
    refused_once(result, "--output", "CASES")
    assert cases.read_bytes() == before


@pytest.mark.parametrize(
    ("flag", "target"),
    [("-o", "tree.jsonl"), ("--junit", "tree.jsonl"), ("--scored-tree", "before.json")],
)
def test_tree_retest_refuses_an_output_that_is_the_tree_or_the_previous_report(
    tmp_path, flag, target
):
    tree = small_tree(tmp_path / "tree.jsonl")
    assert (
        run_testaug(
            tmp_path, "tree", "retest", "tree.jsonl", "--model", THREE, *LABELS, "-o", "before.json"
        ).returncode
        == 0
    )
    inputs = {path: path.read_bytes() for path in (tree, tmp_path / "before.json")}
    options = {"-o": "after.json", "--junit": None, "--scored-tree": None, flag: target}
    given = [item for name, value in options.items() if value for item in (name, value)]
    result = run_testaug(
        tmp_path, "tree", "retest", "tree.jsonl", "--model", THREE, *LABELS,
        "--previous", "before.json", *given,
    )  # fmt: skip
    refused_once(result, "--output" if flag == "-o" else flag, target)
    assert {path: path.read_bytes() for path in inputs} == inputs
    assert not (tmp_path / "after.json").exists()


def test_the_api_retest_refuses_an_out_that_is_its_tree(tmp_path):
    tree = small_tree(tmp_path / "tree.jsonl")
    before = tree.read_bytes()
    with pytest.raises(InputError, match="out: is tree"):
        testaug.retest(tree, THREE, out=tmp_path / "." / "tree.jsonl", labels=LABELS[1])
    assert tree.read_bytes() == before


def test_run_refuses_a_junit_file_that_is_its_gate_file_before_any_work(tmp_path):
    gate = tmp_path / "gate.yaml"
    gate.write_text("max_error:\n  '*': 50\n")
    result = run_testaug(
        tmp_path, "run", "--run-dir", "runs/x", "--gate", "gate.yaml", "--junit", "gate.yaml"
    )
    refused_once(result, "--junit", "--gate")
    assert gate.read_text() == "max_error:\n  '*': 50\n"
    assert not (tmp_path / "runs").exists()


def test_two_outputs_naming_one_file_are_refused():
    with pytest.raises(InputError, match="--junit: is also --output"):
        refuse_overwriting_inputs({"--output": "a.json", "--junit": "./a.json"}, {})
