"""AdaTest's own trees through import and export: hex ids, `Unknown` tests, the `author`
column, columns empty in every row, topics spelled "%20" or with plain spaces and short
labels (`neg`/`pos`) come back as they were."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from testaug.adaptive.adatest_csv import read_adatest_csv
from testaug.adaptive.adatest_export import adatest_csv_text, write_adatest_csv
from testaug.adaptive.adatest_layout import layout_file, load_layout
from testaug.adaptive.label_map import (
    DEFAULT_SHORT_LABELS,
    map_labels,
    parse_label_map,
    resolve_labels,
)
from testaug.adaptive.tree import TestTree, TreeTest
from testaug.adaptive.tree_files import read_tree, write_tree
from testaug.core.errors import InputError
from tests.cli_runner import run_testaug

DATA = Path(__file__).parent.parent / "data" / "adatest"
HOTEL = DATA / "hotel_short_labels.csv"  # canonical columns, neg/pos, Unknown, author, %20
UNKNOWN = DATA / "unknown_and_author.csv"  # score column before author, Unknown tests only
HEX_ID = "e9d9a309571641809be1c37df1ffe80c"
# Shaped like AdaTest's shipped test_trees/abstract_capabilities.csv: topic markers only,
# an empty "model score" column; today's spells topics with plain spaces, "&" and commas,
# the older one calls the topic column "tags", encodes topics ("%20", "%26"), declares
# topics by empty rows and writes "model%20score".
SHIPPED_SHAPES = [DATA / "capabilities_plain_topics.csv", DATA / "capabilities_encoded_topics.csv"]


def csv_rows(path: Path) -> dict[str, dict[str, str]]:
    """Each row by its id: the non-empty cells by column name (column order left aside)."""
    with path.open(newline="") as handle:
        header, *rows = list(csv.reader(handle))
    return {row[0]: {k: v for k, v in zip(header[1:], row[1:], strict=True) if v} for row in rows}


def test_unknown_labelled_tests_are_kept_as_tests_without_a_verdict():
    imported = read_adatest_csv(UNKNOWN)
    rows = imported.tree.rows
    assert len(rows) == 6 and not imported.skipped
    unlabelled = [row for row in rows if row.kind == "unlabelled"]
    assert [(row.topic, row.input, row.output) for row in unlabelled] == [
        ("/", "A test at the top", "POSITIVE"),
        ("/Food", "A test under Food\n", "NEGATIVE"),
        ("/Food/Breakfast", "A test under Breakfast", "NEGATIVE"),
    ]
    assert imported.tree.tests == []  # no verdict: nothing to score


def test_the_author_column_is_kept_through_import_and_export(tmp_path):
    rows = read_adatest_csv(UNKNOWN).tree.rows
    assert rows[-1].author == "maria" and rows[-1].labeler == "imputed"
    hotel = {row.id: row for row in read_adatest_csv(HOTEL).tree.rows}
    assert (hotel[HEX_ID].author, hotel[HEX_ID].labeler) == ("ann", "ann")
    out = tmp_path / "tree.csv"
    write_adatest_csv(out, read_adatest_csv(UNKNOWN).tree)
    assert csv_rows(out)["d2115525e1db42ddbaf670ec9048cd66"]["author"] == "maria"


def test_an_adatest_tree_round_trips_byte_for_byte(tmp_path):
    imported = read_adatest_csv(HOTEL)
    assert not imported.skipped
    tree_path, out = tmp_path / "tree.jsonl", tmp_path / "back.csv"
    write_tree(tree_path, imported.tree)
    result = write_adatest_csv(out, read_tree(tree_path))
    assert not result.notes
    assert out.read_bytes() == HOTEL.read_bytes()


def test_a_round_trip_keeps_every_row_and_every_filled_column(tmp_path):
    out = tmp_path / "back.csv"
    write_adatest_csv(out, read_adatest_csv(UNKNOWN).tree)
    assert csv_rows(out) == csv_rows(UNKNOWN)
    assert list(csv_rows(out)) == list(csv_rows(UNKNOWN))  # row order too
    assert read_adatest_csv(out).tree == read_adatest_csv(UNKNOWN).tree


def test_topic_spaces_are_decoded_on_import_and_encoded_on_export(tmp_path):
    topics = {row.topic for row in read_adatest_csv(HOTEL).tree.rows}
    assert "/Under negation/Double negatives" in topics
    tree = TestTree(
        rows=(
            TreeTest(
                topic="/100% sure/Two words",
                input="x",
                output="pos",
                author="a b",
                source="adatest",
            ),
        )
    )
    out = tmp_path / "tree.csv"
    write_adatest_csv(out, tree)
    assert "/100%25%20sure/Two%20words" in out.read_text()
    assert read_adatest_csv(out).tree == tree


def test_the_label_map_is_applied_when_reading_and_keeps_adatest_ids():
    plain = read_adatest_csv(HOTEL).tree
    mapped = read_adatest_csv(HOTEL, label_map={"neg": "negative", "pos": "positive"}).tree
    assert [row.id for row in mapped.rows] == [row.id for row in plain.rows]
    assert {row.output for row in mapped.rows if row.kind != "topic"} == {"negative", "positive"}
    by_id = {row.id: row for row in mapped.rows}
    assert (by_id[HEX_ID].comparator, by_id[HEX_ID].output) == ("should not be", "negative")


def test_mapping_labels_recomputes_content_ids_but_not_given_ones():
    made = TreeTest(topic="/A", input="fine", output="pos|neu")
    dir_test = TreeTest(
        topic="/A", input="a", comparator="should be no more than", output="b", watched="pos"
    )
    given = TreeTest(id="given", topic="/A", input="fine", output="pos")
    rows = map_labels(TestTree(rows=(made, dir_test, given)), DEFAULT_SHORT_LABELS).rows
    assert rows[0] == TreeTest(topic="/A", input="fine", output="positive|neutral")
    assert (rows[1].output, rows[1].watched) == ("b", "positive")
    assert (rows[2].id, rows[2].output) == ("given", "positive")


def test_a_label_map_option_is_parsed_and_a_bad_one_is_named():
    assert parse_label_map(" neg = negative, pos=positive ") == {
        "neg": "negative",
        "pos": "positive",
    }
    assert parse_label_map(None) == {} and parse_label_map("") == {}
    for bad in ("neg", "neg=", "=negative", "neg=negative,neg=positive"):
        with pytest.raises(InputError) as error:
            parse_label_map(bad)
        assert error.value.problems[0].field == "--label-map"


def test_adatest_short_and_upper_case_labels_resolve_to_the_models_labels_by_default():
    tree = read_adatest_csv(HOTEL).tree.with_rows(
        [TreeTest(topic="/Case", input="It was GREAT", output="POSITIVE")]
    )
    resolved = resolve_labels(tree, ["negative", "neutral", "positive"])
    assert {test.output for test in resolved.tests} == {"negative", "positive"}
    binary = resolve_labels(tree, ["negative", "positive"])
    assert {test.output for test in binary.tests} == {"negative", "positive"}


def test_an_output_label_the_model_does_not_know_names_the_test_id_and_the_flag(tmp_path):
    tree = read_adatest_csv(HOTEL, label_map={"neg": "awful"}).tree
    with pytest.raises(InputError) as error:
        resolve_labels(tree, ["negative", "neutral", "positive"], tree_file="tree.jsonl")
    (problem,) = error.value.problems
    assert problem.field == "output"
    assert HEX_ID in problem.message and "/Under negation" in problem.message
    assert "--label-map awful=LABEL" in problem.message
    mapped = resolve_labels(
        tree, ["negative", "neutral", "positive"], mapping={"awful": "negative"}
    )
    assert "awful" not in {test.output for test in mapped.tests}


def test_cells_a_spreadsheet_would_evaluate_start_with_a_quote_and_import_back(tmp_path):
    inputs = ["=1+1", "-meh", "@host", "+good", "'-kept"]
    tree = TestTree(
        rows=tuple(TreeTest(topic="/Formulas", input=text, output="negative") for text in inputs)
    )
    out = tmp_path / "tree.csv"
    write_adatest_csv(out, tree)
    written = [row["input"] for row in csv_rows(out).values() if row.get("input")]
    assert written == ["'" + text for text in inputs]
    back = read_adatest_csv(out).tree.rows
    assert [(row.topic, row.input, row.output) for row in back] == [
        (row.topic, row.input, row.output) for row in tree.rows
    ]


@pytest.mark.parametrize("source", SHIPPED_SHAPES, ids=lambda path: path.stem)
def test_adatests_shipped_trees_come_back_from_import_then_export(tmp_path, source):
    tree, back = tmp_path / "tree.jsonl", tmp_path / "back.csv"
    imported = run_testaug(tmp_path, "tree", "import", str(source), "-o", str(tree))
    assert imported.returncode == 0, imported.stderr
    topics = {row.topic for row in read_tree(tree).rows}
    assert {"/Weather/Rain & snow", "/Input/Weather/Rain & snow"} & topics  # read decoded
    exported = run_testaug(tmp_path, "tree", "export", str(tree), "-o", str(back))
    assert exported.returncode == 0, exported.stderr
    assert back.read_text() == source.read_text()


def test_columns_empty_in_every_row_come_back_in_their_place(tmp_path):
    source = tmp_path / "tree.csv"
    source.write_text(
        ",topic,input,output,label,labeler,description,model score,author,query\n"
        "a1,/Food,,,topic_marker,anonymous,,,,\n"
        "a2,/Food/Hot soup,The soup was cold,negative,pass,anonymous,,,,\n"
    )
    imported = read_adatest_csv(source)
    text, result = adatest_csv_text(imported.tree, layout=imported.layout)
    assert text == source.read_text() and not result.notes


def test_new_topics_and_models_follow_the_files_spelling():
    imported = read_adatest_csv(SHIPPED_SHAPES[0])
    added = TreeTest(
        topic="/Weather/Heat waves", input="It was hot.", output="negative", scores={"vader": 0.25}
    )
    tree = imported.tree.with_rows([added])
    header, *rows = adatest_csv_text(tree, layout=imported.layout)[0].splitlines()
    assert header == ",topic,input,output,label,labeler,description,model score,vader score"
    assert rows[-1].split(",")[1:3] == ["/Weather/Heat waves", "It was hot."]
    plain, _ = adatest_csv_text(tree)  # no layout: AdaTest's own spelling and columns
    assert plain.splitlines()[0] == ",topic,input,output,label,labeler,description,vader score"
    assert "/Weather/Heat%20waves" in plain and "/Weather/Rain%20&%20snow" in plain


def test_a_scored_copy_of_an_imported_tree_exports_in_the_files_columns(tmp_path):
    tree, scored, back = tmp_path / "tree.jsonl", tmp_path / "scored.jsonl", tmp_path / "b.csv"
    assert run_testaug(tmp_path, "tree", "import", str(HOTEL), "-o", str(tree)).returncode == 0
    args = ("tree", "score", str(tree), "--model", "vader", "--task", "sentiment")
    result = run_testaug(tmp_path, *args, "-o", str(scored))
    assert result.returncode == 0, result.stderr
    assert load_layout(scored) == load_layout(tree) is not None
    assert run_testaug(tmp_path, "tree", "export", str(scored), "-o", str(back)).returncode == 0
    header = back.read_text().splitlines()[0]
    assert header == HOTEL.read_text().splitlines()[0] + ",vader score"


def test_a_damaged_layout_file_is_named(tmp_path):
    tree = tmp_path / "tree.jsonl"
    assert run_testaug(tmp_path, "tree", "import", str(HOTEL), "-o", str(tree)).returncode == 0
    layout_file(tree).write_text("{not json")
    result = run_testaug(tmp_path, "tree", "export", str(tree), "-o", str(tmp_path / "b.csv"))
    assert result.returncode == 1 and "tree.adatest.json" in result.stderr
    assert "Traceback" not in result.stderr
