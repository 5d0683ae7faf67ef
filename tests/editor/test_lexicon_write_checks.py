"""What is checked before words reach a lexicon file: words stripped and never empty, only
lexicon files inside the suite's folder written to, a broken lexicon file one error line
naming it, a bad lexicon name in a verdicts file blamed on that file, and a missing verdicts
file an error."""

from __future__ import annotations

import json

import pytest
import yaml

from testaug.core.errors import InputError
from testaug.editor.lexicon_verdicts import review_words
from testaug.editor.lexicon_writer import Addition, add_words
from testaug.editor.review_label_studio import choice_for, read_word_export, word_task
from testaug.steps.lexicon_review import WordsReviewConfig, apply_verdicts
from testaug.suites.load import load_suite
from tests.cli_runner import run_testaug
from tests.editor.lexicon_suite import LEXICONS, SUITE, suggestions, write_suite


def verdicts_file(tmp_path, *rows: dict):
    path = tmp_path / "words.verdicts.jsonl"
    base = {"decision": "keep", "lexicon": "pos_verb", "annotator": "ann"}
    path.write_text("".join(json.dumps(base | row) + "\n" for row in rows), encoding="utf-8")
    return path


def apply(tmp_path, verdicts):
    """`testaug review words apply VERDICTS --suite suite` in `tmp_path`."""
    return run_testaug(tmp_path, "review", "words", "apply", str(verdicts), "--suite", "suite")


def pos_verb(tmp_path) -> list[str]:
    text = (tmp_path / "suite" / "lexicons.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)["pos_verb"]


def test_a_kept_word_with_spaces_around_it_is_stored_stripped_and_the_suite_validates(tmp_path):
    write_suite(tmp_path / "suite")
    done = apply(tmp_path, verdicts_file(tmp_path, {"word": " admire "}))
    assert done.returncode == 0, done.stderr
    assert "added 1 word to pos_verb" in done.stdout and ": admire\n" in done.stdout
    assert pos_verb(tmp_path) == ["love", "like", "admire"]
    load_suite(tmp_path / "suite" / "suite.yaml")


@pytest.mark.parametrize("word", ["", "   ", "\t\n"])
def test_an_empty_kept_word_is_refused_naming_file_line_and_field(tmp_path, word):
    write_suite(tmp_path / "suite")
    path = verdicts_file(tmp_path, {"word": "admire"}, {"word": word})
    done = apply(tmp_path, path)
    assert done.returncode == 1
    assert "words.verdicts.jsonl:2: word: " in done.stderr and "empty" in done.stderr
    assert "Traceback" not in done.stderr
    assert (tmp_path / "suite" / "lexicons.yaml").read_text(encoding="utf-8") == LEXICONS


def test_a_word_edited_in_label_studio_comes_back_stripped():
    item = review_words(suggestions())[0]
    task = word_task(item, 1, ["pos_verb"])
    task["data"]["word"] = "  adore "
    task["annotations"] = [
        {
            "result": [{"from_name": "lexicon", "value": {"choices": [choice_for("pos_verb")]}}],
            "completed_by": 1,
        }
    ]
    reading = read_word_export([task], {1: "ann"})
    assert [v.word for v in reading.verdicts] == ["adore"]


def test_writing_a_word_with_spaces_around_it_is_refused_and_nothing_is_written(tmp_path):
    path = write_suite(tmp_path / "suite") / "lexicons.yaml"
    addition = Addition(lexicon="pos_verb", words=("ok", " admire "), annotators=("ann",), when=0)
    with pytest.raises(Exception, match=r"lexicons\.yaml: pos_verb: ' admire ' is not a word"):
        add_words(path, [addition])
    assert path.read_text(encoding="utf-8") == LEXICONS


OUTSIDE = "outside:\n  - keep\n"


@pytest.mark.parametrize("entry", ["../outside.yaml", "ABSOLUTE", "linked.yaml"])
def test_a_lexicon_file_outside_the_suite_folder_is_refused_and_left_alone(tmp_path, entry):
    folder = write_suite(tmp_path / "suite")
    outside = tmp_path / "outside.yaml"
    outside.write_text(OUTSIDE, encoding="utf-8")
    (folder / "linked.yaml").symlink_to(outside)
    entry = str(outside) if entry == "ABSOLUTE" else entry
    suite = SUITE.replace("  - lexicons.yaml\n", f"  - lexicons.yaml\n  - {json.dumps(entry)}\n")
    (folder / "suite.yaml").write_text(suite, encoding="utf-8")
    path = verdicts_file(tmp_path, {"word": "admire", "lexicon": "outside"})
    with pytest.raises(InputError) as caught:
        apply_verdicts(WordsReviewConfig(suite=folder / "suite.yaml", verdicts=path))
    problem = caught.value.problems[0]
    assert (problem.file, problem.line, problem.field) == (folder / "suite.yaml", 7, "lexicons[1]")
    assert "outside the suite's folder" in problem.message
    assert outside.read_text(encoding="utf-8") == OUTSIDE


BROKEN = {
    "a tab": (b"pos_verb:\n\t- love\n", "invalid YAML"),
    "a byte that is not UTF-8": (b"pos_verb:\n  - caf\xe9\n", "cannot read"),
    "two documents": (b"pos_verb: [love]\n---\nthing: [seat]\n", "invalid YAML"),
    "a python tag": (b"pos_verb: !!python/object/apply:os.system [echo hi]\n", "invalid YAML"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_lexicon_file_is_one_error_line_naming_it(tmp_path, case):
    content, reason = BROKEN[case]
    folder = write_suite(tmp_path / "suite")
    (folder / "lexicons.yaml").write_bytes(content)
    done = apply(tmp_path, verdicts_file(tmp_path, {"word": "admire"}))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    first = done.stderr.splitlines()[0]
    assert "lexicons.yaml" in first and reason in first
    assert (folder / "lexicons.yaml").read_bytes() == content


def test_a_bad_lexicon_name_in_a_verdicts_file_is_blamed_on_its_line_not_on_into(tmp_path):
    write_suite(tmp_path / "suite")
    path = verdicts_file(tmp_path, {"word": "admire"}, {"word": "enjoy", "lexicon": "verb 2"})
    done = apply(tmp_path, path)
    assert done.returncode == 1
    assert "words.verdicts.jsonl:2: lexicon: 'verb 2' is not a lexicon name" in done.stderr
    assert "--into" not in done.stderr
    assert pos_verb(tmp_path) == ["love", "like"]


def test_a_bad_lexicon_name_overruled_by_a_later_verdict_is_no_error(tmp_path):
    write_suite(tmp_path / "suite")
    path = verdicts_file(
        tmp_path,
        {"word": "enjoy", "lexicon": "verb 2", "created_at": "2026-01-01T00:00:00Z"},
        {"word": "enjoy", "created_at": "2026-01-02T00:00:00Z"},
    )
    done = apply(tmp_path, path)
    assert done.returncode == 0, done.stderr
    assert pos_verb(tmp_path) == ["love", "like", "enjoy"]


def test_applying_a_verdicts_file_that_is_not_there_is_an_error_naming_it(tmp_path):
    write_suite(tmp_path / "suite")
    done = apply(tmp_path, tmp_path / "missing.jsonl")
    assert done.returncode == 1
    assert "missing.jsonl: no such verdicts file" in done.stderr
    assert "no new words" not in done.stdout
