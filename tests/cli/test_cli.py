"""The command-line tool: options, real files, output and exit codes (in process, through\nTyper's CliRunner; the import check runs in a process of its own)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_runner import HANG_TIMEOUT, CliResult, run_testaug


def cli(*args: str, cwd: Path | None = None) -> CliResult:
    return run_testaug(cwd, *args)


def test_version_prints_the_package_version():
    from testaug import __version__

    result = cli("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"testaug {__version__}"


def test_help_and_the_library_never_try_to_import_heavy_packages():
    # A meta-path finder records every import attempted, installed or not, so the
    # check holds on machines where torch or prefect are absent too.
    code = (
        "import sys, pkgutil, importlib\n"
        "tried = set()\n"
        "class Spy:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        tried.add(name.split('.')[0])\n"
        "sys.meta_path.insert(0, Spy())\n"
        "import testaug\n"
        "for module in pkgutil.walk_packages(testaug.__path__, 'testaug.'):\n"
        "    if module.name != 'testaug.__main__':  # that one runs the CLI\n"
        "        importlib.import_module(module.name)\n"
        "sys.argv = ['testaug', '--help']\n"
        "from testaug.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('TRIED', sorted(tried & {'torch', 'prefect', 'transformers', 'pandas', 'spacy'}))\n"
        "print('SEEN_YAML', 'yaml' in tried)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_TIMEOUT
    )
    assert "SEEN_YAML True" in result.stdout, result.stderr  # the spy does see imports
    assert "TRIED []" in result.stdout


def test_suite_validate_accepts_a_good_suite(tiny_suite_path):
    result = cli("suite", "validate", str(tiny_suite_path))
    assert result.returncode == 0
    assert "2 capabilities, 2 descriptions, 4 templates" in result.stdout


def test_suite_validate_lists_every_problem_and_exits_1(write_suite):
    path = write_suite(
        "task: sentiment\nlabels: [negative, positive]\nlexicons: [lexicons.yaml]\n"
        "capabilities:\n  - name: Negation\n    descriptions:\n      - description: d\n"
        "        label: neutral\n        templates: ['{nope} is {adj}']\n",
        lexicons="adj: []\n",
    )
    result = cli("suite", "validate", str(path))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "lexicons.yaml:1: adj: lexicon 'adj' is empty" in result.stderr
    assert "suite.yaml:8: capabilities[0].descriptions[0].label: label 'neutral'" in result.stderr
    assert (
        "suite.yaml:9: capabilities[0].descriptions[0].templates[0]: unknown slot {nope}"
        in result.stderr
    )
    assert result.stderr.strip().splitlines()[-1].endswith("3 problems found")


def test_suite_stats_json_counts_the_suite(tiny_suite_path):
    result = cli("suite", "stats", str(tiny_suite_path), "--json")
    assert result.returncode == 0
    stats = json.loads(result.stdout)
    assert (stats["capabilities"], stats["descriptions"], stats["templates"], stats["cases"]) == (
        2,
        2,
        4,
        180,
    )
    assert [row["cases"] for row in stats["per_description"]] == [72, 108]


def test_suite_stats_table_and_stats_of_a_case_file(tiny_suite_path, tmp_path):
    table = cli("suite", "stats", str(tiny_suite_path))
    assert table.returncode == 0 and "2 descriptions" in table.stdout
    out = tmp_path / "cases.jsonl"
    assert (
        cli("expand", str(tiny_suite_path), "-o", str(out), "--per-template", "3").returncode == 0
    )
    stats = json.loads(cli("suite", "stats", str(out), "--json").stdout)
    assert (stats["templates"], stats["cases"]) == (4, 12)


def test_expand_writes_seeded_samples_and_full_products(tiny_suite_path, tmp_path):
    first, second, full = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "all.jsonl"
    for out in (first, second):
        result = cli(
            "expand", str(tiny_suite_path), "-o", str(out), "--per-template", "4", "--seed", "3"
        )
        assert result.returncode == 0 and "16 cases" in result.stdout
    assert first.read_text() == second.read_text()
    assert cli("expand", str(tiny_suite_path), "-o", str(full)).returncode == 0
    assert len(full.read_text().splitlines()) == 180


def test_expand_of_an_unknown_suite_is_one_line_and_exit_1(tmp_path):
    result = cli("templates", "expand", "no-such-suite", "-o", str(tmp_path / "x.jsonl"))
    assert result.returncode == 1
    assert result.stderr.strip().startswith("error: no-such-suite: no such file")
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.jsonl").exists()


def test_suite_import_writes_cases_and_a_rejects_file(tmp_path):
    table = tmp_path / "table.csv"
    table.write_text(
        "capability,description,text,label\nVocabulary,d,Great.,1\nVocabulary,d,Awful.,0\nVocabulary,d,Hm.,7\n"
    )
    out = tmp_path / "cases.jsonl"
    result = cli(
        "suite",
        "import",
        str(table),
        "-o",
        str(out),
        "--task",
        "sentiment",
        "--label-map",
        "0=negative,1=positive",
    )
    assert result.returncode == 0
    assert "imported 2 cases" in result.stdout and "1 rows rejected" in result.stdout
    assert f"{table}:4: label: '7' is a number not in --label-map" in result.stderr
    assert len(out.read_text().splitlines()) == 2
    rejects = [
        json.loads(line) for line in (tmp_path / "cases.rejects.jsonl").read_text().splitlines()
    ]
    assert rejects[0]["line"] == 4 and rejects[0]["row"]["text"] == "Hm."


def test_bad_label_map_option_is_a_one_line_error(tmp_path):
    table = tmp_path / "table.csv"
    table.write_text("capability,description,text,label\nVocabulary,d,Great.,1\n")
    result = cli(
        "suite", "import", str(table), "-o", str(tmp_path / "o.jsonl"), "--label-map", "0negative"
    )
    assert result.returncode == 1 and "--label-map: expected RAW=LABEL" in result.stderr


@pytest.mark.parametrize("command", [["evaluate", "cases.jsonl", "--model", "vader"], ["run"]])
def test_an_unknown_evidence_is_a_one_line_error_before_any_work(command, tmp_path):
    result = cli(*command, "--evidence", "ranker", cwd=tmp_path)
    assert result.returncode == 1
    assert "--evidence: expected one of verified, all" in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "command",
    [["suite", "validate", "--help"], ["expand", "--help"], ["suite", "import", "--help"]],
)
def test_every_command_has_help(command):
    assert cli(*command).returncode == 0


def test_evaluate_prints_and_writes_what_the_library_summarises_for_each_model_given(tmp_path):
    from testaug.core.jsonl import read_jsonl, write_jsonl
    from testaug.evaluation.battery import default_battery, run_battery
    from testaug.evaluation.failures import CaseResult
    from testaug.evaluation.model_runs import evaluate_model
    from testaug.evaluation.models import load_model
    from testaug.evaluation.summary import evaluation_summary
    from testaug.suites.task_labels import task_labels_and_lexicons
    from tests.reports.test_reports import CASES

    write_jsonl(tmp_path / "cases.jsonl", CASES)
    specs = ["py:tests.models_fixture:predict"] * 2
    done = cli(
        "evaluate", "cases.jsonl", *(arg for spec in specs for arg in ("--model", spec)),
        "--perturb", "4", "--seed", "1", "--examples", "1", "--labels", "positive,neutral,negative",
        "-o", "out/evaluation.json", "--json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    labels, lexicons = task_labels_and_lexicons(CASES, "positive,neutral,negative")
    perturbed = run_battery(CASES, default_battery(labels, lexicons), per_test=4, seed=1)
    evaluations = [
        evaluate_model(load_model(spec, task_labels=labels), CASES, perturbed, k=1)
        for spec in specs
    ]
    summary = evaluation_summary(evaluations, n_cases=len(CASES), n_perturbed=len(perturbed))
    expected = summary.model_dump(mode="json")
    assert json.loads(done.stdout) == expected and perturbed
    assert json.loads((tmp_path / "out" / "evaluation.json").read_text()) == expected
    results = list(read_jsonl(tmp_path / "out" / "evaluation.results.jsonl", CaseResult))
    assert results == [r for e in evaluations for r in e.results]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "evaluation.json",
        "evaluation.results.jsonl",
    ]  # the steps' work files stay out of the output folder
