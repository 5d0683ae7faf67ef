"""`suite import` on published suites: the bundled suite is parsed once per import (not once
per row), a pair task's row without a second text is a reject with its file, line and
field, and `--source` says where the cases came from (LLM-written suites as `llm`)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from testaug.core.bundled import resolve_suite
from testaug.core.records import TestCase
from testaug.suites import task_labels
from testaug.suites.load import load_suite
from testaug.suites.tables import RejectedRow, read_table
from testaug.suites.task_labels import PAIR_TASKS
from tests.cli_runner import run_testaug

HEADER = "capability,description,text,label"


def split(items):
    return [i for i in items if isinstance(i, TestCase)], [
        i for i in items if isinstance(i, RejectedRow)
    ]


def written(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def suite_loads(monkeypatch) -> list[Path]:
    """The suite files `load_suite` parses while the test runs, one entry a parse."""
    calls: list[Path] = []

    def counting(path, *args, **kwargs):
        calls.append(Path(path))
        return load_suite(path, *args, **kwargs)

    monkeypatch.setattr(task_labels, "load_suite", counting)
    return calls


def test_an_import_parses_each_tasks_bundled_suite_once_however_many_rows(tmp_path, suite_loads):
    rows = [f"sentiment,Vocabulary,d,Great {i}.,positive" for i in range(40)]
    rows += [f"qqp,Vocabulary,d,\"('Is {i} ok?', 'Is {i} fine?')\",1" for i in range(40)]
    table = tmp_path / "table.csv"
    table.write_text(f"task,{HEADER}\n" + "\n".join(rows) + "\n")
    out = tmp_path / "cases.jsonl"
    result = run_testaug(tmp_path, "suite", "import", str(table), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert len(written(out)) == 80
    assert sorted(path.parent.name for path in suite_loads) == ["paraphrase", "sentiment"]


def test_an_import_with_task_parses_the_bundled_suite_once(tmp_path, suite_loads):
    table = tmp_path / "table.csv"
    table.write_text(f"{HEADER}\n" + "".join(f"Vocabulary,d,Great {i}.,2\n" for i in range(40)))
    out = tmp_path / "cases.jsonl"
    result = run_testaug(
        tmp_path, "suite", "import", str(table), "-o", str(out), "--task", "sentiment"
    )
    assert result.returncode == 0, result.stderr
    assert len(written(out)) == 40 and len(suite_loads) == 1


def test_pair_tasks_are_the_bundled_suites_with_pair_templates():
    for task in ("sentiment", "paraphrase", "nli"):
        suite = load_suite(resolve_suite(task))
        pairs = {
            template.text_pair is not None
            for description in suite.descriptions()
            for template in description.templates
        }
        assert pairs == {task in PAIR_TASKS}


# (file name, contents, the line and field of each reject): an empty second text in each
# form a published table writes it; the last row of each table is a good pair.
EMPTY_SECOND_TEXTS = {
    "question_columns": (
        "qqp.csv",
        "capability,description,question1,question2,label\n"
        "V,d,Is a ok?,,1\nV,d,Is b ok?,   ,1\nV,d,Is c ok?,Is c fine?,1\n",
        [(2, "question2"), (3, "question2")],
    ),
    "pandas_tuples": (
        "qqp.csv",
        pd.DataFrame(
            {
                "capability": ["V"] * 4,
                "description": ["d"] * 4,
                "label": [1] * 4,
                "text": [("Is a ok?", ""), ("Is b ok?", " "), ("Is c ok?",), ("Is d?", "Is e?")],
            }
        ).to_csv(index=False),
        [(2, "text"), (3, "text"), (4, "text")],
    ),
    "jsonl": (
        "qqp.jsonl",
        "".join(
            json.dumps({"capability": "V", "description": "d", "label": "duplicate", **row}) + "\n"
            for row in [
                {"text": "Is a ok?", "text_pair": ""},
                {"text": "Is b ok?", "text_pair": " \t"},
                {"text": "Is c ok?", "text_pair": None},
                {"text": "Is d ok?"},
                {"text": ["Is e ok?", ""]},
                {"text": "Is f ok?", "text_pair": "Is f fine?"},
            ]
        ),
        [(1, "text_pair"), (2, "text_pair"), (3, "text_pair"), (4, "text_pair"), (5, "text")],
    ),
}


@pytest.mark.parametrize("form", list(EMPTY_SECOND_TEXTS))
def test_a_pair_row_with_an_empty_second_text_is_rejected_with_its_line_and_field(tmp_path, form):
    name, contents, expected = EMPTY_SECOND_TEXTS[form]
    path = tmp_path / name
    path.write_text(contents)
    cases, rejects = split(list(read_table(path, task="qqp")))
    assert [(r.line, r.field) for r in rejects] == expected
    assert all("empty second text" in r.reason for r in rejects)
    assert len(cases) == 1 and cases[0].text_pair and cases[0].text_pair.strip()


def test_an_nli_row_without_a_hypothesis_is_rejected_and_a_sentiment_row_needs_none(tmp_path):
    path = tmp_path / "mixed.csv"
    path.write_text(
        "task,capability,description,premise,hypothesis,label\n"
        "mnli,V,d,A man sleeps.,,0\n"
        "mnli,V,d,A man runs.,A man moves.,0\n"
        "sentiment,V,d,Great.,,positive\n"
    )
    cases, rejects = split(list(read_table(path)))
    assert [(r.line, r.field) for r in rejects] == [(2, "hypothesis")]
    assert rejects[0].reason == "empty second text: task 'nli' takes a pair of texts"
    assert [(c.task, c.text_pair) for c in cases] == [("nli", "A man moves."), ("sentiment", None)]


def test_the_command_reports_an_empty_second_text_as_file_line_field_and_imports_the_rest(
    tmp_path,
):
    table = tmp_path / "qqp.csv"
    table.write_text(
        "capability,description,question1,question2,label\n"
        "V,d,Is a ok?,Is a fine?,1\nV,d,Is b ok?, ,1\nV,d,Is c ok?,Is c fine?,0\n"
    )
    out = tmp_path / "cases.jsonl"
    result = run_testaug(tmp_path, "suite", "import", str(table), "-o", str(out), "--task", "qqp")
    assert result.returncode == 0, result.stderr
    assert f"{table}:3: question2: empty second text: task 'paraphrase'" in result.stderr
    assert "imported 2 cases" in result.stdout and "1 rows rejected" in result.stdout
    rejects = written(tmp_path / "cases.rejects.jsonl")
    assert [(r["line"], r["field"]) for r in rejects] == [(3, "question2")]


def test_cases_import_as_template_cases_unless_source_says_otherwise(tmp_path):
    table = tmp_path / "gpt3.csv"
    table.write_text(f"{HEADER}\nVocabulary,d,Great.,2\nVocabulary,d,Awful.,0\n")
    out = tmp_path / "cases.jsonl"
    args = ("suite", "import", str(table), "-o", str(out), "--task", "sentiment")
    assert run_testaug(tmp_path, *args).returncode == 0
    assert {case["source"] for case in written(out)} == {"template"}
    result = run_testaug(tmp_path, *args, "--source", "llm")
    assert result.returncode == 0, result.stderr
    assert {case["source"] for case in written(out)} == {"llm"}


def test_a_source_outside_the_records_sources_is_refused_naming_the_option(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text(f"{HEADER}\nVocabulary,d,Great.,2\n")
    out = tmp_path / "cases.jsonl"
    result = run_testaug(
        tmp_path, "suite", "import", str(table), "-o", str(out), "--task", "sst", "--source", "gpt"
    )
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "--source" in result.stderr and "template, llm, expansion" in result.stderr
    assert not out.exists()


def test_the_help_says_llm_written_suites_import_with_source_llm(tmp_path):
    result = run_testaug(tmp_path, "suite", "import", "--help")
    assert "--source" in result.stdout and "GPT-3" in result.stdout


def test_a_source_column_wins_over_the_source_option_and_the_summary_says_so(tmp_path):
    table = tmp_path / "mixed.csv"
    table.write_text(
        f"{HEADER},source\nVocabulary,d,Great.,2,template\nVocabulary,d,Fine.,1,\n"
        "Vocabulary,d,Awful.,0,gpt3\n"
    )
    out = tmp_path / "cases.jsonl"
    result = run_testaug(
        tmp_path, "suite", "import", str(table), "-o", str(out), "--task", "sst", "--source", "llm"
    )
    assert result.returncode == 0, result.stderr
    assert [case["source"] for case in written(out)] == ["template", "llm", "llm"]
    assert "source column read over --source llm (1 rows)" in result.stdout
