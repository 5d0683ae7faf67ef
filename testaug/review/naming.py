"""One naming rule for what a review keeps: the file people's verdicts are saved to and the
Label Studio project they judge in, for each kind of thing reviewed, named after the file
the items came from (the source).

    kind        source                 verdicts file (beside it)   project
    candidates  <run>/ranked.jsonl     annotations.jsonl           testaug <run>
    tests       <round>/suggestions    verdicts.jsonl              testaug suggestions <round>
    words       <name>.jsonl           <name>.verdicts.jsonl       testaug lexicon <name>

The project is `testaug`, the kind's word (none for candidates, the first kind), and the
name that tells one source from another of its kind: the folder where a kind keeps one
source a folder (a run, a round), else the file's stem. The names are those earlier
versions gave, so a review goes on in the files and projects it started in.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

ReviewKind = Literal["candidates", "tests", "words"]
REVIEW_KINDS: tuple[ReviewKind, ...] = ("candidates", "tests", "words")


@dataclass(frozen=True)
class Naming:
    """How one kind names its verdicts file and project after a source file."""

    verdicts: str  # the verdicts file's name; `{stem}` stands for the source's stem
    word: str  # the kind's word in the project's title ("" for none)
    by_folder: bool  # whether the source's folder (else its stem) names the project


NAMING: dict[ReviewKind, Naming] = {
    "candidates": Naming("annotations.jsonl", "", by_folder=True),
    "tests": Naming("verdicts.jsonl", "suggestions", by_folder=True),
    "words": Naming("{stem}.verdicts.jsonl", "lexicon", by_folder=False),
}


def verdicts_file(kind: ReviewKind, source: Path) -> Path:
    """The file people's verdicts on the items of `source` go to, beside it."""
    return source.with_name(NAMING[kind].verdicts.format(stem=source.stem))


def project_title(kind: ReviewKind, source: Path) -> str:
    """The title of the Label Studio project people judge the items of `source` in."""
    naming = NAMING[kind]
    name = source.resolve().parent.name if naming.by_folder else source.stem
    return " ".join(part for part in ("testaug", naming.word, name) if part)
