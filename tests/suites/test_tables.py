"""Importing published case tables: aliases, label maps, rejects with reasons, nothing lost."""

import json

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


def test_numeric_labels_need_a_label_map(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(
        "capability,description,text,label\nVocabulary,d,Great.,1\nVocabulary,d,Awful.,0\n"
    )
    _, rejects = split(list(read_table(path, task="sentiment")))
    assert [r.line for r in rejects] == [2, 3]
    assert "--label-map 1=NAME" in rejects[0].reason
    cases, rejects = split(
        list(read_table(path, task="sentiment", label_map={"0": "negative", "1": "positive"}))
    )
    assert not rejects and [c.label for c in cases] == ["positive", "negative"]


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
    assert "missing capability" in reasons[4]
    assert reasons[5] == "duplicate of line 1"
    assert "expected a JSON object" in reasons[6]
    assert "unknown source 'crowd'" in reasons[7]
    assert rejects[1].row["label"] == "mixed"  # the whole row is kept


def test_missing_task_is_a_row_reason_not_a_crash(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("capability,description,text,label\nVocabulary,d,Great.,positive\n")
    _, rejects = split(list(read_table(path)))
    assert "missing task" in rejects[0].reason
