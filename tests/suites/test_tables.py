"""Importing published case tables: aliases, label maps, rejects with reasons, nothing lost."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from testaug.core.errors import InputError
from testaug.core.records import TestCase
from testaug.suites.tables import RejectedRow, read_table


def split(items):
    return [i for i in items if isinstance(i, TestCase)], [
        i for i in items if isinstance(i, RejectedRow)
    ]


def test_csv_question_pairs_import_with_extra_columns_kept_in_meta(tmp_path):
    path = tmp_path / "qqp.csv"
    path.write_text(
        "capability,description,question1,question2,label,test_type,annotator\n"
        "Negation,Negated adjective,Is it safe?,Is it not safe?,not_duplicate,MFT,ann\n"
        'SRL,Swapped roles,"Who beat\nwhom?",Whom did who beat?,duplicate,MFT,bob\n'
    )
    cases, rejects = split(list(read_table(path, task="paraphrase")))
    assert not rejects
    assert [c.text_pair for c in cases] == ["Is it not safe?", "Whom did who beat?"]
    assert cases[0].meta == {"annotator": "ann"}
    assert cases[1].text == "Who beat\nwhom?"


def test_jsonl_rows_with_fills_label_sets_and_sources(tmp_path):
    path = tmp_path / "cases.jsonl"
    rows = [
        {
            "task": "sentiment",
            "capability": "Vocabulary",
            "description": "d",
            "text": "It was fine.",
            "label": ["neutral", "positive"],
            "source": "gpt3",
        },
        {
            "task": "sentiment",
            "capability": "Negation",
            "description": "d2",
            "text": "Not good.",
            "label": "negative",
            "template": "Not {adj}.",
            "fills": {"adj": "good"},
        },
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    cases, rejects = split(list(read_table(path)))
    assert not rejects
    assert cases[0].label == ("neutral", "positive") and cases[0].source == "llm"
    assert cases[1].fills == {"adj": "good"}


def test_numeric_labels_follow_the_tasks_documented_order_unless_a_label_map_is_given(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(
        "capability,description,text,label\nVocabulary,d,Great.,2\nVocabulary,d,Awful.,0\n"
    )
    cases, rejects = split(list(read_table(path, task="sentiment")))
    assert not rejects and [c.label for c in cases] == ["positive", "negative"]
    assert cases[0].meta == {"label_raw": "2"}
    cases, rejects = split(
        list(read_table(path, task="sentiment", label_map={"0": "negative", "2": "positive"}))
    )
    assert not rejects and [c.label for c in cases] == ["positive", "negative"]


def test_numeric_labels_of_a_task_without_a_documented_order_need_a_label_map(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(
        "capability,description,text,label\nVocabulary,d,Great.,1\nVocabulary,d,Awful.,0\n"
    )
    _, rejects = split(list(read_table(path, task="toxicity")))
    assert [(r.line, r.field) for r in rejects] == [(2, "label"), (3, "label")]
    assert "--label-map 1=NAME" in rejects[0].reason
    cases, rejects = split(
        list(read_table(path, task="toxicity", label_map={"0": "clean", "1": "toxic"}))
    )
    assert not rejects and [c.label for c in cases] == ["toxic", "clean"]


def test_bad_rows_are_rejected_with_line_and_reason_and_good_rows_still_import(tmp_path):
    path = tmp_path / "t.jsonl"
    good = {"capability": "Vocabulary", "description": "d", "text": "Great.", "label": "positive"}
    path.write_text(
        "\n".join(
            [
                json.dumps(good),
                "{broken",
                json.dumps({**good, "text": "Okay.", "label": "mixed"}),
                json.dumps({k: v for k, v in good.items() if k != "capability"}),
                json.dumps(good),
                "[1, 2]",
                json.dumps({**good, "text": "Fine.", "source": "crowd"}),
            ]
        )
        + "\n"
    )
    items = list(read_table(path, task="sentiment", labels=("negative", "neutral", "positive")))
    cases, rejects = split(items)
    assert [c.text for c in cases] == ["Great."]
    reasons = {r.line: r.reason for r in rejects}
    assert set(reasons) == {2, 3, 4, 5, 6, 7}
    assert "not valid JSON" in reasons[2]
    assert "'mixed' is not one of" in reasons[3]
    assert reasons[4].startswith("missing (columns tried: capability")
    assert {r.line: r.field for r in rejects}[4] == "capability"
    assert reasons[5] == "duplicate of line 1"
    assert "expected a JSON object" in reasons[6]
    assert "unknown source 'crowd'" in reasons[7]
    assert rejects[1].row["label"] == "mixed"  # the whole row is kept


def test_missing_task_is_a_row_reason_not_a_crash(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("capability,description,text,label\nVocabulary,d,Great.,positive\n")
    _, rejects = split(list(read_table(path)))
    assert rejects[0].field == "task" and "give --task" in rejects[0].reason


def test_a_csv_with_a_utf8_bom_reads_its_first_column(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_bytes(
        b"\xef\xbb\xbfcapability,description,text,label\r\nVocabulary,d,Great.,positive\r\n"
    )
    cases, rejects = split(list(read_table(path, task="sentiment")))
    assert not rejects and [c.capability for c in cases] == ["Vocabulary"]


def test_a_csv_without_a_text_column_names_the_columns_found_and_accepted(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text("capability,description,sentense,label\nVocabulary,d,Great.,positive\n")
    with pytest.raises(InputError) as caught:
        list(read_table(path, task="sentiment"))
    message = str(caught.value)
    assert message.startswith(f"{path}:1: no text column: found 'capability',")
    assert "'sentense'" in message and "expected one of text, sentence" in message


def test_a_csv_field_over_128_kib_is_read(tmp_path):
    path = tmp_path / "table.csv"
    long = "word " * 60_000
    path.write_text(f'capability,description,text,label\nVocabulary,d,"{long}",positive\n')
    cases, rejects = split(list(read_table(path, task="sentiment")))
    assert not rejects and cases[0].text == long


def test_a_non_utf8_csv_names_file_and_line(tmp_path):
    path = tmp_path / "table.csv"
    path.write_bytes(b"capability,description,text,label\nVocabulary,d,Caf\xe9.,positive\n")
    with pytest.raises(InputError, match=rf"^{path}:2: not UTF-8 text \(byte 0xe9 at offset 50\)"):
        list(read_table(path, task="sentiment"))


_CSV_GOOD = (
    b"capability,description,text,label\nVocabulary,d,Great.,positive\nVocabulary,d,Bad.,negative\n"
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    prefix=st.sampled_from([b"", b"\xef\xbb\xbf", b"\xef\xbb"]),
    body=st.one_of(st.binary(max_size=200), st.just(_CSV_GOOD)),
    noise=st.binary(max_size=8),
    cut=st.integers(min_value=0, max_value=300),
    suffix=st.sampled_from([".csv", ".tsv", ".jsonl"]),
)
def test_table_reader_gives_rows_or_an_input_error_naming_the_file(
    tmp_path, prefix, body, noise, cut, suffix
):
    path = tmp_path / f"fuzz{suffix}"
    path.write_bytes((prefix + body + noise)[:cut])
    try:
        items = list(read_table(path, task="sentiment"))
    except InputError as exc:
        assert str(exc).startswith(str(path))
    else:
        assert all(isinstance(i, TestCase | RejectedRow) for i in items)
