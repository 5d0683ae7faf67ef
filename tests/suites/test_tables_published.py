"""Published tables read as they are (issue 21): TestAug's paraphrase and NLI tables, whose
pair templates and pair texts are lists (a JSON list, or the tuple pandas writes), the
papers' task names, numeric labels in the task's documented order, and every row either a
case or a reject with its line and field. Pickles are never loaded.

The fixtures are built with pandas in the column sets of TestAug's release
(`utils/data.py`: capability, description, template, label, text; QQP's templates also carry
original_description)."""

from __future__ import annotations

import itertools
import json
import pickle

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testaug.core.errors import InputError
from testaug.core.records import TestCase
from testaug.suites.table_cells import pair
from testaug.suites.tables import ImportNotes, RejectedRow, read_table

FIRST = ["John", "Mary", "Ahmed", "Mei", "Olga", "Kwame"]
LAST = ["Smith", "Jones", "Garcia", "Chen", "Novak"]
NOUNS = ["actor", "nurse", "editor", "agent", "author"]
ADJS = ["honest"]


def split(items):
    return [i for i in items if isinstance(i, TestCase)], [
        i for i in items if isinstance(i, RejectedRow)
    ]


def qqp_rows() -> list[dict]:
    """300 rows of TestAug's QQP table: 150 of a duplicate and 150 of a not-duplicate description."""
    rows = []
    for first, last, noun, adj in itertools.product(FIRST, LAST, NOUNS, ADJS):
        article = "an" if noun[0] in "aeiou" else "a"
        rows.append(
            {
                "original_description": "Modifier: adj",
                "description": "A noun with and without an adjective is equivalent.",
                "label": 1,
                "capability": "Vocabulary",
                "template": (
                    "Is {first_name} {last_name} {a:noun}?",
                    "Is {first_name} {last_name} {a:adj} {noun}?",
                ),
                "text": (
                    f"Is {first} {last} {article} {noun}?",
                    f"Is {first} {last} a{'n' * (adj[0] in 'aeiou')} {adj} {noun}?",
                ),
            }
        )
    for (first, last), noun in itertools.product(itertools.product(FIRST, LAST), NOUNS):
        rows.append(
            {
                "original_description": "Different first names",
                "description": "Questions about two different people are not duplicates.",
                "label": 0,
                "capability": "NER",
                "template": (
                    "What was {first_name} {last_name}'s job?",
                    "What was {first_name2} {last_name}'s job?",
                ),
                "text": (f"What was {first} {last}'s job?", f"What was Zed {last}'s {noun}?"),
            }
        )
    return rows[:300]


def test_testaug_qqp_table_written_by_pandas_imports_every_row(tmp_path):
    rows = qqp_rows()
    path = tmp_path / "qqp.csv"
    pd.DataFrame(rows).to_csv(path, index=False)  # tuples become "('...', '...')"
    notes = ImportNotes()
    cases, rejects = split(list(read_table(path, task="qqp", notes=notes)))
    assert not rejects and len(cases) == len(rows) == 300
    first = cases[0]
    assert (first.task, first.label) == ("paraphrase", "duplicate")
    assert (first.template, first.template_pair) == rows[0]["template"]
    assert (first.text, first.text_pair) == rows[0]["text"]
    assert first.meta == {
        "original_description": "Modifier: adj",
        "task_name": "qqp",
        "label_raw": "1",
    }
    assert {c.label for c in cases if c.capability == "NER"} == {"not_duplicate"}
    assert notes.counts == {
        "task 'qqp' read as 'paraphrase'": 300,
        "numeric labels of 'qqp' read as 0=not_duplicate, 1=duplicate": 300,
    }


def test_a_json_list_template_beside_question_columns_becomes_template_and_pair(tmp_path):
    path = tmp_path / "paraphrase.csv"
    frame = pd.DataFrame(
        {
            "capability": ["Temporal"] * 2,
            "description": ["Before and after swapped are not duplicates."] * 2,
            "question1": ["What was Ana doing before the war?", "Did Bo win before 2010?"],
            "question2": ["What was Ana doing after the war?", "Did Bo win after 2010?"],
            "template": [
                json.dumps(["What was {first_name} doing before {event}?", "What was ... after?"]),
                json.dumps(["Did {first_name} win before {year}?", "Did ... after {year}?"]),
            ],
            "label": ["0", "0"],
            "task": ["paraphrase", "PAWS"],
        }
    )
    frame.to_csv(path, index=False)
    cases, rejects = split(list(read_table(path)))
    assert not rejects
    assert [c.template for c in cases] == [
        "What was {first_name} doing before {event}?",
        "Did {first_name} win before {year}?",
    ]
    assert [c.template_pair for c in cases] == ["What was ... after?", "Did ... after {year}?"]
    assert [c.label for c in cases] == ["not_duplicate"] * 2
    assert [c.task for c in cases] == ["paraphrase"] * 2


@pytest.mark.parametrize("name", ["mnli", "snli", "SNLI", "glue/mnli", "nli"])
def test_nli_tables_under_the_papers_task_names_read_numbers_in_glue_order(tmp_path, name):
    path = tmp_path / "nli.jsonl"
    rows = [
        {
            "capability": "Boolean",
            "description": f"Boolean{label}",  # TestAug's NLI descriptions: capability + label
            "template": ["{p1} and {p2} are here.", f"{{p1}} is {word}."],
            "text": ["Ann and Bo are here.", f"Ann is {word}."],
            "label": number,
            "task": name,
        }
        for number, (label, word) in enumerate(
            [("entailment", "here"), ("neutral", "happy"), ("contradiction", "away")]
        )
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    cases, rejects = split(list(read_table(path)))
    assert not rejects
    assert [c.label for c in cases] == ["entailment", "neutral", "contradiction"]
    assert {c.task for c in cases} == {"nli"}
    assert cases[2].template_pair == "{p1} is away." and cases[2].text_pair == "Ann is away."


def test_sst2_numbers_are_binary_and_a_number_outside_the_order_is_rejected_with_its_field(
    tmp_path,
):
    path = tmp_path / "sst2.csv"
    path.write_text(
        "capability,description,sentence,gold_label\n"
        "Vocabulary,Positive words,I love it.,1\n"
        "Vocabulary,Negative words,I hate it.,0.0\n"
        "Vocabulary,Neutral words,It is a plane.,2\n"
    )
    cases, rejects = split(list(read_table(path, task="sst2")))
    assert [c.label for c in cases] == ["positive", "negative"]
    assert [(r.line, r.field) for r in rejects] == [(4, "gold_label")]
    assert "outside sst2's documented order (0=negative, 1=positive)" in rejects[0].reason
    assert str(rejects[0].problem(path)).startswith(f"{path}:4: gold_label: '2' is a number")


def test_a_label_map_replaces_the_documented_order(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("capability,description,text,label\nV,d,Great.,1\nV,d,Bad.,0\nV,d,Hm.,2\n")
    cases, rejects = split(
        list(read_table(path, task="sentiment", label_map={"0": "negative", "1": "positive"}))
    )
    assert [c.label for c in cases] == ["positive", "negative"]
    assert [(r.line, r.field) for r in rejects] == [(4, "label")]
    assert "not in --label-map (0=negative, 1=positive)" in rejects[0].reason


def test_label_sets_as_list_literals_in_csv_cells(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(
        'capability,description,text,label\nV,d,It was fine.,"[""neutral"", ""positive""]"\n'
        "V,d,It was okay.,\"('neutral', 'positive')\"\n"
    )
    cases, rejects = split(list(read_table(path, task="sentiment")))
    assert not rejects and [c.label for c in cases] == [("neutral", "positive")] * 2


def test_nothing_is_lost_every_row_is_a_case_or_a_reject_with_line_and_field(tmp_path):
    rows = qqp_rows()[:40]
    bad = {
        5: {"template": ("a {x}", "b {x}", "c {x}")},  # three templates
        9: {"label": 7},  # outside qqp's order
        13: {"text": None},  # no text
        17: {"text": rows[0]["text"]},  # a duplicate of the first row
        21: {"capability": None},
    }
    for index, change in bad.items():
        rows[index] = {**rows[index], **change}
    path = tmp_path / "qqp.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    cases, rejects = split(list(read_table(path, task="qqp")))
    assert len(cases) + len(rejects) == len(rows)
    found = {r.line: (r.field, r.reason) for r in rejects}
    assert set(found) == {index + 2 for index in bad}  # header on line 1
    assert found[7] == ("template", "a list of 3 texts; expected one text or a pair")
    assert found[11][0] == "label" and "'7' is a number outside qqp's" in found[11][1]
    assert found[15][0] == "text" and found[23][0] == "capability"
    assert found[19] == (None, "duplicate of line 2")
    assert all(r.row for r in rejects)  # each reject keeps its cells


def test_extra_cells_beyond_the_header_are_a_reject_keeping_the_cells(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("capability,description,text,label\nV,d,Great.,positive,oops,more\n")
    _, rejects = split(list(read_table(path, task="sentiment")))
    assert rejects[0].line == 2 and "2 more cells" in rejects[0].reason
    assert rejects[0].row["extra_cells"] == ["oops", "more"]


class _Trap:
    """Unpickling this would create the file `marker`."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.mark.parametrize("name", ["suite.pkl", "suite.pickle", "table.csv", "cases.jsonl"])
def test_a_pickle_is_never_loaded_and_the_error_says_how_to_export_it(tmp_path, name):
    marker = tmp_path / "unpickled"
    path = tmp_path / name
    path.write_bytes(pickle.dumps(_Trap(str(marker))))
    with pytest.raises(InputError) as caught:
        list(read_table(path, task="sentiment"))
    assert not marker.exists()
    message = str(caught.value)
    assert message.startswith(f"{path}: a pickle is never read")
    assert f"pd.read_pickle('{name}').to_csv(" in message and "CheckList" in message


@settings(max_examples=200, deadline=None)
@given(texts=st.lists(st.text(min_size=1).filter(str.strip), min_size=1, max_size=2))
def test_a_pair_written_as_json_or_as_a_python_tuple_reads_back_as_the_same_texts(texts):
    expected = (texts[0], texts[1] if len(texts) == 2 else None)
    assert pair(json.dumps(texts), "template") == expected
    assert pair(repr(tuple(texts)), "template") == expected
    assert pair(texts, "template") == expected


def test_a_long_cell_that_looks_like_a_list_is_text(tmp_path):
    long = "[" + "1, " * 30_000 + "1]"
    assert pair(long, "text") == (long, None)
