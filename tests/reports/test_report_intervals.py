"""The report and the printed summary show every error rate with its 95% interval, and the
bar charts draw them as error bars."""

from __future__ import annotations

import json
from pathlib import Path

from testaug.core.jsonl import write_jsonl
from testaug.reports.plots import error_rates_png
from testaug.reports.run_report import write_report
from tests.cli_runner import run_testaug
from tests.reports.test_reports import case

CASES = [
    case("The food was great.", "positive", "Vocabulary"),
    case("I love this airline.", "positive", "Vocabulary"),
    case("The seats were awful.", "negative", "Vocabulary"),
    case("The crew was not great.", "negative", "Negation"),  # the keyword model fails it
    case("I do not hate the food.", "positive", "Negation", "llm", "people"),  # and this
    case("The staff was bad.", "negative", "Negation", "llm", "ranker"),
]


def evaluate(run_dir: Path, *options: str):
    write_jsonl(run_dir / "cases.jsonl", CASES)
    return run_testaug(
        run_dir, "evaluate", "cases.jsonl", "--model", "py:tests.models_fixture:predict",
        "--perturb", "0", "-o", "evaluation.json", *options,
        env={"COLUMNS": "80"},
    )  # fmt: skip


def test_the_printed_summary_shows_rates_with_intervals_within_80_columns(tmp_path):
    done = evaluate(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "error rate per capability and test type (95% interval)" in done.stdout
    assert "66.7% (20.8–93.9)" in done.stdout  # Negation MFT, 2 of 3 on all cases
    assert "error rate 40.0% (11.8–76.9)" in done.stdout  # the headline: 2 of 5 verified
    table = done.stdout.split("perturbed cases")[0]
    assert max(len(line) for line in table.splitlines()) <= 80


def test_the_report_shows_intervals_and_says_what_they_are(tmp_path):
    assert evaluate(tmp_path).returncode == 0
    markdown = write_report(tmp_path).markdown.read_text()
    assert "95% interval in brackets (Wilson score interval" in markdown
    assert "| py:tests.models_fixture:predict | 40.0% (11.8–76.9), 2/5 |" in markdown
    assert "| Negation | 100.0% (34.2–100.0), 2/2 |" in markdown  # headline per capability
    assert "| template | 25.0% (4.6–69.9), 1/4 |" in markdown  # by source


def test_with_all_evidence_and_no_labels_the_report_marks_the_verified_only_interval(tmp_path):
    assert evaluate(tmp_path, "--evidence", "all").returncode == 0
    markdown = write_report(tmp_path).markdown.read_text()
    # 2 of 6 cases fail; the interval is Wilson's on the 5 verified cases, 2 failing
    assert "| 33.3% (11.8–76.9) on verified only, 2/6 |" in markdown
    assert "no people's labels of the generator" in markdown


def test_an_evaluation_json_without_intervals_renders_without_them(tmp_path):
    assert evaluate(tmp_path).returncode == 0
    path = tmp_path / "evaluation.json"

    def strip(node):
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k not in ("interval", "interval_note")}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    old = strip(json.loads(path.read_text()))
    for model in old["models"]:
        model.pop("error_rate_interval")
    path.write_text(json.dumps(old))
    markdown = write_report(tmp_path).markdown.read_text()
    assert "| py:tests.models_fixture:predict | 40.0%, 2/5 |" in markdown
    assert "Wilson" not in markdown


def test_bar_charts_draw_error_bars_where_intervals_are_given():
    rates = {"m": {"Negation": 50.0, "Vocabulary": 10.0}}
    plain = error_rates_png(rates)
    with_bars = error_rates_png(rates, intervals={"m": {"Negation": (20.0, 80.0)}})
    assert with_bars != plain
    assert with_bars == error_rates_png(rates, intervals={"m": {"Negation": (20.0, 80.0)}})
