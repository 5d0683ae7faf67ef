"""`testaug lexicon review` as a user runs it, keys piped into stdin: one key per word keeps it
in a lexicon or drops it, verdicts are saved as they are made and a second run goes on where
the first stopped; kept words land in the suite's lexicon file, which still validates and
whose new words expansion then uses."""

from __future__ import annotations

import re

import yaml

from testaug.core.jsonl import read_jsonl
from testaug.core.records import TestCase
from testaug.editor.lexicon_verdicts import read_verdicts
from tests.cli_runner import run_testaug
from tests.editor.lexicon_suite import (
    LEXICONS,
    lexicon,
    suggestion,
    write_suggestions,
    write_suite,
)


def review(tmp_path, keys: str, *into: str, annotator: str = "ann"):
    if not (tmp_path / "suite").exists():
        write_suite(tmp_path / "suite")
    if not (tmp_path / "suggestions.jsonl").exists():
        write_suggestions(tmp_path / "suggestions.jsonl")
    flags = [arg for name in into or ("pos_verb",) for arg in ("--into", name)]
    return lexicon(
        tmp_path,
        "review",
        "suggestions.jsonl",
        "--suite",
        "suite",
        *flags,
        "--annotator",
        annotator,
        input=keys,
    )


def lexicons(tmp_path) -> dict:
    return yaml.safe_load((tmp_path / "suite" / "lexicons.yaml").read_text(encoding="utf-8"))


def test_enter_keeps_a_word_d_drops_one_and_kept_words_join_the_lexicon(tmp_path):
    done = review(tmp_path, "\nd\n")
    assert done.returncode == 0, done.stderr
    assert "3 judged (2 kept, 1 dropped)" in done.stdout
    assert "added 2 words to pos_verb" in done.stdout
    assert lexicons(tmp_path)["pos_verb"] == ["love", "like", "adore", "hate"]


def test_words_come_best_first_in_their_sentence_and_those_the_lexicon_holds_are_left_out(
    tmp_path,
):
    done = review(tmp_path, "sss")
    screen = done.stdout
    assert screen.index("I really adore the flight.") < screen.index("I really enjoy the flight.")
    assert "I really love the flight." not in screen
    assert "1 already in the lexicons" in screen
    assert "score -8.00 · from wordnet, lm" in screen
    assert "no new words for the lexicons" in screen


def test_kept_words_are_appended_with_a_provenance_comment_keeping_the_file_as_it_was(tmp_path):
    review(tmp_path, "k")  # then the input ends: the session stops
    text = (tmp_path / "suite" / "lexicons.yaml").read_text(encoding="utf-8")
    when = re.search(r"on (\d{4}-\d\d-\d\d \d\d:\d\d UTC)", text).group(1)
    comment = (
        f"  # added by ann on {when} (testaug lexicon review, suggestions.jsonl) from "
        '"I really {mask} the flight."; suggested by wordnet, lm\n'
    )
    last = "  - like  # the mildest\n"
    assert text == LEXICONS.replace(last, last + comment + "  - adore\n")


def test_several_lexicons_take_a_word_by_its_number_and_a_new_lexicon_is_created(tmp_path):
    done = review(tmp_path, "1d2", "pos_verb", "neg_verb")
    assert done.returncode == 0, done.stderr
    assert "1 pos_verb · 2 neg_verb · d drop" in done.stdout
    assert "added 1 word to neg_verb (new lexicon)" in done.stdout
    data = lexicons(tmp_path)
    assert data["pos_verb"][-1] == "adore" and data["neg_verb"] == ["hate"]
    assert data["thing"] == ["flight", "seat"]


def test_a_second_run_goes_on_after_the_words_judged_and_never_adds_a_word_twice(tmp_path):
    first = review(tmp_path, "kq")
    assert "1 judged (1 kept" in first.stdout and "2 left" in first.stdout
    second = review(tmp_path, "dk")
    assert second.returncode == 0, second.stderr
    assert "1 judged before" not in second.stdout  # adore is in the lexicon now: left out
    assert "I really adore the flight." not in second.stdout
    assert "2 judged (1 kept, 1 dropped)" in second.stdout
    verdicts = {v.word: v.decision for v in read_verdicts(tmp_path / "suggestions.verdicts.jsonl")}
    assert verdicts == {"adore": "keep", "enjoy": "drop", "hate": "keep"}
    assert lexicons(tmp_path)["pos_verb"] == ["love", "like", "adore", "hate"]
    again = lexicon(tmp_path, "apply", "suggestions.verdicts.jsonl", "--suite", "suite")
    assert again.returncode == 0, again.stderr
    assert "no new words" in again.stdout and lexicons(tmp_path)["pos_verb"].count("adore") == 1


def test_judged_words_are_not_offered_again_to_the_same_annotator_but_are_to_another(tmp_path):
    review(tmp_path, "ddd")
    same = review(tmp_path, "")
    assert "3 judged before" in same.stdout and "0 left" in same.stdout
    other = review(tmp_path, "s", annotator="bob")
    assert "(0 judged before)" in other.stdout and "word 1 of 3" in other.stdout


def test_an_unknown_key_asks_again(tmp_path):
    done = review(tmp_path, "xq")
    assert "press Enter, k, d, s or q" in done.stdout and "0 judged" in done.stdout


def test_the_suite_validates_after_review_and_expansion_uses_the_new_words(tmp_path):
    review(tmp_path, "1d2", "pos_verb", "neg_verb")
    checked = run_testaug(tmp_path, "suite", "validate", "suite")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    expanded = run_testaug(tmp_path, "expand", "suite", "-o", "cases.jsonl")
    assert expanded.returncode == 0, expanded.stderr
    texts = {case.text for case in read_jsonl(tmp_path / "cases.jsonl", TestCase)}
    assert {"I adore the flight.", "I adore the seat."} <= texts
    assert len(texts) == 3 * 2


def test_the_words_of_a_suggestion_for_several_masks_are_reviewed_one_by_one(tmp_path):
    two = suggestion("adore", -7.0, masked="I {mask} the {mask}.").model_copy(
        update={"words": ["adore", "meal"], "filled": "I adore the meal."}
    )
    write_suggestions(tmp_path / "suggestions.jsonl", [two])
    write_suite(tmp_path / "suite")
    done = review(tmp_path, "12", "pos_verb", "thing")
    assert done.returncode == 0, done.stderr
    assert "(mask 2)" in done.stdout
    data = lexicons(tmp_path)
    assert data["pos_verb"][-1] == "adore" and data["thing"] == ["flight", "seat", "meal"]


def test_a_bad_or_built_in_lexicon_name_is_one_line_before_any_question(tmp_path):
    bad = review(tmp_path, "k", "verb2")
    assert bad.returncode == 1 and "'verb2' is not a lexicon name" in bad.stderr
    many = review(tmp_path, "k", *(f"verb_{letter}" for letter in "abcdefghij"))
    assert many.returncode == 1 and "at most 9 lexicons at once, got 10" in many.stderr
    builtin = review(tmp_path, "k", "city")
    assert builtin.returncode == 1 and "'city' is a built-in lexicon" in builtin.stderr
    assert "Traceback" not in bad.stderr + builtin.stderr
    assert (tmp_path / "suite" / "lexicons.yaml").read_text(encoding="utf-8") == LEXICONS


def test_a_shipped_suite_named_by_its_task_is_not_written_to(tmp_path):
    write_suggestions(tmp_path / "suggestions.jsonl")
    done = lexicon(
        tmp_path, "review", "suggestions.jsonl", "--suite", "sentiment", "--into", "pos_verb"
    )
    assert done.returncode == 1 and "'sentiment' is a shipped suite" in done.stderr
    assert "cp -r" in done.stderr and "Traceback" not in done.stderr
