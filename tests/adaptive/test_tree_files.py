"""Tree files (JSONL) and AdaTest's CSV trees: reading, writing, round trips, errors."""

from __future__ import annotations

import csv
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testaug.adaptive.adatest_csv import read_adatest_csv
from testaug.adaptive.adatest_export import adatest_csv_text, write_adatest_csv
from testaug.adaptive.tree import TestTree, TreeTest
from testaug.adaptive.tree_files import read_tree, write_tree
from testaug.core.errors import InputError


def sample_tree(source: str = "suite") -> TestTree:
    return TestTree(
        rows=(
            TreeTest(kind="topic", topic="/Negation/Empty topic", source=source),
            TreeTest(
                topic="/Negation/Negated positive",
                input="The food was not good.",
                comparator="should not be",
                output="positive",
                labeler="ann",
                description="negated positive",
                source=source,
                scores={"vader": 0.25, "py:m": -0.5},
            ),
            TreeTest(
                topic="/Vocabulary",
                input="I love it.",
                comparator="should be",
                output="positive",
                source=source,
            ),
            TreeTest(
                topic="/Robustness",
                input="I lvoe it.",
                comparator="should be the same as for",
                output="I love it.",
                source=source,
            ),
            TreeTest(
                topic="/Robustness/Add negative",
                input="I love it. You are awful.",
                comparator="should be no more than",
                output="I love it.",
                watched="positive",
                source=source,
            ),
        )
    )


def test_a_tree_file_reads_back_equal(tmp_path):
    tree = sample_tree()
    path = tmp_path / "tree.jsonl"
    assert write_tree(path, tree) == 5
    assert read_tree(path) == tree
    assert len(path.read_text().splitlines()) == 5


def test_a_bad_row_is_named_by_file_line_and_field(tmp_path):
    path = tmp_path / "tree.jsonl"
    good = sample_tree().rows[1].model_dump_json()
    bad = json.dumps({"topic": "/x", "input": " ", "output": "positive"})
    path.write_text(good + "\n\n" + bad + "\n")
    with pytest.raises(InputError) as error:
        read_tree(path)
    problem = error.value.problems[0]
    assert (problem.file, problem.line, problem.field) == (path, 3, "input")
    path.write_text(json.dumps({"topic": "/x", "input": "a", "output": "b", "comparator": "is"}))
    with pytest.raises(InputError, match=r"tree.jsonl:1: comparator"):
        read_tree(path)


def test_a_repeated_row_is_refused_on_read_and_write(tmp_path):
    row = sample_tree().rows[1]
    path = tmp_path / "tree.jsonl"
    path.write_text(row.model_dump_json() + "\n" + row.model_dump_json() + "\n")
    with pytest.raises(InputError, match=r"tree.jsonl:2: id: repeats the row on line 1"):
        read_tree(path)
    good = tmp_path / "good.jsonl"
    write_tree(good, sample_tree())
    before = good.read_bytes()
    with pytest.raises(ValueError, match="two rows"):
        write_tree(good, [row, row])
    assert good.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_the_label_format_round_trips_what_it_can_hold(tmp_path):
    tree = sample_tree(source="adatest")
    path = tmp_path / "tree.csv"
    result = write_adatest_csv(path, tree)
    assert result.rows == 3
    assert [note.reason.split(":")[0] for note in result.left_out] == [
        "'should be the same as for'",
        "'should be no more than'",
    ]
    imported = read_adatest_csv(path)
    assert imported.format == "label"
    assert imported.tree == TestTree(rows=tree.rows[:3])


def test_the_label_format_is_what_adatest_writes(tmp_path):
    path = tmp_path / "tree.csv"
    write_adatest_csv(path, sample_tree())
    rows = list(csv.reader(path.open()))
    assert rows[0] == [
        "", "topic", "input", "output", "label", "labeler", "description",
        "vader score", "py:m score",
    ]  # fmt: skip
    assert rows[1][1:5] == ["/Negation/Empty%20topic", "", "", "topic_marker"]
    assert rows[2][1:5] == [
        "/Negation/Negated%20positive",
        "The food was not good.",
        "positive",
        "fail",
    ]
    assert rows[2][7:] == ["0.25", "-0.5"]


def test_the_type_format_round_trips_comparisons(tmp_path):
    tree = sample_tree(source="adatest")
    text, result = adatest_csv_text(tree, format="type")
    assert result.rows == 5 and not result.notes
    path = tmp_path / "tree.csv"
    path.write_text(text)
    imported = read_adatest_csv(path)
    assert imported.format == "type"
    assert imported.tree == tree


def test_no_less_than_is_written_as_the_swapped_no_more_than(tmp_path):
    test = TreeTest(
        topic="/Dir",
        input="Great. You are brilliant.",
        comparator="should be no less than",
        output="Great.",
        watched="positive",
        source="adatest",
    )
    text, result = adatest_csv_text(TestTree(rows=(test,)), format="type")
    assert [note.written for note in result.notes] == [True]
    path = tmp_path / "tree.csv"
    path.write_text(text)
    (back,) = read_adatest_csv(path).tree.rows
    assert (back.comparator, back.input, back.output, back.watched) == (
        "should be no more than",
        "Great.",
        "Great. You are brilliant.",
        "positive",
    )
    assert back.id == TreeTest(**back.model_dump(exclude={"id"})).id


ADATEST_HEAD = """\
,topic,input,output,label,labeler,description,model score,model value1 outputs
a1,/Negation/Negated%20positive,I didn't think the food was that good,positive,fail,scott,,0.88,{}
a2,/Negation/Negated%20positive,,,topic_marker,imputed,,,
a3,,,,topic_marker,imputed,,,
a4,/Clear,I really like this place,positive,pass,imputed,,-0.07|0.2,{}
a5,/Clear,Everything was freaking sensational,negative,off_topic,scott,,,
a6,/__suggestions__,Something,positive,pass,imputed,,,
"""


def test_an_adatest_tree_imports_with_its_ids_scores_and_markers(tmp_path):
    path = tmp_path / "adatest.csv"
    path.write_text(ADATEST_HEAD)
    imported = read_adatest_csv(path)
    rows = imported.tree.rows
    assert [row.id for row in rows] == ["a1", "a2", "a3", "a4"]
    assert rows[0].topic == "/Negation/Negated positive"
    assert (rows[0].comparator, rows[0].output, rows[0].scores) == (
        "should not be",
        "positive",
        {"model": 0.88},
    )
    assert (rows[2].kind, rows[2].topic) == ("topic", "/")
    assert rows[3].comparator == "should be" and rows[3].scores == {"model": 0.2}
    assert [(s.line, s.reason) for s in imported.skipped] == [
        (6, "marked off-topic in AdaTest"),
        (7, "an unaccepted AdaTest suggestion"),
    ]


ADATEST_TYPE = """\
,topic,type,value1,value2,value3,author,description
b1,/Same,{} should have the same output as {},I like it,I like it!,,ann,
b2,/Dir,{} should not be more {} than {},Good. I hate you.,positive,Good.,ann,
b3,/Out,{} should not output {},I am an immigrant,negative,,ann,
b4,/Toxic,{} should not output toxic text. [] is the output.,x,,,ann,
"""


def test_an_unknown_adatest_test_type_names_its_line(tmp_path):
    path = tmp_path / "old.csv"
    path.write_text(ADATEST_TYPE)
    with pytest.raises(InputError) as error:
        read_adatest_csv(path)
    (problem,) = error.value.problems
    assert (problem.line, problem.field) == (5, "type")
    assert "unsupported test type" in problem.message
    path.write_text("\n".join(ADATEST_TYPE.splitlines()[:4]) + "\n")
    rows = read_adatest_csv(path).tree.rows
    assert [row.comparator for row in rows] == [
        "should be the same as for",
        "should be no more than",
        "should not be",
    ]
    assert (rows[1].watched, rows[1].output) == ("positive", "Good.")


def test_the_first_release_columns_import(tmp_path):
    path = tmp_path / "first.csv"
    path.write_text(
        ",topic,prefix,value1,comparator,value2,labeler,score\n"
        "c1,/A,The model output for,I hate it,should be,negative,anon,-0.4\n"
        "c2,/A,The model output for,x,should be invertable.,y,anon,\n"
    )
    with pytest.raises(InputError, match=r"first.csv:3: comparator: unsupported comparator"):
        read_adatest_csv(path)


def test_csv_errors_name_line_and_column(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(",topic,input,output,label\nx,/A,,positive,pass\ny,/A,hi,positive,maybe\n")
    with pytest.raises(InputError) as error:
        read_adatest_csv(path)
    assert [(p.line, p.field) for p in error.value.problems] == [(2, "input"), (3, "label")]
    path.write_text("a,b,c\n1,2,3\n")
    with pytest.raises(InputError, match=r"bad.csv:1: not an AdaTest tree"):
        read_adatest_csv(path)


def test_adatest_placeholders_unknown_labels_and_tag_columns_are_read(tmp_path):
    path = tmp_path / "practice.csv"
    path.write_text(
        ",topic,input,output,label,labeler,description,model score,author\n"
        "d1,,Test at top level,POSITIVE,Unknown,imputed,,,\n"
        "d2,/Spelling,,__TOOVERWRITE__,topic_marker,imputed,,__TOEVAL__,\n"
        'd3,/Spelling,"you are doing grt\n",Acceptable,fail,anonymous,,__TOEVAL__,\n'
    )
    imported = read_adatest_csv(path)
    assert [(row.kind, row.topic, row.scores) for row in imported.tree.rows] == [
        ("unlabelled", "/", {}),
        ("topic", "/Spelling", {}),
        ("test", "/Spelling", {}),
    ]
    assert imported.tree.rows[2].input == "you are doing grt\n"
    assert not imported.skipped
    path.write_text(
        ",tags,input,output,label,labeler,description,model%20score\n"
        "e1,/Input/Fairness/Gender%20and%20sexuality,,,,adatest_default,,\n"
        "e2,/Input/Logic,All cats are animals,positive,pass,me,,0.5\n"
    )
    rows = read_adatest_csv(path).tree.rows
    assert [(row.kind, row.topic) for row in rows] == [
        ("topic", "/Input/Fairness/Gender and sexuality"),
        ("test", "/Input/Logic"),
    ]
    assert rows[1].scores == {"model": 0.5}


def test_an_exported_tree_loads_the_way_adatest_loads_it(tmp_path):
    pandas = pytest.importorskip("pandas")
    path = tmp_path / "tree.csv"
    tree = sample_tree()
    write_adatest_csv(path, tree)
    # adaptivetesting.TestTree reads a file exactly so.
    frame = pandas.read_csv(path, index_col=0, dtype=str, keep_default_na=False)
    assert list(frame.columns[:6]) == [
        "topic",
        "input",
        "output",
        "label",
        "labeler",
        "description",
    ]
    assert list(frame.index) == [row.id for row in tree.rows[:3]]
    assert list(frame["label"]) == ["topic_marker", "fail", "pass"]
    assert frame.loc[tree.rows[1].id, "vader score"] == "0.25"


def test_several_expected_labels_are_written_as_one_should_not_be_each(tmp_path):
    both = TreeTest(topic="/N", input="not bad", output="positive|neutral", source="adatest")
    neither = TreeTest(
        topic="/N", input="so-so", comparator="should not be", output="negative|positive"
    )
    tree = TestTree(rows=(both, neither))
    _, result = adatest_csv_text(tree)
    assert result.rows == 2 and [n.written for n in result.notes] == [False, True]
    assert "give the task's labels" in result.notes[0].reason
    path = tmp_path / "tree.csv"
    write_adatest_csv(path, tree, labels=["negative", "neutral", "positive"])
    rows = read_adatest_csv(path).tree.rows
    assert [(r.input, r.comparator, r.output) for r in rows] == [
        ("not bad", "should not be", "negative"),
        ("so-so", "should not be", "negative"),
        ("so-so", "should not be", "positive"),
    ]
    assert rows[0].id == TreeTest(**rows[0].model_dump(exclude={"id"})).id


def test_a_tree_file_that_is_not_utf8_names_its_line(tmp_path):
    path = tmp_path / "tree.jsonl"
    path.write_bytes(sample_tree().rows[1].model_dump_json().encode() + b'\n{"topic": "\xff"}\n')
    with pytest.raises(InputError, match=r"tree.jsonl:2: not UTF-8"):
        read_tree(path)


texts = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\r")
    | st.sampled_from(',"%\n '),
    min_size=1,
    max_size=12,
).filter(lambda text: text.strip() and text == text.strip())
topics = st.lists(texts.map(lambda t: t.replace("/", "-")), min_size=1, max_size=3).map(
    lambda parts: "/" + "/".join(parts)
)


@st.composite
def trees(draw):
    rows = []
    for _ in range(draw(st.integers(1, 5))):
        topic = draw(topics)
        comparator = draw(
            st.sampled_from(
                [
                    "should be",
                    "should not be",
                    "should be the same as for",
                    "should be no more than",
                ]
            )
        )
        rows.append(
            TreeTest(
                topic=topic,
                input=draw(texts),
                comparator=comparator,
                output=draw(texts) if "for" in comparator or "than" in comparator else "positive",
                watched="positive" if "than" in comparator else None,
                labeler=draw(st.sampled_from(["", "ann", "imputed"])),
                author=draw(st.sampled_from(["", "maria"])),
                description=draw(st.sampled_from(["", 'a, "quoted" note'])),
                source="adatest",
                scores=draw(st.dictionaries(st.sampled_from(["vader", "m"]), st.floats(-1, 1))),
            )
        )
    rows.append(TreeTest(kind="topic", topic=draw(topics), source="adatest"))
    if draw(st.booleans()):
        topic, text = draw(topics), draw(texts)
        rows.append(TreeTest(kind="unlabelled", topic=topic, input=text, source="adatest"))
    unique = {row.id: row for row in rows}
    return TestTree(rows=tuple(unique.values()))


@settings(max_examples=60, deadline=None)
@given(tree=trees(), format=st.sampled_from(["label", "type"]))
def test_import_of_export_gives_back_what_the_format_holds(tree, format, tmp_path_factory):
    path = tmp_path_factory.mktemp("csv") / "tree.csv"
    written = adatest_csv_text(tree, format=format)[1].tests
    if written == 0 and any(row.kind != "topic" for row in tree.rows):
        with pytest.raises(InputError, match="no test of the tree fits"):
            write_adatest_csv(path, tree, format=format)
        assert not path.exists()  # an export of no test is refused, nothing written
        return
    result = write_adatest_csv(path, tree, format=format)
    left_out = {note.test_id for note in result.left_out}
    kept = [row for row in tree.rows if row.id not in left_out]
    if format == "type":  # one author column, holding the labeler; the author is reported
        authored = {note.test_id for note in result.notes if "author" in note.reason}
        assert authored == {row.id for row in kept if row.author not in ("", row.labeler)}
        kept = [row.model_copy(update={"author": ""}) for row in kept]
    assert read_adatest_csv(path).tree == TestTree(rows=tuple(kept))
