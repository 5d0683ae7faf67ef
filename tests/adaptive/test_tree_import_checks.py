"""Numbers and ids are checked where they are read: a tree import refuses scores no tree file
could hold and repeated ids; suggestions, tree reports and report inputs refuse NaN, Infinity
and out-of-range values, naming the file, line and field; retest errors name the line."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from testaug.adaptive.retest import TopicResult, TreeReport, read_tree_report
from testaug.adaptive.suggestion import Suggestion
from testaug.adaptive.tree import TreeTest
from testaug.adaptive.tree_files import write_tree
from testaug.core.errors import InputError
from testaug.core.jsonl import read_jsonl
from tests.cli_runner import run_testaug

HEADER = ",topic,input,output,label,labeler,description,vader score\n"


def one_line(result) -> str:
    return " ".join((result.stdout + result.stderr).split())


@pytest.mark.parametrize("score", ["1e999", "inf", "-Infinity", "nan", "0.2|1e999"])
def test_tree_import_refuses_a_score_that_is_not_finite(tmp_path, score):
    (tmp_path / "tree.csv").write_text(
        HEADER
        + "a1,/Negation,Not bad.,positive,pass,me,,0.1\n"
        + f"a2,/Negation,Not good.,negative,pass,me,,{score}\n"
    )
    result = run_testaug(tmp_path, "tree", "import", "tree.csv", "-o", "tree.jsonl")
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "tree.csv:3: vader score:" in one_line(result) and "not a finite number" in one_line(
        result
    )
    assert not (tmp_path / "tree.jsonl").exists()


def test_tree_import_reads_finite_scores_back(tmp_path):
    (tmp_path / "tree.csv").write_text(HEADER + "a1,/Negation,Not bad.,positive,pass,me,,1e300\n")
    result = run_testaug(tmp_path, "tree", "import", "tree.csv", "-o", "tree.jsonl")
    assert result.returncode == 0, result.stderr
    [row] = list(read_jsonl(tmp_path / "tree.jsonl", TreeTest))
    assert row.scores == {"vader": 1e300}


def test_tree_import_refuses_repeated_ids_naming_both_lines(tmp_path):
    (tmp_path / "tree.csv").write_text(
        HEADER
        + "same,/Negation,Not bad.,positive,pass,me,,\n"
        + "other,/Negation,Fine.,positive,pass,me,,\n"
        + "same,/Negation,Not good.,negative,pass,me,,\n"
    )
    result = run_testaug(tmp_path, "tree", "import", "tree.csv", "-o", "tree.jsonl")
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "tree.csv:4: id: repeats the id of the row on line 2" in one_line(result)
    assert not (tmp_path / "tree.jsonl").exists()


def test_a_tree_row_refuses_a_score_that_is_not_finite():
    with pytest.raises(ValueError, match="finite"):
        TreeTest(topic="/a", input="x", output="positive", scores={"m": float("inf")})


def suggestion_line(**fields) -> str:
    test = TreeTest(topic="/Negation", input="Not bad.", output="positive")
    data = {
        "test": test.model_dump(mode="json"),
        "focus_topic": "/Negation",
        "target_model": "vader",
        **fields,
    }
    return json.dumps(data)


@pytest.mark.parametrize("value", ["1.5", "-0.1", "NaN", "Infinity"])
def test_a_suggestions_file_refuses_p_valid_out_of_range(tmp_path, value):
    good = suggestion_line(p_valid=0.5)
    bad = suggestion_line(p_valid=0.5).replace('"p_valid": 0.5', f'"p_valid": {value}')
    path = tmp_path / "suggestions.jsonl"
    path.write_text(good + "\n" + bad + "\n")
    with pytest.raises(InputError) as caught:
        list(read_jsonl(path, Suggestion))
    problem = caught.value.problems[0]
    assert (problem.file, problem.line, problem.field) == (path, 2, "p_valid")


def report_with(rate: object) -> str:
    topic = TopicResult(
        topic="/",
        tests=2,
        failing=1,
        failure_rate=50.0,
        direct_tests=2,
        direct_failing=1,
        direct_failure_rate=50.0,
    )
    report = TreeReport(
        model="m", tree_file="t.jsonl", created_at=datetime.now(UTC), topics=(topic,)
    )
    text = report.model_dump_json()
    return text.replace('"failure_rate":50.0', f'"failure_rate":{rate}')


@pytest.mark.parametrize("rate", ["500.0", "-1", "NaN", "Infinity", "1e999"])
def test_a_previous_tree_report_refuses_rates_out_of_range(tmp_path, rate):
    path = tmp_path / "before.json"
    path.write_text(report_with(rate))
    with pytest.raises(InputError) as caught:
        read_tree_report(path)
    problem = caught.value.problems[0]
    assert problem.file == path and problem.field == "topics[0].failure_rate"


def test_the_run_report_refuses_an_input_rate_of_500_percent(tmp_path):
    from testaug.reports.run_report import write_report

    (tmp_path / "tree_report.json").write_text(report_with("500.0"))
    with pytest.raises(InputError, match=r"tree_report\.json: topics\[0\]\.failure_rate"):
        write_report(tmp_path)
    assert not (tmp_path / "report.md").exists()


def test_the_run_report_refuses_a_number_that_is_not_finite_in_any_input(tmp_path):
    from pydantic import BaseModel

    from testaug.reports.run_report import read_summary

    class Numbers(BaseModel):
        rows: list[dict[str, float]]

    path = tmp_path / "numbers.json"
    path.write_text('{"rows": [{"a": 1.0}, {"a": 2.0, "b": 1e999}]}')
    with pytest.raises(InputError) as caught:
        read_summary(path, Numbers)
    problem = caught.value.problems[0]
    assert (problem.file, problem.field) == (path, "rows[1].b")
    path.write_text('{"rows": [{"a": 1.0}]}')
    assert read_summary(path, Numbers) == Numbers(rows=[{"a": 1.0}])


def test_tree_retest_names_the_file_and_line_of_a_test_with_an_unknown_label(tmp_path):
    rows = [
        TreeTest(topic="/Negation", input="Not bad.", output="positive"),
        TreeTest(topic="/Negation", input="So so.", output="meh"),
    ]
    write_tree(tmp_path / "tree.jsonl", rows)
    result = run_testaug(
        tmp_path, "tree", "retest", "tree.jsonl", "--model", "vader", "--task", "sentiment",
        "-o", "report.json",
    )  # fmt: skip
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "tree.jsonl:2: output: test" in one_line(result) and "'meh'" in one_line(result)
