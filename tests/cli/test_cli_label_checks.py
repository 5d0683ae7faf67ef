"""Unknown labels through the command: `suite import` rejects a row whose label is not one of
its task's, and evaluate and generate stop with a one-line error naming file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

from testaug.core.jsonl import write_jsonl
from testaug.core.records import TestCase
from tests.cli_runner import run_testaug

HEADER = "capability,description,text,label"


def test_suite_import_rejects_a_label_outside_the_tasks_labels(tmp_path: Path):
    table = tmp_path / "table.csv"
    table.write_text(f"{HEADER}\nVocabulary,d,Great.,positive\nVocabulary,d,Odd.,bogus\n")
    out = tmp_path / "cases.jsonl"
    result = run_testaug(
        tmp_path, "suite", "import", str(table), "-o", str(out), "--task", "sentiment"
    )
    assert "1 rows rejected" in result.stdout
    assert f"{table}:3: label: 'bogus' is not one of negative, neutral, positive" in result.stderr
    assert [json.loads(line)["label"] for line in out.read_text().splitlines()] == ["positive"]


def test_suite_import_refuses_a_task_columns_label_outside_the_tasks_labels(tmp_path: Path):
    table = tmp_path / "table.csv"
    table.write_text(
        f"task,{HEADER}\nsentiment,Vocabulary,d,Great.,positive\nsentiment,Vocabulary,d,Odd.,bogus\n"
    )
    out = tmp_path / "cases.jsonl"
    result = run_testaug(tmp_path, "suite", "import", str(table), "-o", str(out))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"{table}: label: label 'bogus' is not a label of task 'sentiment'" in result.stderr
    assert not out.exists()


def test_suite_import_takes_any_label_of_a_task_without_a_shipped_suite(tmp_path: Path):
    table = tmp_path / "table.csv"
    table.write_text(f"{HEADER}\nVocabulary,d,Great.,bogus\n")
    out = tmp_path / "cases.jsonl"
    result = run_testaug(tmp_path, "suite", "import", str(table), "-o", str(out), "--task", "own")
    assert result.returncode == 0 and len(out.read_text().splitlines()) == 1


def bogus_cases(tmp_path: Path) -> Path:
    path = tmp_path / "cases.jsonl"
    fields = {"task": "sentiment", "capability": "Vocabulary", "description_id": "d"}
    write_jsonl(
        path,
        [
            TestCase(**fields, description="D.", text="Great.", label="positive"),
            TestCase(**fields, description="D.", text="Odd.", label="bogus"),
        ],
    )
    return path


def test_evaluate_stops_at_a_case_with_an_unknown_label(tmp_path: Path):
    cases = bogus_cases(tmp_path)
    result = run_testaug(tmp_path, "evaluate", str(cases), "--model", "vader")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"{cases}:2: label: label 'bogus' is not a label of task 'sentiment'" in result.stderr


def test_generate_from_cases_stops_at_an_unknown_label(tmp_path: Path):
    cases = bogus_cases(tmp_path)
    result = run_testaug(
        tmp_path, "generate", str(cases), "-o", str(tmp_path / "c.jsonl"), "--dry-run"
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"{cases}:2: label: label 'bogus'" in result.stderr
