"""Built-in lexicons (as CheckList's editor has them): names, places and protected-group words.

Any suite's templates may use them (`{first_name}`, `{city}`, `{religion_adj}`) without
defining them; a lexicon the suite defines under the same name wins. They are read from
the YAML files under the shipped `data/lexicons/` folder, each of which names its source
and licence in a header comment. CheckList's own names for three of them (`{male}`,
`{female}`, `{sexual_adj}`) are aliases, so CheckList templates carry over.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from testaug.core.bundled import bundled_dir
from testaug.core.errors import InputError
from testaug.core.records import Lexicon, Record, Suite
from testaug.suites.lexicons import read_lexicon_file

# CheckList's editor names -> ours.
ALIASES = {
    "male": "male_first_name",
    "female": "female_first_name",
    "sexual_adj": "sexual_orientation",
}
_HEADER_FIELD = re.compile(r"^#\s*(Source|Licence):\s*(.*)$")


class BuiltinLexicon(Record):
    """One built-in lexicon: its words and where they come from."""

    name: str
    words: tuple[str, ...]
    file: str  # the data file's name, under data/lexicons/
    source: str
    licence: str
    alias_of: str | None = None


def builtin_dir() -> Path:
    """The folder of built-in lexicon files: the wheel's copy, else the checkout's."""
    return bundled_dir("data") / "lexicons"


def file_header(path: Path) -> dict[str, str]:
    """The `# Source:` and `# Licence:` lines of a lexicon file's leading comment."""
    fields: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        if match := _HEADER_FIELD.match(line):
            fields[match.group(1)] = match.group(2).strip()
    return fields


@lru_cache(maxsize=1)
def builtin_lexicons() -> dict[str, BuiltinLexicon]:
    """Every built-in lexicon (aliases included) by name; raise InputError on a bad file."""
    found: dict[str, BuiltinLexicon] = {}
    problems = []
    for path in sorted(builtin_dir().glob("*.yaml")):
        loaded = read_lexicon_file(path)
        problems.extend(loaded.problems)
        header = file_header(path)
        for name, lexicon in loaded.lexicons.items():
            found[name] = BuiltinLexicon(
                name=name,
                words=lexicon.words,
                file=path.name,
                source=header.get("Source", ""),
                licence=header.get("Licence", ""),
            )
    if problems:
        raise InputError(problems)
    for alias, target in ALIASES.items():
        if target in found:
            found[alias] = found[target].model_copy(update={"name": alias, "alias_of": target})
    return found


def builtin_lexicon(name: str) -> Lexicon | None:
    """The built-in lexicon of that name as a suite lexicon, or None."""
    builtin = builtin_lexicons().get(name)
    return None if builtin is None else Lexicon(name=name, words=builtin.words)


def builtins_used(suite: Suite) -> list[str]:
    """The suite's lexicons that are built-in ones (by name and words), not its own."""
    builtins = builtin_lexicons()
    return [
        name
        for name, lexicon in suite.lexicons.items()
        if name in builtins and builtins[name].words == lexicon.words
    ]
