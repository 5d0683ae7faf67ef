"""Lexicon files: named word lists in YAML, checked entry by entry."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from testaug.core.errors import InputError, Problem
from testaug.core.records import Lexicon
from testaug.core.yaml_source import YamlDocument, load_yaml

LEXICON_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class LexiconFile:
    """The lexicons of one file, where each is defined, and what is wrong with them."""

    path: Path
    lexicons: dict[str, Lexicon] = field(default_factory=dict)
    lines: dict[str, int | None] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)


def read_lexicon_file(path: Path) -> LexiconFile:
    """Read a YAML mapping of lexicon name -> list of strings, collecting every problem."""
    result = LexiconFile(path=path)
    try:
        document = load_yaml(path)
    except InputError as exc:
        result.problems.extend(exc.problems)
        return result
    data = document.data
    if not isinstance(data, dict):
        result.problems.append(
            document.problem((), "expected a mapping from lexicon name to a list of words")
        )
        return result
    for key, line in document.duplicate_keys:
        result.problems.append(
            Problem(f"duplicate lexicon name {key[-1]!r}", path, line, str(key[-1]))
        )
    for name, words in data.items():
        name = str(name)
        result.lines[name] = document.line_of((name,))
        checked = _check_lexicon(document, name, words, result.problems)
        if checked is not None:
            result.lexicons[name] = checked
    return result


def _check_lexicon(
    document: YamlDocument, name: str, words: object, problems: list[Problem]
) -> Lexicon | None:
    if not LEXICON_NAME.match(name):
        problems.append(
            document.problem(
                (name,), "lexicon names are letters, digits and _, starting with a letter or _"
            )
        )
    elif name[-1].isdigit():
        problems.append(
            document.problem(
                (name,), "lexicon names must not end in a digit (digits number copies: {name1})"
            )
        )
    if not isinstance(words, list):
        problems.append(document.problem((name,), "expected a list of words"))
        return None
    if not words:
        problems.append(document.problem((name,), f"lexicon {name!r} is empty"))
    seen: set[str] = set()
    for index, word in enumerate(words):
        where = (name, index)
        if not isinstance(word, str):
            problems.append(document.problem(where, f"expected a string, got {word!r} (quote it)"))
        elif not word.strip() or word != word.strip():
            problems.append(document.problem(where, f"empty entry or surrounding spaces: {word!r}"))
        elif word in seen:
            problems.append(
                document.problem(where, f"{word!r} is listed twice in lexicon {name!r}")
            )
        else:
            seen.add(word)
    # A lexicon with problems still counts as defined (its good entries kept), so
    # templates that use it are not reported again as using an unknown slot.
    return Lexicon(name=name, words=tuple(seen_in_order(words)))


def seen_in_order(words: list[object]) -> list[str]:
    """The usable entries of a lexicon list: strings, stripped of repeats, in order."""
    return list(
        dict.fromkeys(w for w in words if isinstance(w, str) and w.strip() and w == w.strip())
    )
