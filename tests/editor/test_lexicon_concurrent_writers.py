"""Several processes writing one suite's lexicons or one verdicts file at once: every word
and every verdict is kept, and the suite still validates."""

from __future__ import annotations

from datetime import UTC, datetime

import yaml

from testaug.core.jsonl import write_jsonl
from testaug.editor.lexicon_verdicts import LexiconVerdict, read_verdicts, save_verdicts
from testaug.editor.lexicon_writer import Addition, add_words
from testaug.steps.lexicon_review import WordsReviewConfig, apply_verdicts
from testaug.suites.load import load_suite
from tests.core.concurrent_processes import run_together
from tests.editor.lexicon_suite import MASKED, write_suite

WORDS = 12


def _words(prefix: str) -> list[str]:
    return [f"{prefix}word{chr(ord('a') + i)}" for i in range(WORDS)]


def _add_one_by_one(path, prefix):
    added = 0
    for word in _words(prefix):
        addition = Addition(
            lexicon="pos_verb",
            words=(word,),
            annotators=(prefix,),
            when=datetime.now(UTC),
            masked=MASKED,
        )
        added += len(add_words(path, [addition]).added.get("pos_verb", []))
    return added


def test_two_processes_adding_different_words_to_one_lexicon_keep_every_word(tmp_path):
    folder = write_suite(tmp_path / "suite")
    path = folder / "lexicons.yaml"
    added = run_together(_add_one_by_one, [(path, "ann"), (path, "bob")])
    assert added == [WORDS, WORDS]
    words = yaml.safe_load(path.read_text(encoding="utf-8"))["pos_verb"]
    assert sorted(words) == sorted(["love", "like", *_words("ann"), *_words("bob")])
    assert len(load_suite(folder / "suite.yaml").lexicons["pos_verb"].words) == 2 + 2 * WORDS


def _apply_files(suite, folder, prefix):
    added = 0
    for index, word in enumerate(_words(prefix)):
        verdicts = folder / f"{prefix}{index}.verdicts.jsonl"
        verdict = LexiconVerdict(word=word, decision="keep", lexicon="thing", annotator=prefix)
        write_jsonl(verdicts, [verdict])
        added += apply_verdicts(
            WordsReviewConfig(suite=suite, verdicts=verdicts)
        ).summary.written.added
    return added


def test_two_apply_runs_on_one_suite_both_write_every_word_they_report(tmp_path):
    folder = write_suite(tmp_path / "suite")
    suite = folder / "suite.yaml"
    added = run_together(_apply_files, [(suite, tmp_path, "ann"), (suite, tmp_path, "bob")])
    assert added == [WORDS, WORDS]
    data = yaml.safe_load((folder / "lexicons.yaml").read_text(encoding="utf-8"))
    assert sorted(data["thing"]) == sorted(["flight", "seat", *_words("ann"), *_words("bob")])
    load_suite(suite)


def _save_one_by_one(path, annotator):
    for word in _words("w"):
        verdict = LexiconVerdict(word=word, decision="drop", annotator=annotator)
        save_verdicts(path, [verdict])


def test_two_reviewers_saving_verdicts_to_one_file_keep_every_verdict(tmp_path):
    path = tmp_path / "words.verdicts.jsonl"
    run_together(_save_one_by_one, [(path, "ann"), (path, "bob")])
    saved = {(v.word, v.annotator) for v in read_verdicts(path)}
    assert saved == {(word, who) for word in _words("w") for who in ("ann", "bob")}
