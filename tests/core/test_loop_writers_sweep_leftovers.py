"""The loops' writers (test trees, lexicons, verdict and annotation files, adapt rounds)
remove what killed writes left in their folder: temporary files and empty lock files
untouched for over an hour. Fresh ones, perhaps of a write in progress, stay."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from testaug.adaptive.suggestion import SuggestionVerdict
from testaug.adaptive.suggestions import SuggestionRoundConfig
from testaug.adaptive.tree import TreeTest
from testaug.adaptive.tree_files import write_tree
from testaug.adaptive.verdicts import add_accepted_to_file
from testaug.adaptive.verdicts import save_verdicts as save_suggestion_verdicts
from testaug.core.jsonl import write_jsonl
from testaug.core.records import Annotation
from testaug.core.run_folder import RunFolder
from testaug.editor.lexicon_verdicts import LexiconVerdict
from testaug.editor.lexicon_verdicts import save_verdicts as save_word_verdicts
from testaug.editor.lexicon_writer import Addition, add_words
from testaug.generation.backends.openai_compatible import OpenAIBackend
from testaug.review.plans import add_annotations
from testaug.steps.adapt import AdaptConfig, adapt_round
from testaug.steps.suggestion_review import SUGGESTIONS_FILE, reserved_round, round_folder
from testaug.testing.openai_server import ScriptedOpenAIServer
from tests.adaptive.suggestion_helpers import tree
from tests.adaptive.word_models import word_vectors
from tests.editor.lexicon_suite import MASKED, write_suite

HEX = "0123456789abcdef0123456789abcdef"


def _aged(path: Path, hours: float, size: int) -> Path:
    path.write_bytes(b"x" * size)
    then = time.time() - hours * 3600
    os.utime(path, (then, then))
    return path


def _leave_leftovers(folder: Path) -> tuple[list[Path], list[Path]]:
    """What killed writes leave (over an hour old), and what a write in progress has."""
    folder.mkdir(parents=True, exist_ok=True)
    stale = [
        _aged(folder / f".suggestions.dropped.jsonl.{HEX}.tmp", 2, size=2000),
        _aged(folder / ".other.jsonl.lock", 2, size=0),
    ]
    fresh = [
        _aged(folder / f".other.jsonl.{HEX[::-1]}.tmp", 0, size=10),
        _aged(folder / ".busy.jsonl.lock", 0, size=0),
    ]
    return stale, fresh


def _tree(folder: Path) -> None:
    write_tree(folder / "tree.jsonl", tree())
    add_accepted_to_file(folder / "tree.jsonl", [], [])


def _lexicon(folder: Path) -> None:
    write_suite(folder)
    addition = Addition(
        lexicon="pos_verb",
        words=("adore",),
        annotators=("ann",),
        when=datetime.now(UTC),
        masked=MASKED,
    )
    assert add_words(folder / "lexicons.yaml", [addition]).added == {"pos_verb": ["adore"]}


def _word_verdicts(folder: Path) -> None:
    verdict = LexiconVerdict(word="adore", decision="drop", annotator="ann")
    save_word_verdicts(folder / "words.verdicts.jsonl", [verdict])


def _suggestion_verdicts(folder: Path) -> None:
    verdict = SuggestionVerdict(suggestion_id="s1", decision="reject_invalid", annotator="ann")
    save_suggestion_verdicts(folder / "verdicts.jsonl", [verdict])


def _annotations(folder: Path) -> None:
    record = Annotation(candidate_id="c1", valid=True, annotator="ann", origin="terminal")
    add_annotations(RunFolder(folder).annotations, [record])


WRITERS = [_tree, _lexicon, _word_verdicts, _suggestion_verdicts, _annotations]


@pytest.mark.parametrize("write", WRITERS, ids=lambda write: write.__name__.strip("_"))
def test_a_loop_writer_removes_stale_leftovers_in_its_folder_and_keeps_fresh_ones(tmp_path, write):
    stale, fresh = _leave_leftovers(tmp_path)
    write(tmp_path)
    assert [path.name for path in stale if path.exists()] == []
    assert all(path.exists() for path in fresh)


def test_reserving_an_adapt_round_removes_what_a_killed_round_left(tmp_path):
    earlier = round_folder(tmp_path, 1)
    stale, fresh = _leave_leftovers(earlier)
    write_jsonl(earlier / SUGGESTIONS_FILE, [])
    with reserved_round(tmp_path) as number:
        assert number == 2
    assert [path.name for path in stale if path.exists()] == []
    assert all(path.exists() for path in fresh)


def _reply(prompt: str, index: int) -> str:
    return f'The soup {abs(hash(prompt)) % 1000} was not terrible, take {index}."\n'


def test_an_adapt_round_removes_what_a_killed_round_left_beside_its_output(tmp_path):
    rows = [
        TreeTest(topic="/Negation", input=text, comparator="should not be", output="positive")
        for text in ("Not bad.", "Not awful at all.", "I don't hate it.")
    ]
    write_tree(tmp_path / "tree.jsonl", rows)
    out = tmp_path / "round" / SUGGESTIONS_FILE
    stale, fresh = _leave_leftovers(out.parent)
    with ScriptedOpenAIServer(_reply) as server:
        config = AdaptConfig(
            tree=tmp_path / "tree.jsonl",
            topic="/Negation",
            models=("py:tests.adaptive.word_models:keyword",),
            out=out,
            round=SuggestionRoundConfig(suggestions=4),
            task="sentiment",
        )
        adapt_round(
            config,
            backend=OpenAIBackend(model="scripted", api_key="k", base_url=server.base_url),
            embed=word_vectors,
        )
    assert out.is_file()
    assert [path.name for path in stale if path.exists()] == []
    assert all(path.exists() for path in fresh)
