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


def evaluate(tmp_path, cases, *args, perturb="0"):
    return run_testaug(
        tmp_path, "evaluate", "models", str(cases), "--model", "vader", "--perturb", perturb,
        *args, env={"COLUMNS": "200"},
    )  # fmt: skip


def copied_suite(tmp_path, tiny_suite_path, gate):
    """The tiny suite in a folder of its own, with `gate` (YAML lines) as its gate: section."""
    folder = tmp_path / "suite"
    shutil.copytree(tiny_suite_path.parent, folder)
    suite = folder / "suite.yaml"
    suite.write_text(suite.read_text() + "gate:\n" + gate)
    return suite


def test_a_breached_threshold_exits_1_with_a_table_of_breaches(tmp_path, cases):
    result = evaluate(tmp_path, cases, "--max-error", "Vocabulary=5", "--max-error", "*=50")
    assert result.returncode == 1, result.stderr
    assert "gate: 1 breach(es)" in result.stdout
    assert (
        "│ vader │ capability │ Vocabulary │ MFT       │ 11.1% │ 12/108 │    5% │ "
        "flag --max-error Vocabulary=5 │"
    ) in result.stdout


def test_a_gate_that_holds_exits_0_and_still_writes_junit(tmp_path, cases):
    junit = tmp_path / "gate.xml"
    result = evaluate(tmp_path, cases, "--max-error", "*=50", "--junit", str(junit))
    assert result.returncode == 0, result.stderr
    assert "gate passed" in result.stdout
    root = ET.parse(junit).getroot()
    names = [case.get("name") for case in root.iter("testcase")]
    assert f"{NEUTRAL} (MFT)" in names and root.get("failures") == "0"


def test_the_suites_gate_applies_and_a_flag_overrides_it(tmp_path, tiny_suite_path, cases):
    suite = copied_suite(tmp_path, tiny_suite_path, "  max_error:\n    Vocabulary: 5\n")
    lines = len(suite.read_text().splitlines())
    assert run_testaug(tmp_path, "suite", "validate", str(suite)).returncode == 0
    held = evaluate(tmp_path, cases, "--suite", str(suite))
    assert held.returncode == 1
    assert f"│ suite suite.yaml:{lines} gate.max_error.Vocabulary │" in held.stdout
    overridden = evaluate(tmp_path, cases, "--suite", str(suite), "--max-error", "Vocabulary=20")
    assert overridden.returncode == 0, overridden.stdout
    assert (
        f"gate: flag --max-error Vocabulary=20 overrules 5% (suite suite.yaml:{lines} "
        "gate.max_error.Vocabulary)"
    ) in overridden.stdout


def test_a_typed_flag_wins_over_the_suites_limit_for_the_model(tmp_path, tiny_suite_path, cases):
    gate = "  models:\n    vader:\n      max_error: {Vocabulary: 30}\n"
    suite = copied_suite(tmp_path, tiny_suite_path, gate)
    lines = len(suite.read_text().splitlines())
    result = evaluate(tmp_path, cases, "--suite", str(suite), "--max-error", "Vocabulary=5")
    assert result.returncode == 1, result.stdout
    assert "│ 11.1% │ 12/108 │    5% │ flag --max-error Vocabulary=5 │" in result.stdout
    assert (
        "above the limit 5% (flag --max-error Vocabulary=5), which overrules 30% (suite "
        f"suite.yaml:{lines} gate.models.vader.max_error.Vocabulary)"
    ) in result.stdout


def test_the_gate_checks_each_test_types_rate_that_the_table_shows(tmp_path, cases):
    """With perturbations, Vocabulary's MFT rate (11.1%) breaches 10%, its INV and DIR
    rates do not; pooled over every test type, its rate stays under 10%."""
    result = evaluate(tmp_path, cases, "--max-error", "Vocabulary=10", perturb="20")
    assert result.returncode == 1, result.stderr
    assert "│ Vocabulary │ MFT       │ 11.1% (6.5–18.4) │" in result.stdout  # the printed table
    assert "│ vader │ capability │ Vocabulary │ MFT       │ 11.1% │ 12/108 │" in result.stdout
    assert "gate: 1 breach(es)" in result.stdout
    pooled = evaluate(
        tmp_path, cases, "--max-error", "Vocabulary=10", "--pool-test-types", perturb="20"
    )
    assert pooled.returncode == 0, pooled.stdout


def test_validate_names_a_gate_limit_for_a_capability_the_suite_lacks(tmp_path, tiny_suite_path):
    gate = (
        "  max_error:\n    Negaton: 10\n    test_type:MTF: 5\n"
        "    description:A neutral statement about two pasengers.: 5\n"
        "  models:\n    vader:\n      max_error: {Vocabulary: 5, Vocabulery: 5}\n"
    )
    suite = copied_suite(tmp_path, tiny_suite_path, gate)
    start = len(suite.read_text().splitlines()) - 7
    result = run_testaug(tmp_path, "suite", "validate", str(suite))
    assert result.returncode == 1
    for line, field, message in [
        (2, "max_error.Negaton", "no capability named 'Negaton' in this suite; did you mean 'Negation'?"),
        (3, "max_error.test_type:MTF", "unknown test type 'MTF': expected one of MFT, INV, DIR or *; did you mean 'MFT'?"),
        (4, "max_error.description:A neutral statement about two pasengers.",
         f"no description named 'A neutral statement about two pasengers.' in this suite; did you mean '{NEUTRAL}'?"),
        (7, "models.vader.max_error.Vocabulery", "no capability named 'Vocabulery' in this suite; did you mean 'Vocabulary'?"),
    ]:  # fmt: skip
        assert f"suite.yaml:{start + line}: gate.{field}: {message}" in result.stderr


def test_a_bad_gate_in_a_suite_fails_validation_at_its_line(tmp_path, tiny_suite_path):
    suite = copied_suite(tmp_path, tiny_suite_path, "  max_error:\n    Vocabulary: -3\n")
    lines = len(suite.read_text().splitlines()) - 3
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


@pytest.mark.slow
@pytest.mark.usefixtures("prefect_harness")
def test_run_exits_1_with_the_breaches_when_its_evaluation_breaches_the_gate(
    tmp_path, lexical_rankers
):
    """A small run with the scripted generator: the pipeline finishes and writes its report,
    then the gate on its evaluation fails, so the command exits 1."""
    from testaug.review.label_studio_server import free_port
    from testaug.testing.openai_server import ScriptedOpenAIServer
    from tests.flow_helpers import echo_seed_reply

    junit = tmp_path / "gate.xml"
    with ScriptedOpenAIServer(echo_seed_reply, port=free_port()) as llm:
        done = run_testaug(
            tmp_path, "run", "--size", "small", "--backend", "openai",
            "--base-url", llm.base_url, "--llm", "scripted",
            "--rankers", str(lexical_rankers), "--capability", "Negation", "--model", "vader",
            "--run-dir", "run", "--max-error", "Negation=0", "--junit", str(junit),
            env={"OPENAI_API_KEY": "test-key", "COLUMNS": "200"},
        )  # fmt: skip
    assert done.returncode == 1, done.stderr[-4000:]
    assert (tmp_path / "run" / "report.html").is_file()  # the pipeline ran to its end
    assert "│ vader │ capability │ Negation │ MFT       │" in done.stdout
    assert "flag --max-error Negation=0 │" in done.stdout
    failed = [
        case.get("name")
        for case in ET.parse(junit).getroot().iter("testcase")
        if case.find("failure") is not None
    ]
    assert "capability Negation (MFT)" in failed


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
