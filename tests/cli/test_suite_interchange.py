"""`testaug suite import` and `suite export` through the command (issue 21): a published
table with a paper's task name and numeric labels, rejects as file:line: field: reason,
each export format, and pickles refused in one line."""

from __future__ import annotations

import json
import pickle
import re
from pathlib import Path

import datasets
import pandas as pd
import pytest

from tests.cli_runner import run_testaug

TINY = Path(__file__).parent.parent / "data" / "tiny"


def test_import_of_a_qqp_table_says_how_it_read_task_and_labels(tmp_path):
    table = tmp_path / "qqp.csv"
    pd.DataFrame(
        {
            "capability": ["Vocabulary", "Vocabulary", "Vocabulary"],
            "description": ["Adjective added", "Adjective added", "Adjective added"],
            "template": [("Is {n} {a:noun}?", "Is {n} {a:adj} {noun}?")] * 3,
            "text": [
                ("Is Ann a cook?", "Is Ann a good cook?"),
                ("Is Bo a cook?", "Is Bo a good cook?"),
                ("Is Cy a cook?", "Is Cy a good cook?"),
            ],
            "label": [1, 1, 3],
        }
    ).to_csv(table, index=False)
    out = tmp_path / "cases.jsonl"
    result = run_testaug(tmp_path, "suite", "import", str(table), "-o", str(out), "--task", "qqp")
    assert result.returncode == 0, result.stderr
    assert "task 'qqp' read as 'paraphrase' (3 rows)" in result.stdout
    assert "numeric labels of 'qqp' read as 0=not_duplicate, 1=duplicate (2 rows)" in result.stdout
    assert "imported 2 cases" in result.stdout and "1 rows rejected" in result.stdout
    assert result.stderr.startswith(f"{table}:4: label: '3' is a number outside qqp's")
    cases = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(c["task"], c["label"], c["template_pair"]) for c in cases] == [
        ("paraphrase", "duplicate", "Is {n} {a:adj} {noun}?")
    ] * 2
    reject = json.loads((tmp_path / "cases.rejects.jsonl").read_text())
    assert (reject["line"], reject["field"]) == (4, "label")


@pytest.mark.parametrize("name", ["release_data.pkl", "table.csv"])
def test_import_of_a_pickle_is_a_one_line_error_and_nothing_is_written(tmp_path, name):
    table = tmp_path / name
    table.write_bytes(pickle.dumps({"capability": ["Vocabulary"]}))
    result = run_testaug(tmp_path, "suite", "import", name, "-o", "cases.jsonl", "--task", "qqp")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {name}: a pickle is never read")
    assert [p.name for p in tmp_path.iterdir() if p.name != "cache"] == [name]


def test_export_writes_each_format_that_pandas_and_datasets_read(tmp_path):
    for output in ("cases.csv", "cases.jsonl", "cases.parquet", "cases_hf"):
        result = run_testaug(
            tmp_path, "suite", "export", str(TINY), "-o", output, "--per-template", "2"
        )
        assert result.returncode == 0, result.stderr
        assert f"exported 8 cases to {output}" in result.stdout
    frames = [
        pd.read_csv(tmp_path / "cases.csv", dtype=str, keep_default_na=False),
        pd.read_json(tmp_path / "cases.jsonl", lines=True, dtype=False),
        pd.read_parquet(tmp_path / "cases.parquet"),
        datasets.load_from_disk(str(tmp_path / "cases_hf")).to_pandas(),
    ]
    texts = [list(frame["text"]) for frame in frames]
    assert all(t == texts[0] for t in texts) and len(texts[0]) == 8
    assert set(frames[0]["task"]) == {"sentiment"}


def test_export_of_a_cases_file_and_a_format_option(tmp_path):
    assert run_testaug(tmp_path, "expand", str(TINY), "-o", "cases.jsonl").returncode == 0
    result = run_testaug(
        tmp_path, "suite", "export", "cases.jsonl", "-o", "table.out", "--format", "csv"
    )
    assert result.returncode == 0, result.stderr
    expanded = (tmp_path / "cases.jsonl").read_text().splitlines()
    assert len(pd.read_csv(tmp_path / "table.out")) == len(expanded)


def test_export_to_an_unknown_suffix_is_a_one_line_error(tmp_path):
    result = run_testaug(tmp_path, "suite", "export", str(TINY), "-o", "cases.xlsx")
    assert result.returncode == 1
    assert result.stderr.strip().startswith("error: cases.xlsx: cannot tell the format")
    assert not (tmp_path / "cases.xlsx").exists()


def test_an_llm_written_suite_gives_its_error_rate_one_interval(tmp_path):
    table = tmp_path / "released.csv"
    nouns, words = ("crew", "seat", "food"), ("great", "awful")
    texts = [f"The {noun} was {word}." for noun in nouns for word in words]
    pd.DataFrame(
        {
            "capability": ["Vocabulary"] * 6,
            "description": ["Sentiment words"] * 6,
            "text": texts,
            "label": ["positive", "negative"] * 3,
        }
    ).to_csv(table, index=False)
    cases = tmp_path / "cases.jsonl"
    imported = run_testaug(
        tmp_path, "suite", "import", str(table), "-o", str(cases), "--task", "sentiment",
        "--source", "llm",
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    result = run_testaug(
        tmp_path, "evaluate", "models", str(cases), "--model", "vader", "--perturb", "0"
    )
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    table_row = re.search(r"│ all │ │ (\d+\.\d%) \(([\d.]+–[\d.]+)\) │", text)
    summary = re.search(r"vader: error rate (\d+\.\d%) \(([\d.]+–[\d.]+)\)", text)
    assert table_row and summary, text
    assert summary.groups() == table_row.groups()
    assert summary.group(2) != "0.0–100.0"
