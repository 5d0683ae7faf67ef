"""Writing reviewed words into lexicon files: after the last word of a block or flow list,
or as a new lexicon at the end; quoted where YAML needs it; never twice; the rest of the file
byte for byte; a file that is not a lexicon file refused before anything is written."""

from __future__ import annotations

import os
from datetime import UTC, datetime

import pytest
import yaml

from testaug.core.errors import InputError
from testaug.editor.lexicon_verdicts import LexiconVerdict
from testaug.editor.lexicon_writer import Addition, add_words, provenance_comment
from testaug.steps.lexicon_review import write_kept
from tests.editor.lexicon_suite import LEXICONS, MASKED, write_suite

WHEN = datetime(2026, 11, 25, 17, 30, tzinfo=UTC)
NOTE = (
    "# added by ann on 2026-11-25 17:30 UTC (testaug lexicon review, s.jsonl) from "
    '"I really {mask} the flight."'
)


def addition(lexicon: str, *words: str, **fields) -> Addition:
    values = {"annotators": ("ann",), "when": WHEN, "masked": MASKED, "origin": "s.jsonl"}
    return Addition(lexicon=lexicon, words=words, **(values | fields))


@pytest.fixture
def path(tmp_path):
    return write_suite(tmp_path / "suite") / "lexicons.yaml"


def test_words_go_after_the_last_word_of_a_block_list_with_its_indentation(path):
    update = add_words(path, [addition("pos_verb", "adore", "enjoy")])
    last = "  - like  # the mildest\n"
    assert path.read_text(encoding="utf-8") == LEXICONS.replace(
        last, f"{last}  {NOTE}\n  - adore\n  - enjoy\n"
    )
    assert update.added == {"pos_verb": ["adore", "enjoy"]} and not update.created


def test_a_flow_list_gets_its_words_before_the_bracket_and_the_note_above_its_key(path):
    add_words(path, [addition("thing", "meal", "lounge")])
    assert path.read_text(encoding="utf-8") == LEXICONS.replace(
        "thing: [flight, seat]\n", f"{NOTE}\nthing: [flight, seat, meal, lounge]\n"
    )


def test_a_new_lexicon_is_added_at_the_end_of_the_file(path):
    update = add_words(path, [addition("neg_verb", "hate", sources=("wordnet", "lm"))])
    assert update.created == ["neg_verb"]
    assert path.read_text(encoding="utf-8") == (
        f"{LEXICONS}\nneg_verb:\n  {NOTE}; suggested by wordnet, lm\n  - hate\n"
    )


def test_words_a_lexicon_holds_are_never_added_again_and_then_nothing_is_written(path):
    add_words(path, [addition("pos_verb", "adore")])
    written = path.read_text(encoding="utf-8")
    stamp = os.stat(path).st_mtime_ns
    update = add_words(path, [addition("pos_verb", "adore", "love", "adore")])
    assert update.added == {} and update.already_there == 2
    assert path.read_text(encoding="utf-8") == written and os.stat(path).st_mtime_ns == stamp


def test_words_yaml_would_misread_are_quoted_and_read_back_as_they_were(path):
    odd = ("yes", "null", "3", "a: b", "#1 fan", "it's", "[x]", 'say "hi"', "- dash")
    add_words(path, [addition("pos_verb", *odd), addition("thing", *odd)])
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert data["pos_verb"] == ["love", "like", *odd]
    assert data["thing"] == ["flight", "seat", *odd]


def test_a_file_ending_without_a_newline_gets_one_before_the_words(path):
    path.write_text("pos_verb:\n  - love", encoding="utf-8")
    add_words(path, [addition("pos_verb", "adore")])
    assert yaml.safe_load(path.read_text(encoding="utf-8")) == {"pos_verb": ["love", "adore"]}


def test_a_lexicon_that_is_not_a_list_is_refused_naming_file_and_line(path):
    path.write_text("# words\npos_verb: love\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        add_words(path, [addition("pos_verb", "adore")])
    assert f"{path}:2: pos_verb: lexicon 'pos_verb' is not a list" in str(caught.value)
    assert path.read_text(encoding="utf-8") == "# words\npos_verb: love\n"


def test_the_file_keeps_its_permissions_and_no_temporary_file_is_left(path):
    path.chmod(0o640)
    add_words(path, [addition("pos_verb", "adore")])
    assert path.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in path.parent.iterdir()) == ["lexicons.yaml", "suite.yaml"]


def test_kept_words_are_grouped_by_lexicon_and_masked_sentence_and_the_latest_verdict_counts(
    path,
):
    def verdict(word, lexicon, minute, masked=MASKED, who="ann"):
        return LexiconVerdict(
            word=word,
            decision="keep" if lexicon else "drop",
            lexicon=lexicon,
            annotator=who,
            masked=masked,
            created_at=WHEN.replace(minute=minute),
        )

    verdicts = [
        verdict("adore", "pos_verb", 1),
        verdict("enjoy", "pos_verb", 2),
        verdict("enjoy", None, 3, who="bob"),  # later: dropped after all
        verdict("cherish", "pos_verb", 4, masked="We {mask} it.", who="bob"),
    ]
    written = write_kept(path.parent / "suite.yaml", verdicts, origin="s.jsonl")
    assert written.added == 2
    text = path.read_text(encoding="utf-8")
    assert '17:01 UTC (testaug lexicon review, s.jsonl) from "I really' in text
    assert 'by bob on 2026-11-25 17:04 UTC (testaug lexicon review, s.jsonl) from "We' in text
    assert yaml.safe_load(text)["pos_verb"] == ["love", "like", "adore", "cherish"]


def test_the_provenance_comment_stays_on_one_line():
    note = provenance_comment(addition("x", "y", masked="two\nlines", origin=""))
    assert note == 'added by ann on 2026-11-25 17:30 UTC (testaug lexicon review) from "two lines"'


def test_a_hand_written_verdict_naming_a_bad_lexicon_is_refused_before_writing(path):
    bad = LexiconVerdict(word="adore", decision="keep", lexicon="verb 2", annotator="ann")
    with pytest.raises(InputError, match="'verb 2' is not a lexicon name"):
        write_kept(path.parent / "suite.yaml", [bad])
    assert path.read_text(encoding="utf-8") == LEXICONS
