"""A tiny sentiment suite with a commented lexicon file, and word suggestions for it, written
as `testaug suggest -o` writes them; `testaug lexicon` run through the real command."""

from __future__ import annotations

from pathlib import Path

from testaug.core.jsonl import write_jsonl
from testaug.editor.suggestion import WordSuggestion
from tests.cli_runner import CliResult, run_testaug

SUITE = """\
# A tiny suite for lexicon review tests.
name: tiny
task: sentiment
labels: [negative, positive]
lexicons:
  - lexicons.yaml
capabilities:
  - name: Vocabulary
    descriptions:
      - description: A positive verb.
        test_type: MFT
        label: positive
        templates:
          - "I {pos_verb} the {thing}."
"""

LEXICONS = """\
# Lexicons of the tiny suite.

# Verbs of liking, base form.
pos_verb:
  - love
  - like  # the mildest

# Things to like, singular.
thing: [flight, seat]
"""

MASKED = "I really {mask} the flight."


def write_suite(folder: Path) -> Path:
    """The tiny suite in `folder` (suite.yaml and lexicons.yaml); returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "suite.yaml").write_text(SUITE, encoding="utf-8")
    (folder / "lexicons.yaml").write_text(LEXICONS, encoding="utf-8")
    return folder


def suggestion(word: str, score: float, masked: str = MASKED, **fields) -> WordSuggestion:
    """A suggestion of one word for a one-mask sentence."""
    return WordSuggestion(
        words=[word],
        score=score,
        sources=fields.pop("sources", ["wordnet"]),
        masked=masked,
        filled=masked.replace("{mask}", word),
        **fields,
    )


def suggestions() -> list[WordSuggestion]:
    """adore, enjoy, hate and love (already in pos_verb), best first as the file has them."""
    return [
        suggestion("adore", -8.0, sources=["wordnet", "lm"]),
        suggestion("love", -8.5, sources=["lexicon:pos_verb"]),
        suggestion("enjoy", -9.0),
        suggestion("hate", -9.5),
    ]


def write_suggestions(path: Path, items: list[WordSuggestion] | None = None) -> Path:
    write_jsonl(path, items if items is not None else suggestions())
    return path


def lexicon(folder: Path, *args: str, input: str | None = None, env=None) -> CliResult:
    """`testaug lexicon ARGS` in `folder`."""
    return run_testaug(folder, "lexicon", *args, input=input, env=env)
