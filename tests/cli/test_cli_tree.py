"""`testaug tree`: from-suite, import, export, score and retest, end to end in process."""

from __future__ import annotations

import json
from pathlib import Path

from testaug.adaptive.adatest_csv import read_adatest_csv
from testaug.adaptive.retest import read_tree_report
from testaug.adaptive.tree import TestTree, TreeTest
from testaug.adaptive.tree_files import read_tree, write_tree
from tests.cli_runner import run_testaug

THREE = "py:tests.adaptive.fixed_models:three"
THREE_V2 = "py:tests.adaptive.fixed_models:three_v2"


def small_tree(path):
    rows = (
        TreeTest(kind="topic", topic="/Empty"),
        TreeTest(topic="/Clear", input="clear win", output="positive"),
        TreeTest(topic="/Clear/Close", input="close call", output="positive"),
        TreeTest(topic="/Neg", input="negative one", output="negative"),
    )
    write_tree(path, TestTree(rows=rows))
    return path


def test_from_suite_writes_a_tree_with_a_topic_per_description(tmp_path, tiny_suite_path):
    out = tmp_path / "tree.jsonl"
    result = run_testaug(
        tmp_path, "tree", "from-suite", str(tiny_suite_path), "-o", str(out), "--per-template", "2"
    )
    assert result.returncode == 0, result.stderr
    tree = read_tree(out)
    assert "4 topics" in result.stdout and f"{len(tree.tests)} tests" in result.stdout
    assert "/Negation/A negative sentence with a negated positive verb." in tree.topics()


def test_from_suite_samples_ten_cases_per_template_unless_told_to_take_every_fill(
    tmp_path, tiny_suite_path
):
    from testaug.suites.cases import expand_suite
    from testaug.suites.load import load_suite

    suite = load_suite(tiny_suite_path)
    every = len(list(expand_suite(suite, per_template=None, seed=0)))
    sampled = len(list(expand_suite(suite, per_template=10, seed=0)))
    sizes = {}
    for option in ((), ("--per-template", "0")):
        out = tmp_path / f"tree{len(option)}.jsonl"
        args = ("tree", "from-suite", str(tiny_suite_path), "-o", str(out), *option)
        assert run_testaug(tmp_path, *args).returncode == 0
        sizes[option] = len(read_tree(out).tests)
    assert sizes[()] == sampled and sizes[("--per-template", "0")] == every


def test_from_suite_reads_a_cases_file(tmp_path, tiny_suite_path):
    cases = tmp_path / "cases.jsonl"
    assert run_testaug(tmp_path, "expand", str(tiny_suite_path), "-o", str(cases)).returncode == 0
    out = tmp_path / "tree.jsonl"
    result = run_testaug(tmp_path, "tree", "from-suite", str(cases), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert len(read_tree(out).tests) == len(cases.read_text().splitlines())


def test_import_and_export_go_through_adatest_csv(tmp_path):
    tree_path = small_tree(tmp_path / "tree.jsonl")
    csv_path = tmp_path / "tree.csv"
    result = run_testaug(tmp_path, "tree", "export", str(tree_path), "-o", str(csv_path))
    assert result.returncode == 0, result.stderr
    assert "wrote 4 rows" in result.stdout
    back = tmp_path / "back.jsonl"
    result = run_testaug(tmp_path, "tree", "import", str(csv_path), "-o", str(back))
    assert result.returncode == 0, result.stderr
    assert [row.id for row in read_tree(back).rows] == [row.id for row in read_tree(tree_path).rows]
    assert read_adatest_csv(csv_path).format == "label"


def test_export_lists_the_tests_the_format_cannot_hold(tmp_path):
    tree_path = tmp_path / "tree.jsonl"
    same = TreeTest(topic="/Inv", input="a", comparator="should be the same as for", output="b")
    label = TreeTest(topic="/Inv", input="c", comparator="should be", output="positive")
    write_tree(tree_path, [same, label])
    result = run_testaug(tmp_path, "tree", "export", str(tree_path), "-o", str(tmp_path / "t.csv"))
    assert result.returncode == 0
    assert "left out" in result.stderr and same.id in result.stderr
    assert label.id in (tmp_path / "t.csv").read_text()


def test_score_fills_each_models_column(tmp_path):
    tree_path = small_tree(tmp_path / "tree.jsonl")
    out = tmp_path / "scored.jsonl"
    result = run_testaug(
        tmp_path, "tree", "score", str(tree_path), "--model", THREE, "--model", "vader",
        "--task", "sentiment", "-o", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert all(set(test.scores) == {THREE, "vader"} for test in read_tree(out).tests)


def test_retest_highlights_topics_that_newly_fail(tmp_path):
    tree_path = small_tree(tmp_path / "tree.jsonl")
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    labels = ("--labels", "negative,neutral,positive")
    result = run_testaug(
        tmp_path, "tree", "retest", str(tree_path), "--model", THREE, *labels, "-o", str(before),
        "--scored-tree", str(tmp_path / "scored.jsonl"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert all(THREE in test.scores for test in read_tree(tmp_path / "scored.jsonl").tests)
    result = run_testaug(
        tmp_path, "tree", "retest", str(tree_path), "--model", THREE_V2, *labels,
        "--previous", str(before), "-o", str(after),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = read_tree_report(after)
    assert [c.topic for c in report.newly_failing] == ["/", "/Clear", "/Clear/Close"]
    assert "3 topic(s) newly failing" in result.stdout
    assert (
        "│ /Clear/Close │     1 │       1 │       100.0% │    1/1 │ newly failing │"
        in result.stdout
    )
    assert json.loads(after.read_text())["previous_model"] == THREE


def test_missing_labels_and_empty_trees_are_one_line_errors(tmp_path):
    tree_path = small_tree(tmp_path / "tree.jsonl")
    out = tmp_path / "r.json"
    result = run_testaug(
        tmp_path, "tree", "retest", str(tree_path), "--model", THREE, "-o", str(out)
    )
    assert result.returncode == 1
    assert "--labels" in result.stderr and "Traceback" not in result.stderr
    empty = tmp_path / "empty.jsonl"
    write_tree(empty, [TreeTest(kind="topic", topic="/x")])
    result = run_testaug(
        tmp_path, "tree", "score", str(empty), "--model", "vader", "--task", "sentiment",
        "-o", str(out),
    )  # fmt: skip
    assert result.returncode == 1 and "no tests" in result.stderr
    assert not out.exists()


HOTEL = Path(__file__).parent.parent / "data" / "adatest" / "hotel_short_labels.csv"
HEX_ID = "e9d9a309571641809be1c37df1ffe80c"
THREE_LABELS = ("--labels", "negative,neutral,positive")


def short_label_tree(path, output="neg"):
    rows = (
        TreeTest(
            id="17a451698bf542d8a0f5f2b1a2ed4f1f", topic="/P", input="clear win", output="pos"
        ),
        TreeTest(id=HEX_ID, topic="/N", input="negative one", output=output),
    )
    write_tree(path, TestTree(rows=rows))
    return path


def test_import_applies_the_label_map_and_keeps_unknown_tests(tmp_path):
    out = tmp_path / "tree.jsonl"
    result = run_testaug(
        tmp_path, "tree", "import", str(HOTEL), "-o", str(out),
        "--label-map", "neg=negative,pos=positive",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = read_tree(out).rows
    assert {row.output for row in rows if row.kind != "topic"} == {"negative", "positive"}
    assert "1 without a verdict" in result.stdout and "skipped" not in result.stderr


def test_retest_maps_adatest_short_labels(tmp_path):
    tree_path = short_label_tree(tmp_path / "tree.jsonl")
    for option in (("--label-map", "neg=negative,pos=positive"), ()):  # the default maps them
        out = tmp_path / "report.json"
        result = run_testaug(
            tmp_path, "tree", "retest", str(tree_path), "--model", THREE, *THREE_LABELS,
            "-o", str(out), *option,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert read_tree_report(out).overall.tests == 2


def test_retest_of_adatests_hotel_tree_on_vader_needs_no_hand_editing(tmp_path):
    tree_path = tmp_path / "hotel.jsonl"
    assert run_testaug(tmp_path, "tree", "import", str(HOTEL), "-o", str(tree_path)).returncode == 0
    out = tmp_path / "report.json"
    result = run_testaug(
        tmp_path, "tree", "retest", str(tree_path), "--model", "vader", "--task", "sentiment",
        "-o", str(out), "--label-map", "neg=negative,pos=positive",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert read_tree_report(out).overall.tests == 4


def test_an_unknown_output_label_error_shows_the_real_test_id_and_the_flag(tmp_path):
    tree_path = short_label_tree(tmp_path / "tree.jsonl", output="awful")
    result = run_testaug(
        tmp_path, "tree", "retest", str(tree_path), "--model", THREE, *THREE_LABELS,
        "-o", str(tmp_path / "r.json"),
    )  # fmt: skip
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert HEX_ID in result.stderr and "***" not in result.stderr
    assert "--label-map awful=LABEL" in result.stderr
